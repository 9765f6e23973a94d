"""How similar two binary masks are: Jaccard overlap of the chosen sets, against what chance would give.

Chance is computed **per tensor**: two random masks that keep each tensor's own densities (p_t and q_t
of its n_t weights) share n_t p_t q_t weights of that tensor in expectation, and their union holds
n_t (p_t + q_t - p_t q_t); the chance level is the summed expected intersection over the summed expected
union. Masks differ strongly in density from tensor to tensor, and a density pooled over all tensors
understates how much such random masks overlap (two tensors, 1,000 weights kept at 50% and 9,000 at 0%
in both masks: pooled chance 0.026, per tensor 0.33). Compare the *sparse* side: the kept sets of
discovered subnetworks (a few % kept) or the off sets of submasks (a few % off).
"""

from __future__ import annotations

import torch


def chance_jaccard(p1: float, p2: float) -> float:
    """Expected Jaccard of two independent random sets of densities p1, p2 over one pool of weights."""
    union = p1 + p2 - p1 * p2
    return p1 * p2 / union if union > 0 else float("nan")


def chance_jaccard_per_tensor(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> float:
    """Summed expected intersection over summed expected union of random masks with each tensor's own
    densities (the ratio of expectations; exact for the large tensors of a network)."""
    intersection = union = 0.0
    for name in first:
        n = first[name].numel()
        p, q = float(first[name].float().mean()), float(second[name].float().mean())
        intersection += n * p * q
        union += n * (p + q - p * q)
    return intersection / union if union > 0 else float("nan")


def mask_overlap(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> dict:
    """Jaccard of the True sets of two boolean masks over the same named tensors, and its per-tensor chance."""
    if set(first) != set(second):
        raise ValueError(f"masks over different tensors: {sorted(set(first) ^ set(second))[:5]}")
    if any(first[name].shape != second[name].shape for name in first):
        raise ValueError("masks of different shapes")
    a = torch.cat([first[name].reshape(-1) for name in sorted(first)])
    b = torch.cat([second[name].reshape(-1) for name in sorted(first)])
    union = int((a | b).sum())
    jaccard = int((a & b).sum()) / union if union else float("nan")
    chance = chance_jaccard_per_tensor(first, second)
    return {"jaccard": jaccard, "chance": chance, "ratio": jaccard / chance if chance and chance == chance else float("nan"),
            "chance_pooled": chance_jaccard(float(a.float().mean()), float(b.float().mean())),
            "density_first": float(a.float().mean()), "density_second": float(b.float().mean())}
