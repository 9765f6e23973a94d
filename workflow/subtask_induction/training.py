"""The one training loop every stage uses: base training, mask discovery and transfer.

Stages differ only by what they pass in: the parameters the optimizer sees, a loss closure, an
evaluation function and per-epoch hooks (the beta schedule). The loop selects the best epoch on an
evaluation metric (ties go to the later epoch), stops early on request, shows a tqdm bar, records a
per-epoch history, and checkpoints at epoch ends so a killed job resumes where it stopped and ends
with the same numbers as an uninterrupted run. Progress is a tqdm bar on a terminal and one plain line
per epoch otherwise (a job's log file), so a log reads as a table, not as carriage returns. A non-finite loss stops the run at once (NonFiniteLoss):
a diverged model must not train on and be reported.

A pack (M models trained as one, arithmetic.stacked) goes through the same loop: its loss_fn
returns one loss per model, its evaluate() one metrics dict per model, and each history record holds
them under "points". A model whose loss turns non-finite stops alone (FitResult.failed names it and why)
while its pack mates train on; nothing mixes the models, so its NaNs reach only its own entries.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import torch
from torch import nn
from tqdm.auto import tqdm

from .rounding import fixed
from .runtime import derive_seed, load_torch, save_torch
from .timing import evaluating, first_training_step


class NonFiniteLoss(RuntimeError):
    """The loss became NaN or infinite; the message names the stage, epoch, step and settings."""


@contextlib.contextmanager
def eval_mode(model: nn.Module):
    """Score a model with dropout off (and BatchNorm statistics fixed), then give it back its mode."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def epoch_order(count: int, seed: int, epoch: int) -> torch.Tensor:
    """The order in which a run visits its `count` training items in `epoch`: a function of (seed, epoch)
    only, so a resumed run sees the same batches. Every family batches through this one function."""
    return torch.randperm(count, generator=torch.Generator().manual_seed(derive_seed("epoch order", seed, epoch)))


@dataclass
class FitResult:
    best_epoch: int
    best_metrics: dict
    history: list[dict] = field(default_factory=list)
    stopped_early: bool = False
    resumed_from_epoch: int = 0
    failed: dict[int, str] = field(default_factory=dict)  # pack: model index -> why it stopped


class Progress:
    """Where fit() reports: a tqdm bar when stderr is a terminal, else one line per epoch on stdout
    (stage, epoch, loss, the scalar metrics, seconds), flushed at once so a log file can be followed."""

    def __init__(self, desc: str, start: int, total: int, interactive: bool | None = None):
        self.desc, self.total = desc, total
        self.interactive = sys.stderr.isatty() if interactive is None else interactive
        self.bar = (tqdm(total=total, initial=start, desc=desc, mininterval=5.0) if self.interactive else None)

    def note(self, text: str) -> None:
        if self.bar is not None:
            tqdm.write(text)
        else:
            print(text, flush=True)

    def epoch(self, record: dict, select: str | None) -> None:
        if self.bar is not None:
            loss = _mean_over_points(record, "train_loss")
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{fixed(loss, 4)}", **({select: f"{fixed(record[select], 4)}"} if select else {}))
            return
        self.note(epoch_line(self.desc, record, self.total))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _mean_over_points(record: dict, key: str) -> float:
    if "points" in record:
        values = [point[key] for point in record["points"] if isinstance(point.get(key), (int, float))]
        return sum(values) / len(values) if values else float("nan")
    return float(record[key])


def epoch_line(desc: str, record: dict, total: int) -> str:
    """`[desc] epoch 3/40 loss 0.1234 eval_accuracy 0.9800 ... 1.2 s`; a pack's metrics are means over its
    points (its per-point numbers are in each point's metrics.json)."""
    if "points" in record:
        keys = [key for key, value in record["points"][0].items() if isinstance(value, (int, float))]
        scalars = {key: _mean_over_points(record, key) for key in keys}
        head = f"[{desc}] epoch {record['epoch']}/{total} ({len(record['points'])} points, means)"
    else:
        scalars = {key: value for key, value in record.items()
                   if key not in ("epoch", "seconds") and isinstance(value, (int, float)) and not isinstance(value, bool)}
        head = f"[{desc}] epoch {record['epoch']}/{total}"
    loss = scalars.pop("train_loss", None)
    parts = [head] + ([f"loss {fixed(loss, 4)}"] if loss is not None else [])
    parts += [f"{key} {fixed(value, 4)}" for key, value in scalars.items()]
    return " ".join(parts) + f" {fixed(record['seconds'], 1)} s"


def _state_copy(model: nn.Module) -> dict[str, torch.Tensor]:
    return {key: value.detach().cpu().clone() for key, value in model.state_dict().items()}


def _where(epoch: int, step: int) -> str:
    """Where in training a loss went wrong (formatted only then, not at every step)."""
    return f"at epoch {epoch + 1}, step {step + 1}"


def _backward_one(loss: torch.Tensor, epoch: int, step: int, desc: str, settings: dict | None) -> float:
    """One model's step: its gradient; a non-finite loss stops the run before anything is written."""
    value = loss.item()
    if not math.isfinite(value):
        raise NonFiniteLoss(f"[{desc}] the loss is {value} {_where(epoch, step)}; nothing was written. "
                            f"Settings: {settings if settings is not None else 'not given'}")
    loss.backward()
    return value


def _backward_pack(loss: torch.Tensor, failed: dict, epoch: int, step: int, desc: str,
                   settings: dict | None) -> torch.Tensor:
    """A pack's step (`loss`: one per model): every live model gets its own gradient; a model whose loss is
    not finite stops (recorded in `failed`, its mates train on) and the run stops when none is left.
    Returns the live models' losses (0 for a stopped one), for the epoch's mean."""
    values = loss.detach()
    finite = torch.isfinite(values)
    if not bool(finite.all()):
        for index in (~finite).nonzero().flatten().tolist():
            failed.setdefault(index, f"the loss is {values[index].item()} {_where(epoch, step)}")
        if len(failed) == len(values):
            raise NonFiniteLoss(f"[{desc}] every model of the pack stopped with a non-finite loss ({failed}); nothing "
                                f"was written. Settings: {settings if settings is not None else 'not given'}")
    alive = torch.ones(len(values), dtype=torch.bool, device=values.device)
    alive[list(failed)] = False
    zero = torch.zeros((), dtype=loss.dtype, device=loss.device)
    torch.where(alive, loss, zero).sum().backward()  # each model gets its own gradients
    return torch.where(alive, values, zero).double()


def _epoch_record(epoch: int, train_loss, metrics, seconds: float) -> dict:
    """The history's record of an epoch: a model's metrics, or a pack's (one dict per model, under "points")."""
    if isinstance(metrics, list):
        losses = train_loss.tolist()
        return {"epoch": epoch + 1, "points": [{"train_loss": losses[index], **point} for index, point in enumerate(metrics)],
                "seconds": seconds}
    return {"epoch": epoch + 1, "train_loss": train_loss, **metrics, "seconds": seconds}


def _save_checkpoint(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, evaluate, fingerprint: str,
                     **progress) -> None:
    """What a resumed run needs to end as an uninterrupted one: the model, the optimizer, the RNGs, how far it got
    and, for an evaluation that keeps state across epochs (one with a state_dict: a pack's kept weights), its
    state."""
    save_torch({"model": model.state_dict(), "optimizer": optimizer.state_dict(), **progress,
                "evaluation": evaluate.state_dict() if hasattr(evaluate, "state_dict") else None,
                "rng": torch.get_rng_state(), "fingerprint": fingerprint,
                "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}, path)


def _resume(checkpoint: Path | None, fingerprint: str, model: nn.Module, optimizer: torch.optim.Optimizer,
            evaluate, desc: str) -> tuple[dict, list[str]]:
    """Where a run starts: from its checkpoint when one was written for this fingerprint (loaded into the
    model, optimizer and a stateful evaluation, the RNG restored), else from nothing. Also what to tell the user."""
    fresh = {"epoch": 0, "history": [], "best": None, "best_state": None, "stopped": False, "failed": {}}
    if checkpoint is None or not checkpoint.is_file():
        return fresh, []
    state = load_torch(checkpoint, ("model", "optimizer", "epoch", "fingerprint"), "training checkpoint")
    if state["fingerprint"] != fingerprint:
        return fresh, [f"[{desc}] ignoring {checkpoint}: written for other settings or inputs"]
    if hasattr(evaluate, "state_dict") and state.get("evaluation") is None:
        return fresh, [f"[{desc}] ignoring {checkpoint}: written without its evaluation's state"]
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if hasattr(evaluate, "state_dict"):
        evaluate.load_state_dict(state["evaluation"])
    torch.set_rng_state(state["rng"])
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    failed = {int(index): why for index, why in state.get("failed", {}).items()}
    return ({**{key: state[key] for key in ("epoch", "history", "best", "best_state", "stopped")}, "failed": failed},
            [f"[{desc}] resuming from {checkpoint} after epoch {state['epoch']}"])


@dataclass(frozen=True)
class Schedule:
    """How long a run trains and which epoch it keeps: `epochs`, the metric that selects the kept epoch
    (`select`, highest is best, or lowest with `minimize`; None: the last epoch, as a pack, whose models are
    selected afterwards from their own histories), and when it stops early (`patience` epochs without an
    improvement of `select`, or `select` reaching `stop_at`). `lr_decay` "linear" takes every parameter group's
    learning rate linearly to 0 over the run's steps, no warmup (HF Trainer's default schedule); `clip_grad_norm`
    clips the gradients' global norm before each step (HF Trainer's max_grad_norm)."""

    epochs: int
    select: str | None = "eval_accuracy"
    patience: int | None = None
    stop_at: float | None = None
    minimize: bool = False
    lr_decay: str = "constant"
    clip_grad_norm: float | None = None

    def better(self, value: float, than: float) -> bool:
        return value < than if self.minimize else value > than


@dataclass(frozen=True)
class Checkpointing:
    """Where a run keeps its resume state (`path`; None: nowhere), how often (`interval_s`, and at the last
    epoch), and the fingerprint of its settings and inputs that a checkpoint must carry to be resumed."""

    path: str | Path | None = None
    interval_s: float = 0.0
    fingerprint: str = ""


@dataclass(frozen=True)
class EpochRun:
    """How each epoch runs and is reported: the modules' training mode (False: a linear probe keeps BatchNorm
    statistics as they are), hooks before an epoch and after its steps (e.g. to advance beta), the run's name in
    progress lines (`desc`) and the settings its error messages show."""

    train_mode: bool = True
    on_epoch_start: Callable[[int], None] | None = None
    on_epoch_end: Callable[[int], None] | None = None
    desc: str = "train"
    settings: dict | None = None


def _check_schedule(schedule: Schedule, optimizer: torch.optim.Optimizer) -> None:
    if schedule.lr_decay not in ("constant", "linear"):
        raise ValueError(f"lr_decay {schedule.lr_decay!r}: constant or linear")
    if schedule.lr_decay == "linear":   # decays from the rate the run began with, also after a resume
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])


def _train_epoch(model, optimizer, loss_fn, epoch_batches, epoch: int, schedule: Schedule, failed: dict,
                 run: EpochRun):
    """One epoch's steps (the linear decay's rate set before each, the gradients clipped where asked): the summed
    loss (a pack's, one per model) and the number of steps."""
    total, steps = 0.0, 0
    if schedule.lr_decay == "linear":
        epoch_batches = list(epoch_batches)   # every epoch has as many batches: the run's steps are known
        run_steps = len(epoch_batches) * schedule.epochs
    for batch in epoch_batches:
        if schedule.lr_decay == "linear":
            done = epoch * len(epoch_batches) + steps
            for group in optimizer.param_groups:
                group["lr"] = group["initial_lr"] * (run_steps - done) / run_steps
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch)
        if loss.dim() == 0:
            total += _backward_one(loss, epoch, steps, run.desc, run.settings)
        else:
            if schedule.select is not None or schedule.patience is not None or schedule.stop_at is not None:
                raise ValueError("a pack is selected afterwards from its history: pass select=None, "
                                 "no patience and no stop_at")
            if schedule.clip_grad_norm is not None:
                raise ValueError("a pack's models would share one gradient norm: no clip_grad_norm")
            total = total + _backward_pack(loss, failed, epoch, steps, run.desc, run.settings)
        if schedule.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), schedule.clip_grad_norm)
        optimizer.step()
        steps += 1
    return total, steps


def _last_improvement(history: list[dict], schedule: Schedule) -> int:
    """The epoch at which the selected signal last rose in a (resumed) history: patience counts from it."""
    improved_at, peak = 0, None
    if schedule.select is not None:
        for record in history:
            if peak is None or schedule.better(record[schedule.select], peak):
                peak, improved_at = record[schedule.select], record["epoch"]
    return improved_at


def fit(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable[[nn.Module, object], torch.Tensor],
    batches: Callable[[int], Iterable],
    evaluate: Callable[[nn.Module], dict],
    schedule: Schedule,
    checkpointing: Checkpointing = Checkpointing(),
    run: EpochRun = EpochRun(),
) -> FitResult:
    """Train for `schedule.epochs` epochs and leave the best epoch's state in `model` (select None: the last
    epoch's).

    batches(epoch) must be a deterministic function of the epoch (seeded shuffling) so a resumed run
    sees the same batches. on_epoch_end(epoch) runs before evaluation (e.g. to advance beta).
    The checkpoint holds the fingerprint of the run's settings and input files; one written for other
    settings or inputs is ignored rather than resumed. `settings` only go into error messages.
    The model is returned in eval mode (dropout off), holding the best epoch's state.
    A pack (loss_fn returns a vector) takes select=None, no patience and no stop_at: its models are
    selected afterwards from their own histories (protocols.py).
    """
    epochs, select = schedule.epochs, schedule.select
    _check_schedule(schedule, optimizer)
    checkpoint = Path(checkpointing.path) if checkpointing.path else None
    resumed, messages = _resume(checkpoint, checkpointing.fingerprint, model, optimizer, evaluate, run.desc)
    start_epoch, history, best, best_state, stopped, failed = (
        resumed[key] for key in ("epoch", "history", "best", "best_state", "stopped", "failed"))
    last_save = time.monotonic()
    progress = Progress(run.desc, start_epoch, epochs)
    for message in messages:
        progress.note(message)
    improved_at = _last_improvement(history, schedule)
    for epoch in range(start_epoch, epochs):
        if stopped:
            break
        began = time.perf_counter()
        if run.on_epoch_start:
            run.on_epoch_start(epoch)
        model.train(run.train_mode)
        first_training_step()
        total, steps = _train_epoch(model, optimizer, loss_fn, batches(epoch), epoch, schedule, failed, run)
        if run.on_epoch_end:
            run.on_epoch_end(epoch)
        model.eval()
        with torch.no_grad(), evaluating():
            metrics = evaluate(model)
        if select is not None and select not in metrics:
            raise KeyError(f"evaluate() returned {sorted(metrics)}, which lacks the selection metric '{select}'")
        record = _epoch_record(epoch, total / max(steps, 1), metrics, time.perf_counter() - began)
        history.append(record)
        if select is None:
            best = record  # the last epoch, whose state the model holds: nothing to copy
        else:
            if best is None or schedule.better(metrics[select], best[select]):
                improved_at = epoch + 1
            if best is None or not schedule.better(best[select], metrics[select]):  # ties go to the later epoch
                best, best_state = dict(record), _state_copy(model)
        # Patience counts epochs since the selected signal last rose: a tie (a saturated accuracy, say) selects the
        # later epoch but does not keep training alive (with >= a base at eval 1.0 would never stop early).
        stopped = select is not None and bool(
            (schedule.stop_at is not None and not schedule.better(schedule.stop_at, metrics[select]))
            or (schedule.patience is not None and epoch + 1 - improved_at >= schedule.patience))
        progress.epoch(record, select)
        if checkpoint is not None and (
            epoch + 1 == epochs or stopped or time.monotonic() - last_save >= checkpointing.interval_s
        ):
            _save_checkpoint(checkpoint, model, optimizer, evaluate, checkpointing.fingerprint, epoch=epoch + 1,
                             history=history, best=best, best_state=best_state, stopped=stopped, failed=failed)
            last_save = time.monotonic()
    progress.close()
    if best is None:
        raise RuntimeError(f"[{run.desc}] no epoch was trained (epochs={epochs})")
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()  # whoever scores the model next must not see dropout
    return FitResult(best_epoch=best["epoch"], best_metrics=best, history=history,
                     stopped_early=stopped, resumed_from_epoch=start_epoch, failed=failed)

