"""A pack of M arithmetic GPT-2s as one model: every weight carries a leading model dimension.

`StackedGPT2.from_models` takes the M `GPT2LMHeadModel`s exactly as their `method.transfer.TransferPlan`s
build them (a fresh model, a copy of the base, or a fresh model with a `FrozenSubnetwork`
parametrization), so initialisation seeds, control masks and inherited tensors come from the one transfer
code path. Its forward pass is HF GPT-2's (pre-LN blocks, causal attention, tanh GELU, head tied to the
token embedding) with batched matmuls; `tests/test_pack.py` checks it against `GPT2LMHeadModel`.

Storage: all weights a point trains at the transfer lr live in one flat parameter `weights` [M, P]; the
frozen (or lr_scale-trained) subnetwork values in `subnetwork` [M, S] with the boolean `gamma` [M, S]
saying which entries the subnetwork supplies. The effective weight is where(gamma, subnetwork, weights),
as in FrozenSubnetwork. Flat storage keeps the optimizer to a few kernels per step on a GPU.

Checkpoints hold only what training changes: `weights`, the subnetwork rows of the points that train
theirs (lr_scale > 0) and the step counter. `gamma`, the dropout keys and the frozen subnetwork rows
(zero for `random` and `full` points) are rebuilt from the inputs by `from_models` before a resume loads
the checkpoint over them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

from ..method.masks import split_name
from ..method.transfer import TransferPlan
from ..stacked_training import counter_dropout, dropout_keys
from .model import masked_weight_names

if TYPE_CHECKING:  # transformers itself is imported where a reference GPT-2 is built (arithmetic/model.py says why)
    from transformers import GPT2Config


def _plain_names(config: GPT2Config) -> list[tuple[str, torch.Size]]:
    """Every parameter of a plain GPT-2 of this config (the head is tied to the token embedding)."""
    from transformers import GPT2LMHeadModel

    reference = GPT2LMHeadModel(config)
    return [(name, parameter.shape) for name, parameter in reference.named_parameters()]


def _point_tensors(model: nn.Module, name: str) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """(trained weight, subnetwork values, gamma) of one parameter of one point's model."""
    module, attribute = split_name(model, name)
    if parametrize.is_parametrized(module, attribute):
        parametrization = module.parametrizations[attribute]
        frozen = parametrization[0]
        return parametrization.original.detach(), frozen.subnetwork.detach(), frozen.gamma
    return getattr(module, attribute).detach(), None, None


class StackedGPT2(nn.Module):
    """M GPT-2s of one config trained as one model. forward(input_ids [M, B, T]) -> .logits [M, B, T, V]."""

    def __init__(self, config: GPT2Config, count: int, seeds: list[int]):
        from transformers import GPT2LMHeadModel

        super().__init__()
        if len(seeds) != count:
            raise ValueError(f"{count} models but {len(seeds)} seeds")
        self.config, self.count = config, count
        self.layout: dict[str, tuple[int, torch.Size]] = {}
        offset = 0
        for name, shape in _plain_names(config):
            self.layout[name] = (offset, shape)
            offset += shape.numel()
        self.sub_layout: dict[str, tuple[int, torch.Size]] = {}
        sub_offset = 0
        for name in masked_weight_names(GPT2LMHeadModel(config)):
            shape = self.layout[name][1]
            self.sub_layout[name] = (sub_offset, shape)
            sub_offset += shape.numel()
        self.weights = nn.Parameter(torch.zeros(count, offset))
        self.subnetwork = nn.Parameter(torch.zeros(count, sub_offset))
        # Rebuilt from the inputs (from_models), so not in a checkpoint (module docstring).
        self.register_buffer("gamma", torch.zeros(count, sub_offset, dtype=torch.bool), persistent=False)
        self.register_buffer("dropout_keys", dropout_keys(seeds), persistent=False)
        self.register_buffer("subnetwork_trains", torch.zeros(count, dtype=torch.bool), persistent=False)
        self.register_buffer("forward_count", torch.zeros((), dtype=torch.int64))
        self.dropout = config.resid_pdrop
        self._masked = None
        if not (config.resid_pdrop == config.embd_pdrop == config.attn_pdrop):
            raise ValueError("StackedGPT2 takes one dropout rate for embeddings, attention and residuals")

    @classmethod
    def from_models(cls, models: list[nn.Module], seeds: list[int], plans: list[TransferPlan]) -> "StackedGPT2":
        """Stack the points' models, each built by its plan (TransferPlan.build: FrozenSubnetwork
        parametrizations on masked weights); a plan says whether its point's subnetwork trains."""
        if len(plans) != len(models):
            raise ValueError(f"{len(plans)} transfer plans for a pack of {len(models)}")
        config = models[0].config
        for model in models[1:]:
            if model.config.to_dict() != config.to_dict():
                raise ValueError("a pack holds models of one architecture; these configs differ")
        stacked = cls(config, len(models), seeds).to(next(models[0].parameters()).device)
        with torch.no_grad():
            for index, model in enumerate(models):
                for name, (offset, shape) in stacked.layout.items():
                    weight, sub, gamma = _point_tensors(model, name)
                    stacked.weights[index, offset:offset + shape.numel()] = weight.reshape(-1)
                    if sub is not None:
                        sub_offset = stacked.sub_layout[name][0]
                        stacked.subnetwork[index, sub_offset:sub_offset + shape.numel()] = sub.reshape(-1)
                        stacked.gamma[index, sub_offset:sub_offset + shape.numel()] = gamma.reshape(-1)
            stacked.subnetwork_trains[:] = torch.tensor([plan.trains_subnetwork for plan in plans])
        return stacked

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Only the subnetwork rows of points that train them (a checkpoint holds what training changes)."""
        super()._save_to_state_dict(destination, prefix, keep_vars)
        rows = self.subnetwork_trains.nonzero().flatten()
        destination[prefix + "subnetwork"] = destination[prefix + "subnetwork"][rows]
        destination[prefix + "subnetwork_rows"] = rows.cpu()

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        """Puts the saved trained rows over the subnetwork from_models rebuilt (frozen rows stay as built)."""
        self._masked = None
        key, rows_key = prefix + "subnetwork", prefix + "subnetwork_rows"
        if rows_key in state_dict:
            rows = state_dict.pop(rows_key).to(self.subnetwork.device)
            if not torch.equal(rows.cpu(), self.subnetwork_trains.nonzero().flatten().cpu()):
                raise ValueError("this checkpoint trains the subnetworks of other points than this pack")
            full = self.subnetwork.detach().clone()
            full[rows] = state_dict[key].to(full.device, full.dtype)
            state_dict[key] = full
        return super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def effective_weights(self) -> dict[str, torch.Tensor]:
        """Every effective weight [M, *shape] the forward pass uses: where(gamma, subnetwork, weights).

        One split of each flat tensor (not one slice per weight): its backward is one concatenation,
        where a slice per weight would fill a zero [M, P] gradient per weight."""
        trained = dict(zip(self.layout, self.weights.split([shape.numel() for _, shape in self.layout.values()], dim=1)))
        sizes = [shape.numel() for _, shape in self.sub_layout.values()]
        subnetwork = dict(zip(self.sub_layout, self.subnetwork.split(sizes, dim=1)))
        gamma = dict(zip(self.sub_layout, self.gamma.split(sizes, dim=1)))
        if self._masked is None:  # gamma never changes after stacking; asking the device once is enough
            self._masked = bool(self.gamma.any())
        masked = self._masked
        out = {}
        for name, (_, shape) in self.layout.items():
            weight = trained[name]
            if name in self.sub_layout and masked:
                weight = torch.where(gamma[name], subnetwork[name], weight)
            out[name] = weight.view(self.count, *shape)
        return out

    def weight(self, name: str) -> torch.Tensor:
        """One effective weight [M, *shape]."""
        return self.effective_weights()[name]

    def point_state_dict(self, index: int) -> dict[str, torch.Tensor]:
        """Point `index`'s effective weights under GPT2LMHeadModel's names (lm_head tied to wte)."""
        with torch.no_grad():
            state = {name: weight[index].detach().clone() for name, weight in self.effective_weights().items()}
        state["lm_head.weight"] = state["transformer.wte.weight"]
        return state

    @staticmethod
    def _linear(w: dict, x: torch.Tensor, prefix: str) -> torch.Tensor:
        """HF Conv1D (x @ W + b, W stored [in, out]) for every model at once; x [M, N, in]."""
        return torch.baddbmm(w[f"{prefix}.bias"].unsqueeze(1), x, w[f"{prefix}.weight"])

    def _layer_norm(self, w: dict, x: torch.Tensor, prefix: str) -> torch.Tensor:
        normed = F.layer_norm(x, (x.shape[-1],), eps=self.config.layer_norm_epsilon)
        return torch.addcmul(w[f"{prefix}.bias"].unsqueeze(1), normed, w[f"{prefix}.weight"].unsqueeze(1))

    def _drop(self, x: torch.Tensor, site: int, step: int) -> torch.Tensor:
        if not self.training or self.dropout == 0.0:
            return x
        return counter_dropout(x, self.dropout, self.dropout_keys, step, site)

    def forward(self, input_ids: torch.Tensor):
        if input_ids.dim() != 3 or input_ids.shape[0] != self.count:
            raise ValueError(f"a pack of {self.count} models takes input_ids [M, B, T], got {tuple(input_ids.shape)}")
        count, batch, length = input_ids.shape
        heads, width = self.config.n_head, self.config.n_embd
        head_width = width // heads
        step = int(self.forward_count)
        if self.training:
            self.forward_count += 1
        w = self.effective_weights()
        token = w["transformer.wte.weight"]
        models = torch.arange(count, device=input_ids.device)[:, None, None]
        hidden = token[models, input_ids] + w["transformer.wpe.weight"][:, None, :length]
        hidden = self._drop(hidden, 0, step).reshape(count, batch * length, width)
        for layer in range(self.config.n_layer):
            prefix = f"transformer.h.{layer}"
            qkv = self._linear(w, self._layer_norm(w, hidden, f"{prefix}.ln_1"), f"{prefix}.attn.c_attn")
            query, key, value = (part.reshape(count * batch, length, heads, head_width).transpose(1, 2)
                                 for part in qkv.split(width, dim=2))
            if self.training and self.dropout > 0.0:
                scores = query @ key.transpose(-1, -2) / math.sqrt(head_width)
                causal = torch.ones(length, length, dtype=torch.bool, device=scores.device).tril()
                scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
                probabilities = scores.softmax(-1).view(count, batch, heads, length, length)
                probabilities = self._drop(probabilities, 3 * layer + 1, step)
                attended = probabilities.view(count * batch, heads, length, length) @ value
            else:
                attended = F.scaled_dot_product_attention(query, key, value, is_causal=True)
            attended = attended.transpose(1, 2).reshape(count, batch * length, width)
            hidden = hidden + self._drop(self._linear(w, attended, f"{prefix}.attn.c_proj"), 3 * layer + 2, step)
            inner = F.gelu(self._linear(w, self._layer_norm(w, hidden, f"{prefix}.ln_2"), f"{prefix}.mlp.c_fc"),
                           approximate="tanh")
            hidden = hidden + self._drop(self._linear(w, inner, f"{prefix}.mlp.c_proj"), 3 * layer + 3, step)
        hidden = self._layer_norm(w, hidden, "transformer.ln_f")
        logits = torch.bmm(hidden, token.transpose(1, 2)).view(count, batch, length, -1)
        return _Output(logits)


class _Output:
    """What GPT2LMHeadModel returns, as far as the callers use it."""

    def __init__(self, logits: torch.Tensor):
        self.logits = logits


def optimizer_groups(model: StackedGPT2, lr: float, plans: list[TransferPlan]) -> list[dict]:
    """The transfer's optimizer groups (TransferPlan.parameter_groups) for a pack: every trained weight at lr,
    the subnetwork of point m at lr * its plan's lr_scale when its plan trains it (else 0: frozen). When no
    point trains its subnetwork it gets no gradient at all (as the buffer it is in a lone FrozenSubnetwork)."""
    if len(plans) != model.count:
        raise ValueError(f"{len(plans)} transfer plans for a pack of {model.count}")
    groups = [{"params": [model.weights], "lr": torch.full((model.count,), float(lr), dtype=torch.float64)}]
    if any(plan.trains_subnetwork for plan in plans):
        groups.append({"params": [model.subnetwork],
                       "lr": torch.tensor([plan.subnetwork_lr(lr) for plan in plans], dtype=torch.float64)})
    else:
        model.subnetwork.requires_grad_(False)
    return groups
