"""What the vision steps share: opening splits, the loss, optimisers, and the evaluation behind Table 1.

Every model is a `models.Classifier` (uint8 images in, one log-probability per class out), so the loss is a
negative log-likelihood and every decision an argmax, whatever the network's own output size.
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch
import torch.nn.functional as F

from ..claims import correct_bits
from ..images import ImageItem, ImageSet, list_images
from ..training import eval_mode
from .cue_conflict import cue_conflict_metrics, read_cue_conflict
from .classes import CATEGORIES


def open_split(roots, data: dict, name: str, classes=CATEGORIES, per_class: int | None = None,
               seed: int = 0) -> ImageSet:
    """A split from its image folder(s), read as data = {image_size, resize, in_memory, workers} says; class
    index k is classes[k] (classes.run_classes). `per_class`: only that many images of each class, drawn with
    `seed` (a smaller training set of the same classes, for a sample-efficiency curve)."""
    items = list_images(roots, classes, what=f"{name} images")
    if per_class is not None:
        items = per_class_subset(items, per_class, seed, name)
    return ImageSet(items, data["image_size"], data.get("resize"), in_memory=data.get("in_memory", True),
                    workers=data.get("workers", 0), name=name)


def per_class_subset(items: list[ImageItem], per_class: int, seed: int, name: str = "split") -> list[ImageItem]:
    """`per_class` items of each class, drawn without replacement by `seed`, in the split's own order; a class
    with fewer is an error (the curve's point would silently train on fewer images)."""
    generator = torch.Generator().manual_seed(seed)
    chosen = []
    for label in sorted({item.label for item in items}):
        members = [i for i, item in enumerate(items) if item.label == label]
        if len(members) < per_class:
            raise ValueError(f"{name}: class {label} has {len(members)} images, fewer than train_per_class {per_class}")
        chosen += [members[k] for k in torch.randperm(len(members), generator=generator)[:per_class].tolist()]
    return [items[i] for i in sorted(chosen)]


def open_cue_conflict(folder, data: dict, classes=CATEGORIES) -> tuple[ImageSet, list]:
    conflict = read_cue_conflict(Path(folder), classes)
    items = [ImageItem(c.path, classes.index(c.shape), f"{c.shape}/{c.path.name}") for c in conflict]
    return ImageSet(items, data["image_size"], data.get("resize"), in_memory=data.get("in_memory", True),
                    workers=data.get("workers", 0), name="cue-conflict"), conflict


def class_weights(labels: torch.Tensor, enabled: bool, n_classes: int = len(CATEGORIES)) -> torch.Tensor | None:
    """Inverse class frequency, mean 1 (ImageNet-16 is imbalanced: 'dog' has 109 member classes)."""
    if not enabled:
        return None
    counts = torch.bincount(labels, minlength=n_classes).float()
    weights = torch.where(counts > 0, counts.sum() / (n_classes * counts.clamp_min(1)), torch.zeros_like(counts))
    return weights


def nll_loss(weights: torch.Tensor | None = None):
    def loss(model, batch):
        images, labels = batch
        log_probs = model(images)
        return F.nll_loss(log_probs, labels, weight=None if weights is None else weights.to(log_probs.device))
    return loss


def answers_as_targets(images: ImageSet) -> ImageSet:
    """The same images with each label replaced by the image's own index: a label-free loss looks its target up
    by index (soft_target_loss), so no class label can reach it."""
    indexed = copy.copy(images)
    indexed.labels = torch.arange(len(images))
    return indexed


@torch.no_grad()
def answer_distribution(model, images: ImageSet, batch_size: int, device) -> torch.Tensor:
    """The model's class probabilities for each image (eval mode), in the set's order: a label-free target."""
    with eval_mode(model):
        return torch.cat([model(x.to(device)).exp().cpu() for x, _ in images.batches(batch_size)])


def soft_target_loss(targets: torch.Tensor):
    """Cross-entropy to a target distribution per image, for batches of (images, image indices)
    (answers_as_targets): KL(target || model) up to the targets' own entropy, a constant."""
    def loss(model, batch):
        images, index = batch
        return -(targets.to(images.device)[index] * model(images)).sum(-1).mean()
    return loss


def shuffled_batches(images: ImageSet, batch_size: int, seed: int, device):
    """batches(epoch) for the training loop: a seeded shuffle per epoch, moved to the device."""
    def batches(epoch):
        for x, y in images.batches(batch_size, seed=seed, epoch=epoch, shuffle=True):
            yield x.to(device), y.to(device)
    return batches


def make_optimizer(parameters, settings: dict) -> torch.optim.Optimizer:
    """settings: optimizer (sgd | adamw), lr, momentum, weight_decay."""
    kind = settings.get("optimizer", "sgd")
    if kind == "sgd":
        return torch.optim.SGD(parameters, lr=settings["lr"], momentum=settings.get("momentum", 0.9),
                               weight_decay=settings.get("weight_decay", 0.0))
    if kind == "adamw":
        return torch.optim.AdamW(parameters, lr=settings["lr"], weight_decay=settings.get("weight_decay", 0.0))
    raise ValueError(f"optimizer '{kind}' is not sgd or adamw")


@torch.no_grad()
def predict(model, images: ImageSet, batch_size: int, device) -> torch.Tensor:
    with eval_mode(model):
        return torch.cat([model(x.to(device)).argmax(-1).cpu() for x, _ in images.batches(batch_size)])


def accuracy(model, images: ImageSet, batch_size: int, device) -> float:
    return (predict(model, images, batch_size, device) == images.labels).float().mean().item()


def per_class_accuracy(predictions: torch.Tensor, labels: torch.Tensor, classes=CATEGORIES) -> dict[str, float]:
    return {category: (predictions[labels == k] == k).float().mean().item()
            for k, category in enumerate(classes) if (labels == k).any()}


def balanced_accuracy(predictions: torch.Tensor, labels: torch.Tensor, classes=CATEGORIES) -> float:
    """Mean over the classes present of each class's accuracy (ImageNet-16's test split is ~76% dog + bird)."""
    per_class = per_class_accuracy(predictions, labels, classes)
    return sum(per_class.values()) / len(per_class)


def evaluate(model, test: ImageSet, pooled_test: ImageSet, batch_size: int, device, classes=CATEGORIES) -> dict:
    """Table 1's test numbers for one model: original and pooled test accuracy (plain and class-balanced), each
    also per class, and which items it got right. The cue-conflict numbers are evaluate_cue_conflict's, in a
    rule of their own (a new cue-conflict folder retrains nothing)."""
    original = predict(model, test, batch_size, device)
    pooled = predict(model, pooled_test, batch_size, device)
    per_class = {category: {"original_accuracy": None, "pooled_accuracy": None} for category in classes}
    for key, predictions, labels in (("original_accuracy", original, test.labels),
                                     ("pooled_accuracy", pooled, pooled_test.labels)):
        for category, value in per_class_accuracy(predictions, labels, classes).items():
            per_class[category][key] = value
    return {
        "original_accuracy": (original == test.labels).float().mean().item(),
        "original_balanced_accuracy": balanced_accuracy(original, test.labels, classes),
        "pooled_accuracy": (pooled == pooled_test.labels).float().mean().item(),
        "pooled_balanced_accuracy": balanced_accuracy(pooled, pooled_test.labels, classes),
        "per_class": per_class,
        # which items it got right, for paired tests between models (claims.py)
        "items": {"original_correct": correct_bits((original == test.labels).cpu()),
                  "pooled_correct": correct_bits((pooled == pooled_test.labels).cpu()),
                  "n_test": len(test.labels)},
    }


def evaluate_cue_conflict(model, conflict: tuple[ImageSet, list], batch_size: int, device, classes=CATEGORIES) -> dict:
    """Table 1's cue-conflict numbers for one model, in `evaluate`'s layout (metrics, per_class, items) so a
    table merges them key by key: shape accuracy, robustness, shape bias, texture accuracy, each also per
    class, and which conflict images (shape != texture) it classified as their shape and as their texture."""
    conflict_set, conflict_items = conflict
    decisions = [classes[k] for k in predict(model, conflict_set, batch_size, device).tolist()]
    cue = cue_conflict_metrics(conflict_items, decisions, classes)
    return {
        "cue_shape_accuracy": cue["shape_accuracy"],
        "cue_robustness": cue["robustness"],
        "shape_bias": cue["shape_bias"],
        "cue_texture_accuracy": cue["texture_accuracy"],
        "n_conflict": cue["n_conflict"],
        "per_class": {category: {f"cue_{key}": value for key, value in values.items()}
                      for category, values in cue["per_class"].items()},
        "items": {"conflict_shape": correct_bits([d == item.shape for d, item in zip(decisions, conflict_items)
                                                  if item.shape != item.texture]),
                  "conflict_texture": correct_bits([d == item.texture for d, item in zip(decisions, conflict_items)
                                                    if item.shape != item.texture]),
                  "n_conflict": cue["n_conflict"]},
    }
