"""timm image classifiers for the vision family: building, local pretrained weights, saving, loading.

A `Classifier` wraps a timm network with its input normalisation and the map from the network's outputs
to the 16 categories: the identity for a 16-way network, the mean probability of each category's member
classes for a 1000-way ImageNet network. Its forward pass takes uint8 images and returns 16-way
log-probabilities, so every loss, accuracy and cue-conflict decision is taken the same way.
Pretrained weights come only from a local file; nothing is downloaded.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before timm: a missing file must not cost ~30 s of retries

import timm  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.utils import parametrize  # noqa: E402

from ..runtime import load_torch  # noqa: E402
from .classes import member_indices  # noqa: E402
from .imagenet16 import category_probabilities  # noqa: E402
from ..method.transfer import FrozenSubnetwork  # noqa: E402
from .layers import BATCHNORM_STARTS, HEAD_STARTS, LAYER_ARGUMENTS, UNKEPT_STARTS  # noqa: E402


@timm.models.register_model
def vit_world_patch4(pretrained: bool = False, **kwargs) -> nn.Module:
    """A small timm VisionTransformer for the generated world's 32 px images: 4 px patches (64 tokens),
    width 96, 4 blocks of 3 heads (0.45M weights, near the quarter-width ResNet18's 0.7M). Registered under
    this name so a config selects it with `model.arch` alone (`model_kwargs: null`), no kwargs to merge."""
    from timm.models.vision_transformer import _create_vision_transformer

    args = {"img_size": 32, "patch_size": 4, "embed_dim": 96, "depth": 4, "num_heads": 3, **kwargs}
    if not args.get("pretrained_cfg"):  # timm passes None for a model without registered weights
        args["pretrained_cfg"] = {"input_size": (3, args["img_size"], args["img_size"]), "mean": (0.5, 0.5, 0.5),
                                  "std": (0.5, 0.5, 0.5), "num_classes": args.get("num_classes", 1000)}
    return _create_vision_transformer("vit_world_patch4", pretrained=pretrained, **args)


# How a batch of images is laid out in memory (a model spec's `memory_format`; config vision.model.memory_format).
# channels_last (NHWC) lets the CPU's convolution, BatchNorm and max-pooling kernels run without reordering: a
# training step of the quarter-width ResNet18 costs about 1/1.4 of NCHW's. Its sums run in another order, so its
# numbers differ from NCHW's in the last bits and a trained model differs as a whole; a spec without the key (a
# model file of an older run) keeps NCHW.
MEMORY_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last}


class Classifier(nn.Module):
    def __init__(self, net: nn.Module, num_outputs: int, memory_format: str = "contiguous"):
        super().__init__()
        if memory_format not in MEMORY_FORMATS:
            raise ValueError(f"memory_format '{memory_format}' is not one of {sorted(MEMORY_FORMATS)}")
        # the input's layout decides the convolutions': the weights keep theirs, so saved files are alike
        self.memory_format = MEMORY_FORMATS[memory_format]
        if num_outputs < 2:
            raise ValueError(f"a classifier needs at least 2 outputs, got {num_outputs}")
        # 1000 outputs are ImageNet-1k's classes, read as Geirhos' 16 categories; any other count is the run's own
        # classes (16 for the world and ImageNet-16, a folder source's class count: checked at start-up)
        self.net, self.num_outputs = net, num_outputs
        config = net.pretrained_cfg
        self.register_buffer("mean", torch.tensor(config.get("mean", (0.5,) * 3)).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(config.get("std", (0.5,) * 3)).view(1, 3, 1, 1), persistent=False)
        self.members = member_indices() if num_outputs == 1000 else None

    def normalise(self, images: torch.Tensor) -> torch.Tensor:
        """uint8 images -> the network's input (its pretrained_cfg mean and std)."""
        return ((images.float() / 255.0 - self.mean) / self.std).contiguous(memory_format=self.memory_format)

    def features(self, images: torch.Tensor) -> torch.Tensor:
        """The pre-logit features the classifier reads."""
        net = self.net
        return net.forward_head(net.forward_features(self.normalise(images)), pre_logits=True).flatten(1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        logits = self.net(self.normalise(images))
        if self.members is None:
            return F.log_softmax(logits, dim=-1)
        return category_probabilities(logits, self.members).clamp_min(1e-12).log()



def model_arguments(model_kwargs: dict) -> dict:
    """A config's model_kwargs as timm.create_model takes them: layer names (LAYER_ARGUMENTS) made classes."""
    out = dict(model_kwargs)
    for key, names in LAYER_ARGUMENTS.items():
        if isinstance(out.get(key), str):
            if out[key] not in names:
                raise ValueError(f"model_kwargs {key}: '{out[key]}' is not one of {sorted(names)}")
            out[key] = getattr(timm.layers, names[out[key]])
    return out


def _create(arch: str, num_outputs: int, model_kwargs: dict, weights: str | None = None) -> nn.Module:
    model_kwargs = model_arguments(model_kwargs)
    try:
        if weights:
            return timm.create_model(arch, pretrained=True, pretrained_cfg_overlay={"file": str(weights), "num_classes": num_outputs},
                                     num_classes=num_outputs, **model_kwargs)
        return timm.create_model(arch, pretrained=False, num_classes=num_outputs, **model_kwargs)
    except RuntimeError as error:
        if weights:
            raise ValueError(f"pretrained weights {weights} do not fit timm model '{arch}' with {num_outputs} outputs: "
                             f"{str(error)[:400]}") from error
        raise


def variant_spec(spec: dict, variant: dict) -> dict:
    """The model a transfer variant trains: the base's spec, with the variant's model_kwargs (an architectural
    rival, trained from scratch) over the base's."""
    if not variant.get("model_kwargs"):
        return spec
    return {**spec, "model_kwargs": {**(spec.get("model_kwargs") or {}), **variant["model_kwargs"]}}


class FrozenStatisticsBatchNorm2d(nn.BatchNorm2d):
    """A BatchNorm that stays in evaluation mode, in training too: its stored statistics normalise every batch and
    are never updated. Its state (and a saved model's) is a BatchNorm2d's, so a saved model loads as a plain one."""

    def train(self, mode: bool = True):
        return super().train(False)


def keep_base_batchnorm(model: Classifier, base: Classifier) -> Classifier:
    """Every BatchNorm of `model` takes the base's statistics and affine weights, frozen (no gradient) and in
    evaluation mode while the rest trains (a variant's batchnorm: base_frozen). Modifies `model` in place."""
    base_modules = dict(base.named_modules())
    kept = 0
    for name, module in model.named_modules():
        if type(module) is nn.BatchNorm2d:
            source = base_modules.get(name)
            if not isinstance(source, nn.BatchNorm2d):
                raise ValueError(f"batchnorm base_frozen: the base has no BatchNorm at {name!r}")
            module.load_state_dict(source.state_dict())
            for parameter in module.parameters(recurse=False):
                parameter.requires_grad_(False)
            module.__class__ = FrozenStatisticsBatchNorm2d
            kept += 1
    if not kept:
        raise ValueError("batchnorm base_frozen: the network has no BatchNorm2d layer to keep")
    return model


def keep_base_head(model: Classifier, base: Classifier) -> Classifier:
    """The classifier head of `model` takes the base's weights, frozen (a variant's head: base_frozen). Modifies `model`
    in place."""
    head, source = model.net.get_classifier(), base.net.get_classifier()
    if not isinstance(head, nn.Module) or not list(head.parameters()):
        raise ValueError("head base_frozen: the network has no classifier head with weights to keep")
    head.load_state_dict(source.state_dict())
    for parameter in head.parameters():
        parameter.requires_grad_(False)
    return model


def freeze_unkept_at_authors_draw(model: Classifier, seed: int) -> Classifier:
    """Every transferred tensor's weights under the mask's zeros drawn again uniform in ±1/√fan_in and frozen (a
    variant's unkept: authors_frozen): the authors' code redraws each masked conv's weight in place so (NeuroSurgeon's
    _init_subnet_transfer) and, its base frozen, never trains it. fan_in is torch's (in_channels / groups × kernel),
    the authors' in_channels × kernel for the ungrouped convs of a ResNet. One generator (`seed`, the role "masked
    init") draws the tensors in module order. Modifies `model` in place."""
    generator, drawn = torch.Generator().manual_seed(seed), 0
    for module in model.modules():
        if not parametrize.is_parametrized(module):
            continue
        for attribute, chain in module.parametrizations.items():
            if not any(isinstance(p, FrozenSubnetwork) for p in chain):
                continue
            unkept = chain.original
            bound = 1.0 / math.sqrt(unkept[0].numel())
            with torch.no_grad():
                draw = torch.rand(unkept.shape, generator=generator, dtype=torch.float32) * (2 * bound) - bound
                unkept.copy_(draw.to(unkept.device, unkept.dtype))
            unkept.requires_grad_(False)
            drawn += 1
    if not drawn:
        raise ValueError("unkept authors_frozen: the network has no transferred (masked) weight; it needs a masked kind")
    return model


def transfer_start(plan, variant: dict, base: Classifier, spec: dict, masks, seeds: dict) -> Classifier:
    """The model a vision transfer variant starts from, as its run and the diagnostics build it: a fresh classifier
    of `spec` from the init seed (with batchnorm unit_scales, without timm's zero initialisation of each residual
    block's last scale), given the base's weights by the TransferPlan `plan` (`masks`: the masks it transfers, or
    None), then (batchnorm base_frozen) the base's BatchNorm, frozen; (head base_frozen) the base's head, frozen;
    (unkept authors_frozen) the weights under the masks' zeros at the authors' draw, frozen (seeds["masked_init"])."""
    start = variant.get("batchnorm")
    for key, starts in (("batchnorm", BATCHNORM_STARTS), ("head", HEAD_STARTS), ("unkept", UNKEPT_STARTS)):
        if variant.get(key) is not None and variant[key] not in starts:
            raise ValueError(f"{key} {variant[key]!r} is not one of {sorted(starts)}")
    fresh_spec = spec
    if start == "unit_scales":
        fresh_spec = {**spec, "model_kwargs": {**(spec.get("model_kwargs") or {}), "zero_init_last": False}}
    try:
        fresh = build_classifier(fresh_spec, seeds["init"])
    except TypeError as error:
        raise ValueError(f"batchnorm unit_scales: timm model {spec['arch']!r} takes no zero_init_last "
                         f"({error})") from error
    model = plan.build(base, fresh, masks, torch.Generator().manual_seed(seeds["mask"]))
    if start == "base_frozen":
        keep_base_batchnorm(model, base)
    if variant.get("head") == "base_frozen":
        keep_base_head(model, base)
    if variant.get("unkept") == "authors_frozen":
        if "masked_init" not in seeds:
            raise ValueError("unkept authors_frozen draws the unkept weights by the seed role 'masked init': give "
                             "seeds['masked_init'] (seeds.vision_seeds('transfer', chain, masked_init=True))")
        freeze_unkept_at_authors_draw(model, seeds["masked_init"])
    return model


def build_classifier(spec: dict, seed: int) -> Classifier:
    """A freshly initialised classifier (seeded) for spec = {arch, num_outputs, model_kwargs}."""
    torch.manual_seed(seed)
    return Classifier(_create(spec["arch"], spec["num_outputs"], spec.get("model_kwargs") or {}), spec["num_outputs"],
                      spec.get("memory_format", "contiguous"))


def load_pretrained_classifier(spec: dict, weights: str | Path) -> Classifier:
    """timm's own loader on a local file (pretrained_cfg_overlay=dict(file=...)), read with weights_only."""
    if not Path(weights).is_file():
        raise FileNotFoundError(f"pretrained weight file {weights} does not exist")
    net = _create(spec["arch"], spec["num_outputs"], spec.get("model_kwargs") or {}, weights=str(weights))
    return Classifier(net, spec["num_outputs"], spec.get("memory_format", "contiguous"))


def save_classifier(model: Classifier, spec: dict) -> dict:
    """What a model.pt holds: the timm network's state and the spec that rebuilds it. A parametrized weight (a
    transferred subnetwork, a mask) is stored as the tensor the forward pass uses, so the file loads into a
    plain network of the spec and computes what the model did."""
    state = {k: v for k, v in model.net.state_dict().items() if ".parametrizations." not in k}
    with torch.no_grad():
        for prefix, module in model.net.named_modules():
            if parametrize.is_parametrized(module):
                for attribute in module.parametrizations:
                    state[f"{prefix}.{attribute}" if prefix else attribute] = getattr(module, attribute)
    return {"spec": spec, "state_dict": {k: v.detach().cpu() for k, v in state.items()}}


def load_classifier(path: str | Path) -> tuple[Classifier, dict]:
    saved = load_torch(path, ("spec", "state_dict"), "vision model")
    model = build_classifier(saved["spec"], seed=0)
    try:
        model.net.load_state_dict(saved["state_dict"])
    except RuntimeError as error:
        raise ValueError(f"{path}: the weights do not fit {saved['spec']}: {str(error)[:300]}") from error
    return model, saved["spec"]


def masked_weight_names(model: Classifier) -> list[str]:
    """Every layer's weight matrix or kernel except the classifier's (paper §5: masks on all layers but the head)."""
    head = model.net.get_classifier()
    head_weights = {id(p) for p in head.parameters()} if isinstance(head, nn.Module) else set()
    return [name for name, p in model.named_parameters()
            if name.endswith("weight") and p.ndim >= 2 and id(p) not in head_weights]


def head_parameter_names(model: Classifier) -> list[str]:
    head = {id(p) for p in model.net.get_classifier().parameters()}
    return [name for name, p in model.named_parameters() if id(p) in head]
