"""Subnetwork discovery: train weight masks on a subtask with the weights frozen.

loss = task loss + l0_weight * (expected kept count); with the default continuous sparsification that is
sum(sigmoid(beta * s)) and beta goes 1 -> beta_final over the epochs. Each epoch is evaluated with the
hard mask and the best epoch (ties -> later, sparser) is kept. `mask_method` picks the method (masks.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

import torch
from torch import nn

from ..rounding import fixed
from ..training import Checkpointing, EpochRun, FitResult, Schedule, fit
from .masks import attach_masks, hard_masks, hard_masks_on, kept_fraction, l0_penalty, mask_parameters, set_progress


@dataclass(frozen=True)
class MaskSearch:
    """What a discovery trains: `epochs` of mask scores at learning rate `lr` (AdamW, `weight_decay`) under
    the L0 weight `l0_weight`, with `mask_method` (masks.py) started at `mask_init` with its `mask_options`
    (continuous sparsification's final beta: `beta_final`), keeping the epoch that is best by `select`."""

    epochs: int
    lr: float
    l0_weight: float
    beta_final: float = 100.0
    mask_init: float | None = -0.1
    mask_method: str = "continuous_sparsification"
    mask_options: dict = field(default_factory=dict)
    weight_decay: float = 0.0
    select: str = "eval_accuracy"


def discover_subnetwork(
    model: nn.Module,
    weight_names: list[str],
    task_loss: Callable[[nn.Module, object], torch.Tensor],
    batches: Callable[[int], Iterable],
    evaluate: Callable[[nn.Module], dict],
    search: MaskSearch,
    checkpointing: Checkpointing = Checkpointing(),
    run: EpochRun = EpochRun(desc="discover"),
) -> tuple[dict[str, torch.Tensor], FitResult]:
    """Returns the boolean masks of the best epoch and the training record.

    The model runs in eval mode throughout (no dropout in the frozen network); only mask scores train
    (`run` gives the name and error-message settings; discovery sets the mode and the beta schedule).
    `beta_final` is continuous sparsification's; other methods take theirs from `mask_options`.
    """
    epochs, lr, l0_weight = search.epochs, search.lr, search.l0_weight
    mask_method, mask_init, mask_options = search.mask_method, search.mask_init, search.mask_options
    beta_final, weight_decay, select = search.beta_final, search.weight_decay, search.select
    options = dict(mask_options or {})
    if mask_method == "continuous_sparsification":
        options.setdefault("beta_final", beta_final)
    masks = attach_masks(model, weight_names, mask_method, mask_init, **options)
    optimizer = torch.optim.AdamW(mask_parameters(masks), lr=lr, weight_decay=weight_decay)

    def loss_fn(net, batch):
        loss = task_loss(net, batch)
        return loss + l0_weight * l0_penalty(masks) if l0_weight else loss

    def evaluate_hard(net):
        with hard_masks_on(masks):
            metrics = evaluate(net)
        metrics["kept_fraction"] = kept_fraction(hard_masks(masks))["overall"]
        first = next(iter(masks.values()))
        if hasattr(first, "beta"):
            metrics["beta"] = first.beta
        return metrics

    result = fit(
        model, optimizer, loss_fn, batches, evaluate_hard, Schedule(epochs, select=select), checkpointing,
        replace(run, train_mode=False, on_epoch_start=lambda epoch: set_progress(masks, epoch, epochs),
                on_epoch_end=lambda epoch: set_progress(masks, epoch + 1, epochs)),
    )
    return hard_masks(masks), result


def mask_settings(settings: dict) -> tuple[str, dict]:
    """(method, options) from a discovery config block's optional `mask: {method, ...options}`."""
    mask = dict(settings.get("mask") or {})
    return mask.pop("method", "continuous_sparsification"), mask


def majority_share(labels) -> float:
    """Accuracy of always answering the most frequent label: the chance level a subnetwork must beat."""
    labels = torch.as_tensor(labels).flatten()
    return float(torch.bincount(labels.long()).max()) / max(len(labels), 1)


def check_floor(kept: float, eval_accuracy: float, chance: float | None, where: str) -> None:
    """A subnetwork that keeps nothing, or does no better than chance on its subtask's eval rows, would be
    transferred as nothing (SI would equal training from scratch and be reported as a result): an error."""
    if kept <= 0:
        raise ValueError(f"{where} keeps 0.00% of the masked weights: transferring it would transfer nothing. "
                         f"Lower λ, start from a larger mask_init or train discovery longer.")
    if chance is not None and eval_accuracy <= chance:
        raise ValueError(f"{where} is no better than chance on its subtask's eval rows (accuracy {fixed(eval_accuracy, 4)}, "
                         f"chance {fixed(chance, 4)}: the most frequent answer): it carries no subtask to transfer. "
                         f"Lower λ or train discovery longer.")

