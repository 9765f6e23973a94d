"""Where a subnetwork's pooled accuracy lives: checks on the base, the subnetwork and SI's starting point.

BatchNorm layers normalise with statistics stored from the images a network was trained on. Discovery
runs the base in eval mode, so a mask can raise pooled accuracy partly by shifting activations against
those stored statistics; a transfer run trains in train mode and re-estimates them on original images.
None of these checks trains a network:

- BatchNorm statistics re-estimated, labels unused: the base on pooled discovery images (how much of its
  pooled deficit is a statistics shift), the subnetwork on original training images (what is left of
  its pooled gain once the statistics are those of the images SI trains on).
- A linear probe: a linear classifier fit on the penultimate features of the pooled discovery images,
  scored on the pooled test images, for the base, for the model SI starts from (subnetwork frozen, the
  rest as the SI variant sets it) and for a fresh network. Statistics come from the original training
  images. It tells whether SI's starting point carries the subnetwork's pooled ability at all.

Networks without BatchNorm (ViT) have nothing to re-estimate: those rows equal the stored ones.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..rounding import fixed
from ..images import ImageSet
from .models import FrozenStatisticsBatchNorm2d
from .tasks import accuracy


def _norm_layers(model: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    """The BatchNorm layers whose statistics a re-estimation may move: not those a variant keeps frozen from the base
    (batchnorm base_frozen: they normalise with the base's statistics in training too)."""
    return [m for m in model.modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, FrozenStatisticsBatchNorm2d)]


def statistics_source(model: nn.Module, images: str) -> str:
    """What a re-estimated model's BatchNorm statistics come from (the table's column)."""
    frozen = any(isinstance(m, FrozenStatisticsBatchNorm2d) for m in model.modules())
    return "the base's (kept frozen)" if frozen else images


@torch.no_grad()
def reestimate_batchnorm(model: nn.Module, images: ImageSet, *, max_images: int, batch_size: int, seed: int,
                         device) -> nn.Module:
    """A copy of `model` in eval mode whose BatchNorm statistics are re-estimated on the first `max_images`
    of a seeded shuffle of `images`: the equal-weight average of the per-batch statistics (what PyTorch
    keeps with momentum=None). Nothing else changes."""
    model = copy.deepcopy(model)
    layers = _norm_layers(model)
    for layer in layers:
        layer.reset_running_stats()
        layer.momentum = None  # cumulative average over the batches seen
    if layers:
        model.train()
        seen = 0
        for x, _ in images.batches(batch_size, seed=seed, shuffle=True):
            x = x[: max_images - seen]
            model(x.to(device))
            seen += len(x)
            if seen >= max_images:
                break
    return model.eval()


@torch.no_grad()
def apply_masks(model: nn.Module, masks: dict[str, torch.Tensor]) -> nn.Module:
    """A copy of `model` with every masked weight multiplied by its mask: the subnetwork as discovery saw it."""
    model = copy.deepcopy(model)
    parameters = dict(model.named_parameters())
    for name, mask in masks.items():
        parameters[name].mul_(mask.to(parameters[name].device, parameters[name].dtype))
    return model


@torch.no_grad()
def penultimate_features(model: nn.Module, images: ImageSet, batch_size: int, device) -> torch.Tensor:
    """The timm network's pre-logit features (what the classifier reads), in eval mode."""
    model.eval()
    return torch.cat([model.features(x.to(device)).cpu() for x, _ in images.batches(batch_size)])


def linear_probe_accuracy(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, test_y: torch.Tensor,
                          *, classes: int, seed: int, steps: int = 300) -> float:
    """Fit a linear classifier on standardised features (full batch, Adam, weight decay), score on test."""
    mean, std = train_x.mean(0), train_x.std(0) + 1e-6
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    generator = torch.Generator().manual_seed(seed)
    head = nn.Linear(train_x.shape[1], classes)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=generator) * 0.01)
        head.bias.zero_()
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-2, weight_decay=1e-3)
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.cross_entropy(head(train_x), train_y).backward()
        optimizer.step()
    with torch.no_grad():
        return (head(test_x).argmax(-1) == test_y).float().mean().item()


def diagnose(base: nn.Module, subnetwork_masks: dict, si_start: dict[str, nn.Module], fresh: nn.Module, *,
             train: ImageSet, pooled_discovery: ImageSet, test: ImageSet, pooled_test: ImageSet,
             max_images: int, batch_size: int, seed: int, device, classes: int) -> list[dict]:
    """The rows of the diagnostics table. si_start: the SI variants' models before training, by name."""
    def scored(check: str, model_name: str, statistics: str, model: nn.Module) -> dict:
        return {"check": check, "model": model_name, "batchnorm_statistics": statistics,
                "original_accuracy": accuracy(model, test, batch_size, device),
                "pooled_accuracy": accuracy(model, pooled_test, batch_size, device)}

    def reestimated(model, images):
        return reestimate_batchnorm(model, images, max_images=max_images, batch_size=batch_size, seed=seed,
                                    device=device)

    subnetwork = apply_masks(base, subnetwork_masks)
    rows = [scored("stored", "base", "stored", base),
            scored("re-estimated", "base", "pooled discovery", reestimated(base, pooled_discovery)),
            scored("stored", "subnetwork", "stored", subnetwork),
            scored("re-estimated", "subnetwork", "original train", reestimated(subnetwork, train))]
    probed = {"base": base, **si_start, "fresh": fresh}
    for name, model in probed.items():
        model = reestimated(model, train)
        features = penultimate_features(model, pooled_discovery, batch_size, device)
        test_features = penultimate_features(model, pooled_test, batch_size, device)
        rows.append({"check": "linear probe", "model": name, "batchnorm_statistics": statistics_source(model, "original train"),
                     "original_accuracy": None,
                     "pooled_accuracy": linear_probe_accuracy(features, pooled_discovery.labels, test_features,
                                                              pooled_test.labels, classes=classes, seed=seed)})
    return rows


def diagnostics_markdown(rows: list[dict]) -> str:
    lines = ["| check | model | BatchNorm statistics from | original | pooled |", "|---|---|---|---|---|"]
    for row in rows:
        original = "—" if row["original_accuracy"] is None else f"{fixed(100 * row['original_accuracy'], 1)}"
        lines.append(f"| {row['check']} | {row['model']} | {row['batchnorm_statistics']} | {original} | "
                     f"{fixed(100 * row['pooled_accuracy'], 1)} |")
    return "\n".join(lines) + "\n"
