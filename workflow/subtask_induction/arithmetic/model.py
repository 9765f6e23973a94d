"""GPT-2 for `a b SEP c` rows: construction, which weights to mask, loss, batched accuracy."""

from __future__ import annotations

import torch
from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel

from ..runtime import load_torch, save_torch
from ..training import epoch_order, eval_mode
from .data import labels

MASKED_MODULES = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def build_gpt2(n_numbers: int, layers: int, model_settings: dict, seed: int) -> GPT2LMHeadModel:
    """A freshly initialised GPT-2 with vocab n_numbers + 1 (SEP) and 4 positions, seeded."""
    dropout = model_settings.get("dropout", 0.0)
    if model_settings["n_embd"] % model_settings["n_head"]:
        raise ValueError(f"model n_embd {model_settings['n_embd']} is not divisible by n_head {model_settings['n_head']}")
    config = GPT2Config(
        vocab_size=n_numbers + 1, n_positions=4, n_layer=layers, n_embd=model_settings["n_embd"],
        n_head=model_settings["n_head"], n_inner=model_settings["n_inner"],
        resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
        bos_token_id=n_numbers, eos_token_id=n_numbers,
    )
    torch.manual_seed(seed)
    return GPT2LMHeadModel(config)


def masked_weight_names(model: GPT2LMHeadModel) -> list[str]:
    """Every attention and MLP weight (not embeddings, LayerNorms, head or biases)."""
    return [f"transformer.h.{i}.{module}.weight" for i in range(model.config.n_layer) for module in MASKED_MODULES]


def lm_loss(model: nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """Next-token loss over the whole row, as the paper trains (HF LM loss)."""
    logits = model(input_ids=rows).logits[:, :-1]
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1))


@torch.no_grad()
def predict_answers(model: nn.Module, rows: torch.Tensor, batch_size: int = 1000) -> torch.Tensor:
    """Argmax at the SEP position (which predicts c), in batches, always in eval mode (no dropout)."""
    with eval_mode(model):
        return torch.cat([model(input_ids=rows[i:i + batch_size]).logits[:, 2].argmax(-1)
                          for i in range(0, len(rows), batch_size)])


@torch.no_grad()
def mean_loss(model: nn.Module, rows: torch.Tensor, batch_size: int = 1000) -> float:
    """lm_loss over `rows` in eval mode, weighted by batch size."""
    with eval_mode(model):
        total = sum(float(lm_loss(model, rows[i:i + batch_size])) * len(rows[i:i + batch_size])
                    for i in range(0, len(rows), batch_size))
    return total / max(len(rows), 1)


def accuracy(model: nn.Module, rows: torch.Tensor, rules: dict[str, str] | None = None, modulus: int = 7) -> dict:
    """Accuracy against the rows' own answers, plus agreement with other rules (name -> computation)."""
    predictions = predict_answers(model, rows)
    out = {"accuracy": float((predictions == rows[:, 3]).float().mean())}
    for name, computation in (rules or {}).items():
        expected = labels(rows[:, :2], computation, modulus).to(predictions.device)
        out[f"agree_{name}"] = float((predictions == expected).float().mean())
    return out


def shuffled_batches(rows: torch.Tensor, batch_size: int, seed: int, epoch: int):
    """Batches in the order training.epoch_order fixes for (seed, epoch)."""
    order = epoch_order(len(rows), seed, epoch).to(rows.device)
    return [rows[order[i:i + batch_size]] for i in range(0, len(rows), batch_size)]


def save_gpt2(model: GPT2LMHeadModel, meta: dict, path) -> None:
    save_torch({"state_dict": model.state_dict(), **meta}, path)


def load_gpt2(path) -> tuple[GPT2LMHeadModel, dict]:
    """A base model written by the base-training step, checked before any training starts."""
    checkpoint = load_torch(path, ("state_dict", "n_numbers", "layers", "model_settings"), "base model")
    model = build_gpt2(checkpoint["n_numbers"], checkpoint["layers"], checkpoint["model_settings"], seed=0)
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError as error:
        raise ValueError(f"base model {path} does not match its own architecture settings: {error}") from error
    return model, {key: value for key, value in checkpoint.items() if key != "state_dict"}
