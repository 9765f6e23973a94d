"""GPT-2 for `a b SEP c` rows: construction, which weights to mask, loss, batched accuracy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ..runtime import load_torch, save_torch
from ..training import epoch_order, eval_mode
from .data import labels

# transformers is imported where a GPT-2 is built (build_gpt2), not here: with it come torch._dynamo,
# torch.distributed.tensor, sympy, scipy and torchvision (~4 s a process), and a module that only scores or
# stacks given models (a transfer pack whose points are all restored from their records) builds none (issue 81).
if TYPE_CHECKING:
    from transformers import GPT2LMHeadModel

MASKED_MODULES = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def build_gpt2(n_numbers: int, layers: int, model_settings: dict, seed: int) -> GPT2LMHeadModel:
    """A freshly initialised GPT-2 with vocab n_numbers + 1 (SEP) and 4 positions, seeded."""
    from transformers import GPT2Config, GPT2LMHeadModel

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


# Mimetic initialisation (Trockman & Kolter, ICML 2023): each head's W_q W_k^T and W_v W_o set to the rank-d_head
# truncated SVD of alpha Z + sign beta I (Z ~ N(0, 1/d), its own draw per head and product). The signs are those they
# saw in trained GPT-2, a language model as ours (Q.K^T a negative diagonal, V.O a positive one; the vision recipe has
# both the other way); alpha and beta are our choice (their ViT recipe's size, as we recall it: 0.7 for Q.K^T, 0.4 for
# V.O), not tuned on these tasks.
MIMETIC = {"qk": (0.7, 0.7, -1.0), "vo": (0.4, 0.4, +1.0)}   # (alpha, beta, the diagonal's sign)


def mimetic_target(d: int, alpha: float, beta: float, sign: float, generator: torch.Generator) -> torch.Tensor:
    z = torch.randn(d, d, generator=generator, dtype=torch.float64) / d ** 0.5
    return alpha * z + sign * beta * torch.eye(d, dtype=torch.float64)


def truncated_factors(target: torch.Tensor, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(A [d, rank], B [rank, d]) with A @ B the best rank-`rank` approximation of `target` (SVD, the singular values
    split evenly between the two)."""
    u, s, vh = torch.linalg.svd(target)
    root = s[:rank].sqrt()
    return u[:, :rank] * root, root[:, None] * vh[:rank]


@torch.no_grad()
def mimetic_init(model: GPT2LMHeadModel, seed: int, constants: dict = MIMETIC) -> GPT2LMHeadModel:
    """Set every head's query, key, value and output weights mimetically (GPT-2's fused c_attn: x @ W gives q | k | v,
    head h in columns h*d_head..; c_proj's rows h*d_head.. are head h's output), in float64 then cast; every other
    tensor as built. Modifies `model` in place and returns it."""
    generator = torch.Generator().manual_seed(seed)
    d, heads = model.config.n_embd, model.config.n_head
    dh = d // heads
    for block in model.transformer.h:
        qkv, out = block.attn.c_attn.weight, block.attn.c_proj.weight
        for head in range(heads):
            columns = slice(head * dh, (head + 1) * dh)
            q, k = truncated_factors(mimetic_target(d, *constants["qk"], generator), dh)
            v, o = truncated_factors(mimetic_target(d, *constants["vo"], generator), dh)
            qkv[:, columns] = q.to(qkv.dtype)
            qkv[:, d + head * dh:d + (head + 1) * dh] = k.T.to(qkv.dtype)
            qkv[:, 2 * d + head * dh:2 * d + (head + 1) * dh] = v.to(qkv.dtype)
            out[columns, :] = o.to(out.dtype)
    return model


@torch.no_grad()
def redraw_masked_weights(model: GPT2LMHeadModel, std: float, seed: int) -> GPT2LMHeadModel:
    """Every masked weight (masked_weight_names) drawn again from N(0, std) by a generator of its own, as the
    authors' transfer code initialises them (HF's own init scales the c_proj weights to std / sqrt(2 layers));
    every other tensor is left as built. Modifies `model` in place and returns it."""
    generator = torch.Generator().manual_seed(seed)
    for name in masked_weight_names(model):
        weight = model.get_parameter(name)
        weight.copy_(torch.randn(weight.shape, generator=generator) * std)
    return model


def masked_weight_names(model: GPT2LMHeadModel) -> list[str]:
    """Every attention and MLP weight (not embeddings, LayerNorms, head or biases)."""
    return [f"transformer.h.{i}.{module}.weight" for i in range(model.config.n_layer) for module in MASKED_MODULES]


def lm_loss(model: nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """Next-token loss over the whole row, as the paper trains (HF LM loss).

    rows [B, 4] -> the mean loss; rows [M, B, 4] for a pack (arithmetic.stacked) -> each model's own
    mean loss [M], so the pack's summed loss gives every model exactly its own gradients."""
    return _lm_loss(model(input_ids=rows).logits, rows)


def _lm_loss(logits: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    logits = logits[..., :-1, :]
    if rows.dim() == 2:
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1))
    losses = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[..., 1:].reshape(-1),
                                         reduction="none")
    return losses.view(rows.shape[0], -1).mean(1)


@torch.no_grad()
def predict_answers(model: nn.Module, rows: torch.Tensor, batch_size: int = 1000) -> torch.Tensor:
    """Argmax at the SEP position (which predicts c), in batches of rows, always in eval mode (no dropout).
    rows [R, 4] -> [R]; a pack's rows [M, R, 4] -> [M, R] (batches of batch_size rows in all)."""
    chunk = max(1, batch_size // rows.shape[0]) if rows.dim() == 3 else batch_size
    with eval_mode(model):
        return torch.cat([model(input_ids=rows[..., i:i + chunk, :]).logits[..., 2, :].argmax(-1)
                          for i in range(0, rows.shape[-2], chunk)], dim=-1)


def answer_loss(model: nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the answer token alone (the prediction at SEP against c): the part of the LM loss
    the task is about. rows [B, 4] -> a scalar; a pack's rows [M, B, 4] -> one loss per model [M]."""
    return _answer_loss(model(input_ids=rows).logits, rows)


def _answer_loss(logits: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    logits = logits[..., 2, :]
    losses = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[..., 3].reshape(-1),
                                         reduction="none")
    return losses.mean() if rows.dim() == 2 else losses.view(rows.shape[0], -1).mean(1)


@torch.no_grad()
def mean_losses(model: nn.Module, rows: torch.Tensor, batch_size: int = 1000):
    """(lm_loss, answer_loss) over `rows` in eval mode from one forward pass per batch, each weighted by
    batch size: two floats, or two lists (one value per model of a pack)."""
    chunk = max(1, batch_size // rows.shape[0]) if rows.dim() == 3 else batch_size
    count = rows.shape[-2]
    whole = answer = 0
    with eval_mode(model):
        for i in range(0, count, chunk):
            batch = rows[..., i:i + chunk, :]
            logits, size = model(input_ids=batch).logits, batch.shape[-2]
            whole = whole + _lm_loss(logits, batch).double() * size
            answer = answer + _answer_loss(logits, batch).double() * size
    return (whole / max(count, 1)).tolist(), (answer / max(count, 1)).tolist()


def answer_metrics(predictions: torch.Tensor, rows: torch.Tensor, rules: dict[str, str] | None = None,
                   modulus: int = 7) -> dict:
    """Accuracy of predicted answers against the rows' own, plus agreement with other rules (name -> computation)."""
    out = {"accuracy": float((predictions == rows[:, 3]).float().mean())}
    for name, computation in (rules or {}).items():
        expected = labels(rows[:, :2], computation, modulus).to(predictions.device)
        out[f"agree_{name}"] = float((predictions == expected).float().mean())
    return out


def accuracy(model: nn.Module, rows: torch.Tensor, rules: dict[str, str] | None = None, modulus: int = 7) -> dict:
    """answer_metrics of the model's predictions on `rows` [R, 4]."""
    return answer_metrics(predict_answers(model, rows), rows, rules, modulus)


def shuffled_batches(rows: torch.Tensor, batch_size: int, seed: int, epoch: int):
    """Batches in the order training.epoch_order fixes for (seed, epoch)."""
    order = epoch_order(len(rows), seed, epoch).to(rows.device)
    return [rows[order[i:i + batch_size]] for i in range(0, len(rows), batch_size)]


def stacked_batches(rows: list[torch.Tensor], batch_size: int, seeds: list[int], epoch: int):
    """A pack's batches: batch i of every model (its own rows, in its own seed's order), stacked [M, B, 4]."""
    per_model = [shuffled_batches(part, batch_size, seed, epoch) for part, seed in zip(rows, seeds)]
    return [torch.stack(batch) for batch in zip(*per_model, strict=True)]


def save_gpt2(model: GPT2LMHeadModel, meta: dict, path) -> None:
    save_torch({"state_dict": model.state_dict(), **meta}, path)


def load_gpt2(path) -> tuple[GPT2LMHeadModel, dict]:
    """A base model written by the base-training step, checked before any training starts."""
    return gpt2_from(read_gpt2(path), path)


def read_gpt2(path) -> dict:
    """A base model's file as save_gpt2 wrote it (its state_dict and the settings that rebuild it), keys checked;
    no model is built (gpt2_from builds it)."""
    return load_torch(path, ("state_dict", "n_numbers", "layers", "model_settings"), "base model")


def gpt2_from(checkpoint: dict, path) -> tuple[GPT2LMHeadModel, dict]:
    """The GPT-2 a read_gpt2 checkpoint holds, and its settings (everything but the state_dict)."""
    model = build_gpt2(checkpoint["n_numbers"], checkpoint["layers"], checkpoint["model_settings"], seed=0)
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError as error:
        raise ValueError(f"base model {path} does not match its own architecture settings: {error}") from error
    return model, {key: value for key, value in checkpoint.items() if key != "state_dict"}
