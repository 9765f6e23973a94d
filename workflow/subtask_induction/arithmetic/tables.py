"""Collect per-point metrics.json files of the arithmetic family into tables (pandas)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..method.discovery import selection_key


def _read(path) -> dict:
    with open(path) as handle:
        return json.load(handle)


def base_table(paths) -> pd.DataFrame:
    rows = []
    for path in paths:
        record = _read(path)
        rows.append({"base": record["config"]["computation"], "layers": record["config"]["layers"],
                     **record["metrics"], "best_epoch": record["best_epoch"]})
    return pd.DataFrame(rows).sort_values(["base", "layers"])


def discovery_tables(paths) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per (base, subtask, layers, lambda), and the long-form training curves."""
    rows, curves = [], []
    for path in paths:
        record = _read(path)
        config = record["config"]
        key = {"base": config["base"]["computation"], "subtask": config["subtask"],
               "layers": config["base"]["layers"], "l0_weight": config["l0_weight"]}
        rows.append({**key, **record["metrics"], "best_epoch": record["best_epoch"]})
        curves += [{**key, **{k: point[k] for k in ("epoch", "eval_accuracy", "kept_fraction", "beta", "train_loss")}}
                   for point in record["curve"]]
    table = pd.DataFrame(rows).sort_values(["base", "subtask", "layers", "l0_weight"])
    best = table.apply(lambda r: selection_key(r["eval_accuracy"], r["kept_fraction"]), axis=1)
    table["selected"] = False
    for _, group in table.assign(key=best).groupby(["base", "subtask", "layers"]):
        table.loc[group["key"].idxmax(), "selected"] = True
    return table, pd.DataFrame(curves)


def table3(discovery: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 3: kept fraction (%) of the selected subnetwork per depth."""
    chosen = discovery[discovery["selected"]].copy()
    chosen["kept_percent"] = 100 * chosen["kept_fraction"]
    columns = ["base", "subtask", "layers", "l0_weight", "kept_percent", "eval_accuracy", "test_accuracy"]
    return chosen[columns].reset_index(drop=True)


EXPERIMENT = ["base", "subtask", "target"]


def transfer_table(paths) -> pd.DataFrame:
    """One row per (sweep point, selection protocol): the test metrics at the epoch that protocol picks."""
    rows = []
    for path in paths:
        record = _read(path)
        config = record["config"]
        variant = config["variant"]
        point = {"base": config["base"]["computation"], "subtask": config["subtask"], "target": config["target"],
                 "layers": config["base"]["layers"], "variant": config["variant_name"], "method": variant["method"],
                 "lr_scale": variant["lr_scale"], "inherit_unmasked": variant["inherit_unmasked"],
                 "n": config["n_disambiguation"], "seed": record["seed"], "path": str(Path(path))}
        for protocol, chosen in record["metrics"].items():
            rows.append({**point, "protocol": protocol, **chosen})
    columns = EXPERIMENT + ["layers", "variant", "n", "seed", "protocol"]
    return pd.DataFrame(rows).sort_values(columns).reset_index(drop=True)


def seed_summary(transfer: pd.DataFrame, by: list[str], metric: str = "test_accuracy") -> pd.DataFrame:
    """mean and std over seeds of the depth-averaged metric, per `by` group (std 0 for one seed)."""
    per_seed = transfer.groupby(by + ["seed"])[metric].mean().reset_index()
    summary = per_seed.groupby(by)[metric].agg(["mean", "std", "count"]).reset_index()
    summary["std"] = summary["std"].fillna(0.0)
    return summary


def depths_of(rows: pd.DataFrame) -> list[int]:
    return sorted(int(d) for d in rows["layers"].unique())


def shared_depths(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` restricted to the depths at which every variant in them ran, so that curves compared in one
    panel are means over the same depths (an experiment may run some variants at fewer depths)."""
    if rows.empty:
        return rows
    common = set.intersection(*(set(d) for d in rows.groupby("variant")["layers"].unique()))
    return rows[rows["layers"].isin(common)]


def transfer_markdown(transfer: pd.DataFrame, protocols: list[str]) -> str:
    """Per experiment and protocol: variant x n, test accuracy mean ± std over seeds of the mean over the
    depths that variant ran at (its own column)."""
    lines = []
    summary = seed_summary(transfer, EXPERIMENT + ["protocol", "variant", "n"])
    depths = {variant: ", ".join(map(str, depths_of(rows))) for variant, rows in transfer.groupby("variant")}
    for (base, subtask, target), experiment in summary.groupby(EXPERIMENT):
        for protocol in protocols:
            rows = experiment[experiment["protocol"] == protocol]
            if rows.empty:
                continue
            sizes = sorted(rows["n"].unique())
            lines += [f"### {subtask} of {base} -> {target}, protocol `{protocol}` "
                      f"(test accuracy, mean ± std over seeds of the mean over the variant's depths)", "",
                      "| variant | depths | " + " | ".join(f"n={n}" for n in sizes) + " |",
                      "|---|---|" + "---|" * len(sizes)]
            for variant, by_variant in rows.groupby("variant", sort=False):
                cells = {row["n"]: f"{row['mean']:.3f} ± {row['std']:.3f}" for _, row in by_variant.iterrows()}
                lines.append(f"| {variant} | {depths[variant]} | " + " | ".join(cells.get(n, "") for n in sizes) + " |")
            lines.append("")
    return "\n".join(lines)
