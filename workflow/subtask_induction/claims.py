"""What per-chain differences can claim (every family's comparisons tables): a comparison is a claim only
when at least two chains agree on its sign; one chain shows a direction, a tie is a tie."""

from __future__ import annotations

import pandas as pd


def comparison_verdict(difference: pd.Series, first: str, second: str) -> str:
    higher, lower, tied = int((difference > 0).sum()), int((difference < 0).sum()), int((difference == 0).sum())
    count = len(difference)
    if count < 2:
        one = float(difference.iloc[0])
        direction = "tie" if one == 0 else f"{first if one > 0 else second} higher"
        return f"one chain only ({direction}): no claim"
    if higher == count:
        return f"{first} higher in every chain ({count})"
    if lower == count:
        return f"{second} higher in every chain ({count})"
    if tied == count:
        return f"tied in every chain ({count})"
    return f"mixed: {first} higher in {higher}, {second} higher in {lower}, tied in {tied} of {count}"
