"""What per-run differences can claim (every family's comparisons tables): a comparison is a claim only
when every configured run (chain, or chain x replicate) shows it; a missing run blocks the claim, one run
shows a direction, a tie is a tie. Where records keep per-item correctness, a run's difference counts only
when it is beyond noise on the same test items (McNemar's exact test at PAIRED_LEVEL); otherwise it is a tie."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def comparison_verdict(difference: pd.Series, first: str, second: str, unit: str = "chain") -> str:
    """The verdict on `first` minus `second`, one value per chain (or per `unit`: a run of chain and replicate);
    NaN marks a configured one without a result (it is named and blocks "every chain"). Pass differences
    that are 0 where a paired test calls them noise (paired_difference)."""
    missing = [str(chain) for chain, value in difference.items() if pd.isna(value)]
    present = difference.dropna()
    higher, lower, tied = int((present > 0).sum()), int((present < 0).sum()), int((present == 0).sum())
    count = len(present)
    if missing:
        return (f"{unit} {', '.join(missing)} missing: no claim ({first} higher in {higher}, {second} higher in "
                f"{lower}, tied in {tied} of the {count} present)")
    if count < 2:
        one = float(present.iloc[0])
        direction = "tie" if one == 0 else f"{first if one > 0 else second} higher"
        return f"one {unit} only ({direction}): no claim"
    if higher == count:
        return f"{first} higher in every {unit} ({count})"
    if lower == count:
        return f"{second} higher in every {unit} ({count})"
    if tied == count:
        return f"tied in every {unit} ({count})"
    return f"mixed: {first} higher in {higher}, {second} higher in {lower}, tied in {tied} of {count}"


# A difference in one run counts only when the two models' per-item correctness on the same test items differs
# beyond noise: McNemar's exact test (two-sided binomial test on the discordant items) at this level.
PAIRED_LEVEL = 0.05


def correct_bits(correct) -> str:
    """Per-item correctness (a boolean array or tensor) as a hex string, 4 items per character: how a
    record keeps which test items a model got right, for paired tests between models."""
    flags = np.asarray(correct, dtype=bool).reshape(-1)
    return np.packbits(flags).tobytes().hex()


def bits_correct(bits: str, count: int) -> np.ndarray:
    """correct_bits' inverse for `count` items."""
    return np.unpackbits(np.frombuffer(bytes.fromhex(bits), dtype=np.uint8))[:count].astype(bool)


def mcnemar_p(first, second) -> float:
    """Two-sided exact McNemar p-value of two models' per-item correctness on the same items."""
    first, second = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    if first.shape != second.shape:
        raise ValueError(f"paired test on {first.shape} and {second.shape} items: not the same items")
    only_first, only_second = int((first & ~second).sum()), int((~first & second).sum())
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(only_first, only_second) + 1)) / 2 ** discordant
    return min(1.0, 2 * tail)


def paired_difference(first, second, level: float = PAIRED_LEVEL) -> tuple[float, float, float]:
    """(difference in accuracy points, p-value, the difference that counts: 0 unless p < level)."""
    first, second = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    difference = 100 * (first.mean() - second.mean())
    p = mcnemar_p(first, second)
    return difference, p, difference if p < level else 0.0


def shape_bias_difference(first_shape, first_texture, second_shape, second_texture, rounds: int = 2000,
                          level: float = PAIRED_LEVEL) -> tuple[float, float, float]:
    """Shape bias (shape / (shape + texture decisions)) is a ratio, not a per-item accuracy: its paired test
    resamples the conflict images (the same draw for both models; a fixed generator, so the same records give
    the same verdict). Returns (difference in points, two-sided bootstrap p, the difference that counts)."""
    arrays = [np.asarray(a, dtype=bool) for a in (first_shape, first_texture, second_shape, second_texture)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("paired shape-bias test on different numbers of conflict images")

    def bias(shape, texture, axis=-1):
        decisive = shape.sum(axis) + texture.sum(axis)
        return np.where(decisive > 0, shape.sum(axis) / np.maximum(decisive, 1), np.nan)

    difference = 100 * (bias(*arrays[:2]) - bias(*arrays[2:]))
    draws = np.random.default_rng(0).integers(0, len(arrays[0]), size=(rounds, len(arrays[0])))
    resampled = bias(arrays[0][draws], arrays[1][draws]) - bias(arrays[2][draws], arrays[3][draws])
    resampled = resampled[~np.isnan(resampled)]
    if np.isnan(difference) or not len(resampled):
        return float(difference), 1.0, 0.0
    p = min(1.0, 2 * min((resampled <= 0).mean(), (resampled >= 0).mean()))
    return float(difference), float(p), float(difference) if p < level else 0.0


def format_paired(differences: pd.Series, counted: pd.Series) -> str:
    """`+4.4*, +0.2, missing`: every run's difference in points, `*` where it is beyond noise."""
    return ", ".join("missing" if pd.isna(d) else f"{d:+.1f}" + ("*" if c != 0 else "")
                     for d, c in zip(differences, counted))
