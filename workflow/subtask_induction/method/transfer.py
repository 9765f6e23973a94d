"""Transfer (paper Eq. 1): theta = gamma * theta_orig + (1 - gamma) * theta_new, only theta_new trained.

A `FrozenSubnetwork` parametrization puts the base model's kept weights (gamma = 1) into a freshly
initialised network. With lr_scale 0 they are buffers and never move; with lr_scale > 0 they are a
separate parameter trained at lr * lr_scale (paper Fig 7 "trainable"; in between is a knob for bias
strength). Controls: `random` (fresh model; with inherit_unmasked, the base's unmasked tensors in it, as SI
has them, and no weight frozen), `full` (fine-tune the base), `sampled` (random mask with
the discovered per-tensor count), `complement` (same count, drawn outside the discovered mask), and
`sampled_authors`, the authors' code's sampled control: every weight but a count-matched random draw frozen
(N - k per tensor, not k). `magnitude`, the pruning rival: each tensor's largest-|w| weights of the base, as many
as the subnetwork keeps in it (no discovery needed but the count).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils import parametrize

from .kinds import KINDS, reads_subnetwork
from .masks import split_name, top_k_masks


class FrozenSubnetwork(nn.Module):
    """Parametrization `new_weight -> where(gamma, subnetwork, new_weight)`."""

    def __init__(self, subnetwork: torch.Tensor, gamma: torch.Tensor, trainable: bool):
        super().__init__()
        self.register_buffer("gamma", gamma.bool().clone())
        values = subnetwork.detach().clone()
        if trainable:
            self.subnetwork = nn.Parameter(values)
        else:
            self.register_buffer("subnetwork", values)

    def forward(self, new_weight: torch.Tensor) -> torch.Tensor:
        # torch.where, not gamma*w + (1-gamma)*v: kept weights come through bit-identical.
        return torch.where(self.gamma, self.subnetwork, new_weight)


def sample_matched_mask(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random mask with exactly as many kept entries as `mask`."""
    count = int(mask.sum())
    chosen = torch.randperm(mask.numel(), generator=generator)[:count]
    sampled = torch.zeros(mask.numel(), dtype=torch.bool)
    sampled[chosen] = True
    return sampled.view_as(mask)


def check_complement_possible(masks: dict[str, torch.Tensor]) -> None:
    """The complement control needs, per tensor, at least as many positions outside the mask as inside."""
    too_dense = {name: round(float(mask.float().mean()), 4) for name, mask in masks.items()
                 if 2 * int(mask.sum()) > mask.numel()}
    if too_dense:
        raise ValueError(f"the complement control cannot be drawn: these tensors keep more than half their "
                         f"weights {too_dense}; drop `complement` or choose a sparser subnetwork (larger λ)")


def sample_complement_mask(mask: torch.Tensor, generator: torch.Generator, name: str = "") -> torch.Tensor:
    """A random mask with the same kept count as `mask`, drawn only from positions outside it."""
    count = int(mask.sum())
    outside = (~mask.bool()).flatten().nonzero().squeeze(1)
    if count > outside.numel():
        raise ValueError(
            f"complement control for '{name}': the mask keeps {count} of {mask.numel()} weights, "
            f"more than the {outside.numel()} outside it"
        )
    chosen = outside[torch.randperm(outside.numel(), generator=generator)[:count]]
    sampled = torch.zeros(mask.numel(), dtype=torch.bool)
    sampled[chosen] = True
    return sampled.view_as(mask)


def magnitude_mask(mask: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The `mask.sum()` entries of `weight` largest in absolute value (per tensor, count-matched: the rival is the
    same size as the subnetwork in every tensor; a global threshold would move weights between tensors)."""
    count = int(mask.sum())
    chosen = torch.topk(weight.detach().abs().flatten().float().cpu(), count).indices
    kept = torch.zeros(mask.numel(), dtype=torch.bool)
    kept[chosen] = True
    return kept.view_as(mask)


# How a kind's mask is drawn (kinds.TransferKind.mask): (the discovered masks, a generator, the base's weights) ->
# the masks it freezes, one per tensor
MASK_RULES = {
    "discovered": lambda masks, generator, base_state: {name: mask.bool() for name, mask in masks.items()},
    "matched": lambda masks, generator, base_state: {name: sample_matched_mask(mask, generator)
                                                     for name, mask in masks.items()},
    "complement": lambda masks, generator, base_state: {name: sample_complement_mask(mask, generator, name)
                                                        for name, mask in masks.items()},
    "matched_inverted": lambda masks, generator, base_state: {name: ~sample_matched_mask(mask, generator)
                                                              for name, mask in masks.items()},
    "complement_inverted": lambda masks, generator, base_state: {name: ~sample_complement_mask(mask, generator, name)
                                                                 for name, mask in masks.items()},
    "magnitude": lambda masks, generator, base_state: {name: magnitude_mask(mask, base_state[name])
                                                       for name, mask in masks.items()},
}


def signed_values(base_weight: torch.Tensor, fresh_weight: torch.Tensor) -> torch.Tensor:
    """The `signs` kind's frozen values: the base's sign with the fresh network's magnitude at each position. A base
    weight of exactly 0 has no sign and freezes at 0 (torch.sign(0) = 0), as sign(w)·|v| gives."""
    return torch.sign(base_weight) * fresh_weight.detach().abs().to(base_weight.dtype)


# How a kind's frozen positions get their values (kinds.TransferKind.values): (the base's weight, the fresh
# network's) -> the values frozen under the mask
VALUE_RULES = {
    "base": lambda base_weight, fresh_weight: base_weight,
    "signs": signed_values,
}


def control_masks(kind: str, masks: dict[str, torch.Tensor], generator: torch.Generator,
                  base_state: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """The masks a kind freezes (its record's mask rule): the discovered ones, a count-matched random draw per tensor,
    or (magnitude) the base's largest weights per tensor, count-matched (`base_state`: the base's weights)."""
    rule = KINDS[kind].mask
    if rule is None:
        raise ValueError(f"kind '{kind}' uses no mask")
    if rule == "magnitude" and base_state is None:
        raise ValueError("the magnitude control needs the base's weights")
    return MASK_RULES[rule](masks, generator, base_state)


def _insert_subnetwork(base: nn.Module, fresh: nn.Module, masks: dict[str, torch.Tensor], *, trainable: bool,
                       inherit_unmasked: bool, values: str = "base") -> nn.Module:
    """Put the base model's kept weights into `fresh` (modified in place and returned): frozen buffers, or
    (trainable) a parameter of their own. inherit_unmasked: copy every tensor that carries no mask
    (embeddings, norms, head, biases) from the base model too, as the authors' code does; False leaves them
    randomly initialised, as the paper says. TransferPlan.build calls it."""
    base_state = base.state_dict()
    if inherit_unmasked:
        inherit_unmasked_tensors(base, fresh, masks)
    for name, mask in masks.items():
        if name not in base_state:
            raise KeyError(f"mask for '{name}', which the base model does not have")
        module, attribute = split_name(fresh, name)
        if getattr(module, attribute).shape != mask.shape:
            raise ValueError(f"mask for '{name}' has shape {tuple(mask.shape)}, weight {tuple(getattr(module, attribute).shape)}")
        device = getattr(module, attribute).device
        kept = VALUE_RULES[values](base_state[name].to(device), getattr(module, attribute))
        frozen = FrozenSubnetwork(kept, mask.to(device), trainable=trainable)
        parametrize.register_parametrization(module, attribute, frozen, unsafe=True)
    return fresh


def inherit_unmasked_tensors(base: nn.Module, fresh: nn.Module, masks: dict[str, torch.Tensor]) -> nn.Module:
    """Copy into `fresh` every tensor of the base that carries no mask (embeddings, norms, head, biases);
    the masked tensors keep their fresh values. Modifies `fresh` in place and returns it."""
    unmasked = {key: value for key, value in base.state_dict().items() if key not in masks}
    missing, unexpected = fresh.load_state_dict(unmasked, strict=False)
    # The only tensors not copied may be the masked ones: anything else means the models differ.
    uncopied = sorted(set(missing) - set(masks))
    if uncopied or unexpected:
        raise ValueError(f"inherit_unmasked: the fresh model and the base differ; not copied {uncopied}, "
                         f"unknown to the fresh model {sorted(unexpected)}")
    return fresh


@dataclass(frozen=True)
class TransferPlan:
    """What a transfer variant does to the network it trains, read once from its settings and checked once:
    which weights come frozen from the base (`kind`: the discovered mask, a count-matched control, none or
    all; `top_k`: the top fraction of the discovery's mask scores instead of its hard mask), whether the
    transferred weights train (`lr_scale`: 0 frozen, else at lr * lr_scale), whether the tensors no mask
    covers come from the base (`inherit_unmasked`) and which parameters train (`trainable`: all, or only the
    classifier head: a linear probe). A lone model (vision) and a stacked pack (arithmetic) are built and
    given their optimizer groups from it: the one place a transfer's policy lives, checked once here."""

    kind: str
    lr_scale: float = 0.0
    inherit_unmasked: bool = False
    top_k: float | None = None
    trainable: str = "all"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown transfer kind '{self.kind}'; choose from {list(KINDS)}")
        if not 0.0 <= self.lr_scale <= 1.0:
            raise ValueError(f"lr_scale must lie in [0, 1], got {self.lr_scale}")
        if self.trainable not in ("all", "head"):
            raise ValueError(f"trainable must be all or head, got {self.trainable!r}")

    @classmethod
    def from_settings(cls, variant: dict) -> TransferPlan:
        """From a variant's config settings (the keys a plan does not use are left to their steps)."""
        return cls(variant["kind"], float(variant["lr_scale"]), bool(variant["inherit_unmasked"]),
                   variant.get("top_k"), variant.get("trainable", "all"))

    @property
    def reads_subnetwork(self) -> bool:
        """Whether it needs a discovered subnetwork (kinds.reads_subnetwork)."""
        return reads_subnetwork({"kind": self.kind, "inherit_unmasked": self.inherit_unmasked})

    @property
    def freezes_weights(self) -> bool:
        """Whether weights of the base come into the network through a mask (a masked kind)."""
        return KINDS[self.kind].masked

    @property
    def trains_subnetwork(self) -> bool:
        """Whether the transferred weights are a parameter the optimizer moves (lr_scale > 0)."""
        return self.freezes_weights and self.lr_scale > 0

    def subnetwork_lr(self, lr: float) -> float:
        """The one optimizer-group rule of a transfer: the transferred weights learn at lr * lr_scale when the
        plan trains them, else not at all (0); every other trained weight at lr. A lone model's groups
        (parameter_groups) and a pack's (arithmetic.stacked.optimizer_groups) both read it."""
        return lr * self.lr_scale if self.trains_subnetwork else 0.0

    def masks(self, subnetwork: dict) -> dict[str, torch.Tensor]:
        """The masks this plan transfers from a discovery's saved subnetwork (its hard masks, or with top_k
        the top fraction of its scores: a kept-% dial)."""
        if not self.top_k:
            return subnetwork["masks"]
        if subnetwork.get("scores") is None:
            raise ValueError(f"top_k {self.top_k:g} takes the top of the discovery's mask scores, and this subnetwork "
                             "file holds none (made before its discovery kept them): delete it and rerun its discovery")
        return top_k_masks(subnetwork["scores"], self.top_k)

    def build(self, base: nn.Module, fresh: nn.Module, masks: dict[str, torch.Tensor] | None,
              generator: torch.Generator) -> nn.Module:
        """The model a transfer run trains: `fresh` (random), with the base's unmasked tensors (random with
        inherit_unmasked), the base itself (full), or `fresh` with the base's weights under this plan's masks
        (`masks`, or a count-matched random draw: sampled, complement, sampled_authors, complement_authors) put in frozen or
        trainable. `generator` draws the control masks."""
        if self.kind == "random":
            if not self.inherit_unmasked:
                return fresh
            if masks is None:
                raise ValueError("kind random with inherit_unmasked takes the base's unmasked tensors: it needs "
                                 "the subnetwork's masks to say which tensors those are")
            return inherit_unmasked_tensors(base, fresh, masks)
        if self.kind == "full":
            return copy.deepcopy(base)
        return _insert_subnetwork(base, fresh, control_masks(self.kind, masks, generator, base.state_dict()),
                                  trainable=self.trains_subnetwork, inherit_unmasked=self.inherit_unmasked,
                                  values=KINDS[self.kind].values)

    def parameter_groups(self, model: nn.Module, lr: float, head: list[str] | None = None) -> list[dict]:
        """A lone model's optimizer groups: the trainable subnetwork (if any) at lr * lr_scale, every other
        trained parameter at lr; with trainable head, only the parameters named in `head` (the others are
        set not to require gradients). A pack's stacked model: arithmetic.stacked.optimizer_groups, from the
        same plans."""
        if self.trainable == "head":
            if not head:
                raise ValueError("trainable head: give the names of the head's parameters")
            head = set(head)
            for name, parameter in model.named_parameters():
                parameter.requires_grad_(name in head)
        subnetwork, rest = [], []
        for name, parameter in model.named_parameters():
            if not parameter.requires_grad:
                continue
            (subnetwork if name.endswith(".subnetwork") else rest).append(parameter)
        groups = [{"params": rest, "lr": lr}]
        if subnetwork:   # a parameter only when the plan trains it (FrozenSubnetwork)
            groups.append({"params": subnetwork, "lr": self.subnetwork_lr(lr)})
        return groups

