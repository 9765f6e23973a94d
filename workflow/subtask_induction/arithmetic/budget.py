"""The label budget of a discovery (arithmetic.transfer.variants with discovery_rows; steps/arithmetic_budget.py):
the subnetworks discovered from the first r subtask rows against the one the selection chose from every row,
and the test accuracy of Subtask Induction from each, as a table, its Markdown and its figure."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..rounding import fixed
from ..method.masks import load_subnetwork  # noqa: E402
from ..method.overlap import mask_overlap  # noqa: E402
from ..records import read_record  # noqa: E402
from .tables import plain_variants_of  # noqa: E402


def identity_of(subnetwork: str) -> dict:
    """A discovery's identity, from the record its job wrote beside its subnetwork file."""
    return read_record(Path(subnetwork).with_name("metrics.json"))["identity"]


def location(identity: dict) -> tuple[int, str, str, int]:
    """(chain, base, subtask, layers): the network and subtask a discovery (every-row or label-budget) is of."""
    return identity["chain"], identity["base"], identity["subtask"], identity["layers"]


def budget_table(budget: list[str], every_row: list[str], transfer: pd.DataFrame, variants: dict,
                 every_row_rows: dict[str, int]) -> pd.DataFrame:
    """One row per discovery (the budget ones and the every-row ones they are compared with): its rows, kept
    fraction, test accuracy, overlap with the every-row subnetwork, and SI's and sampled's test accuracy from it
    (`transfer`: transfer.csv's rows of one protocol and n)."""
    identities = {path: identity_of(path) for path in [*budget, *every_row]}
    full = {location(identities[path]): load_subnetwork(path, ("kept",)) for path in every_row}
    rows = []
    for path in sorted(budget) + sorted(every_row):
        identity = identities[path]
        chain, base, subtask, layers = location(identity)
        record = load_subnetwork(path, ("kept",))
        if (chain, base, subtask, layers) not in full:
            raise SystemExit(f"error: {path} has no every-row subnetwork among --full")
        reference = full[(chain, base, subtask, layers)]
        is_full = path in every_row
        if is_full:
            names = {kind: next(iter(plain_variants_of(transfer, kind)), None) for kind in ("subnetwork", "sampled")}
        else:
            names = {v["kind"]: name for name, v in variants.items() if v["rows"] == identity["rows"]}
        budget_rows = record.get("train_rows") or (every_row_rows[subtask] if is_full else variants[names["subnetwork"]]["rows"])
        here = transfer[(transfer["chain"] == chain) & (transfer["base"] == base) & (transfer["subtask"] == subtask)
                        & (transfer["layers"] == layers)]
        si, sampled = (here[here["variant"] == names.get(kind)] for kind in ("subnetwork", "sampled"))
        rows.append({"chain": chain, "base": base, "subtask": subtask, "layers": layers, "rows": int(budget_rows),
                     "selection_rows": record.get("selection_rows"), "steps": record.get("steps"),
                     "variant": names.get("subnetwork"), "l0_weight": record.get("l0_weight"),
                     "kept": record["kept"]["overall"], "test_accuracy": record.get("test_accuracy"),
                     **{f"{key}_vs_every_row": value for key, value in mask_overlap(record["masks"], reference["masks"]).items()
                        if key in ("jaccard", "chance", "ratio")},
                     "si_test_accuracy": si["test_accuracy"].mean() if len(si) else None, "si_replicates": len(si),
                     "sampled_test_accuracy": sampled["test_accuracy"].mean() if len(sampled) else None})
    return pd.DataFrame(rows).sort_values(["base", "subtask", "layers", "chain", "rows"]).reset_index(drop=True)


def budget_markdown(table: pd.DataFrame, n: int, protocol: str) -> str:
    """The table as Markdown, with what each column means."""
    lines = [f"Label budget of the discovery: subnetworks from the first r subtask rows against the one the selection "
             f"chose from every row (same λ). Jaccard of the kept sets against the chance of random masks with each tensor's own densities; "
             f"SI = test accuracy on the target of Subtask Induction from that subnetwork at n = {n}, sampled = the "
             f"random mask of its own per-tensor counts (protocol `{protocol}`). Every discovery trains the same "
             f"optimiser steps; labelled rows = subtask training rows + the eval rows that picked its epoch.", "",
             "| base → subtask | layers | chain | subtask rows | labelled rows | steps | kept % | test acc. on the subtask "
             "| Jaccard with every-row subnetwork | chance | ratio | SI test accuracy | sampled test accuracy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def cell(value, spec):
        return format(value, spec) if pd.notna(value) else "—"

    for r in table.itertuples():
        labelled = r.rows + r.selection_rows if pd.notna(r.selection_rows) else None
        lines.append(f"| {r.base} → {r.subtask} | {r.layers} | {r.chain} | {r.rows:,} | {cell(labelled, ',.0f')} | "
                     f"{cell(r.steps, '.0f')} | {fixed(100 * r.kept, 2)} | {fixed(r.test_accuracy, 3)} | "
                     f"{fixed(r.jaccard_vs_every_row, 3)} | {fixed(r.chance_vs_every_row, 3)} | {fixed(r.ratio_vs_every_row, 1)} | "
                     f"{cell(r.si_test_accuracy, '.3f')} | {cell(r.sampled_test_accuracy, '.3f')} |")
    return "\n".join(lines) + "\n"


def budget_figure(table: pd.DataFrame, n: int):
    """Kept % and SI's test accuracy against the labelled subtask rows, one line per experiment, depth, chain."""
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (base, subtask, layers, chain), part in table.groupby(["base", "subtask", "layers", "chain"]):
        label = f"{base} → {subtask}, {layers} layers, chain {chain}"
        axes[0].plot(part["rows"], 100 * part["kept"], marker="o", label=label)
        axes[1].plot(part["rows"], part["si_test_accuracy"], marker="o", label=label)
    for ax, label in zip(axes, ("kept % of the masked weights", f"SI test accuracy at n = {n}")):
        ax.set_xscale("log")
        ax.set_xlabel("labelled subtask rows of the discovery")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    return figure
