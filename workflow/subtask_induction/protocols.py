"""Model-selection protocols: which epoch of a run's per-epoch history a reported number comes from.

A run trains a fixed number of epochs and records, per epoch, every signal a protocol selects on (eval accuracy,
and in a holdout run the accuracy and loss on a held-out slice of its own rows). Each protocol picks one
epoch from that history, so the protocols of a run come from that one training run and differ only in what
they select on. `eval` selects on labels the experiment claims not to use (the arithmetic eval rows are
target-labelled a!=b pairs); `last` and `train_holdout` are leak-free. `train_holdout` exists only in a run
that holds rows out, which is not the paper's run (it trains on fewer rows): docs/decisions.md, "Protocols
that train on the rows they say".
"""

from __future__ import annotations

PROTOCOLS = {
    "eval": "best accuracy on the eval rows (the paper's protocol; target labels beyond the n rows)",
    "last": "the final epoch (leak-free)",
    "train_holdout": "best accuracy on a held-out slice of the run's own rows, ties -> lower loss of the "
                     "answer token there (leak-free; a run that trains on the rest of its rows only)",
}
LEAK_FREE = ("last", "train_holdout")


def run_protocols(holds_out: bool) -> tuple[str, ...]:
    """The protocols a run can report: `train_holdout` needs a held-out slice of the run's own rows."""
    return tuple(name for name in PROTOCOLS if holds_out or name != "train_holdout")


def _key(protocol: str, record: dict) -> tuple:
    if protocol == "eval":
        return (record["eval_accuracy"],)
    if protocol == "train_holdout":
        # Ties (common on small holdouts) go to the lower loss of the answer token: the whole-row LM loss
        # also scores predicting b from a, irreducible noise on a!=b rows that says nothing of the rule.
        return (record["holdout_accuracy"], -record["holdout_answer_loss"])
    return (record["epoch"],)


def improves(protocol: str, record: dict, best: dict | None) -> bool:
    """Whether `protocol` would select `record`'s epoch over `best`'s, the earlier (ties go to the later epoch):
    the one comparison a selection makes, also epoch by epoch while a run trains (arithmetic.transfer)."""
    return best is None or _key(protocol, record) >= _key(protocol, best)


def choose_epoch(history: list[dict], protocol: str) -> dict:
    """The record of the epoch `protocol` selects; ties go to the later epoch."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown selection protocol '{protocol}'; choose from {sorted(PROTOCOLS)}")
    if not history:
        raise ValueError("no epoch to select from")
    best = None
    for record in history:
        if improves(protocol, record, best):
            best = record
    return best


def select_all(history: list[dict], protocols=tuple(PROTOCOLS)) -> dict[str, dict]:
    """protocol -> the selected epoch's record, with `last_epoch`: whether it is the run's final epoch (a
    curve selected at its end may still have been improving when training stopped)."""
    final = history[-1]["epoch"] if history else None
    chosen = {protocol: choose_epoch(history, protocol) for protocol in protocols}
    return {protocol: {**record, "last_epoch": record["epoch"] == final} for protocol, record in chosen.items()}


def selection_key(eval_accuracy: float, kept_fraction: float) -> tuple[float, float]:
    """Order subnetworks found with different L0 weights: most accurate, then sparsest (the discovery's selection; here,
    beside the transfer's protocols, so the summary steps that read it import no torch)."""
    return (eval_accuracy, -kept_fraction)
