"""Backbones for submasking and the task model (backbone features + a new linear head).

A backbone is a timm network without its classifier. It comes from
- `vision_base`: the vision family's base model (`results/vision/chain<c>/base/model.pt`, through the DAG),
- `timm`: a local timm weight file (`resnet18`, `vit_base_patch32_clip_224` with CLIP weights, ...), read by
  timm's own loader (`pretrained_cfg_overlay={"file": ...}`), nothing downloaded,
- `swav`: a SwAV ResNet-50 state dict as Facebook distributes it (`module.` prefixes, projection head and
  prototypes dropped); every backbone tensor must be found in it.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before timm: a missing file must not cost ~30 s of retries

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..runtime import load_torch  # noqa: E402

# timm is imported where a backbone is built (load_backbone), not here: with it come torchvision, torch._dynamo and
# sympy (~3 s a process), and a pack whose points are all restored from their records builds none (issue 81).


class TaskModel(nn.Module):
    """uint8 images -> the backbone's pooled features -> a new linear head (class logits)."""

    def __init__(self, net: nn.Module, num_classes: int):
        super().__init__()
        net.reset_classifier(0)
        self.net = net
        self.head = nn.Linear(net.num_features, num_classes)
        config = net.pretrained_cfg
        self.register_buffer("mean", torch.tensor(config.get("mean", (0.5,) * 3)).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(config.get("std", (0.5,) * 3)).view(1, 3, 1, 1), persistent=False)

    def features(self, images: torch.Tensor) -> torch.Tensor:
        return self.net((images.float() / 255.0 - self.mean) / self.std).flatten(1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))


def masked_weight_names(model: TaskModel) -> list[str]:
    """Every conv/linear weight of the backbone (stem and downsample included), not the head's, no biases."""
    return [f"net.{name}.weight" for name, module in model.net.named_modules()
            if isinstance(module, (nn.Conv2d, nn.Linear)) and getattr(module, "weight", None) is not None]


def _swav_net(arch: str, weights: Path, model_kwargs: dict) -> nn.Module:
    import timm

    net = timm.create_model(arch, pretrained=False, num_classes=0, **model_kwargs)
    state = load_torch(weights, (), "SwAV state dict")
    state = state.get("state_dict", state)
    state = {k.removeprefix("module."): v for k, v in state.items()
             if not k.removeprefix("module.").startswith(("projection_head", "prototypes"))}
    missing, unexpected = net.load_state_dict(state, strict=False)
    if missing:
        raise ValueError(f"SwAV weights {weights} lack backbone tensors {missing[:5]} (of {len(missing)})")
    if unexpected:
        raise ValueError(f"SwAV weights {weights} hold tensors {unexpected[:5]} that {arch} does not have")
    return net


def load_backbone(spec: dict, path: str | Path | None = None) -> nn.Module:
    """The backbone network (timm, no classifier yet) for a config `submasking.backbone` entry."""
    source = spec["source"]
    if source == "vision_base":
        from ..vision.models import load_classifier

        classifier, _ = load_classifier(path)
        return classifier.net
    weights = Path(spec["weights"])
    if not weights.is_file():
        raise FileNotFoundError(f"backbone weight file {weights} does not exist")
    kwargs = spec.get("model_kwargs") or {}
    if source == "swav":
        return _swav_net(spec["arch"], weights, kwargs)
    if source == "timm":
        import timm

        try:
            return timm.create_model(spec["arch"], pretrained=True, pretrained_cfg_overlay={"file": str(weights)},
                                     **kwargs)
        except RuntimeError as error:
            raise ValueError(f"weights {weights} do not fit timm model '{spec['arch']}': {str(error)[:300]}") from error
    raise ValueError(f"unknown backbone source '{source}'")


def storage_bytes(model: TaskModel, adaptation: str, masked: list[str]) -> dict:
    """What one task costs to store: a mask bit per masked weight + the head, against a full weight copy."""
    head = sum(p.numel() * p.element_size() for p in model.head.parameters())
    full = sum(p.numel() * p.element_size() for p in model.state_dict().values() if p.is_floating_point())
    mask_bits = sum(model.get_parameter(name).numel() for name in masked) if adaptation in ("fs", "ss_fs") else 0
    task = {"lp": head, "fs": (mask_bits + 7) // 8 + head, "ss_fs": (mask_bits + 7) // 8 + head}.get(adaptation, full)
    return {"task_bytes": task, "full_copy_bytes": full}
