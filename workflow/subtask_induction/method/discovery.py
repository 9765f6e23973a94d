"""Subnetwork discovery: train continuous-sparsification masks on a subtask with the weights frozen.

loss = task loss + l0_weight * sum(sigmoid(beta * s)); beta goes 1 -> beta_final over the epochs;
each epoch is evaluated with the hard mask s > 0 and the best epoch (ties -> later, sparser) is kept.
"""

from __future__ import annotations

from typing import Callable, Iterable

import torch
from torch import nn

from ..training import FitResult, fit
from .masks import (attach_masks, beta_after, hard_masks, hard_masks_on, kept_fraction, l0_penalty,
                    mask_parameters, set_beta)


def discover_subnetwork(
    model: nn.Module,
    weight_names: list[str],
    task_loss: Callable[[nn.Module, object], torch.Tensor],
    batches: Callable[[int], Iterable],
    evaluate: Callable[[nn.Module], dict],
    *,
    epochs: int,
    lr: float,
    l0_weight: float,
    beta_final: float = 100.0,
    mask_init: float = -0.1,
    weight_decay: float = 0.0,
    select: str = "eval_accuracy",
    **fit_options,
) -> tuple[dict[str, torch.Tensor], FitResult]:
    """Returns the boolean masks of the best epoch and the training record.

    The model runs in eval mode throughout (no dropout in the frozen network); only mask logits train.
    """
    masks = attach_masks(model, weight_names, mask_init)
    optimizer = torch.optim.AdamW(mask_parameters(masks), lr=lr, weight_decay=weight_decay)

    def loss_fn(net, batch):
        return task_loss(net, batch) + l0_weight * l0_penalty(masks)

    def evaluate_hard(net):
        with hard_masks_on(masks):
            metrics = evaluate(net)
        metrics["kept_fraction"] = kept_fraction(hard_masks(masks))["overall"]
        metrics["beta"] = next(iter(masks.values())).beta
        return metrics

    result = fit(
        model, optimizer, loss_fn, batches, evaluate_hard, epochs, select=select, train_mode=False,
        on_epoch_start=lambda epoch: set_beta(masks, beta_after(epoch, epochs, beta_final)),
        on_epoch_end=lambda epoch: set_beta(masks, beta_after(epoch + 1, epochs, beta_final)),
        **fit_options,
    )
    return hard_masks(masks), result


def selection_key(eval_accuracy: float, kept_fraction: float) -> tuple[float, float]:
    """Order subnetworks found with different L0 weights: most accurate, then sparsest."""
    return (eval_accuracy, -kept_fraction)
