"""Paper figures for the arithmetic family from the aggregated CSVs (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..plotting import save_figure as _save  # noqa: E402


def _curve(ax, frame: pd.DataFrame, label: str, spread: bool) -> None:
    stats = frame.groupby("n")["test_accuracy"].agg(["mean", "std"]).reset_index()
    ax.plot(stats["n"], stats["mean"], marker="o", label=label)
    if spread:
        ax.fill_between(stats["n"], stats["mean"] - stats["std"].fillna(0), stats["mean"] + stats["std"].fillna(0),
                        alpha=0.2)


def _axes_style(ax, title: str) -> None:
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlim(left=0)
    ax.set_xlabel("disambiguation rows")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)


def frozen_variants(transfer: pd.DataFrame) -> list[str]:
    """Fig 3 / Fig 6 compare SI with the controls as the paper trains them: subnetworks frozen."""
    frozen = transfer[(transfer["lr_scale"] == 0) | transfer["method"].isin(["random", "full"])]
    return sorted(frozen["variant"].unique())


def fig3(transfer: pd.DataFrame, outdir: Path) -> list[Path]:
    """Left: mean over depths (depth means, then averaged). Right: the smallest depth, mean ± std over seeds."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    depth = transfer["layers"].min()
    for variant in frozen_variants(transfer):
        rows = transfer[transfer["variant"] == variant]
        per_depth = rows.groupby(["layers", "n"])["test_accuracy"].mean().reset_index()
        _curve(left, per_depth, variant, spread=False)
        _curve(right, rows[rows["layers"] == depth], variant, spread=True)
    _axes_style(left, f"mean over depths {sorted(int(d) for d in transfer['layers'].unique())}")
    _axes_style(right, f"{depth} layers, mean ± std over seeds")
    left.legend()
    return _save(figure, outdir, "fig3")


def fig6(transfer: pd.DataFrame, outdir: Path) -> list[Path]:
    depths = sorted(transfer["layers"].unique())
    figure, axes = plt.subplots(1, len(depths), figsize=(4.5 * len(depths), 4), sharey=True, squeeze=False)
    for ax, depth in zip(axes[0], depths):
        for variant in frozen_variants(transfer):
            rows = transfer[(transfer["variant"] == variant) & (transfer["layers"] == depth)]
            _curve(ax, rows, variant, spread=True)
        _axes_style(ax, f"{depth} layers")
    axes[0][0].legend()
    return _save(figure, outdir, "fig6")


def fig7(transfer: pd.DataFrame, outdir: Path) -> list[Path]:
    """Frozen vs trainable subnetworks (and full-model transfer), mean over depths."""
    figure, ax = plt.subplots(figsize=(5.5, 4))
    chosen = transfer[transfer["method"].isin(["subnetwork", "sampled", "full"])]
    for variant, rows in chosen.groupby("variant"):
        per_depth = rows.groupby(["layers", "n"])["test_accuracy"].mean().reset_index()
        _curve(ax, per_depth, variant, spread=False)
    _axes_style(ax, "frozen vs trainable subnetworks")
    ax.legend()
    return _save(figure, outdir, "fig7")


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
