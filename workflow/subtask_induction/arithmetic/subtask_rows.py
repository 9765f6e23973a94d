"""The same labels without a mask: baselines that spend the discovery's subtask rows on the new model directly.

Subtask Induction's discovery reads labelled subtask rows (ab). A reviewer's first question is what those very
rows do when simply given to the fresh model (multi-task training, Caruana 1997): `mixture` trains on them as
rows of the same format beside the target rows; `distill` matches, on the same rows, the selected subnetwork's
answer distribution (KL at the answer position, temperature 1; Hinton et al. 2015) instead of their labels.
Both draw one subtask batch per target batch, from the rows in a seeded order of their own (role "subtask
batches", seeds.py), so an epoch stays one pass over the target rows.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..method.masks import apply_binary_masks
from ..training import epoch_order
from .model import lm_loss, stacked_batches

KINDS = ("mixture", "distill")


def discovery_rows(dataset: dict, subnetwork: dict) -> torch.Tensor:
    """The training rows the discovery read: the first `train_rows` of its dataset (a label budget reads a
    prefix; a subnetwork written before it recorded them read all)."""
    rows = dataset["splits"]["train"]
    return rows[:subnetwork.get("train_rows") or len(rows)]


@torch.no_grad()
def teacher_log_probs(base: nn.Module, masks: dict[str, torch.Tensor], rows: torch.Tensor, batch_size: int = 1000) -> torch.Tensor:
    """The subnetwork's (the base under its hard mask) log-probabilities at the answer position, [R, vocab]."""
    teacher = apply_binary_masks(copy.deepcopy(base), masks).eval()
    return torch.cat([torch.log_softmax(teacher(input_ids=rows[i:i + batch_size]).logits[:, 2, :], -1)
                      for i in range(0, len(rows), batch_size)])


def pack_batches(trains: list[torch.Tensor], batch_size: int, seeds: list[int], subtask: list[torch.Tensor],
                 teacher: list[torch.Tensor] | None, subtask_seeds: list[int], epoch: int):
    """A pack's batches with one subtask batch per target batch: (target [M, B, 4], subtask [M, B', 4],
    teacher log-probabilities [M, B', V] or None), B' = the target batch size, subtask rows cycled."""
    targets = stacked_batches(trains, batch_size, seeds, epoch)
    needed = len(targets) * batch_size
    picks = []
    for rows, seed in zip(subtask, subtask_seeds):
        order = epoch_order(len(rows), seed, epoch)
        picks.append(order.repeat(-(-needed // len(rows)))[:needed].view(len(targets), batch_size).to(rows.device))
    out = []
    for step, target in enumerate(targets):
        chosen = [pick[step] for pick in picks]
        rows = torch.stack([part[index] for part, index in zip(subtask, chosen)])
        probs = None if teacher is None else torch.stack([part[index.to(part.device)] for part, index in zip(teacher, chosen)])
        out.append((target, rows, probs))
    return out


def pack_loss(kind: str):
    """loss_fn(model, (target, subtask, teacher)) -> one loss per model [M]: the target's LM loss plus the
    subtask term of `kind`."""
    if kind not in KINDS:
        raise ValueError(f"unknown subtask_rows kind {kind!r}; choose from {list(KINDS)}")

    def loss(model, batch):
        target, subtask, teacher = batch
        if kind == "mixture":
            return lm_loss(model, target) + lm_loss(model, subtask)
        student = torch.log_softmax(model(input_ids=subtask).logits[..., 2, :], -1)
        divergence = (teacher.exp() * (teacher - student)).sum(-1)  # KL(teacher || student) per row
        return lm_loss(model, target) + divergence.mean(-1)

    return loss
