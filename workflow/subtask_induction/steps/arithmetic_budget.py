"""How many labelled subtask rows does a discovery need? Per chain, experiment and depth: the subnetworks
discovered from the first 1k, 3k, ... subtask rows against the one the selection chose from every row (the
budget discoveries use its λ): kept fraction, test accuracy on the subtask, Jaccard overlap of the kept sets
(against the per-tensor chance of random masks), and the test accuracy of Subtask Induction from each at the
budget's n beside the sampled control of that subnetwork's own per-tensor counts (from transfer.csv; the every-row
row is variants si and sampled, which transfer the chosen subnetwork). A budget discovery trains as many optimiser
steps as the every-row one; its labelled rows count the eval rows that picked its epoch."""

import argparse
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..method.masks import load_subnetwork  # noqa: E402
from ..method.overlap import mask_overlap  # noqa: E402
from ..plotting import save_figure  # noqa: E402
from ..protocols import PROTOCOLS  # noqa: E402
from ..runtime import load_torch, save_text  # noqa: E402

_WHERE = re.compile(r"chain(\d+)/discovery(?:_budget)?/([^/]+)/([^/]+)/layers(\d+)/")


def location(path: str) -> tuple[int, str, str, int]:
    """(chain, base, subtask, layers) of a discovery file's path."""
    found = _WHERE.search(path)
    if found is None:
        raise SystemExit(f"error: {path} is not a discovery's file (.../chain<c>/discovery/<base>/<subtask>/layers<l>/...)")
    return int(found.group(1)), found.group(2), found.group(3), int(found.group(4))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--budget", nargs="+", required=True, help="subnetwork.pt of the discoveries from fewer rows")
    p.add_argument("--full", nargs="+", required=True, help="subnetwork.pt the selections chose (every row)")
    p.add_argument("--data", nargs="+", required=True,
                   help="the discovery datasets (<subtask>.pt): their training rows, for subnetworks that do not record them")
    p.add_argument("--transfer", required=True, help="summary/transfer.csv")
    p.add_argument("--variants", required=True,
                   help='JSON: variant name -> {"rows": discovery rows, "method": subnetwork | sampled} (the budget variants)')
    p.add_argument("--n", type=int, required=True, help="the disambiguation rows of the budget transfer points")
    p.add_argument("--protocol", default="last", choices=sorted(PROTOCOLS))
    p.add_argument("--table", required=True)
    p.add_argument("--markdown", required=True)
    p.add_argument("--figures", required=True)
    args = p.parse_args(argv)

    variants = json.loads(args.variants)
    transfer = pd.read_csv(args.transfer)
    transfer = transfer[(transfer["protocol"] == args.protocol) & (transfer["n"] == args.n)]
    every_row = {Path(path).stem: len(load_torch(path, ("splits",), "arithmetic dataset")["splits"]["train"])
                 for path in args.data}
    full = {location(path): load_subnetwork(path, ("kept",)) for path in args.full}
    rows = []
    for path in sorted(args.budget) + sorted(args.full):
        chain, base, subtask, layers = location(path)
        record = load_subnetwork(path, ("kept",))
        if (chain, base, subtask, layers) not in full:
            raise SystemExit(f"error: {path} has no every-row subnetwork among --full")
        reference = full[(chain, base, subtask, layers)]
        is_full = path in args.full
        if is_full:
            names = {"subnetwork": "si", "sampled": "sampled"}
        else:
            names = {v["method"]: name for name, v in variants.items() if path.endswith(f"/rows{v['rows']}/subnetwork.pt")}
        budget_rows = record.get("train_rows") or (every_row[subtask] if is_full else variants[names["subnetwork"]]["rows"])
        here = transfer[(transfer["chain"] == chain) & (transfer["base"] == base) & (transfer["subtask"] == subtask)
                        & (transfer["layers"] == layers)]
        si, sampled = (here[here["variant"] == names.get(method)] for method in ("subnetwork", "sampled"))
        rows.append({"chain": chain, "base": base, "subtask": subtask, "layers": layers, "rows": int(budget_rows),
                     "selection_rows": record.get("selection_rows"), "steps": record.get("steps"),
                     "variant": names.get("subnetwork"), "l0_weight": record.get("l0_weight"),
                     "kept": record["kept"]["overall"], "test_accuracy": record.get("test_accuracy"),
                     **{f"{key}_vs_every_row": value for key, value in mask_overlap(record["masks"], reference["masks"]).items()
                        if key in ("jaccard", "chance", "ratio")},
                     "si_test_accuracy": si["test_accuracy"].mean() if len(si) else None, "si_replicates": len(si),
                     "sampled_test_accuracy": sampled["test_accuracy"].mean() if len(sampled) else None})
    table = pd.DataFrame(rows).sort_values(["base", "subtask", "layers", "chain", "rows"]).reset_index(drop=True)
    save_text(table.to_csv(index=False), args.table)
    lines = [f"Label budget of the discovery: subnetworks from the first r subtask rows against the one the selection "
             f"chose from every row (same λ). Jaccard of the kept sets against the chance of random masks with each tensor's own densities; "
             f"SI = test accuracy on the target of Subtask Induction from that subnetwork at n = {args.n}, sampled = the "
             f"random mask of its own per-tensor counts (protocol `{args.protocol}`). Every discovery trains the same "
             f"optimiser steps; labelled rows = subtask training rows + the eval rows that picked its epoch.", "",
             "| base → subtask | layers | chain | subtask rows | labelled rows | steps | kept % | test acc. on the subtask "
             "| Jaccard with every-row subnetwork | chance | ratio | SI test accuracy | sampled test accuracy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def cell(value, spec):
        return format(value, spec) if pd.notna(value) else "—"

    for r in table.itertuples():
        labelled = r.rows + r.selection_rows if pd.notna(r.selection_rows) else None
        lines.append(f"| {r.base} → {r.subtask} | {r.layers} | {r.chain} | {r.rows:,} | {cell(labelled, ',.0f')} | "
                     f"{cell(r.steps, '.0f')} | {100 * r.kept:.2f} | {r.test_accuracy:.3f} | "
                     f"{r.jaccard_vs_every_row:.3f} | {r.chance_vs_every_row:.3f} | {r.ratio_vs_every_row:.1f} | "
                     f"{cell(r.si_test_accuracy, '.3f')} | {cell(r.sampled_test_accuracy, '.3f')} |")
    save_text("\n".join(lines) + "\n", args.markdown)
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (base, subtask, layers, chain), part in table.groupby(["base", "subtask", "layers", "chain"]):
        label = f"{base} → {subtask}, {layers} layers, chain {chain}"
        axes[0].plot(part["rows"], 100 * part["kept"], marker="o", label=label)
        axes[1].plot(part["rows"], part["si_test_accuracy"], marker="o", label=label)
    for ax, label in zip(axes, ("kept % of the masked weights", f"SI test accuracy at n = {args.n}")):
        ax.set_xscale("log")
        ax.set_xlabel("labelled subtask rows of the discovery")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    save_figure(figure, Path(args.figures), "budget")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
