"""The submasking family's adaptations, all through the one training loop (`training.fit`).

- `lp`: linear probe. Only a new head trains; the backbone is frozen in eval mode, so its features are
  computed once and the head trains on them (the same model, without recomputing a frozen forward).
- `fs`: full submasking. A straight-through mask on every conv/linear weight of the backbone (S0, threshold
  from the config) plus the new head; the backbone's weights never change and BatchNorm stays in eval mode
  (Piggyback's `train_nobn`).
- `fft`: full fine-tuning of backbone and head (BatchNorm in train mode).
- `ss_fs` / `ss_fft`: the mask (or the weights) train on a label-free objective, rotation prediction
  (0/90/180/270 degrees, a 4-way head that is then thrown away), on the task's training images; a linear
  probe on the labelled fraction follows.

Every run trains a fixed number of epochs and reports its last epoch: no selection on test data.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from ..method.masks import attach_masks, find_masks, hard_masks, hard_masks_on, mask_parameters
from ..training import Checkpointing, EpochRun, Schedule, epoch_order, eval_mode, fit
from .model import TaskModel, masked_weight_names
from .tasks import Split

ADAPTATIONS = ("lp", "fs", "fft", "ss_fs", "ss_fft")


def batches(split: Split, batch_size: int, seed: int, device, transform=None):
    def make(epoch):
        order = epoch_order(len(split), seed, epoch)
        for start in range(0, len(order), batch_size):
            chosen = order[start:start + batch_size]
            images, labels = split.images[chosen].to(device), split.labels[chosen].to(device)
            yield transform(images, labels) if transform else (images, labels)
    return make


@torch.no_grad()
def features(model: TaskModel, images: torch.Tensor, batch_size: int, device) -> torch.Tensor:
    with eval_mode(model):
        return torch.cat([model.features(images[i:i + batch_size].to(device)).cpu()
                          for i in range(0, len(images), batch_size)])


def cross_entropy(model, batch):
    images, labels = batch
    return nn.functional.cross_entropy(model(images), labels)


def rotations(images: torch.Tensor, labels: torch.Tensor):
    """Each image in one of four rotations, chosen by its position in the batch; labels are ignored."""
    quarter = torch.arange(len(images), device=images.device) % 4
    rotated = torch.stack([torch.rot90(image, int(k), dims=(1, 2)) for image, k in zip(images, quarter)])
    return rotated, quarter


def linear_probe(model: TaskModel, train: Split, hp: dict, seed: int, device, checkpointing: Checkpointing,
                 run: EpochRun) -> list[dict]:
    """Train `model.head` on frozen features (computed once, eval mode); returns the per-epoch history."""
    batch = hp["batch_size"]
    cached = Split(features(model, train.images, batch, device), train.labels, train.classes)
    head = model.head
    optimizer = torch.optim.AdamW(head.parameters(), lr=hp["head_lr"], weight_decay=hp.get("weight_decay", 0.0))
    result = fit(head, optimizer, cross_entropy, batches(cached, batch, seed, device),
                 lambda net: {}, Schedule(hp["epochs"], select=None), checkpointing, run)
    return result.history


def attach_submask(model: TaskModel, hp: dict) -> dict:
    """Straight-through masks on the backbone (freezing every weight); the head stays trainable."""
    masks = attach_masks(model, masked_weight_names(model), "straight_through", init=hp["mask_init"],
                         threshold=hp["threshold"])
    model.head.requires_grad_(True)
    return masks


def train_submask_or_finetune(model: TaskModel, adaptation: str, train: Split, hp: dict, seed: int, device,
                              checkpointing: Checkpointing, run: EpochRun) -> tuple[list[dict], dict]:
    """FS or FFT on labels, or (ss_fs, ss_fft) on rotation prediction with a temporary 4-way head."""
    objective = "rotation" if adaptation.startswith("ss_") else "labels"
    adaptation = adaptation.removeprefix("ss_")
    task_head = model.head
    if objective == "rotation":
        model.head = nn.Linear(task_head.in_features, 4).to(device)
    masks = attach_submask(model, hp) if adaptation == "fs" else {}
    if masks:
        groups = [{"params": mask_parameters(masks), "lr": hp["mask_lr"], "weight_decay": hp.get("mask_weight_decay", 0.0)},
                  {"params": model.head.parameters(), "lr": hp["head_lr"]}]
        train_mode = False  # BatchNorm statistics frozen, as Piggyback's train_nobn
    else:
        groups = [{"params": model.net.parameters(), "lr": hp["finetune_lr"]},
                  {"params": model.head.parameters(), "lr": hp["head_lr"]}]
        train_mode = True
    optimizer = torch.optim.Adam(groups)
    transform = rotations if objective == "rotation" else None
    result = fit(model, optimizer, cross_entropy, batches(train, hp["batch_size"], seed, device, transform),
                 lambda net: {}, Schedule(hp["epochs"], select=None), checkpointing, replace(run, train_mode=train_mode))
    binary = hard_masks(masks) if masks else {}
    if objective == "rotation":
        model.head = task_head
    return result.history, binary


def trained_backbone_context(model: TaskModel):
    """Score with the hard masks when the model carries any (a no-op for FFT)."""
    return hard_masks_on(find_masks(model))
