"""Figures of the submasking family: per-layer sparsity, accuracy vs label fraction, mask similarity."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..rounding import fixed, percent
from ..plotting import save_figure  # noqa: E402
from .tables import ADAPTATION_ORDER, summary  # noqa: E402


def sparsity_per_layer(layers: pd.DataFrame, outdir: Path) -> list[Path]:
    """FS off fraction per masked tensor (in network order), one line per task, at the largest label fraction."""
    figure, ax = plt.subplots(figsize=(9, 3.6))
    fs = layers[layers["adaptation"] == "fs"] if not layers.empty else layers
    if fs.empty:
        ax.text(0.5, 0.5, "no FS run", ha="center", transform=ax.transAxes)
    else:
        fs = fs[fs["fraction"] == fs["fraction"].max()]
        order = list(dict.fromkeys(fs["tensor"]))
        for (backbone, task), rows in fs.groupby(["backbone", "task"]):
            mean = rows.groupby("tensor")["off_fraction"].mean().reindex(order)
            ax.plot(range(len(order)), mean.to_numpy(), marker=".", label=f"{task} ({backbone})")
        ax.set_xticks(range(len(order)), [name.removeprefix("net.").removesuffix(".weight") for name in order],
                      rotation=90, fontsize=6)
        ax.set(ylabel="fraction of weights off", title=f"FS, {percent(fs['fraction'].max(), 0)} of the labels, mean over replicates")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    return save_figure(figure, outdir, "sparsity_per_layer")


def label_fractions(points: pd.DataFrame, outdir: Path) -> list[Path]:
    """Test accuracy against the fraction of labels used, per adaptation, one panel per (backbone, task)."""
    table = summary(points, "test_accuracy")
    panels = sorted(table.groupby(["backbone", "task"]).groups)
    figure, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, (backbone, task) in zip(axes[0], panels):
        rows = table[(table["backbone"] == backbone) & (table["task"] == task)]
        for adaptation in [m for m in ADAPTATION_ORDER if m in set(rows["adaptation"])]:
            curve = rows[rows["adaptation"] == adaptation].sort_values("fraction")
            line, = ax.plot(curve["fraction"], curve["mean"], marker="o", label=adaptation)
            ax.fill_between(curve["fraction"], curve["mean"] - curve["std"], curve["mean"] + curve["std"],
                            alpha=0.15, color=line.get_color())
        ax.set_xscale("log")
        ax.set(xlabel="fraction of training labels", title=f"{task} ({backbone})", ylim=(0, 1.02))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy")
    axes[0][0].legend(fontsize=7)
    return save_figure(figure, outdir, "label_fractions")


def mask_similarity(between: pd.DataFrame, stability: pd.DataFrame, outdir: Path) -> list[Path]:
    """Task x task Jaccard of FS off sets over its chance level (diagonal: the same task across replicates)."""
    figure, ax = plt.subplots(figsize=(4.8, 4))
    if between.empty and stability.empty:
        ax.text(0.5, 0.5, "fewer than two FS masks", ha="center", transform=ax.transAxes)
        return save_figure(figure, outdir, "mask_similarity")
    frames = [f for f in (between, stability) if not f.empty]
    fraction = max(f["fraction"].max() for f in frames)
    tasks = sorted(set().union(*[set(f["task"]) for f in frames], set(between["other"]) if not between.empty else set()))
    grid = np.full((len(tasks), len(tasks)), np.nan)
    def chosen(frame):
        return frame[(frame["adaptation"] == "fs") & (frame["fraction"] == fraction)] if not frame.empty else frame

    pairs = chosen(between)
    for (task, other), rows in (pairs.groupby(["task", "other"]) if not pairs.empty else []):
        i, j = tasks.index(task), tasks.index(other)
        grid[i, j] = grid[j, i] = rows["ratio"].mean()
    repeats = chosen(stability)
    for task, rows in (repeats.groupby("task") if not repeats.empty else []):
        grid[tasks.index(task), tasks.index(task)] = rows["ratio"].mean()
    image = ax.imshow(grid, cmap="viridis")
    for i in range(len(tasks)):
        for j in range(len(tasks)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{fixed(grid[i, j], 1)}", ha="center", va="center", color="w", fontsize=8)
    ax.set_xticks(range(len(tasks)), tasks, rotation=45, ha="right")
    ax.set_yticks(range(len(tasks)), tasks)
    ax.set_title(f"FS off sets: Jaccard / chance ({fraction:g} of labels)\ndiagonal: across replicates", fontsize=9)
    figure.colorbar(image, ax=ax)
    return save_figure(figure, outdir, "mask_similarity")
