"""How similar two binary masks are: Jaccard overlap of the chosen sets, against what chance would give.

For two independent random sets with densities p1 and p2 (per weight), the expected Jaccard index is
p1 p2 / (p1 + p2 - p1 p2). Compare the *sparse* side: the kept sets of discovered subnetworks (a few % kept)
or the off sets of submasks (a few % off); the dense side overlaps ~1 for any two masks.
"""

from __future__ import annotations

import torch


def chance_jaccard(p1: float, p2: float) -> float:
    union = p1 + p2 - p1 * p2
    return p1 * p2 / union if union > 0 else float("nan")


def mask_overlap(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> dict:
    """Jaccard of the True sets of two boolean masks over the same named tensors, and its chance level."""
    if set(first) != set(second):
        raise ValueError(f"masks over different tensors: {sorted(set(first) ^ set(second))[:5]}")
    a = torch.cat([first[name].reshape(-1) for name in sorted(first)])
    b = torch.cat([second[name].reshape(-1) for name in sorted(first)])
    if a.shape != b.shape:
        raise ValueError("masks of different shapes")
    union = int((a | b).sum())
    jaccard = int((a & b).sum()) / union if union else float("nan")
    chance = chance_jaccard(float(a.float().mean()), float(b.float().mean()))
    return {"jaccard": jaccard, "chance": chance, "ratio": jaccard / chance if chance and chance == chance else float("nan"),
            "density_first": float(a.float().mean()), "density_second": float(b.float().mean())}
