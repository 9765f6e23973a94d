"""The results page's figures, drawn from run records as small multiples: one panel per curve or model, the
reference drawn in each, legends outside the data, the claim marked where the reader should look."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..arithmetic.paper import authors_curves  # noqa: E402
from ..plotting import save_figure  # noqa: E402
from .curves import AUTHORS_CURVES, NEAR_PERFECT, PAPER_TEXT  # noqa: E402

# Each of our selection protocols its own colour, line style and marker, so the two read apart where they overlap
OURS, OURS_LAST, THEIRS, OPTION, PIPELINE, CLAIM = "tab:blue", "tab:purple", "black", "tab:orange", "tab:red", "crimson"
DPI = 150   # plotting.save_figure's
# Sizes in points for a figure shown 900 px wide (the README on GitHub): at DPI and the figure's width, a tick label is
# TICK_PT * DPI / 72 * 900 / width px tall; FIG6_WIDTH_IN keeps that at 9 px or more (tests/test_figures.py)
TICK_PT, LABEL_PT, TITLE_PT, LEGEND_PT = 10, 10.5, 11, 10
FIG6_WIDTH_IN = 12.0


def _save(figure, path: Path) -> Path:
    """PNG only, written atomically by the figure saving every family uses."""
    return save_figure(figure, path.parent, path.stem, formats=("png",))[0]


def segments(ns: list, grid: list) -> list[list]:
    """Our sizes split where the authors' grid has a size between two of ours that we did not run: a line is drawn
    only between neighbours on their grid, never across sizes we have no point for."""
    runs, current = [], []
    for n in sorted(ns):
        if current and any(current[-1] < m < n for m in grid):
            runs.append(current)
            current = []
        current.append(n)
    return runs + ([current] if current else [])


def _ours(ax, curve: pd.DataFrame, grid: list, colour: str, style: str, marker: str, label: str, shift: float = 1.0):
    """Markers with ± std error bars at every size we ran (shifted slightly to the right by `shift`, so two protocols
    at one n do not hide each other), lines only within a segment."""
    curve = curve.sort_values("n")
    x = curve["n"] * shift
    ax.errorbar(x, curve["mean"], yerr=curve["std"].fillna(0), color=colour, linestyle="none", marker=marker,
                markersize=4, elinewidth=1.0, capsize=2.5, label=label)
    for part in segments(list(curve["n"]), grid):
        rows = curve[curve["n"].isin(part)]
        ax.plot(rows["n"] * shift, rows["mean"], color=colour, linestyle=style, linewidth=1.6)


def fig6_figure(curves_by_depth: dict[int, pd.DataFrame], pipeline: dict[int, pd.DataFrame] | None = None):
    """Rows: depths; columns: the figure's five curves. Ours under the paper's selection (`eval`) and leak-free
    (`last`), each with ± std over runs where a size has several; the authors' plotted curve; their code's control
    where we ran it; the text's claims, one marker in panel and legend; "not run" where we have no curve.
    With `pipeline` (depth -> pipeline_curves): the authors' curve, ours under `eval` and ours with their whole
    pipeline under `eval`, nothing else."""
    depths = sorted(curves_by_depth)
    theirs = authors_curves()
    figure, axes = plt.subplots(len(depths), len(AUTHORS_CURVES),
                                figsize=(FIG6_WIDTH_IN, 2.5 * len(depths) + 0.6), sharex=True, sharey=True,
                                squeeze=False)
    for row, layers in enumerate(depths):
        curves = curves_by_depth[layers]
        for col, (curve, name) in enumerate(AUTHORS_CURVES.items()):
            ax = axes[row][col]
            reference = theirs[(theirs["depth"] == layers) & (theirs["kind"] == curve)].sort_values("n")
            grid = list(reference["n"])
            ax.plot(reference["n"], reference["test_accuracy"], color=THEIRS, linestyle="--", linewidth=1.1,
                    marker=".", markersize=3, label="authors' Fig 6 (one run; a dot per n they ran; ours are joined only "
                                                    "between neighbours on their grid)")
            drawn = False
            for protocol, colour, style, marker, shift in (("eval", OURS, "-", "o", 1.0),
                                                           ("last", OURS_LAST, ":", "s", 1.12)):
                ours = curves[(curves["curve"] == curve) & (curves["label"] == "") & (curves["protocol"] == protocol)]
                if ours.empty or (pipeline and protocol == "last"):
                    continue
                label = ("ours, `eval`: the paper's selection (best epoch on labelled eval rows)" if protocol == "eval"
                         else "ours, `last` (dotted): the final epoch (no extra labels)")
                _ours(ax, ours, grid, colour, style, marker, label + ", ± std over runs", shift)
                drawn = True
            if pipeline:
                mine = pipeline[layers]
                mine = mine[(mine["curve"] == curve) & (mine["protocol"] == "eval")]
                if not mine.empty:
                    _ours(ax, mine, grid, PIPELINE, "-", "D", "ours with the authors' whole pipeline, `eval`")
            options = curves[(curves["curve"] == curve) & (curves["label"] != "") & (curves["protocol"] == "eval")]
            for label, option in ([] if pipeline else options.groupby("label")):
                if option["n"].nunique() > 1 or curve == "sampled":
                    _ours(ax, option, grid, OPTION, "-", "^",
                          "ours, their code's sampled control (N−k weights frozen, not k), `eval`" if "N−k" in label
                          else f"ours, {label}")
            if not drawn:
                ax.text(0.5, 0.55, "not run", transform=ax.transAxes, ha="center", va="center", color="dimgrey",
                        fontsize=LABEL_PT + 1, fontstyle="italic")
            claim = {"subnetwork": (PAPER_TEXT["si_near_perfect_n"], NEAR_PERFECT),
                     "random": (PAPER_TEXT["random_at_n"], PAPER_TEXT["random"])}.get(curve)
            if claim:
                ax.plot(*claim, marker="*", color=CLAIM, markersize=11, linestyle="none", zorder=5,
                        label="the paper's text, any depth (SI ≥ 0.99 at 1,000 rows; random init 0.506 at 1,000)")
            ax.set_xscale("symlog", linthresh=10)
            ax.set_xticks([0, 10, 100, 1000, 10000], ["0", "10", "100", "1k", "10k"])
            ax.set_ylim(0.2, 1.03)
            ax.tick_params(labelsize=TICK_PT)
            ax.grid(alpha=0.3, linewidth=0.5)
            if row == 0:
                ax.set_title(name, fontsize=TITLE_PT)
            if col == 0:
                ax.set_ylabel(f"{layers} layers\ntest accuracy", fontsize=LABEL_PT)
            if row == len(depths) - 1:
                ax.set_xlabel("n (rows)", fontsize=LABEL_PT)
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.legend(list(handles.values()), list(handles), loc="upper center", ncol=2, frameon=False,
                  bbox_to_anchor=(0.5, 0.0), fontsize=LEGEND_PT)
    figure.tight_layout()
    return figure


def fig6_small_multiples(curves_by_depth: dict[int, pd.DataFrame], path: Path,
                         pipeline: dict[int, pd.DataFrame] | None = None) -> Path:
    return _save(fig6_figure(curves_by_depth, pipeline), path)


def metric_panels_figure(table: pd.DataFrame, group: str, metrics: dict[str, str], order: list[str],
                         per_run: pd.DataFrame | None = None, highlight: str = "si", reference: str | None = None,
                         run_word: str = "chain", ylabel: str = "percent", labels: dict | None = None):
    """One panel per metric, in percent as the tables: a bar per model (its mean over runs; `highlight` in colour),
    each run's value as a dot (spread sideways so equal values stay visible), `reference`'s mean as a dashed line
    across every panel, and a legend saying which is which."""
    order = [name for name in order if name in set(table[group])]
    labels = labels or {}
    figure, axes = plt.subplots(1, len(metrics), figsize=(2.6 * len(metrics), 3.4), squeeze=False)
    for ax, (metric, title) in zip(axes[0], metrics.items()):
        rows = table.set_index(group).reindex(order)
        ax.bar(range(len(order)), 100 * rows[metric],
               color=["tab:blue" if name == highlight else "lightgrey" for name in order], edgecolor="grey",
               linewidth=0.5, label=f"mean over {run_word}s ({highlight} in blue)")
        ax.set_xticks(range(len(order)), [labels.get(name, name) for name in order], rotation=45, ha="right",
                      fontsize=TICK_PT - 1)
        if per_run is not None:
            for i, name in enumerate(order):
                values = per_run[per_run[group] == name][metric].dropna().to_numpy()
                offsets = [0.0] if len(values) == 1 else [0.3 * (k / (len(values) - 1) - 0.5) for k in range(len(values))]
                ax.scatter([i + o for o in offsets], 100 * values, color="black", s=10, zorder=3,
                           label=f"one {run_word} (an independent repeat)")
        if reference is not None and reference in rows.index:
            ax.axhline(100 * rows.loc[reference, metric], color="crimson", linewidth=0.9, linestyle="--",
                       label=f"{reference}'s mean, across the panel")
        ax.tick_params(axis="y", labelsize=TICK_PT - 1)
        ax.set_title(title, fontsize=TITLE_PT - 1)
        ax.set_ylabel(ylabel, fontsize=LABEL_PT - 1)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3, linewidth=0.5)
    handles = {}
    for handle, label in zip(*axes[0][0].get_legend_handles_labels()):
        handles.setdefault(label, handle)
    figure.legend(list(handles.values()), list(handles), loc="upper center", ncol=3, frameon=False,
                  bbox_to_anchor=(0.5, 0.0), fontsize=LEGEND_PT - 1)
    figure.tight_layout()
    return figure


def metric_panels(table: pd.DataFrame, group: str, metrics: dict[str, str], order: list[str], path: Path,
                  per_run: pd.DataFrame | None = None, highlight: str = "si", reference: str | None = None,
                  run_word: str = "chain", ylabel: str = "percent", labels: dict | None = None) -> Path:
    return _save(metric_panels_figure(table, group, metrics, order, per_run, highlight, reference, run_word, ylabel,
                                      labels), path)


def gain_by_kept(chains: dict[str, pd.DataFrame], dial: pd.DataFrame, path: Path) -> Path:
    """Which subnetworks transfer: SI's gain over each rival (rows) at each n (columns) against the subnetwork's kept
    fraction, one dot per chain (one marker per record), beside the size dial's curve (one discovery's top k %, the
    kept fraction varied on purpose) where a record ran it; 0 drawn as the line of no gain."""
    from .subnetworks import RIVALS

    columns = sorted({int(c.split()[1][1:]) for table in chains.values() for c in table.columns
                      if c.split()[0] in RIVALS})
    rivals = [r for r in RIVALS if any(f"{r} n{n}" in t.columns for t in chains.values() for n in columns)]
    figure, axes = plt.subplots(len(rivals), len(columns), figsize=(3.6 * len(columns) + 3.4, 3.2 * len(rivals)),
                                squeeze=False, sharex=True)
    markers = ["o", "s", "^", "D"]
    for i, rival in enumerate(rivals):
        for j, n in enumerate(columns):
            ax = axes[i][j]
            ax.axhline(0, color="grey", linewidth=0.8, linestyle=":")
            for (name, table), marker in zip(chains.items(), markers):
                column = f"{rival} n{n}"
                if column in table:
                    ax.scatter(table["kept %"], table[column], marker=marker, s=36, label=f"a chain of `{name}`",
                               edgecolor="black", linewidth=0.5, zorder=3)
            if rival == "sampled" and not dial.empty and n in set(dial["n"]):
                curve = dial[dial["n"] == n].sort_values("kept %")
                ax.plot(curve["kept %"], curve["gain"], color=OURS, marker=".", label="size dial (one discovery's top k %)")
            ax.set_xscale("log")
            ax.set_title(f"SI − {rival}, n = {n}", fontsize=TITLE_PT)
            ax.tick_params(labelsize=TICK_PT)
            if j == 0:
                ax.set_ylabel(f"gain {RIVALS[rival].replace('`', '')} (points)", fontsize=LABEL_PT)
            if i == len(rivals) - 1:
                ax.set_xlabel("kept % of the masked weights (log)", fontsize=LABEL_PT)
    handles, labels = {}, []
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.legend(list(handles.values()), [label.replace("`", "") for label in handles], loc="center right",
                  fontsize=LEGEND_PT, frameon=False)
    figure.tight_layout(rect=(0, 0, 1 - 3.2 / figure.get_figwidth(), 1))
    return _save(figure, path)
