"""Continuous-sparsification masks (Savarese et al.) attached to chosen weight tensors.

Training mask sigmoid(beta * s), test mask s > 0. The weight itself is frozen; only the logits s train.
Implemented with torch.nn.utils.parametrize, so it works unchanged on nn.Linear, nn.Conv2d and
Hugging Face's Conv1D.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch import nn
from torch.nn.utils import parametrize


class ContinuousSparsification(nn.Module):
    """Parametrization `weight -> weight * mask` with a learnable logit per weight."""

    def __init__(self, shape: torch.Size, init: float = -0.1):
        super().__init__()
        self.logits = nn.Parameter(torch.full(shape, float(init)))
        self.beta = 1.0
        self.hard = False
        # The soft mask of the latest forward pass, reused by the L0 penalty instead of recomputing it.
        self.last_soft_mask: torch.Tensor | None = None

    def mask(self) -> torch.Tensor:
        if self.hard:
            return (self.logits > 0).to(self.logits.dtype)
        return torch.sigmoid(self.beta * self.logits)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        mask = self.mask()
        self.last_soft_mask = None if self.hard else mask
        return weight * mask


def split_name(model: nn.Module, name: str) -> tuple[nn.Module, str]:
    """'a.b.weight' -> (model.a.b, 'weight'), with a clear error for a name the model lacks."""
    module_path, _, attribute = name.rpartition(".")
    try:
        module = model.get_submodule(module_path) if module_path else model
    except AttributeError as error:
        raise KeyError(f"the model has no module '{module_path}' (from weight name '{name}')") from error
    if not hasattr(module, attribute):
        raise KeyError(f"module '{module_path}' has no tensor '{attribute}'")
    return module, attribute


def attach_masks(model: nn.Module, names: list[str], init: float = -0.1) -> dict[str, ContinuousSparsification]:
    """Mask the named weights, freeze every original parameter, and return the masks by weight name."""
    if not names:
        raise ValueError("attach_masks needs at least one weight name")
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    masks = {}
    for name in names:
        module, attribute = split_name(model, name)
        mask = ContinuousSparsification(getattr(module, attribute).shape, init).to(getattr(module, attribute).device)
        parametrize.register_parametrization(module, attribute, mask, unsafe=True)
        getattr(module.parametrizations, attribute).original.requires_grad_(False)
        masks[name] = mask
    return masks


def mask_parameters(masks: dict[str, ContinuousSparsification]) -> list[nn.Parameter]:
    return [mask.logits for mask in masks.values()]


def beta_after(epochs_done: int, epochs: int, beta_final: float) -> float:
    """Temperature after `epochs_done` epochs: 1 at the start, times beta_final**(1/epochs) per epoch.

    Written as a power so that it is exactly `beta_final` after the last epoch (x ** 1.0 == x).
    """
    if not 0 <= epochs_done <= epochs:
        raise ValueError(f"epochs_done={epochs_done} outside 0..{epochs}")
    return float(beta_final) ** (epochs_done / epochs)


def set_beta(masks: dict[str, ContinuousSparsification], beta: float) -> None:
    for mask in masks.values():
        mask.beta = beta


@contextlib.contextmanager
def hard_masks_on(masks: dict[str, ContinuousSparsification]) -> Iterator[None]:
    """Evaluate with the binary test mask s > 0."""
    previous = {name: mask.hard for name, mask in masks.items()}
    for mask in masks.values():
        mask.hard = True
    try:
        yield
    finally:
        for name, mask in masks.items():
            mask.hard = previous[name]


def l0_penalty(masks: dict[str, ContinuousSparsification]) -> torch.Tensor:
    """Unnormalised sum of the soft masks of the latest forward pass (call after the forward)."""
    terms = [mask.last_soft_mask.sum() for mask in masks.values() if mask.last_soft_mask is not None]
    if len(terms) != len(masks):
        raise RuntimeError("l0_penalty needs a forward pass in soft mode that used every masked weight")
    return torch.stack(terms).sum()


def hard_masks(masks: dict[str, ContinuousSparsification]) -> dict[str, torch.Tensor]:
    """The discovered subnetwork: a boolean tensor per masked weight (True = kept)."""
    return {name: (mask.logits.detach() > 0).cpu() for name, mask in masks.items()}


def kept_fraction(binary_masks: dict[str, torch.Tensor]) -> dict:
    """Fraction of masked weights kept, per tensor and overall (weighted by tensor size)."""
    per_tensor = {name: float(mask.float().mean()) for name, mask in binary_masks.items()}
    kept = sum(int(mask.sum()) for mask in binary_masks.values())
    total = sum(mask.numel() for mask in binary_masks.values())
    return {"per_tensor": per_tensor, "overall": kept / total, "kept": kept, "total": total}


def find_masks(model: nn.Module) -> dict[str, ContinuousSparsification]:
    """The masks attached to a model, by the name of the weight they mask."""
    found = {}
    for module_name, module in model.named_modules():
        if parametrize.is_parametrized(module):
            for attribute, parametrizations in module.parametrizations.items():
                for parametrization in parametrizations:
                    if isinstance(parametrization, ContinuousSparsification):
                        found[f"{module_name}.{attribute}" if module_name else attribute] = parametrization
    return found
