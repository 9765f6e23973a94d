"""Weight masks attached to chosen weight tensors: one interface, three methods.

A mask is a `torch.nn.utils.parametrize` parametrization `weight -> weight * mask`, so it works unchanged
on nn.Linear, nn.Conv2d and Hugging Face's Conv1D. The weight itself is frozen; only the mask's scores
train. Every method offers the same things:

- `attach_masks(model, names, method, init, **options)` -> {weight name: mask}
- a training forward (the method's relaxation) and a binary test mask (`hard_masks_on`, `hard_masks`)
- `l0_penalty(masks)`: the expected number of kept weights of the latest forward (use it or not)
- `set_progress(masks, epochs_done, epochs)`: per-epoch schedules (continuous sparsification's beta)
- `kept_fraction(binary masks)`, per tensor and overall; `masks_to_bits` / `masks_from_bits`: 1 bit per weight

Methods (`MASK_METHODS`):

- `continuous_sparsification` (Savarese et al. 2020; the paper's): logits s, training mask sigmoid(beta*s),
  beta annealed 1 -> beta_final, test mask s > 0. Default init -0.1.
- `straight_through` (Piggyback-style threshold; "submasking"): scores S, mask [S > threshold] exactly
  0 or 1 in every forward, gradient passed straight through to S (so S receives grad(W_eff) * W).
  Default init 1.0, threshold 0.0. `l0_penalty` is the count of kept weights with the same
  straight-through gradient.
- `hard_concrete` (Louizos et al. 2018, as NeuroSurgeon offers it): log_alpha, a stretched and clipped
  concrete sample in training (torch's global RNG, so seeded runs repeat), test mask
  clamp(sigmoid(log_alpha) * (right - left) + left, 0, 1) > 0.5, L0 term sum sigmoid(log_alpha - T log(-left/right)).
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterator

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parametrize

from ..legacy import upgrade_record


class WeightMask(nn.Module):
    """Base class: a parametrization `weight -> weight * mask` with one learnable score per weight."""

    method = ""

    def __init__(self):
        super().__init__()
        self.hard = False
        # Expected kept count of the latest training-mode forward, reused by l0_penalty.
        self.last_l0: torch.Tensor | None = None

    @property
    def scores(self) -> nn.Parameter:
        raise NotImplementedError

    def training_mask(self) -> torch.Tensor:
        raise NotImplementedError

    def l0_term(self, mask: torch.Tensor) -> torch.Tensor:
        """Expected number of kept weights, given the training mask of this forward."""
        return mask.sum()

    def hard_mask(self) -> torch.Tensor:
        """The binary test mask (bool, True = kept)."""
        raise NotImplementedError

    def set_progress(self, epochs_done: int, epochs: int) -> None:
        """Per-epoch schedule hook; most methods have none."""

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        if self.hard:
            self.last_l0 = None
            return weight * self.hard_mask().to(weight.dtype)
        mask = self.training_mask()
        self.last_l0 = self.l0_term(mask)
        return weight * mask


class ContinuousSparsification(WeightMask):
    """Training mask sigmoid(beta * s), test mask s > 0; beta set per epoch by `set_progress`."""

    method = "continuous_sparsification"

    def __init__(self, shape: torch.Size, init: float = -0.1, beta_final: float = 100.0):
        super().__init__()
        self.logits = nn.Parameter(torch.full(shape, float(init)))
        self.beta = 1.0
        self.beta_final = float(beta_final)

    @property
    def scores(self) -> nn.Parameter:
        return self.logits

    def training_mask(self) -> torch.Tensor:
        return torch.sigmoid(self.beta * self.logits)

    def hard_mask(self) -> torch.Tensor:
        return self.logits > 0

    def set_progress(self, epochs_done: int, epochs: int) -> None:
        self.beta = beta_after(epochs_done, epochs, self.beta_final)


class StraightThrough(WeightMask):
    """mask = [S > threshold] in the forward pass, identity gradient to S."""

    method = "straight_through"

    def __init__(self, shape: torch.Size, init: float = 1.0, threshold: float = 0.0):
        super().__init__()
        self.score = nn.Parameter(torch.full(shape, float(init)))
        self.threshold = float(threshold)

    @property
    def scores(self) -> nn.Parameter:
        return self.score

    def training_mask(self) -> torch.Tensor:
        # The zero term first: its value is exactly 0, so the mask is exactly 0 or 1.
        s = self.score
        return (s - s.detach()) + (s > self.threshold).to(s.dtype)

    def hard_mask(self) -> torch.Tensor:
        return self.score > self.threshold


class HardConcrete(WeightMask):
    """Stretched, clipped binary-concrete gates (Louizos et al. 2018) with their closed-form L0 term."""

    method = "hard_concrete"

    def __init__(self, shape: torch.Size, init: float = 3.0, temperature: float = 2 / 3,
                 left: float = -0.1, right: float = 1.1):
        super().__init__()
        if not left < 0 < 1 < right:
            raise ValueError(f"hard_concrete needs left < 0 and right > 1, got {left}, {right}")
        self.log_alpha = nn.Parameter(torch.full(shape, float(init)))
        self.temperature, self.left, self.right = float(temperature), float(left), float(right)

    @property
    def scores(self) -> nn.Parameter:
        return self.log_alpha

    def _stretch(self, gate: torch.Tensor) -> torch.Tensor:
        return torch.clamp(gate * (self.right - self.left) + self.left, 0.0, 1.0)

    def training_mask(self) -> torch.Tensor:
        u = torch.rand(self.log_alpha.shape, device=self.log_alpha.device).clamp(1e-6, 1 - 1e-6)
        return self._stretch(torch.sigmoid((torch.log(u) - torch.log1p(-u) + self.log_alpha) / self.temperature))

    def l0_term(self, mask: torch.Tensor) -> torch.Tensor:
        shift = self.temperature * math.log(-self.left / self.right)
        return torch.sigmoid(self.log_alpha - shift).sum()

    def hard_mask(self) -> torch.Tensor:
        return self._stretch(torch.sigmoid(self.log_alpha.detach())) > 0.5


MASK_METHODS: dict[str, type[WeightMask]] = {
    cls.method: cls for cls in (ContinuousSparsification, StraightThrough, HardConcrete)
}


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


def attach_masks(model: nn.Module, names: list[str], method: str = "continuous_sparsification",
                 init: float | None = None, **options) -> dict[str, WeightMask]:
    """Mask the named weights, freeze every original parameter, and return the masks by weight name.

    `init` is the method's initial score (None = the method's default); `options` go to the method
    (continuous_sparsification: beta_final; straight_through: threshold; hard_concrete: temperature,
    left, right).
    """
    if method not in MASK_METHODS:
        raise ValueError(f"unknown mask method '{method}'; choose one of {sorted(MASK_METHODS)}")
    if not names:
        raise ValueError("attach_masks needs at least one weight name")
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    kwargs = dict(options) if init is None else {"init": init, **options}
    masks = {}
    for name in names:
        module, attribute = split_name(model, name)
        weight = getattr(module, attribute)
        mask = MASK_METHODS[method](weight.shape, **kwargs).to(device=weight.device, dtype=weight.dtype)
        parametrize.register_parametrization(module, attribute, mask, unsafe=True)
        getattr(module.parametrizations, attribute).original.requires_grad_(False)
        masks[name] = mask
    return masks


def mask_parameters(masks: dict[str, WeightMask]) -> list[nn.Parameter]:
    return [mask.scores for mask in masks.values()]


def beta_after(epochs_done: int, epochs: int, beta_final: float) -> float:
    """Temperature after `epochs_done` epochs: 1 at the start, times beta_final**(1/epochs) per epoch.

    Written as a power so that it is exactly `beta_final` after the last epoch (x ** 1.0 == x).
    """
    if not 0 <= epochs_done <= epochs:
        raise ValueError(f"epochs_done={epochs_done} outside 0..{epochs}")
    return float(beta_final) ** (epochs_done / epochs)


def set_progress(masks: dict[str, WeightMask], epochs_done: int, epochs: int) -> None:
    for mask in masks.values():
        mask.set_progress(epochs_done, epochs)


@contextlib.contextmanager
def hard_masks_on(masks: dict[str, WeightMask]) -> Iterator[None]:
    """Evaluate with the binary test masks."""
    previous = {name: mask.hard for name, mask in masks.items()}
    for mask in masks.values():
        mask.hard = True
    try:
        yield
    finally:
        for name, mask in masks.items():
            mask.hard = previous[name]


def l0_penalty(masks: dict[str, WeightMask]) -> torch.Tensor:
    """Expected kept count of the latest training-mode forward, summed over masks (call after the forward)."""
    terms = [mask.last_l0 for mask in masks.values() if mask.last_l0 is not None]
    if len(terms) != len(masks):
        raise RuntimeError("l0_penalty needs a forward pass in training mode that used every masked weight")
    return torch.stack(terms).sum()


def hard_masks(masks: dict[str, WeightMask]) -> dict[str, torch.Tensor]:
    """The discovered subnetwork: a boolean tensor per masked weight (True = kept)."""
    return {name: mask.hard_mask().detach().cpu() for name, mask in masks.items()}


def mask_scores(masks: dict[str, WeightMask]) -> dict[str, torch.Tensor]:
    """Every masked weight's score (the CS logit, the straight-through S, log α), float32 on the CPU: the
    order in which the hard mask keeps weights, from which top_k_masks draws subnetworks of any size."""
    return {name: mask.scores.detach().float().cpu().clone() for name, mask in masks.items()}


def top_k_masks(scores: dict[str, torch.Tensor], fraction: float) -> dict[str, torch.Tensor]:
    """The `fraction` of all masked weights with the highest scores, over every tensor at once: exactly
    round(fraction x weights) kept, ties broken by position (tensors in sorted name order, then flat index),
    so the result is deterministic. The discovered subnetwork keeps the weights whose score passes the
    method's threshold, the top of this order: any fraction above its own keeps all of it and adds the
    next-highest scores; any fraction below it keeps a subset of it."""
    if not 0 < fraction <= 1:
        raise ValueError(f"top-k fraction must lie in (0, 1], got {fraction}")
    names = sorted(scores)
    flat = torch.cat([scores[name].reshape(-1).float() for name in names])
    count = round(fraction * flat.numel())
    order = torch.sort(-flat, stable=True).indices  # highest first; equal scores keep their positions' order
    kept = torch.zeros(flat.numel(), dtype=torch.bool)
    kept[order[:count]] = True
    masks, offset = {}, 0
    for name in names:
        size = scores[name].numel()
        masks[name] = kept[offset:offset + size].reshape(scores[name].shape)
        offset += size
    return masks


def kept_fraction(binary_masks: dict[str, torch.Tensor]) -> dict:
    """Fraction of masked weights kept, per tensor and overall (weighted by tensor size); off = 1 - kept."""
    per_tensor = {name: float(mask.float().mean()) for name, mask in binary_masks.items()}
    kept = sum(int(mask.sum()) for mask in binary_masks.values())
    total = sum(mask.numel() for mask in binary_masks.values())
    return {"per_tensor": per_tensor, "overall": kept / total, "off": 1 - kept / total, "kept": kept, "total": total}


def find_masks(model: nn.Module) -> dict[str, WeightMask]:
    """The masks attached to a model, by the name of the weight they mask."""
    found = {}
    for module_name, module in model.named_modules():
        if parametrize.is_parametrized(module):
            for attribute, parametrizations in module.parametrizations.items():
                for parametrization in parametrizations:
                    if isinstance(parametrization, WeightMask):
                        found[f"{module_name}.{attribute}" if module_name else attribute] = parametrization
    return found


@torch.no_grad()
def apply_binary_masks(model: nn.Module, binary_masks: dict[str, torch.Tensor]) -> nn.Module:
    """Multiply the named weights of a plain (unmasked) model by their binary masks, in place.

    Rebuilds a submasked model from backbone + masks (+ a head loaded beforehand) as an ordinary module.
    """
    for name, mask in binary_masks.items():
        module, attribute = split_name(model, name)
        if parametrize.is_parametrized(module, attribute):
            raise ValueError(f"'{name}' already carries a parametrization; apply masks to a plain model")
        weight = getattr(module, attribute)
        if weight.shape != mask.shape:
            raise ValueError(f"mask for '{name}' has shape {tuple(mask.shape)}, weight {tuple(weight.shape)}")
        weight.mul_(mask.to(device=weight.device, dtype=weight.dtype))
    return model


def masks_to_bits(binary_masks: dict[str, torch.Tensor]) -> dict[str, dict]:
    """Boolean masks -> {name: {"shape": [...], "bits": uint8 tensor}}, 1 bit per weight."""
    packed = {}
    for name, mask in binary_masks.items():
        if mask.dtype != torch.bool:
            raise TypeError(f"mask '{name}' is {mask.dtype}, not bool")
        bits = np.packbits(mask.detach().cpu().numpy().reshape(-1))
        packed[name] = {"shape": list(mask.shape), "bits": torch.from_numpy(bits)}
    return packed


def masks_from_bits(packed: dict, where: str = "masks") -> dict[str, torch.Tensor]:
    """Inverse of `masks_to_bits` (a file of another shape: legacy.upgrade_record)."""
    masks = {}
    for name, value in upgrade_record(packed, "masks", where).items():
        if not {"shape", "bits"} <= set(value):
            raise ValueError(f"{where}: mask '{name}' is not packed ({{shape, bits}})")
        shape, bits = value["shape"], value["bits"]
        count = math.prod(shape)
        if bits.dtype != torch.uint8 or bits.numel() != (count + 7) // 8:
            raise ValueError(f"{where}: mask '{name}' has {bits.numel()} {bits.dtype} bytes for shape {shape}")
        flat = np.unpackbits(bits.numpy(), count=count).astype(bool)
        masks[name] = torch.from_numpy(flat).reshape(shape)
    return masks


def save_subnetwork(path, binary_masks: dict[str, torch.Tensor], **record) -> None:
    """A subnetwork file: the masks bit-packed, plus whatever the step records beside them."""
    from ..runtime import save_torch

    save_torch({"masks": masks_to_bits(binary_masks), **record}, path)


def load_subnetwork(path, required: tuple[str, ...] = ()) -> dict:
    """Read a subnetwork file (weights_only) and unpack its masks; names the file when something is missing."""
    from ..runtime import load_torch

    record = load_torch(path, ("masks", *required), "subnetwork")
    record["masks"] = masks_from_bits(record["masks"], where=str(path))
    return record
