"""Building blocks for training M models as one (a pack; docs/running.md, "Packs"): every tensor has a leading model
dimension M, and nothing mixes the models, so each gets exactly its own gradients and updates.

- `StackedAdamW`: torch.optim.AdamW's update, elementwise, with a learning rate per model. AdamW is
  elementwise, so one optimizer over stacked tensors equals M separate ones up to float rounding.
- `counter_dropout`: dropout whose mask is a hash of (the model's seed, step, call site, element). A
  model draws the same masks alone as in any pack, on any device, because no RNG stream is shared.
"""

from __future__ import annotations

import math

import torch

from .runtime import derive_seed

_M32 = 0xFFFFFFFF


class StackedAdamW(torch.optim.Optimizer):
    """AdamW over tensors whose dim 0 indexes models; each group's `lr` is a float64 tensor [M].

    The update is torch's (decoupled weight decay, bias correction, eps outside the square root), in
    the same order of operations. A model whose lr is 0 keeps its entries bit-identical, and its moments
    never touch its entries: state_dict() leaves its rows out (a checkpoint holds what training changes)
    and load_state_dict() puts zeros there.
    """

    def __init__(self, groups: list[dict], betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01):
        for group in groups:
            lr = torch.as_tensor(group["lr"], dtype=torch.float64)
            if lr.dim() != 1 or bool((lr < 0).any()):
                raise ValueError(f"StackedAdamW: lr must be a vector of non-negative rates, one per model, got {lr}")
            group["lr"] = lr
            for param in group["params"]:
                if param.shape[0] != len(lr):
                    raise ValueError(f"StackedAdamW: a tensor of {param.shape[0]} models in a group of {len(lr)} rates")
        super().__init__(groups, {"betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})

    def state_dict(self) -> dict:
        state = super().state_dict()
        for group in state["param_groups"]:
            rows = (torch.as_tensor(group["lr"]) > 0).nonzero().flatten()
            if len(rows) == len(group["lr"]):
                continue
            group["moment_rows"] = rows
            for index in group["params"]:
                if index in state["state"]:
                    moments = state["state"][index]
                    state["state"][index] = {**moments, "exp_avg": moments["exp_avg"][rows.to(moments["exp_avg"].device)],
                                             "exp_avg_sq": moments["exp_avg_sq"][rows.to(moments["exp_avg_sq"].device)]}
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = {**state_dict, "state": dict(state_dict["state"]),
                      "param_groups": [dict(group) for group in state_dict["param_groups"]]}
        for group, own in zip(state_dict["param_groups"], self.param_groups):
            rows = group.pop("moment_rows", None)
            if rows is None:
                continue
            for index, param in zip(group["params"], own["params"]):
                if index in state_dict["state"]:
                    moments = dict(state_dict["state"][index])
                    for key in ("exp_avg", "exp_avg_sq"):
                        full = torch.zeros_like(param)
                        full[rows.to(full.device)] = moments[key].to(full.device, full.dtype)
                        moments[key] = full
                    state_dict["state"][index] = moments
        super().load_state_dict(state_dict)

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("StackedAdamW takes no closure")
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = param.grad
                state = self.state[param]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(param)
                    state["exp_avg_sq"] = torch.zeros_like(param)
                state["step"] += 1
                step = float(state["step"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                bias_correction1 = 1 - beta1 ** step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                if bool((lr == lr[0]).all()):  # one rate: torch's own calls, scalar arguments
                    rate = float(lr[0])
                    param.mul_(1 - rate * group["weight_decay"])
                    exp_avg.lerp_(grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
                    param.addcdiv_(exp_avg, denom, value=-rate / bias_correction1)
                    continue
                shape = (-1,) + (1,) * (param.dim() - 1)
                # As torch: 1 - lr*wd and lr / bias_correction1 are computed in double and applied in the
                # tensor's dtype; p + (-step_size * m) / denom is addcdiv's order of operations.
                param.mul_((1 - lr * group["weight_decay"]).to(param.dtype).to(param.device).view(shape))
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step_size = (lr / bias_correction1).to(param.dtype).to(param.device).view(shape)
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
                param.addcdiv_(exp_avg * -step_size, denom)
        return None


def _mix(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (lowbias32) on int64 tensors; exact on every device."""
    x = x & _M32
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & _M32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & _M32
    return x ^ (x >> 16)


def dropout_keys(seeds: list[int]) -> torch.Tensor:
    """One 32-bit dropout key per model, from its seed (its own stream, apart from init and batches)."""
    return torch.tensor([derive_seed("dropout", seed) & _M32 for seed in seeds], dtype=torch.int64)


def counter_dropout(x: torch.Tensor, p: float, keys: torch.Tensor, step: int, site: int) -> torch.Tensor:
    """Dropout on x [M, ...] with model m's mask a function of (keys[m], step, site, element index) only."""
    if p <= 0.0:
        return x
    if p >= 1.0:
        raise ValueError(f"dropout probability must be < 1, got {p}")
    count = x[0].numel()
    key = _mix(_mix(keys.to(x.device) + step) + site)  # [M]
    noise = _mix(torch.arange(count, device=x.device, dtype=torch.int64)[None, :] ^ key[:, None])
    keep = (noise >= int(p * 2**32)).view_as(x)
    return torch.where(keep, x / (1.0 - p), torch.zeros((), dtype=x.dtype, device=x.device))
