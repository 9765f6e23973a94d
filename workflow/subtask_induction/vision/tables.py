"""Collect the vision family's metrics.json files into Table 1, Table 2, per-class and curve tables."""

from __future__ import annotations

import json

import pandas as pd

MODEL_ORDER = ["base", "subnetwork", "si", "scratch", "mixture", "finetune", "linear"]  # Table 1's rows, others after
TABLE1_METRICS = ["original_accuracy", "pooled_accuracy", "cue_shape_accuracy", "cue_robustness", "shape_bias"]


def _read(path) -> dict:
    with open(path) as handle:
        return json.load(handle)


def _summary(metrics: dict) -> dict:
    return {key: metrics[key] for key in TABLE1_METRICS}


def collect(base_path, discovery_paths, selected: dict[str, float], transfer_paths) -> dict[str, pd.DataFrame]:
    """selected: init -> the L0 weight of its selected subnetwork."""
    base = _read(base_path)
    rows = [{"model": "base", "seed": None, **_summary(base["metrics"])}]
    per_class = [{"model": "base", "category": c, **values} for c, values in base["metrics"]["per_class"].items()]
    discovery, discovery_curves = [], []
    for path in discovery_paths:
        record = _read(path)
        chosen = record["init"] in selected and record["l0_weight"] == selected[record["init"]]
        discovery.append({"init": record["init"], "l0_weight": record["l0_weight"], "selected": chosen,
                          "kept_percent": 100 * record["metrics"]["kept_fraction"],
                          "eval_pooled_accuracy": record["metrics"]["eval_accuracy"],
                          **{f"whole_{k}": record["whole_model"][k] for k in TABLE1_METRICS},
                          **{f"subnetwork_{k}": record["subnetwork"][k] for k in TABLE1_METRICS}})
        discovery_curves += [{"init": record["init"], "l0_weight": record["l0_weight"], "selected": chosen,
                              "epoch": point["epoch"], "eval_pooled_accuracy": point["eval_accuracy"],
                              "kept_fraction": point["kept_fraction"]} for point in record["curve"]]
        if chosen and record["init"] == "pretrained":
            rows.append({"model": "subnetwork", "seed": None, **_summary(record["subnetwork"])})
            per_class += [{"model": "subnetwork", "category": c, **values}
                          for c, values in record["subnetwork"]["per_class"].items()]
    curves = []
    for path in transfer_paths:
        record = _read(path)
        rows.append({"model": record["variant"], "seed": record["seed"], **_summary(record["metrics"])})
        per_class += [{"model": record["variant"], "seed": record["seed"], "category": c, **values}
                      for c, values in record["per_class"].items()]
        curves += [{"model": record["variant"], "seed": record["seed"], "epoch": point["epoch"],
                    "step": point["epoch"] * record["steps_per_epoch"], "eval_accuracy": point["eval_accuracy"],
                    "eval_pooled_accuracy": point["eval_pooled_accuracy"]} for point in record["curve"]]
    runs = pd.DataFrame(rows)
    known = [m for m in MODEL_ORDER if m in set(runs["model"])]
    order = known + sorted(set(runs["model"]) - set(known))
    table1 = (runs.groupby("model", sort=False)[TABLE1_METRICS].agg(["mean", "std", "count"]))
    table1.columns = [f"{metric}_{stat}" if stat != "mean" else metric for metric, stat in table1.columns]
    table1 = table1.loc[order].reset_index()
    discovery = pd.DataFrame(discovery).sort_values(["init", "l0_weight"])
    table2 = discovery[discovery["selected"]][["init", "l0_weight", "kept_percent", "whole_pooled_accuracy",
                                               "subnetwork_pooled_accuracy", "whole_original_accuracy",
                                               "subnetwork_original_accuracy", "subnetwork_shape_bias"]]
    return {"table1": table1, "runs": runs, "table2": table2.reset_index(drop=True), "discovery": discovery,
            "per_class": pd.DataFrame(per_class), "curves": pd.DataFrame(curves),
            "discovery_curves": pd.DataFrame(discovery_curves)}


def table1_markdown(table1: pd.DataFrame) -> str:
    """Table 1 as in the paper (percent), with the spread over seeds where there are several."""
    lines = ["| model | original | pooled | cue-conflict shape acc. | robustness | shape bias |",
             "|---|---|---|---|---|---|"]
    for _, row in table1.iterrows():
        cells = []
        for metric in TABLE1_METRICS:
            cell = f"{100 * row[metric]:.1f}"
            if row.get(f"{metric}_count", 1) > 1:
                cell += f" ± {100 * row[f'{metric}_std']:.1f}"
            cells.append(cell)
        lines.append(f"| {row['model']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table2_markdown(table2: pd.DataFrame) -> str:
    lines = ["| init | λ | kept % | pooled acc. whole model → subnetwork | original acc. whole → subnetwork |",
             "|---|---|---|---|---|"]
    for _, row in table2.iterrows():
        lines.append(f"| {row['init']} | {row['l0_weight']:g} | {row['kept_percent']:.2f} | "
                     f"{100 * row['whole_pooled_accuracy']:.1f} → {100 * row['subnetwork_pooled_accuracy']:.1f} | "
                     f"{100 * row['whole_original_accuracy']:.1f} → {100 * row['subnetwork_original_accuracy']:.1f} |")
    return "\n".join(lines) + "\n"
