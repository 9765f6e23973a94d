"""Vision figures from the aggregated CSVs: Fig 5 (training dynamics), Fig 11 (discovery from pretrained
vs random init), per-class accuracy, and the sample grid of original / pooled / cue-conflict images."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..plotting import save_figure  # noqa: E402

FIG5_MODELS = ("si", "scratch")


def fig5(curves: pd.DataFrame, outdir: Path, models=FIG5_MODELS) -> list[Path]:
    """Original and pooled eval accuracy against training steps, Subtask Induction vs from scratch."""
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, metric, title in zip(axes, ("eval_accuracy", "eval_pooled_accuracy"),
                                 ("original images", "mean-pooled images")):
        for model in [m for m in models if m in set(curves["model"])] or sorted(set(curves["model"])):
            stats = curves[curves["model"] == model].groupby("step")[metric].agg(["mean", "std"]).reset_index()
            ax.plot(stats["step"], stats["mean"], marker=".", label=model)
            ax.fill_between(stats["step"], stats["mean"] - stats["std"].fillna(0),
                            stats["mean"] + stats["std"].fillna(0), alpha=0.2)
        ax.set_title(title)
        ax.set_xlabel("training steps")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("eval accuracy")
    axes[0].legend()
    return save_figure(figure, outdir, "fig5")


def fig11(discovery_curves: pd.DataFrame, outdir: Path) -> list[Path]:
    """Discovery of the pooled-image subnetwork in a pretrained vs a randomly initialised model."""
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    chosen = discovery_curves[discovery_curves["selected"]]
    for (init, chain), frame in chosen.groupby(["init", "chain"]):
        label = f"{init}, chain {chain} (λ={frame['l0_weight'].iloc[0]:g})"
        axes[0].plot(frame["epoch"], frame["eval_pooled_accuracy"], marker=".", label=label)
        axes[1].plot(frame["epoch"], 100 * frame["kept_fraction"], marker=".", label=label)
    axes[0].set_ylabel("pooled eval accuracy (hard mask)")
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylabel("weights kept (%)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    axes[0].legend()
    return save_figure(figure, outdir, "fig11")


def per_class(per_class_table: pd.DataFrame, outdir: Path) -> list[Path]:
    """Per-category original, pooled and cue-conflict shape accuracy of every model (mean over chains)."""
    metrics = [(metric, title) for metric, title in (("original_accuracy", "original"), ("pooled_accuracy", "mean-pooled"),
                                                     ("cue_shape_accuracy", "cue-conflict shape accuracy"))
               if metric in per_class_table and per_class_table[metric].notna().any()]  # no cue-conflict images: 2 panels
    means = per_class_table.groupby(["model", "category"], sort=False)[[m for m, _ in metrics]].mean().reset_index()
    models = list(dict.fromkeys(means["model"]))
    categories = sorted(set(means["category"]))
    figure, axes = plt.subplots(len(metrics), 1, figsize=(12, 2.6 * len(metrics)), sharex=True)
    width = 0.8 / len(models)
    x = np.arange(len(categories))
    for ax, (metric, title) in zip(axes, metrics):
        for k, model in enumerate(models):
            values = means[means["model"] == model].set_index("category").reindex(categories)[metric]
            ax.bar(x + k * width - 0.4 + width / 2, values, width, label=model)
        ax.set_title(title)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3, axis="y")
    axes[-1].set_xticks(x, categories, rotation=45, ha="right")
    axes[0].legend(ncol=len(models), fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.15))  # above the panels, not over the bars
    return save_figure(figure, outdir, "per_class")


def sample_grid(rows: list[tuple[str, list[np.ndarray], list[str]]], path: Path) -> None:
    """rows: (row title, images, captions). One PNG a person can look at to see the data."""
    columns = max(len(images) for _, images, _ in rows)
    figure, axes = plt.subplots(len(rows), columns, figsize=(1.3 * columns, 1.5 * len(rows)), squeeze=False)
    for r, (title, images, captions) in enumerate(rows):
        for c in range(columns):
            ax = axes[r][c]
            ax.axis("off")
            if c < len(images):
                ax.imshow(images[c], interpolation="nearest")
                ax.set_title(captions[c], fontsize=6)
        axes[r][0].text(-0.1, 0.5, title, transform=axes[r][0].transAxes, ha="right", va="center", fontsize=8)
    save_figure(figure, Path(path).parent, Path(path).stem, formats=("png",))
