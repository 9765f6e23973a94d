"""The results page's figures, drawn from run records as small multiples: one panel per curve or model, the
reference drawn in each, legends outside the data, the claim marked where the reader should look."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..rounding import fixed
from ..arithmetic.paper import authors_curves  # noqa: E402
from ..labels import TRANSFER, label  # noqa: E402
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


CHANCE_ARITHMETIC = 1 / 7   # a∘b mod 7: one answer in seven
X_NOTE = "n: disambiguation rows (log scale; 0 to 10 linear, so n = 0 is drawn)"


def _below(legend, figure) -> float:
    """Where a key under `legend` starts (figure fraction): the legend's drawn bottom, a little lower."""
    box = legend.get_window_extent(figure.canvas.get_renderer()).transformed(figure.transFigure.inverted())
    return box.y0 - 0.08 / figure.get_figheight()


def _key(lines: list[str], figure, top: float) -> None:
    """The figure's words under its legend: what each name means, from the label registry."""
    size = LEGEND_PT - 1
    width = int(figure.get_figwidth() * 72 / (size * 0.56))   # characters that fit the figure's width
    text = "\n".join(textwrap.fill(line, width, subsequent_indent="  ") for line in lines)
    figure.text(0.01, top, text, ha="left", va="top", fontsize=size, color="dimgrey", transform=figure.transFigure)


def fig6_figure(curves_by_depth: dict[int, pd.DataFrame], pipeline: dict[int, pd.DataFrame] | None = None,
                not_run: dict[int, str] | None = None):
    """Rows: depths; columns: the figure's five curves, titled in the README's words (labels.TRANSFER). Ours under the
    paper's selection (eval) and leak-free (last), each with ± std over runs where a size has several; the authors'
    plotted curve; their code's control where we ran it; the text's claims, one marker in panel and legend; chance;
    "not run" with its reason (`not_run`: depth -> why) where we have no curve.
    With `pipeline` (depth -> pipeline_curves): the authors' curve, ours under eval and ours with their whole
    pipeline under eval, nothing else."""
    depths = sorted(curves_by_depth)
    theirs = authors_curves()
    not_run = not_run or {}
    figure, axes = plt.subplots(len(depths), len(AUTHORS_CURVES),
                                figsize=(FIG6_WIDTH_IN, 2.5 * len(depths) + 0.6), sharex=True, sharey=True,
                                squeeze=False)
    for row, layers in enumerate(depths):
        curves = curves_by_depth[layers]
        for col, curve in enumerate(AUTHORS_CURVES):
            ax = axes[row][col]
            reference = theirs[(theirs["depth"] == layers) & (theirs["kind"] == curve)].sort_values("n")
            grid = list(reference["n"])
            ax.axhline(CHANCE_ARITHMETIC, color="grey", linestyle=":", linewidth=1.0, label="chance (1 answer in 7)")
            ax.plot(reference["n"], reference["test_accuracy"], color=THEIRS, linestyle="--", linewidth=1.1,
                    marker=".", markersize=3, label="authors' Fig 6 (one run; a dot per n they ran)")
            drawn = False
            for protocol, colour, style, marker, shift in (("eval", OURS, "-", "o", 1.0),
                                                           ("last", OURS_LAST, ":", "s", 1.12)):
                ours = curves[(curves["curve"] == curve) & (curves["label"] == "") & (curves["protocol"] == protocol)]
                if ours.empty or (pipeline and protocol == "last"):
                    continue
                label = ("ours, eval (the paper's selection: best epoch on eval rows)" if protocol == "eval"
                         else "ours, last (dotted; the final epoch)")
                _ours(ax, ours, grid, colour, style, marker, label + ", ± std over runs", shift)
                drawn = True
            if pipeline:
                mine = pipeline[layers]
                mine = mine[(mine["curve"] == curve) & (mine["protocol"] == "eval")]
                if not mine.empty:
                    _ours(ax, mine, grid, PIPELINE, "-", "D", "ours with the authors' whole pipeline, eval")
            options = curves[(curves["curve"] == curve) & (curves["label"] != "") & (curves["protocol"] == "eval")]
            for label, option in ([] if pipeline else options.groupby("label")):
                if option["n"].nunique() > 1 or curve == "sampled":
                    _ours(ax, option, grid, OPTION, "-", "^",
                          f"ours, {TRANSFER['sampled_authors'].word} (their code's control: N−k frozen), eval"
                          if "N−k" in label else f"ours, {label}")
            if not drawn:
                ax.text(0.5, 0.55, "not run" + (f":\n{not_run[layers]}" if layers in not_run else ""),
                        transform=ax.transAxes, ha="center", va="center", color="dimgrey", fontsize=LABEL_PT - 1,
                        fontstyle="italic").set_in_layout(False)
            claim = {"subnetwork": (PAPER_TEXT["si_near_perfect_n"], NEAR_PERFECT),
                     "random": (PAPER_TEXT["random_at_n"], PAPER_TEXT["random"])}.get(curve)
            if claim:
                ax.plot(*claim, marker="*", color=CLAIM, markersize=11, linestyle="none", zorder=5,
                        label="the paper's text (names no depth: drawn in each row)")
            ax.set_xscale("symlog", linthresh=10)
            ax.set_xticks([0, 10, 100, 1000, 10000], ["0", "10", "100", "1k", "10k"])
            ax.set_ylim(0.1, 1.03)
            ax.tick_params(labelsize=TICK_PT)
            ax.grid(alpha=0.3, linewidth=0.5)
            if row == 0:
                ax.set_title(TRANSFER[curve].word, fontsize=TITLE_PT)
            if col == 0:
                ax.set_ylabel(f"{layers} layers\ntest accuracy", fontsize=LABEL_PT)
    figure.supxlabel(X_NOTE, fontsize=LABEL_PT)
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.tight_layout()
    legend = figure.legend(list(handles.values()), list(handles), loc="upper center", ncol=2, frameon=False,
                           bbox_to_anchor=(0.5, 0.0), fontsize=LEGEND_PT)
    _key(["Panels: " + "; ".join(TRANSFER[curve].key() for curve in list(AUTHORS_CURVES)[:3]) + ";",
          "; ".join(TRANSFER[curve].key() for curve in list(AUTHORS_CURVES)[3:]) + ".",
          f"{TRANSFER['sampled_authors'].key()}; k: the subnetwork's weight count, N: all the base's weights.",
          "The paper's text: SI ≥ 0.99 at 1,000 rows; random init 0.506 at 1,000. Our points are joined only between "
          "neighbours on the authors' grid of n.",
          "Test items: a≠b pairs, labelled by a²+ab mod 7. eval uses labels beyond the n rows; last does not."],
         figure, _below(legend, figure))
    return figure


def fig6_small_multiples(curves_by_depth: dict[int, pd.DataFrame], path: Path,
                         pipeline: dict[int, pd.DataFrame] | None = None, not_run: dict[int, str] | None = None) -> Path:
    return _save(fig6_figure(curves_by_depth, pipeline, not_run), path)


RUN_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
RUN_COLOURS = ["black", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]


def paired_panels_figure(means: pd.DataFrame, per_run: pd.DataFrame, group: str, run: str,
                         metrics: dict[str, tuple[str, str]], order: list[str], names: str, *,
                         title: str, highlight: str, chance: dict[str, float], chance_label: str, run_name: str,
                         ylabel: str = "percent", notes: list[str] = ()):
    """One panel per metric (title, definition), in percent as the tables: a bar per model (its mean over runs;
    `highlight` in blue), each run's value as a marker of its own, the same marker and colour in every bar and a thin
    line joining them, so a run is followed across bars (the verdict rule pairs them); chance dotted; the models
    called by the label registry's group `names` (a name it lacks by its config name), and a key under the legend
    saying what each model and metric is."""
    order = [name for name in order if name in set(means[group])]
    runs = sorted(per_run[run].dropna().unique())
    figure, axes = plt.subplots(1, len(metrics), figsize=(max(2.9 * len(metrics), 9.0), 3.6), squeeze=False)
    for ax, (metric, (name, _)) in zip(axes[0], metrics.items()):
        rows = means.set_index(group).reindex(order)
        ax.bar(range(len(order)), 100 * rows[metric],
               color=["tab:blue" if model == highlight else "lightgrey" for model in order], edgecolor="grey",
               linewidth=0.5, label=f"mean over {run_name}s ({label(names, highlight).word} in blue)")
        for k, one in enumerate(runs):
            mine = per_run[per_run[run] == one].set_index(group)
            offset = 0.3 * (k / (len(runs) - 1) - 0.5) if len(runs) > 1 else 0.0
            xs = [i + offset for i, model in enumerate(order) if model in mine.index]
            ys = [100 * mine.loc[model, metric] for model in order if model in mine.index]
            marker, colour = RUN_MARKERS[k % len(RUN_MARKERS)], RUN_COLOURS[k % len(RUN_COLOURS)]
            ax.plot(xs, ys, color=colour, linewidth=0.6, alpha=0.5, zorder=2)
            ax.scatter(xs, ys, marker=marker, color=colour, s=16, zorder=3, label=f"run: {run_name} {one}")
        if metric in chance:
            ax.axhline(100 * chance[metric], color="grey", linestyle=":", linewidth=1.0, label=chance_label)
        ax.set_xticks(range(len(order)), [label(names, model).word for model in order], rotation=45, ha="right",
                      fontsize=TICK_PT - 1)
        ax.tick_params(axis="y", labelsize=TICK_PT - 1)
        ax.set_title(name, fontsize=TITLE_PT - 1)
        ax.set_ylabel(ylabel, fontsize=LABEL_PT - 1)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3, linewidth=0.5)
    figure.suptitle(title, fontsize=TITLE_PT)
    handles = {}
    for ax in axes[0]:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(text, handle)
    figure.tight_layout()
    ncol = len(handles) if len(handles) <= 5 else 4
    legend = figure.legend(list(handles.values()), list(handles), loc="upper center", ncol=ncol, frameon=False,
                           bbox_to_anchor=(0.5, 0.0), fontsize=LEGEND_PT - 1)
    _key([*notes] + [label(names, model).key() for model in order]
         + [f"{name}: {definition}" for name, definition in metrics.values()], figure, _below(legend, figure))
    return figure


def paired_panels(path: Path, *args, **kwargs) -> Path:
    return _save(paired_panels_figure(*args, **kwargs), path)


DIAL = "tab:green"   # the kept-% dial: its own colour, never a record's
RECORD_STYLES = [dict(marker="o", color="tab:blue"), dict(marker="s", color="tab:orange"),
                 dict(marker="^", color="tab:purple")]


def gain_by_kept(chains: dict[str, pd.DataFrame], dial: pd.DataFrame, path: Path, test_items: int | None = None,
                 dial_chains: int | None = None) -> Path:
    """Which subnetworks transfer: SI's gain over each rival (rows) at each n (columns), one dot per chain in a strip
    per record (side by side, so every chain can be counted; within its strip a chain sits by its kept %, the range
    written under the strip), the mean over chains as a bar; 0 drawn as the line of no gain. Beside them, in a panel
    of its own, the kept-% dial: one discovery's top k % against the count-matched random mask, kept % varied on
    purpose from 1 to 50, with the band of kept % the chains' own subnetworks fall in; it is drawn for `sampled`
    only, the one rival the dial ran."""
    from .subnetworks import RIVALS

    columns = sorted({int(c.split()[1][1:]) for table in chains.values() for c in table.columns
                      if c.split()[0] in RIVALS})
    rivals = [r for r in RIVALS if any(f"{r} n{n}" in t.columns for t in chains.values() for n in columns)]
    with_dial = not dial.empty
    figure, axes = plt.subplots(len(rivals), len(columns) + with_dial,
                                figsize=(2.9 * len(columns) + 3.6 * with_dial + 0.4, 3.3 * len(rivals) + 0.6),
                                squeeze=False)
    kept = pd.concat([table["kept %"] for table in chains.values()])
    low, high = float(kept.min()), float(kept.max())
    names = list(chains)
    for i, rival in enumerate(rivals):
        for j, n in enumerate(columns):
            ax = axes[i][j]
            ax.axhline(0, color="grey", linewidth=0.8, linestyle=":")
            for slot, ((name, table), style) in enumerate(zip(chains.items(), RECORD_STYLES)):
                column = f"{rival} n{n}"
                if column not in table:
                    continue
                values = table[["kept %", column]].dropna()
                x = slot + 0.7 * ((values["kept %"] - low) / max(high - low, 1e-9) - 0.5)
                ax.scatter(x, values[column], s=30, edgecolor="black", linewidth=0.5, zorder=3,
                           label=f"a chain of the {name} record", **style)
                ax.hlines(values[column].mean(), slot - 0.4, slot + 0.4, color=style["color"], linewidth=2,
                          zorder=2, label="the mean over a record's chains")
            ax.set_xticks(range(len(names)), [name.replace("_", "_\n") for name in names], fontsize=TICK_PT - 1)
            ax.set_xlim(-0.6, len(names) - 0.4)
            ax.set_title(f"{TRANSFER['subnetwork'].word} − {TRANSFER[rival].word}, n = {n}", fontsize=TITLE_PT)
            ax.tick_params(axis="y", labelsize=TICK_PT)
            if j == 0:
                ax.set_ylabel(f"gain over {TRANSFER[rival].word}\n(percentage points)", fontsize=LABEL_PT)
        if with_dial:
            ax = axes[i][-1]
            if rival != "sampled":
                ax.axis("off")
                ax.text(0.05, 0.5, "the kept-% dial ran\nagainst sampled only", fontsize=LABEL_PT,
                        transform=ax.transAxes, va="center")
                continue
            ax.axhline(0, color="grey", linewidth=0.8, linestyle=":")
            ax.axvspan(low, high, color="tab:blue", alpha=0.12, label=f"the chains' kept % ({fixed(low, 1)}–{fixed(high, 1)})")
            for n, style in zip(sorted(dial["n"].unique()), ("-", "--", ":")):
                curve = dial[dial["n"] == n].sort_values("kept %")
                ax.plot(curve["kept %"], curve["gain"], color=DIAL, linestyle=style, marker="o", markersize=4,
                        label=f"kept-% dial, n = {n}" + (f" (mean of {dial_chains} chains)" if dial_chains else ""))
            ax.set_xscale("log")
            ax.set_xticks([1, 2, 5, 10, 25, 50], ["1", "2", "5", "10", "25", "50"])
            ax.set_xlabel("kept % (one discovery's top k %)", fontsize=LABEL_PT)
            ax.set_title("SI − sampled by kept % (the dial)", fontsize=TITLE_PT)
            ax.tick_params(labelsize=TICK_PT)
    handles = {}
    for ax in axes.flat:
        for handle, label_text in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label_text, handle)
    figure.legend(list(handles.values()), list(handles), loc="lower center", ncol=3, fontsize=LEGEND_PT,
                  frameon=False)
    unit = f" on the {test_items:,} held-out test pairs" if test_items else ""
    figure.suptitle(f"Gain in test accuracy{unit}, percentage points; above the dotted 0, SI wins. A strip per record, "
                    f"a dot per chain (left to right by its kept %, {fixed(low, 1)}–{fixed(high, 1)} %)", fontsize=LABEL_PT)
    figure.tight_layout(rect=(0, 0.1, 1, 0.97))
    return _save(figure, path)
