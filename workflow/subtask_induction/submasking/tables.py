"""The submasking family's tables: every point, accuracy adaptation x task, sparsity, k-NN, storage, mask overlap."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd

from ..rounding import fixed, percent
from ..method.masks import load_subnetwork
from ..method.overlap import mask_overlap

KEYS = ["backbone", "task", "adaptation", "fraction"]
ADAPTATION_ORDER = ["lp", "fs", "fft", "ss_fs", "ss_fft"]


def collect(metrics: list[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per point (its metrics.json, as listed: never a glob, so a point the config dropped is not
    in any table), and one row per (point, masked tensor) of the off fractions."""
    rows, layers = [], []
    for path in sorted(Path(p) for p in metrics):
        record = json.loads(path.read_text())
        key = {name: record["identity"][name] for name in KEYS + ["replicate"]}
        rows.append({**key, **record["metrics"], "mask_steps": record.get("mask_steps", 0),
                     "labelled": record["rows"]["labelled"], "path": str(path)})
        for name, off in (record.get("off_per_tensor") or {}).items():
            layers.append({**key, "tensor": name, "off_fraction": off})
    if not rows:
        raise ValueError("no submasking points were given")
    return pd.DataFrame(rows).sort_values(KEYS + ["replicate"]), pd.DataFrame(layers)


def summary(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    grouped = frame.dropna(subset=[metric]).groupby(KEYS)[metric]
    return grouped.agg(mean="mean", std=lambda v: v.std(ddof=1) if len(v) > 1 else 0.0, replicates="count").reset_index()


def _cell(mean: float, std: float, percent: bool = True) -> str:
    scale = 100 if percent else 1
    return f"{fixed(scale * mean, 1)} ± {fixed(scale * std, 1)}"


def adaptation_by_task(frame: pd.DataFrame, metric: str, adaptations: list[str] | None = None) -> str:
    """Markdown, one table per (backbone, fraction): adaptation rows x task columns, mean ± std over replicates (%)."""
    table = summary(frame, metric)
    lines = []
    for (backbone, fraction), part in table.groupby(["backbone", "fraction"]):
        tasks = list(dict.fromkeys(part["task"]))
        present = [m for m in ADAPTATION_ORDER if m in set(part["adaptation"]) and (adaptations is None or m in adaptations)]
        lines += [f"**{backbone}, {percent(fraction, 0)} of the labels** ({metric}, %, mean ± std over replicates)", "",
                  "| adaptation | " + " | ".join(tasks) + " |", "|---" * (len(tasks) + 1) + "|"]
        for adaptation in present:
            cells = []
            for task in tasks:
                hit = part[(part["adaptation"] == adaptation) & (part["task"] == task)]
                cells.append(_cell(hit["mean"].item(), hit["std"].item()) if len(hit) else "—")
            lines.append(f"| {adaptation} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def overlaps(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Off-set overlap of FS masks: between tasks (same replicate, fraction), and across replicates of one task.
    Each point's mask.pt lies beside its metrics.json (frame["path"])."""
    masks = {}
    for row in frame[frame["adaptation"].isin(["fs", "ss_fs"])].itertuples():
        path = Path(row.path).with_name("mask.pt")
        masks[(row.backbone, row.adaptation, row.fraction, row.task, row.replicate)] = {
            name: ~mask for name, mask in load_subnetwork(path)["masks"].items()}  # the off sets
    between, stability = [], []
    groups = {}
    for (backbone, adaptation, fraction, task, replicate), off in masks.items():
        groups.setdefault((backbone, adaptation, fraction), {}).setdefault(task, {})[replicate] = off
    for (backbone, adaptation, fraction), tasks in groups.items():
        for first, second in combinations(sorted(tasks), 2):
            for seed in sorted(set(tasks[first]) & set(tasks[second])):
                between.append({"backbone": backbone, "adaptation": adaptation, "fraction": fraction, "task": first,
                                "other": second, "replicate": seed,
                                **mask_overlap(tasks[first][seed], tasks[second][seed])})
        for task, seeds in tasks.items():
            for a, b in combinations(sorted(seeds), 2):
                stability.append({"backbone": backbone, "adaptation": adaptation, "fraction": fraction, "task": task,
                                  "replicate": a, "other_replicate": b, **mask_overlap(seeds[a], seeds[b])})
    overlap = ["jaccard", "chance", "ratio", "chance_pooled", "density_first", "density_second"]
    return (pd.DataFrame(between, columns=["backbone", "adaptation", "fraction", "task", "other", "replicate", *overlap]),
            pd.DataFrame(stability, columns=["backbone", "adaptation", "fraction", "task", "replicate", "other_replicate", *overlap]))


def tables_markdown(frame: pd.DataFrame, between: pd.DataFrame, stability: pd.DataFrame) -> str:
    parts = ["## Test accuracy", "", adaptation_by_task(frame, "test_accuracy"),
             "## Fraction of masked weights off (FS: labels; ss_fs: rotation prediction)", "",
             adaptation_by_task(frame, "off_fraction", ["fs", "ss_fs"]),
             "## k-NN accuracy of the backbone's features (lp = the untouched backbone)", "",
             adaptation_by_task(frame, "knn_accuracy", ["lp", "fs", "fft"])]
    storage = frame.groupby(["backbone", "task", "adaptation"])[["task_bytes", "full_copy_bytes"]].first().reset_index()
    parts += ["## Bytes one task costs to store (mask bits + head, against a full weight copy)", "",
              "| backbone | task | adaptation | task bytes | full copy | ratio |", "|---|---|---|---|---|---|"]
    parts += [f"| {r.backbone} | {r.task} | {r.adaptation} | {r.task_bytes:,} | {r.full_copy_bytes:,} | "
              f"{fixed(r.task_bytes / r.full_copy_bytes, 4)} |" for r in storage.itertuples()]
    for title, table, other in (("between tasks (same replicate)", between, "other"),
                                ("across replicates of one task", stability, "other_replicate")):
        parts += ["", f"## Overlap of the off sets {title}: Jaccard / chance (random masks with each tensor's own off densities)", ""]
        if table.empty:
            parts.append("(fewer than two masks to compare)")
            continue
        grouped = table.groupby(["backbone", "adaptation", "fraction", "task", other])[["jaccard", "chance", "ratio"]].mean()
        parts += ["| backbone | adaptation | fraction | task | vs | Jaccard | chance | ratio |", "|---" * 8 + "|"]
        parts += [f"| {b} | {m} | {f:g} | {t} | {o} | {fixed(r.jaccard, 3)} | {fixed(r.chance, 3)} | {fixed(r.ratio, 1)} |"
                  for (b, m, f, t, o), r in grouped.iterrows()]
    return "\n".join(parts) + "\n"
