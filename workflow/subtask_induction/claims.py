"""What per-chain differences can claim (every family's comparisons tables): a comparison is a claim only
when every configured chain shows it; a missing chain blocks the claim, one chain shows a direction, a tie
is a tie."""

from __future__ import annotations

import pandas as pd


def comparison_verdict(difference: pd.Series, first: str, second: str) -> str:
    """The verdict on `first` minus `second`, one value per chain; NaN marks a configured chain without a
    result (it is named and blocks "every chain")."""
    missing = [str(chain) for chain, value in difference.items() if pd.isna(value)]
    present = difference.dropna()
    higher, lower, tied = int((present > 0).sum()), int((present < 0).sum()), int((present == 0).sum())
    count = len(present)
    if missing:
        return (f"chain {', '.join(missing)} missing: no claim ({first} higher in {higher}, {second} higher in "
                f"{lower}, tied in {tied} of the {count} present)")
    if count < 2:
        one = float(present.iloc[0])
        direction = "tie" if one == 0 else f"{first if one > 0 else second} higher"
        return f"one chain only ({direction}): no claim"
    if higher == count:
        return f"{first} higher in every chain ({count})"
    if lower == count:
        return f"{second} higher in every chain ({count})"
    if tied == count:
        return f"tied in every chain ({count})"
    return f"mixed: {first} higher in {higher}, {second} higher in {lower}, tied in {tied} of {count}"


def format_differences(difference: pd.Series) -> str:
    """`+1.2, missing, -0.4`: one entry per chain, in points."""
    return ", ".join("missing" if pd.isna(d) else f"{d:+.1f}" for d in difference)
