"""The same labels without a mask: baselines that spend the discovery's subtask rows on the new model directly.

Subtask Induction's discovery reads labelled subtask rows (ab). A reviewer's first question is what those very
rows do when simply given to the fresh model (multi-task training, Caruana 1997): `mixture` trains on them beside
the target rows; `distill` matches, on the same rows, the selected subnetwork's answer distribution (KL at the
answer position, temperature 1; Hinton et al. 2015) instead of their labels. Both draw one subtask batch per
target batch, from the rows in a seeded order of their own (role "subtask batches", seeds.py), so an epoch stays
one pass over the target rows.

A task marker (`task_marker: true`, as multi-task models mark the task: T5's prefixes) gives the subtask rows a
separator of their own, `a b SEP2 c` with SEP2 = n_numbers + 1, one token more than the base's vocabulary:
without it the subtask row (a, b) and the target row (a, b) are one input with two answers, a contradiction the
network is asked to fit. The marker's embedding is a fresh row (add_task_marker); the rest of the network is
built exactly as without it, so an `_inherit` baseline starts from SI's own tensors.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..method.masks import apply_binary_masks
from ..training import epoch_order
from ..legacy import upgrade_record
from .model import lm_loss, stacked_batches

KINDS = ("mixture", "distill")


def marker_token(n_numbers: int) -> int:
    """The subtask rows' own separator: the token after SEP (= n_numbers)."""
    return n_numbers + 1


def mark(rows: torch.Tensor, n_numbers: int) -> torch.Tensor:
    """Rows `a b SEP c` as `a b SEP2 c` (a copy)."""
    if not bool((rows[:, 2] == n_numbers).all()):
        raise ValueError(f"rows to mark must carry SEP ({n_numbers}) at position 2")
    marked = rows.clone()
    marked[:, 2] = marker_token(n_numbers)
    return marked


@torch.no_grad()
def add_task_marker(model: nn.Module, n_numbers: int, seed: int) -> nn.Module:
    """Extend `model`'s vocabulary (n_numbers + 1 tokens) by the marker: its token embedding gains one row drawn
    from N(0, initializer_range) by a generator of its own (`seed`), the head stays tied to it, every other tensor
    is left as it was. Modifies `model` in place and returns it."""
    embedding = model.get_input_embeddings()
    if embedding.num_embeddings != n_numbers + 1:
        raise ValueError(f"the model's vocabulary has {embedding.num_embeddings} tokens; a task marker extends "
                         f"n_numbers + 1 = {n_numbers + 1}")
    generator = torch.Generator().manual_seed(seed)
    row = torch.randn(1, embedding.embedding_dim, generator=generator) * model.config.initializer_range
    grown = nn.Embedding(n_numbers + 2, embedding.embedding_dim)
    grown.weight.copy_(torch.cat([embedding.weight, row.to(embedding.weight)]))
    model.set_input_embeddings(grown)
    model.config.vocab_size = n_numbers + 2
    model.tie_weights()
    return model


def discovery_rows(dataset: dict, subnetwork: dict) -> torch.Tensor:
    """The training rows the discovery read: the first `train_rows` of its dataset (a label budget reads a
    prefix)."""
    return dataset["splits"]["train"][:upgrade_record(subnetwork, "arithmetic subnetwork")["train_rows"]]


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
        # a marked student has one token more than the teacher, which gives it probability 0
        student = torch.log_softmax(model(input_ids=subtask).logits[..., 2, :], -1)[..., :teacher.shape[-1]]
        divergence = (teacher.exp() * (teacher - student)).sum(-1)  # KL(teacher || student) per row
        return lm_loss(model, target) + divergence.mean(-1)

    return loss
