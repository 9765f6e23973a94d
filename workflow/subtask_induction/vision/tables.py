"""Collect the vision family's metrics.json files into Table 1, Table 2, per-chain tables, the comparisons
that hold in every chain, and long-form per-class and curve tables for the figures.

A chain is one seed for base -> discovery -> transfer: mean ± std over chains includes the variation of
the single base and discovery run, which a spread over transfer seeds alone hides.
"""

from __future__ import annotations

import math

import pandas as pd

from ..rounding import fixed, percent
from ..page_tables import PageTables

from ..claims import (CONFIDENCE, LEVEL, PAIRED_LEVEL, RULE_VERSION, OffGrid, bits_correct, format_paired, headroom,
                      judge, mcnemar_p, shape_bias_difference, smallest_effect)
from ..points import SUBNETWORK_ROWS
from ..records import read_record

TABLE1_METRICS = ["original_accuracy", "original_balanced_accuracy", "pooled_accuracy", "pooled_balanced_accuracy",
                  "cue_shape_accuracy", "cue_robustness", "shape_bias"]
TABLE1_HEADERS = ["original", "original (balanced)", "pooled", "pooled (balanced)", "cue-conflict shape acc.",
                  "robustness", "shape bias"]
# the metrics comparisons.md compares chain by chain for each configured pair (vision.report.comparisons)
COMPARED_METRICS = ["pooled_accuracy", "shape_bias", "cue_shape_accuracy", "cue_robustness"]


def _summary(metrics: dict) -> dict:
    """Table 1's metrics of one record; NaN where it has none (no cue-conflict images: the columns are
    dropped below, absent rather than zero)."""
    return {key: metrics.get(key, math.nan) for key in TABLE1_METRICS}


def with_cue_conflict(metrics: dict, cue: dict | None) -> dict:
    """A model's test metrics (evaluate's layout) with its cue-conflict scores (evaluate_cue_conflict's, from
    the chain's cue-conflict record) merged in key by key: metrics, per class and items."""
    if cue is None:
        return metrics
    per_class = {category: {**values, **cue["per_class"].get(category, {})}
                 for category, values in metrics["per_class"].items()}
    return {**metrics, **{k: v for k, v in cue.items() if k not in ("per_class", "items")}, "per_class": per_class,
            "items": {**(metrics.get("items") or {}), **cue["items"]}}




def _read_records(base_paths, discovery_paths, selected, transfer_paths, cue):
    """The records as rows: Table 1's runs, per class, the discoveries, their curves, the transfer curves."""
    rows, per_class, discovery, discovery_curves, curves = [], [], [], [], []

    def cue_of(chain, key):
        return (cue or {}).get(chain, {}).get(key)

    for path in base_paths:
        record = read_record(path)
        chain = record["identity"]["chain"]
        record["metrics"] = with_cue_conflict(record["metrics"], cue_of(chain, "base"))
        rows.append({"model": "base", "chain": chain, **_summary(record["metrics"]),
                     "items": record["metrics"].get("items")})
        per_class += [{"model": "base", "chain": chain, "category": c, **values}
                      for c, values in record["metrics"]["per_class"].items()]
    for path in discovery_paths:
        record = read_record(path)
        chain, init, l0 = (record["identity"][key] for key in ("chain", "init", "l0_weight"))
        for part in ("whole_model", "subnetwork"):
            key = f"discovery/{init}/{l0:g}/{'whole' if part == 'whole_model' else part}"
            record[part] = with_cue_conflict(record[part], cue_of(chain, key))
        chosen = selected.get((chain, init)) == l0
        discovery.append({"chain": chain, "init": init, "l0_weight": l0, "selected": chosen,
                          "kept_percent": 100 * record["metrics"]["kept_fraction"],
                          "eval_pooled_accuracy": record["metrics"]["eval_accuracy"],
                          "eval_targets": record["metrics"].get("eval_targets", "labels"),
                          **{f"whole_{k}": v for k, v in _summary(record["whole_model"]).items()},
                          **{f"subnetwork_{k}": v for k, v in _summary(record["subnetwork"]).items()}})
        discovery_curves += [{"chain": chain, "init": init, "l0_weight": l0, "selected": chosen,
                              "epoch": point["epoch"], "eval_pooled_accuracy": point["eval_accuracy"],
                              "kept_fraction": point["kept_fraction"]} for point in record["curve"]]
        if chosen and init in SUBNETWORK_ROWS:
            rows.append({"model": SUBNETWORK_ROWS[init], "chain": chain, **_summary(record["subnetwork"]),
                         "items": record["subnetwork"].get("items")})
            per_class += [{"model": SUBNETWORK_ROWS[init], "chain": chain, "category": c, **values}
                          for c, values in record["subnetwork"]["per_class"].items()]
    for path in transfer_paths:
        record = read_record(path)
        chain, variant = record["identity"]["chain"], record["identity"]["variant"]
        metrics = with_cue_conflict({**record["metrics"], "per_class": record["per_class"]},
                                    cue_of(chain, f"transfer/{variant}"))
        rows.append({"model": variant, "chain": chain, **_summary(metrics), "items": metrics.get("items")})
        per_class += [{"model": variant, "chain": chain, "category": c, **values}
                      for c, values in metrics["per_class"].items()]
        curves += [{"model": variant, "chain": chain, "epoch": point["epoch"],
                    "step": point["epoch"] * record["steps_per_epoch"], "eval_accuracy": point["eval_accuracy"],
                    "eval_pooled_accuracy": point["eval_pooled_accuracy"]} for point in record["curve"]]
    return rows, per_class, discovery, discovery_curves, curves


def collect(base_paths, discovery_paths, selected: dict[tuple[int, str], float], transfer_paths,
            overlaps: dict[int, dict] | None = None, cue: dict[int, dict] | None = None,
            order: list[str] = ()) -> dict[str, pd.DataFrame]:
    """selected: (chain, init) -> the L0 weight of that chain's selected subnetwork. overlaps: chain -> the
    label-free subnetwork's overlap with the labelled one (method.overlap.mask_overlap), where both ran.
    cue: chain -> its cue-conflict scores by model key (steps/vision_cue_conflict); none: no such columns.
    order: Table 1's rows first in this order (config vision.report.order), the others after, sorted."""
    rows, per_class, discovery, discovery_curves, curves = _read_records(base_paths, discovery_paths, selected,
                                                                         transfer_paths, cue)

    runs = pd.DataFrame(rows)
    known = [m for m in order if m in set(runs["model"])]
    order = known + sorted(set(runs["model"]) - set(known))
    present = [metric for metric in TABLE1_METRICS if runs[metric].notna().any()]  # no cue-conflict: no such columns
    table1 = runs.groupby("model", sort=False)[present].agg(["mean", "std", "count"])
    table1.columns = [f"{metric}_{stat}" if stat != "mean" else metric for metric, stat in table1.columns]
    table1 = table1.loc[order].reset_index()
    discovery = pd.DataFrame(discovery).sort_values(["chain", "init", "l0_weight"])
    for column in ("jaccard_with_labelled", "chance_jaccard"):  # the label-free subnetwork against the labelled one
        discovery[column] = [overlaps[row.chain]["jaccard" if column == "jaccard_with_labelled" else "chance"]
                             if row.init == "label_free" and row.selected and row.chain in (overlaps or {}) else math.nan
                             for row in discovery.itertuples()]
    chosen = discovery[discovery["selected"]]
    table2_columns = ["kept_percent", "whole_pooled_accuracy", "subnetwork_pooled_accuracy", "whole_original_accuracy",
                      "subnetwork_original_accuracy"] + (["subnetwork_shape_bias"] if "shape_bias" in present else [])
    table2 = chosen.groupby("init")[table2_columns].agg(["mean", "std", "count"])
    table2.columns = [f"{metric}_{stat}" if stat != "mean" else metric for metric, stat in table2.columns]
    table2["l0_weights"] = chosen.groupby("init")["l0_weight"].agg(lambda v: ", ".join(f"{x:g}" for x in v))
    return {"table1": table1, "label_free": chosen[chosen["init"].isin(["pretrained", "label_free"])], "runs": runs.assign(model=pd.Categorical(runs["model"], order)).sort_values(["model", "chain"]),
            "table2": table2.reset_index(), "discovery": discovery, "per_class": pd.DataFrame(per_class),
            "curves": pd.DataFrame(curves), "discovery_curves": pd.DataFrame(discovery_curves)}


def _cell(row, metric: str, scale: float = 100) -> str:
    """'mean ± std' (in percent by default), the spread only where there are several runs."""
    cell = f"{fixed(scale * row[metric], 1)}"
    if row.get(f"{metric}_count", 1) > 1:
        cell += f" ± {fixed(scale * row[f'{metric}_std'], 1)}"
    return cell


def table1_markdown(table1: pd.DataFrame, tables: PageTables | None = None) -> str:
    """Table 1 as in the paper (percent), with the spread over chains where there are several."""
    shown = [(metric, header) for metric, header in zip(TABLE1_METRICS, TABLE1_HEADERS) if metric in table1.columns]
    rows = [[row["model"]] + [_cell(row, metric) for metric, _ in shown] for _, row in table1.iterrows()]
    tables = PageTables() if tables is None else tables
    lines = tables.render("", pd.DataFrame(rows, columns=["model"] + [header for _, header in shown]))
    return "\n".join(lines) + "\n\n" + TABLE1_DEFINITIONS


TABLE1_DEFINITIONS = """Percent, mean ± std over chains. Original: accuracy on the test images (balanced: the mean of
per-class accuracies). Pooled: accuracy on their mean-pooled versions. Cue-conflict metrics count only the
stimuli whose shape and texture classes differ (the denominator): shape accuracy = the share classified as
their shape class; robustness = the share **not** classified as their texture class; shape bias = shape
decisions / (shape + texture decisions). A run without cue-conflict images (a `folder` source without
vision.data.cue_conflict) has no cue-conflict columns.
"""


def table2_markdown(table2: pd.DataFrame) -> str:
    lines = ["| init | λ selected (per chain) | kept % | pooled acc. whole model → subnetwork | "
             "original acc. whole → subnetwork |", "|---|---|---|---|---|"]
    for _, row in table2.iterrows():
        lines.append(f"| {row['init']} | {row['l0_weights']} | {_cell(row, 'kept_percent', scale=1)} | "
                     f"{_cell(row, 'whole_pooled_accuracy')} → {_cell(row, 'subnetwork_pooled_accuracy')} | "
                     f"{_cell(row, 'whole_original_accuracy')} → {_cell(row, 'subnetwork_original_accuracy')} |")
    return "\n".join(lines) + ("\n\nKept %: share of the masked weights (every weight but the classifier) the "
                               "selected subnetwork keeps. Accuracies on the test images and their pooled versions, "
                               "of the whole model and of the hard-mask subnetwork; percent, mean ± std over chains.\n")


def label_free_markdown(chosen: pd.DataFrame) -> str:
    """The label-free discovery beside the labelled one, chain by chain; empty where it did not run."""
    if "label_free" not in set(chosen["init"]):
        return ""
    bias = chosen["subnetwork_shape_bias"].notna().any()
    lines = ["", "### Discovery without labels, per chain", "",
             "label_free: the subnetwork's answers on pooled images matched to the base's on the originals, the "
             "epoch and λ selected by agreement with the base on the original eval images; no label read. Jaccard: "
             "its kept weights against the labelled (pretrained) subnetwork's; chance: two random masks with each "
             "tensor's own densities.", "",
             "| chain | discovery | kept % | pooled acc. (test) | original acc. (test) |" + (" shape bias |" if bias else "")
             + " Jaccard with labelled | chance |", "|---|---|---|---|---|" + ("---|" if bias else "") + "---|---|"]
    for row in chosen.sort_values(["chain", "init"], ascending=[True, False]).itertuples():
        overlap = (" | ".join("—" if math.isnan(x) else f"{fixed(x, 3)}" for x in (row.jaccard_with_labelled, row.chance_jaccard))
                   if row.init == "label_free" else " | ")  # — : no kept weight in either mask
        lines.append(f"| {row.chain} | {row.init} | {fixed(row.kept_percent, 2)} | {fixed(100 * row.subnetwork_pooled_accuracy, 1)} | "
                     f"{fixed(100 * row.subnetwork_original_accuracy, 1)} |"
                     + (f" {fixed(100 * row.subnetwork_shape_bias, 1)} |" if bias else "") + f" {overlap} |")
    return "\n".join(lines) + "\n"


def per_chain_markdown(runs: pd.DataFrame) -> str:
    """Every model's pooled accuracy and shape bias (where there are cue-conflict images), chain by chain (percent)."""
    chains = sorted(runs["chain"].unique())
    bias = runs["shape_bias"].notna().any()
    lines = ["| model | " + " | ".join(f"chain {c}: pooled" + ("; shape bias" if bias else "") for c in chains) + " |",
             "|---|" + "---|" * len(chains)]
    for model, rows in runs.groupby("model", sort=False, observed=True):
        by_chain = {row["chain"]: f"{fixed(100 * row['pooled_accuracy'], 1)}" + (f"; {fixed(100 * row['shape_bias'], 1)}" if bias else "")
                    for _, row in rows.iterrows()}
        lines.append(f"| {model} | " + " | ".join(by_chain.get(c, "") for c in chains) + " |")
    return "\n".join(lines) + "\n"


def paired_chain_difference(one, other, metric: str) -> tuple[float, float]:
    """(difference in points, the part that counts) of two models of one chain on `metric`. The difference is of the
    two numbers chains.csv holds (the numbers a page reading the record judges); whether it counts is a paired test on
    the same items where both records keep them (claims.py): McNemar for the accuracies, a paired bootstrap over
    conflict images for shape bias; every difference counts for records without items."""
    difference = 100 * (one[metric] - other[metric])
    if not (isinstance(one["items"], dict) and isinstance(other["items"], dict)):
        return difference, difference

    def bits(record, key, count):
        return bits_correct(record["items"][key], record["items"][count])

    if metric == "shape_bias":
        _, p, _ = shape_bias_difference(
            *(bits(record, key, "n_conflict") for record in (one, other) for key in ("conflict_shape", "conflict_texture")))
    elif metric == "cue_robustness":  # the share of conflict images not classified as their texture
        p = mcnemar_p(*(~bits(record, "conflict_texture", "n_conflict") for record in (one, other)))
    else:
        key, count = {"pooled_accuracy": ("pooled_correct", "n_test"), "original_accuracy": ("original_correct", "n_test"),
                      "cue_shape_accuracy": ("conflict_shape", "n_conflict")}[metric]
        p = mcnemar_p(bits(one, key, count), bits(other, key, count))
    return difference, difference if p < PAIRED_LEVEL else 0.0


# The metrics with a chance level (one class in the record's classes): the verdict rule's floor reads them
ACCURACY_METRICS = ("original_accuracy", "pooled_accuracy", "cue_shape_accuracy")


def vision_headroom(one, other, metric: str, classes: int | None) -> float | None:
    """The lower model's mean over chains less chance (claims.headroom), in points, for an accuracy (values 0-1);
    None for a metric without a chance level or where the classes are not known."""
    if metric not in ACCURACY_METRICS or not classes:
        return None
    return headroom(100 * pd.Series(one, dtype=float).dropna(), 100 * pd.Series(other, dtype=float).dropna(),
                    100 / classes)


def comparisons_markdown(runs: pd.DataFrame, comparisons: list, original_comparisons: list = (),
                         classes: int | None = None, tables: PageTables | None = None) -> str:
    """For each comparison (config vision.report.comparisons: (first, second) row pairs) and metric: the per-chain difference, `*` where it is beyond noise on the same test
    items (McNemar; shape bias by a paired bootstrap), and whether it holds in every chain. A difference
    within noise is a tie; only a comparison that holds in every chain is a claim we state. The pairs of
    `original_comparisons` (sample-efficiency questions: the cross-domain sizes) are compared on the original
    test images too."""
    chains = sorted(runs["chain"].unique())
    by = {(row["model"], row["chain"]): row for _, row in runs.iterrows()}
    models = set(runs["model"])
    lines = [f"Differences in points, chain by chain; `*`: p < {PAIRED_LEVEL:g} on the same items (McNemar's exact "
             "test; shape bias: a paired bootstrap over the conflict images). The verdict is the rule's "
             "(docs/decisions.md, \"The verdict rule\"): an exact sign-flip test over the chains at "
             f"{LEVEL:g}, the mean over chains with its {percent(CONFIDENCE, 0)} t interval beside it; neither holding nor "
             f"reversed, it is no effect larger than S ({smallest_effect():g} points, shape bias "
             f"{smallest_effect('shape_bias'):g}) where the 90% interval lies inside ±S, else undecided; the whole "
             f"order is docs/glossary.md's table (rule version {RULE_VERSION}).", ""]
    rows = []
    for first, second in comparisons:
        if first not in models or second not in models:
            continue
        for metric in (["original_accuracy"] if [first, second] in original_comparisons else []) + COMPARED_METRICS:
            difference, counted = [], []
            for chain in chains:
                one, other = by.get((first, chain)), by.get((second, chain))
                if one is None or other is None or pd.isna(one[metric]) or pd.isna(other[metric]):
                    difference.append(float("nan"))
                    counted.append(float("nan"))
                else:
                    pair = paired_chain_difference(one, other, metric)
                    difference.append(pair[0])
                    counted.append(pair[1])
            difference, counted = pd.Series(difference, index=chains), pd.Series(counted, index=chains)
            if difference.isna().all():
                continue
            arms = [[by[(model, chain)][metric] for chain in chains if (model, chain) in by] for model in (first, second)]
            room = vision_headroom(*arms, metric, classes)
            try:
                judgement = judge({metric: difference}, smallest=smallest_effect(metric),
                                  headroom=None if room is None else {metric: room})[metric]
            except OffGrid:   # a ratio (shape bias) over more than 44 chains: the exact test cannot count it
                rows.append([f"{first} vs {second}", metric, format_paired(difference, counted),
                             f"{fixed(difference.mean(), 1, sign=True)}", f"not judged: {OffGrid.WORDS}"])
                continue
            verdict = (f"{judgement.said()} (p = {judgement.adjusted:.3g}, {len(judgement.chains)} chains"
                       f"{judgement.equivalence_text()})"
                       if judgement.complete else f"incomplete: {judgement.tally.gaps}")
            rows.append([f"{first} vs {second}", metric, format_paired(difference, counted), judgement.summary(),
                         verdict])
    tables = PageTables() if tables is None else tables
    lines += tables.render("", pd.DataFrame(rows, columns=["comparison", "metric", "difference per chain (points)",
                                                           "mean over chains", "verdict"]))
    return "\n".join(lines) + "\n"
