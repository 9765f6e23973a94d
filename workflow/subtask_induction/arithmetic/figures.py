"""Figures of the arithmetic family from the aggregated CSVs (matplotlib).

Every figure has one row of panels per experiment (base, subtask, target): curves are never averaged
over different tasks. Curves are the mean over runs (chain x replicate) of the depth-averaged test accuracy, the band
one standard deviation over runs, at the epoch the chosen selection protocol picks. Fig 3 and Fig 6 draw
the paper's five curves in the paper's encoding (paper.PAPER_STYLE) and, with `paper_reference`, the
authors' own curves (their Fig 6 as plotted) as thin dashed lines of the same colours.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..rounding import fixed
from ..plotting import save_figure as _save  # noqa: E402
from ..labels import TRANSFER  # noqa: E402
from .paper import MAIN_EXPERIMENT, PAPER_STYLE, PAPER_TEXT, authors_curves, paper_form  # noqa: E402
from .tables import EXPERIMENT, depths_of, discovered_fraction, plain_variants, run_summary, shared_depths  # noqa: E402


def experiments(transfer: pd.DataFrame) -> list[tuple]:
    return sorted(transfer.groupby(EXPERIMENT).groups)


def _title(experiment: tuple) -> str:
    base, subtask, target = experiment
    return f"{subtask} of {base} -> {target}"


def _rows(transfer: pd.DataFrame, experiment: tuple, plain: bool = True) -> pd.DataFrame:
    """An experiment's rows; plain: only the variants that transfer the selected subnetwork as discovered
    (the kept-% dial and the label budget have their own figures)."""
    mask = np.ones(len(transfer), dtype=bool)
    for column, value in zip(EXPERIMENT, experiment):
        mask &= (transfer[column] == value).to_numpy()
    rows = transfer[mask]
    return plain_variants(rows) if plain else rows


def _curve(ax, frame: pd.DataFrame, label: str, **style) -> None:
    """frame: the rows of one curve (any depths and runs, one protocol)."""
    stats = run_summary(frame, ["n"])
    line, = ax.plot(stats["n"], stats["mean"], label=label, **{"marker": "o", **style})
    ax.fill_between(stats["n"], stats["mean"] - stats["std"].fillna(0), stats["mean"] + stats["std"].fillna(0), alpha=0.15,
                    color=line.get_color())


def _axes_style(ax, title: str) -> None:
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlim(left=0)
    ax.set_xlabel("disambiguation rows")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)


def _paper_reference(ax, experiment: tuple, theirs: pd.DataFrame) -> None:
    """The authors' curves (theirs: kind, n, test_accuracy; their Fig 6 at this panel's depths, averaged
    over them) as thin dashed lines in the paper's colours, and the text's two values at n = 1,000."""
    if experiment != MAIN_EXPERIMENT:
        return
    for kind, curve in theirs.groupby("kind", sort=False):
        curve = curve.sort_values("n")
        ax.plot(curve["n"], curve["test_accuracy"], linestyle="--", linewidth=0.8, alpha=0.8,
                color=PAPER_STYLE[kind]["color"], label=f"authors: {TRANSFER[kind].word}")
    text = PAPER_TEXT
    ax.plot([text["si_near_perfect_n"]], [text["near_perfect"]], marker="*", markersize=11, color="black",
            linestyle="none", label=f"paper text: SI near-perfect at n = {text['si_near_perfect_n']:,}")
    ax.plot([text["random_at_n"]], [text["random"]], marker="*", markersize=9, color=PAPER_STYLE["random"]["color"],
            markeredgecolor="black", linestyle="none",
            label=f"paper text: random init {fixed(100 * text['random'], 1)}% at n = {text['random_at_n']:,}")


def _authors_at(depths: list[int]) -> pd.DataFrame:
    """The authors' curves averaged over `depths` (empty unless their figure has every one of them)."""
    theirs = authors_curves()
    if not set(depths) <= set(theirs["depth"]):
        return theirs[:0]
    chosen = theirs[theirs["depth"].isin(depths)]
    return chosen.groupby(["kind", "n"], sort=False)["test_accuracy"].mean().reset_index()


def _paper_curves(ax, rows: pd.DataFrame) -> None:
    """Every frozen variant of `rows` (one protocol); those trained as the paper's five curves in its encoding."""
    paper = set(paper_form(rows)["variant"])
    for variant in frozen_variants(rows):
        chosen = rows[rows["variant"] == variant]
        kind = chosen["kind"].iloc[0]
        style = PAPER_STYLE[kind] if variant in paper else {"marker": ".", "linewidth": 0.8}
        _curve(ax, chosen, variant, **style)


def _grid(n_rows: int, n_cols: int, width: float = 4.5, height: float = 3.6):
    figure, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows), squeeze=False,
                                sharey=True)
    return figure, axes


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=8)
    ax.set_axis_off()


def frozen_variants(transfer: pd.DataFrame) -> list[str]:
    """Fig 3 / Fig 6 compare SI with the controls as the paper trains them: subnetworks frozen."""
    frozen = transfer[(transfer["lr_scale"] == 0) | transfer["kind"].isin(["random", "full"])]
    return sorted(frozen["variant"].unique())


def _protocol_rows(transfer: pd.DataFrame, protocol: str) -> pd.DataFrame:
    rows = transfer[transfer["protocol"] == protocol]
    if rows.empty:
        raise ValueError(f"no transfer result under protocol '{protocol}'; found {sorted(transfer['protocol'].unique())}")
    return rows


def fig3(transfer: pd.DataFrame, outdir: Path, protocol: str, paper_reference: bool = False) -> list[Path]:
    """Left: mean over depths. Right: the smallest depth. One row per experiment; the frozen variants
    that ran at every depth of the experiment (the others are in fig6, inheritance and dial). With
    paper_reference, the authors' curves at the same depths and the text's values are drawn too."""
    transfer = _protocol_rows(transfer, protocol)
    found = experiments(transfer)
    figure, axes = _grid(len(found), 2, width=5.5)
    for (left, right), experiment in zip(axes, found):
        rows = _rows(transfer, experiment)
        depth = rows["layers"].min()
        every_depth = rows[rows["variant"].isin([v for v in frozen_variants(rows)
                                                 if depths_of(rows[rows["variant"] == v]) == depths_of(rows)])]
        _paper_curves(left, every_depth)
        _paper_curves(right, every_depth[every_depth["layers"] == depth])
        depths = depths_of(rows)
        _axes_style(left, f"{_title(experiment)}: mean over depths {depths} ({protocol})")
        _axes_style(right, f"{_title(experiment)}: {depth} layers ({protocol})")
        if paper_reference:
            _paper_reference(left, experiment, _authors_at(depths))
            _paper_reference(right, experiment, _authors_at([int(depth)]))
        left.legend(fontsize=6)
    return _save(figure, outdir, "fig3")


def fig6(transfer: pd.DataFrame, outdir: Path, protocol: str, paper_reference: bool = False) -> list[Path]:
    """Per depth, one row per experiment (the authors' curves and the text's values with paper_reference)."""
    transfer = _protocol_rows(transfer, protocol)
    depths = sorted(transfer["layers"].unique())
    found = experiments(transfer)
    figure, axes = _grid(len(found), len(depths))
    for row_axes, experiment in zip(axes, found):
        rows = _rows(transfer, experiment)
        for ax, depth in zip(row_axes, depths):
            _paper_curves(ax, rows[rows["layers"] == depth])
            _axes_style(ax, f"{_title(experiment)}: {depth} layers ({protocol})")
            if paper_reference:
                _paper_reference(ax, experiment, _authors_at([int(depth)]))
        row_axes[0].legend(fontsize=6)
    return _save(figure, outdir, "fig6")


def fig7(transfer: pd.DataFrame, outdir: Path, protocol: str) -> list[Path]:
    """Frozen vs trainable subnetworks (and full-model transfer), one panel per experiment."""
    transfer = _protocol_rows(transfer, protocol)
    found = experiments(transfer)
    figure, axes = _grid(1, len(found), width=5.5)
    for ax, experiment in zip(axes[0], found):
        rows = _rows(transfer, experiment)
        chosen = shared_depths(rows[rows["kind"].isin(["subnetwork", "sampled", "full"])
                                    & rows["lr_scale"].isin([0.0, 1.0])])
        for variant, curve in chosen.groupby("variant"):
            _curve(ax, curve, variant)
        _axes_style(ax, f"{_title(experiment)}: frozen vs trainable, depths {depths_of(chosen)} ({protocol})")
        ax.legend(fontsize=7)
    return _save(figure, outdir, "fig7")


def protocols_figure(transfer: pd.DataFrame, outdir: Path, protocols: list[str]) -> list[Path]:
    """Each frozen variant under every selection protocol: how much selecting on target labels moves it."""
    found = experiments(transfer)
    variants = frozen_variants(transfer)
    figure, axes = _grid(len(found), len(variants), width=3.8)
    styles = {"eval": {"linestyle": "--"}, "train_holdout": {}, "last": {"linestyle": ":"}}
    for row_axes, experiment in zip(axes, found):
        rows = _rows(transfer, experiment)
        for ax, variant in zip(row_axes, variants):
            chosen = rows[rows["variant"] == variant]
            if chosen.empty:
                _empty(ax, f"{variant}: not run for this experiment")
                continue
            for protocol in protocols:
                _curve(ax, chosen[chosen["protocol"] == protocol], protocol, **styles.get(protocol, {}))
            _axes_style(ax, f"{_title(experiment)}: {variant}, depths {depths_of(chosen)}")
        row_axes[0].legend(fontsize=7, title="selected on")
    return _save(figure, outdir, "protocols")


def inheritance_variants(rows: pd.DataFrame) -> pd.DataFrame:
    """The 2x2 {subnetwork, sampled} x {inherited, fresh unmasked tensors} (frozen), plus random and full."""
    frozen_masks = rows["kind"].isin(["subnetwork", "sampled"]) & (rows["lr_scale"] == 0)
    return rows[frozen_masks | rows["kind"].isin(["random", "full"])]


def inheritance(transfer: pd.DataFrame, outdir: Path, protocol: str, dial_n: int) -> list[Path]:
    """Where the effect comes from: curves of the 2x2 plus random/full, and bars at n = dial_n."""
    transfer = _protocol_rows(transfer, protocol)
    found = experiments(transfer)
    figure, axes = _grid(len(found), 2, width=5.5)
    for (curves_ax, bars_ax), experiment in zip(axes, found):
        rows = shared_depths(inheritance_variants(_rows(transfer, experiment)))
        if rows.empty:
            _empty(curves_ax, "no inheritance variants run")
            _empty(bars_ax, "")
            continue
        labels, means, stds = [], [], []
        for variant, curve in rows.groupby("variant"):
            first = curve.iloc[0]
            label = (f"{variant} ({first['kind']}, {'inherited' if first['inherit_unmasked'] else 'fresh'} unmasked)"
                     if first["kind"] in ("subnetwork", "sampled") else f"{variant} ({first['kind']})")
            _curve(curves_ax, curve, label)
            at_n = run_summary(curve[curve["n"] == dial_n], ["variant"])
            if not at_n.empty:
                labels.append(variant)
                means.append(at_n["mean"].item())
                stds.append(at_n["std"].fillna(0).item())
        _axes_style(curves_ax, f"{_title(experiment)}: unmasked tensors inherited or fresh, depths "
                               f"{depths_of(rows)} ({protocol})")
        curves_ax.legend(fontsize=6)
        bars_ax.bar(range(len(labels)), means, yerr=stds, capsize=3)
        bars_ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=7)
        bars_ax.set(ylim=(0, 1.02), ylabel="test accuracy", title=f"n = {dial_n}, mean ± std over runs")
        bars_ax.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    return _save(figure, outdir, "inheritance")


def dial_variants(rows: pd.DataFrame) -> pd.DataFrame:
    """SI with inherited unmasked tensors at every lr_scale of the subnetwork (0 = frozen ... 1 = trainable)."""
    return rows[(rows["kind"] == "subnetwork") & rows["inherit_unmasked"].astype(bool)]


def dial(transfer: pd.DataFrame, outdir: Path, protocol: str, dial_n: int) -> list[Path]:
    """Bias strength: accuracy vs n per lr_scale, and accuracy at n = dial_n vs lr_scale."""
    transfer = _protocol_rows(transfer, protocol)
    found = experiments(transfer)
    figure, axes = _grid(len(found), 2, width=5.5)
    for (curves_ax, dial_ax), experiment in zip(axes, found):
        rows = shared_depths(dial_variants(_rows(transfer, experiment)))
        if rows["lr_scale"].nunique() < 2:
            _empty(curves_ax, "fewer than two lr_scale values run")
            _empty(dial_ax, "")
            continue
        for scale, curve in rows.groupby("lr_scale"):
            _curve(curves_ax, curve, f"lr_scale {scale:g}")
        _axes_style(curves_ax, f"{_title(experiment)}: SI, subnetwork lr scaled, depths {depths_of(rows)} ({protocol})")
        curves_ax.legend(fontsize=7)
        at_n = run_summary(rows[rows["n"] == dial_n], ["lr_scale"])
        dial_ax.errorbar(at_n["lr_scale"], at_n["mean"], yerr=at_n["std"].fillna(0), marker="o", capsize=3)
        dial_ax.set_xscale("symlog", linthresh=0.01)
        dial_ax.set(xlabel="lr_scale of the subnetwork (0 = frozen)", ylabel="test accuracy", ylim=(0, 1.02),
                    title=f"n = {dial_n}, mean ± std over runs")
        dial_ax.grid(alpha=0.3)
    return _save(figure, outdir, "dial")


def discovery_curves(curves: pd.DataFrame, outdir: Path) -> list[Path]:
    figure, (accuracy_ax, kept_ax) = plt.subplots(1, 2, figsize=(11, 4))
    for (base, subtask, layers, l0), rows in curves.groupby(["base", "subtask", "layers", "l0_weight"]):
        label = f"{subtask} of {base}, {layers}L, λ={l0:g}"
        accuracy_ax.plot(rows["epoch"], rows["eval_accuracy"], label=label)
        kept_ax.plot(rows["epoch"], 100 * rows["kept_fraction"], label=label)
    accuracy_ax.set(xlabel="epoch", ylabel="eval accuracy (hard mask)", title="discovery", ylim=(0, 1.02))
    kept_ax.set(xlabel="epoch", ylabel="weights kept (%)", title="subnetwork size")
    accuracy_ax.legend(fontsize=7)
    for ax in (accuracy_ax, kept_ax):
        ax.grid(alpha=0.3)
    return _save(figure, outdir, "discovery_curves")


def sparsity_dial(transfer: pd.DataFrame, outdir: Path, protocol: str) -> list[Path]:
    """The kept-% dial: test accuracy against the top-k fraction of the discovery's scores for SI and the
    count-matched sampled control (mean ± std over chains), one panel per (experiment, depth, n); below,
    SI's agreement with each competing rule. The dotted line marks the discovered subnetwork's own size."""
    rows = (_protocol_rows(transfer, protocol)[lambda t: t["top_k"].notna()] if "top_k" in transfer
            else transfer[:0])
    panels = sorted(rows.groupby(EXPERIMENT + ["layers", "n"]).groups) if not rows.empty else []
    figure, axes = _grid(2, max(1, len(panels)), width=4.5)
    if not panels:
        _empty(axes[0][0], "no top-k variants run")
        _empty(axes[1][0], "")
        return _save(figure, outdir, "sparsity_dial")
    agree = sorted(column for column in rows.columns if column.startswith("test_agree_"))
    for column, key in enumerate(panels):
        base, subtask, target, layers, n = key
        part = rows[(rows["base"] == base) & (rows["subtask"] == subtask) & (rows["target"] == target)
                    & (rows["layers"] == layers) & (rows["n"] == n)]
        top, bottom = axes[0][column], axes[1][column]
        for kind, label in (("subnetwork", "SI (top k of the scores)"), ("sampled", "sampled (same counts)")):
            stats = run_summary(part[part["kind"] == kind], ["top_k"])
            line, = top.plot(100 * stats["top_k"], stats["mean"], marker="o", label=label)
            top.fill_between(100 * stats["top_k"], stats["mean"] - stats["std"].fillna(0), stats["mean"] + stats["std"].fillna(0),
                             alpha=0.15, color=line.get_color())
        for rule in agree:
            stats = run_summary(part[part["kind"] == "subnetwork"], ["top_k"], metric=rule)
            bottom.plot(100 * stats["top_k"], stats["mean"], marker=".", label=f"SI agrees with {rule.removeprefix('test_agree_')}")
        discovered = discovered_fraction(transfer, base, subtask, target, layers)
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            if discovered == discovered:
                ax.axvline(100 * discovered, color="grey", linestyle=":", linewidth=1)
        top.set(title=f"{subtask} of {base} -> {target}, {layers} layers, n = {n}", ylabel="test accuracy")
        bottom.set(xlabel="top k % of the masked weights", ylabel="agreement with a competing rule")
        top.legend(fontsize=7)
        bottom.legend(fontsize=7)
    return _save(figure, outdir, "sparsity_dial")
