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

OURS, OURS_LAST, THEIRS, OPTION, PIPELINE = "tab:blue", "#9ecae1", "black", "tab:orange", "tab:red"


def _save(figure, path: Path) -> Path:
    """PNG only, written atomically by the figure saving every family uses."""
    return save_figure(figure, path.parent, path.stem, formats=("png",))[0]


def _with_band(ax, curve: pd.DataFrame, colour: str, width: float, label: str) -> None:
    ax.plot(curve["n"], curve["mean"], color=colour, marker="o", markersize=3, linewidth=width, label=label)
    spread = curve["std"].fillna(0)
    ax.fill_between(curve["n"], curve["mean"] - spread, curve["mean"] + spread, color=colour, alpha=0.2, linewidth=0,
                    label="± std over replicates")


def fig6_small_multiples(curves_by_depth: dict[int, pd.DataFrame], path: Path,
                         pipeline: dict[int, pd.DataFrame] | None = None) -> Path:
    """Rows: depths; columns: the figure's five curves. Ours under the paper's selection (`eval`, its seed band:
    ± std where a size has several runs), ours leak-free (`last`), the authors' plotted curve, and their code's
    control where we ran it; the text's claims marked (0.99 at 1,000 rows for SI; 50.6% for random init).
    With `pipeline` (depth -> pipeline_curves): the authors' curve, ours under `eval` and ours with their whole
    pipeline under `eval`, nothing else."""
    depths = sorted(curves_by_depth)
    theirs = authors_curves()
    figure, axes = plt.subplots(len(depths), len(AUTHORS_CURVES), figsize=(3.0 * len(AUTHORS_CURVES), 2.6 * len(depths)),
                                sharex=True, sharey=True, squeeze=False)
    for row, layers in enumerate(depths):
        curves = curves_by_depth[layers]
        for col, (curve, name) in enumerate(AUTHORS_CURVES.items()):
            ax = axes[row][col]
            reference = theirs[(theirs["depth"] == layers) & (theirs["kind"] == curve)].sort_values("n")
            ax.plot(reference["n"], reference["test_accuracy"], color=THEIRS, linestyle="--", linewidth=1.2,
                    label="authors' Fig 6 (one run)")
            for protocol, colour, width in (("last", OURS_LAST, 1.2), ("eval", OURS, 1.8)):
                ours = curves[(curves["curve"] == curve) & (curves["label"] == "")
                              & (curves["protocol"] == protocol)].sort_values("n")
                if ours.empty or (pipeline and protocol == "last"):
                    continue
                label = f"ours, `{protocol}`" + (" (the paper's selection)" if protocol == "eval" else " (leak-free)")
                if protocol == "eval":
                    _with_band(ax, ours, colour, width, label)
                else:
                    ax.plot(ours["n"], ours["mean"], color=colour, marker="o", markersize=3, linewidth=width,
                            label=label)
            if pipeline:
                theirs_in_ours = pipeline[layers]
                mine = theirs_in_ours[(theirs_in_ours["curve"] == curve)
                                      & (theirs_in_ours["protocol"] == "eval")].sort_values("n")
                if not mine.empty:
                    _with_band(ax, mine, PIPELINE, 1.8, "ours with the authors' whole pipeline, `eval`")
            options = curves[(curves["curve"] == curve) & (curves["label"] != "") & (curves["protocol"] == "eval")]
            for label, option in ([] if pipeline else options.groupby("label")):
                if option["n"].nunique() > 1 or curve == "sampled":
                    ax.plot(option["n"], option["mean"], color=OPTION, marker="s", markersize=3, linewidth=1.2,
                            label="ours, their code's N−k control (`eval`)" if "N−k" in label else f"ours, {label}")
            if curve == "subnetwork":
                ax.axhline(NEAR_PERFECT, color="grey", linewidth=0.6)
                ax.axvline(PAPER_TEXT["si_near_perfect_n"], color="grey", linewidth=0.6)
                ax.annotate("text: ≥ 0.99\nat 1,000", (PAPER_TEXT["si_near_perfect_n"], NEAR_PERFECT),
                            xytext=(-58, -38), textcoords="offset points", fontsize=7, color="dimgrey")
            if curve == "random":
                ax.plot([PAPER_TEXT["random_at_n"]], [PAPER_TEXT["random"]], marker="*", color="crimson",
                        markersize=9, linestyle="none", label="the text's claim")
            ax.set_xscale("symlog", linthresh=10)
            ax.set_ylim(0.2, 1.02)
            ax.grid(alpha=0.3, linewidth=0.5)
            if row == 0:
                ax.set_title(name, fontsize=10)
            if col == 0:
                ax.set_ylabel(f"{layers} layers\ntest accuracy (a²+ab)")
            if row == len(depths) - 1:
                ax.set_xlabel("n (disambiguation rows)")
    handles, labels = {}, {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.legend(list(handles.values()), list(handles), loc="lower center", ncol=3, frameon=False,
                  bbox_to_anchor=(0.5, -0.02 - 0.06 * (3 - len(depths))), fontsize=8)
    figure.tight_layout()
    return _save(figure, path)


def metric_panels(table: pd.DataFrame, group: str, metrics: dict[str, str], order: list[str], path: Path,
                  per_run: pd.DataFrame | None = None, highlight: str = "si", reference: str | None = None) -> Path:
    """One panel per metric: a bar per model (its mean over runs; `highlight` in colour), each run's value as a dot;
    `reference` (a model) drawn as a dashed line across every panel, so each bar reads against it."""
    order = [name for name in order if name in set(table[group])]
    figure, axes = plt.subplots(1, len(metrics), figsize=(2.8 * len(metrics), 3.0), squeeze=False)
    for ax, (metric, title) in zip(axes[0], metrics.items()):
        rows = table.set_index(group).reindex(order)
        ax.bar(range(len(order)), rows[metric], color=["tab:blue" if name == highlight else "lightgrey" for name in order],
               edgecolor="grey", linewidth=0.5)
        if per_run is not None:
            for i, name in enumerate(order):
                values = per_run[per_run[group] == name][metric]
                ax.scatter([i] * len(values), values, color="black", s=8, zorder=3)
        if reference is not None and reference in rows.index:
            ax.axhline(rows.loc[reference, metric], color="crimson", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(order)), order, rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(0, 1.0)
        ax.grid(axis="y", alpha=0.3, linewidth=0.5)
    figure.tight_layout()
    return _save(figure, path)
