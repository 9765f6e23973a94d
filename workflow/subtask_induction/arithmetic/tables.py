"""Collect per-point metrics.json files of the arithmetic family into tables (pandas).

A chain is one seed for base, discovery and transfer; a transfer point's `replicate` is its configured transfer
seed within its chain (points.py), so a run is a (chain, replicate) and the spread over rows of one cell is over
runs. A record's identity columns (a base's, a discovery's, a transfer point's) come from its `identity` block.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..rounding import fixed, percent
from ..page_tables import PageTables

from ..claims import (CONFIDENCE, LEVEL, PAIRED_LEVEL, RULE_VERSION, bits_correct, format_paired, headroom, judge,
                      mcnemar_p, paired_by_run, smallest_effect)
from ..protocols import PROTOCOLS, selection_key
from ..records import read_record


def base_table(paths) -> pd.DataFrame:
    rows = []
    for path in paths:
        record = read_record(path)
        identity = record["identity"]
        rows.append({"chain": identity["chain"], "base": identity["base"], "layers": identity["layers"],
                     **record["metrics"], "best_epoch": record["best_epoch"]})
    return pd.DataFrame(rows).sort_values(["base", "layers", "chain"])


def discovery_tables(paths) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per (base, subtask, layers, lambda), and the long-form training curves."""
    rows, curves = [], []
    for path in paths:
        record = read_record(path)
        key = {name: record["identity"][name] for name in ("chain", "base", "subtask", "layers", "l0_weight")}
        rows.append({**key, **record["metrics"], "best_epoch": record["best_epoch"]})
        curves += [{**key, **{k: point[k] for k in ("epoch", "eval_accuracy", "kept_fraction", "beta", "train_loss")}}
                   for point in record["curve"]]
    table = pd.DataFrame(rows).sort_values(["base", "subtask", "layers", "chain", "l0_weight"])
    best = table.apply(lambda r: selection_key(r["eval_accuracy"], r["kept_fraction"]), axis=1)
    table["selected"] = False
    for _, group in table.assign(key=best).groupby(["base", "subtask", "layers", "chain"]):
        table.loc[group["key"].idxmax(), "selected"] = True
    return table, pd.DataFrame(curves)


def table3(discovery: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 3: kept fraction (%) of the selected subnetwork per depth, one row per chain."""
    chosen = discovery[discovery["selected"]].copy()
    chosen["kept_percent"] = 100 * chosen["kept_fraction"]
    # what discovery.floor would refuse (it is off only in smoke runs): keeps nothing, or no better than chance
    chance = chosen["chance_accuracy"] if "chance_accuracy" in chosen else float("nan")
    chosen["below_floor"] = (chosen["kept_fraction"] <= 0) | (chosen["eval_accuracy"] <= chance)
    columns = ["base", "subtask", "layers", "chain", "l0_weight", "kept_percent", "eval_accuracy", "test_accuracy",
               "below_floor"]
    return chosen[columns].reset_index(drop=True)


def table3_markdown(table: pd.DataFrame) -> str:
    """Table 3 as mean ± std over chains, with every chain's kept percent."""
    lines = ["| subtask of base | layers | chains | kept % (mean ± std) | kept % per chain | test accuracy on the "
             "subtask (per chain) |", "|---|---|---|---|---|---|"]
    for (base, subtask, layers), rows in table.groupby(["base", "subtask", "layers"]):
        kept = rows["kept_percent"]
        std = kept.std(ddof=1) if len(kept) > 1 else 0.0
        lines.append(f"| {subtask} of {base} | {layers} | {len(rows)} | {fixed(kept.mean(), 2)} ± {fixed(std, 2)} | "
                     + ", ".join(f"{fixed(v, 2)}" for v in kept) + " | " + ", ".join(f"{fixed(v, 3)}" for v in rows["test_accuracy"])
                     + " |")
    below = table[table["below_floor"]] if "below_floor" in table else table[:0]
    if len(below):
        lines.append("\n**Below the floor** (keeps nothing or no better than chance on its subtask; transferred only "
                     "because discovery.floor is off): " + ", ".join(
                         f"{r.subtask} of {r.base}, {r.layers} layers, chain {r.chain}" for r in below.itertuples()))
    return "\n".join(lines) + ("\n\nKept %: share of the masked weights (every attention and MLP matrix) the "
                               "selected subnetwork keeps (best eval accuracy over λ, ties to the sparser).\n")


EXPERIMENT = ["base", "subtask", "target"]
# a transfer point's identity (points.ArithmeticPoint), the first columns of its rows
IDENTITY = EXPERIMENT + ["layers", "chain", "variant", "n", "replicate"]
RUN = ["chain", "replicate"]  # one run: a chain's replicate (every variant and n of it shares its seeds)


def transfer_table(paths) -> pd.DataFrame:
    """One row per (sweep point, selection protocol): the test metrics at the epoch that protocol picks."""
    rows = []
    for path in paths:
        record = read_record(path)
        identity, variant = record["identity"], record["config"]["variant"]
        point = {**{key: identity[key] for key in IDENTITY}, "kind": variant["kind"],
                 "lr_scale": variant["lr_scale"], "inherit_unmasked": variant["inherit_unmasked"],
                 "top_k": variant.get("top_k"), "discovery_rows": variant.get("discovery_rows"),
                 "subtask_rows": variant.get("subtask_rows"), "task_marker": variant.get("task_marker"),
                 "masked_init_std": variant.get("masked_init_std"),
                 "init": variant.get("init", "fresh"),
                 "mask_fraction": record.get("mask_fraction"),
                 # magnitude points: their frozen set against the discovered one (columns only where such a point ran)
                 **({"overlap_jaccard": record["overlap_with_subnetwork"]["jaccard"],
                     "overlap_chance": record["overlap_with_subnetwork"]["chance"]}
                    if "overlap_with_subnetwork" in record else {}),
                 "test_items": record["rows"].get("test"),
                 # what the run trained on (arithmetic.data.trained_rows): the paper's rows, or fewer
                 "train_rows": record["rows"]["train"], "paper_rows": record["rows"].get("paper_rows", False),
                 "path": str(Path(path))}
        for protocol, chosen in record["metrics"].items():
            rows.append({**point, "protocol": protocol, **chosen})
    columns = EXPERIMENT + ["layers", "variant", "n", "chain", "replicate", "protocol"]
    return pd.DataFrame(rows).sort_values(columns).reset_index(drop=True)


def run_summary(transfer: pd.DataFrame, by: list[str], metric: str = "test_accuracy") -> pd.DataFrame:
    """mean and std over runs (chain x replicate) of the depth-averaged metric, per `by` group (std NaN for one
    run: there is no spread to show), and how many of the group's points were selected at their last epoch
    (`at_last_epoch`, of `points`)."""
    per_seed = transfer.groupby(by + RUN)[metric].mean().reset_index()
    summary = per_seed.groupby(by)[metric].agg(["mean", "std", "count"]).reset_index()
    if "last_epoch" in transfer:
        flags = transfer.groupby(by)["last_epoch"].agg(at_last_epoch="sum", points="count").reset_index()
        summary = summary.merge(flags, on=by, how="left")
    return summary


def mean_std(mean: float, std: float, count: int) -> str:
    """`0.912 ± 0.013`, or `0.912 (1 run)`: a single run has no spread, so it shows none."""
    return f"{fixed(mean, 3)} (1 run)" if count < 2 else f"{fixed(mean, 3)} ± {fixed(std, 3)}"


def last_epoch_mark(row, protocol: str) -> str:
    """` ‡2/3` when 2 of a cell's 3 points were selected at their last epoch: their curve may still have
    been rising (protocol `last` always picks it, so it is not marked)."""
    if protocol == "last" or not row.get("at_last_epoch"):
        return ""
    return f" ‡{int(row['at_last_epoch'])}/{int(row['points'])}"


def depths_of(rows: pd.DataFrame) -> list[int]:
    return sorted(int(d) for d in rows["layers"].unique())


def shared_depths(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` restricted to the depths and the chains in which every variant in them ran, so that curves
    compared in one panel are means over the same depths and the same bases and subnetworks (an experiment
    may run some variants at fewer depths or in fewer chains)."""
    if rows.empty:
        return rows
    for column in ("layers", "chain"):
        if column in rows:
            common = set.intersection(*(set(values) for values in rows.groupby("variant")[column].unique()))
            rows = rows[rows[column].isin(common)]
    return rows


def rows_statement(transfer: pd.DataFrame) -> str:
    """What the runs in `transfer` trained on (their metrics.json `rows`), for every table and caption."""
    if transfer.empty:
        return "Trained rows: none (no transfer point in these tables)."
    if transfer["paper_rows"].astype(bool).all():
        return ("Every run trained on every a=b row and all n disambiguation rows: the paper's rows (`eval` is the "
                "paper's protocol, `last` the leak-free one, from the same run).")
    return ("The runs held a slice of their own a=b and n rows out (`holdout_fraction` > 0; each metrics.json's "
            "`rows`): **not the paper's rows**, so `eval` here is the paper's selection on another experiment's run.")


def transfer_markdown(transfer: pd.DataFrame, protocols: list[str]) -> str:
    """Per experiment and protocol: variant x n, test accuracy mean ± std over runs of the mean over the
    depths that variant ran at (its own column)."""
    lines = [rows_statement(transfer), ""]
    summary = run_summary(transfer, EXPERIMENT + ["protocol", "variant", "n"])
    depths = {variant: ", ".join(map(str, depths_of(rows))) for variant, rows in transfer.groupby("variant")}
    for (base, subtask, target), experiment in summary.groupby(EXPERIMENT):
        for protocol in protocols:
            rows = experiment[experiment["protocol"] == protocol]
            if rows.empty:
                continue
            sizes = sorted(rows["n"].unique())
            lines += [f"### {subtask} of {base} -> {target}, protocol `{protocol}`: {PROTOCOLS[protocol]}", "",
                      "Test accuracy, mean ± std over runs (chains x replicates) of the mean over the variant's depths.", "",
                      "| variant | depths | " + " | ".join(f"n={n}" for n in sizes) + " |",
                      "|---|---|" + "---|" * len(sizes)]
            for variant, by_variant in rows.groupby("variant", sort=False):
                cells = {row["n"]: mean_std(row["mean"], row["std"], row["count"]) + last_epoch_mark(row, protocol)
                         for _, row in by_variant.iterrows()}
                lines.append(f"| {variant} | {depths[variant]} | " + " | ".join(cells.get(n, "") for n in sizes) + " |")
            if protocol != "last":
                lines.append("\n‡k/m: k of the cell's m points were selected at their last epoch (still improving "
                             "when training stopped?).")
            lines.append("")
    return "\n".join(lines)


def chains_table(transfer: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """Under `protocol`: per experiment, depth, variant, n and chain, the test accuracy (mean over that chain's
    replicates)."""
    rows = transfer[transfer["protocol"] == protocol]
    keys = EXPERIMENT + ["layers", "variant", "n", "chain"]
    return rows.groupby(keys)["test_accuracy"].mean().reset_index()


def run_accuracy(rows: pd.DataFrame, variant: str) -> pd.Series:
    """One variant's test accuracy per run, indexed by run (`chain/replicate`), from the summary's transfer.csv: the
    numbers both chains.md and the pages judge. An accuracy is a count of right items over `test_items`, stored in
    single precision by the training loop; it is read back as that exact fraction, so two runs that got as many items
    right tie exactly in the sign-flip test instead of by the storage's rounding."""
    rows = rows[rows["variant"] == variant]
    accuracy = rows["test_accuracy"].to_numpy(dtype=float)
    if "test_items" in rows:
        items = rows["test_items"].to_numpy(dtype=float)
        accuracy = np.round(accuracy * items) / items
    return pd.Series(accuracy, index=[f"{c}/{r}" for c, r in zip(rows["chain"], rows["replicate"])], dtype=float)


def run_differences(rows: pd.DataFrame, first: str, second: str, runs: list[tuple]) -> tuple[pd.Series, pd.Series]:
    """Per run (chain, replicate): `first` minus `second` in test accuracy points (claims.paired_by_run over
    transfer.csv's accuracies, so a page reading the record gets the same numbers), and the part of it that counts
    (0 when McNemar's test on the same test items calls it noise; the raw difference where a record keeps no
    per-item correctness). NaN where a run lacks either variant; a run with more than one row of either variant is
    listed twice (paired_by_run), so the tally names it ("twice or more") and its comparison is incomplete."""
    paired = 100 * paired_by_run(run_accuracy(rows, first), run_accuracy(rows, second))
    named = [((chain, replicate), value) for chain, replicate in runs
             for value in (paired[paired.index == f"{chain}/{replicate}"].tolist() or [float("nan")])]
    differences = pd.Series([value for _, value in named], index=[f"{c}/{r}" for (c, r), _ in named], dtype=float)
    by_run = {}
    for r in rows.itertuples():   # a run's first row of a variant, the one paired_by_run subtracts
        by_run.setdefault((r.chain, r.replicate, r.variant), r)
    counted = []
    for ((chain, replicate), _), difference in zip(named, differences):
        one, other = by_run.get((chain, replicate, first)), by_run.get((chain, replicate, second))
        if one is None or other is None:
            counted.append(float("nan"))
        elif isinstance(getattr(one, "test_correct", None), str) and isinstance(getattr(other, "test_correct", None), str):
            if int(one.test_items) != int(other.test_items):
                raise ValueError(f"run {chain}/{replicate}: {first} was scored on {int(one.test_items)} test items and "
                                 f"{second} on {int(other.test_items)}: a paired test needs the same items")
            p = mcnemar_p(bits_correct(one.test_correct, int(one.test_items)),
                          bits_correct(other.test_correct, int(other.test_items)))
            counted.append(difference if p < PAIRED_LEVEL else 0.0)
        else:
            counted.append(difference)
    return differences, pd.Series(counted, index=differences.index, dtype=float)


def chains_markdown(transfer: pd.DataFrame, protocol: str, comparisons: list, tables: PageTables | None = None) -> str:
    """Every chain's test accuracy (mean over its replicates), per depth (no averaging over depths), and
    the comparisons that hold in every run (chain x replicate): SI against its controls, per depth and n,
    each run's difference counted only when beyond noise on the same test items. `tables` keeps the page's tables
    as data (chains.tables.csv)."""
    tables = PageTables() if tables is None else tables
    lines = [rows_statement(transfer), ""]
    transfer = transfer[transfer["protocol"] == protocol]
    for (base, subtask, target), experiment in transfer.groupby(EXPERIMENT):
        chains = chains_table(experiment, protocol)
        chain_ids = sorted(experiment["chain"].unique())
        heading = f"{subtask} of {base} -> {target}, protocol `{protocol}`: test accuracy per chain"
        accuracy = []
        for (layers, variant, n), rows in chains.groupby(["layers", "variant", "n"]):
            values = dict(zip(rows["chain"], rows["test_accuracy"]))
            accuracy.append([layers, variant, n] + [f"{fixed(values[c], 3)}" if c in values else "" for c in chain_ids])
        lines += [f"### {heading}", ""]
        lines += tables.render(heading, pd.DataFrame(accuracy, columns=["layers", "variant", "n"]
                                                     + [f"chain {c}" for c in chain_ids]))
        lines += ["", f"Comparisons per depth and n, run by run (chain/replicate): differences in accuracy points, `*` where "
                  f"McNemar's exact test on the same test items gives p < {PAIRED_LEVEL:g}. The verdict is the rule's "
                  f"(docs/decisions.md, \"The verdict rule\"): over chain means (replicates averaged), an exact sign-flip "
                  f"test with Holm's correction over the comparison's n, at {LEVEL:g}; the mean over chains with its "
                  f"{percent(CONFIDENCE, 0)} t interval beside it; neither holding nor reversed, it is no effect larger than S = "
                  f"{smallest_effect():g} points where the 90% interval lies inside ±S, else undecided; the whole "
                  f"order is docs/glossary.md's table (rule version {RULE_VERSION}).", ""]
        compared, rooms, verdicts = {}, {}, []
        for (layers, n), rows in experiment.groupby(["layers", "n"]):
            runs = sorted({(r.chain, r.replicate) for r in rows.itertuples()})
            variants = set(rows["variant"])
            for first, second in comparisons:
                if first in variants and second in variants:
                    compared.setdefault((layers, first, second), {})[n] = run_differences(rows, first, second, runs)
                    rooms.setdefault((layers, first, second), {})[n] = arithmetic_headroom(rows, first, second)
        for (layers, first, second), by_n in compared.items():
            judged = judge({n: difference for n, (difference, _) in by_n.items()}, smallest=smallest_effect(),
                           headroom=rooms[(layers, first, second)])
            for n, (difference, counted) in by_n.items():
                judgement = judged[n]
                verdict = (f"{judgement.said()} (Holm p = {judgement.adjusted:.3g}, {len(judgement.chains)} chains"
                           f"{judgement.equivalence_text()})"
                           if judgement.complete else f"incomplete: {judgement.tally.gaps}")
                verdicts.append([layers, n, f"{first} vs {second}", ", ".join(difference.index),
                                 format_paired(difference, counted), judgement.summary(), verdict])
        lines += tables.render(heading, pd.DataFrame(verdicts, columns=["layers", "n", "comparison", "runs",
                                                                        "difference per run", "mean over chains",
                                                                        "verdict"]))
        lines.append("")
    return "\n".join(lines)


# Chance in points: a residue mod 7 (the default's modulus); what the verdict rule's floor stands on
ARITHMETIC_CHANCE = 100 / 7


def arithmetic_headroom(rows: pd.DataFrame, first: str, second: str) -> float:
    """The lower arm's mean test accuracy over its runs less chance, in points (claims.headroom)."""
    return headroom(100 * run_accuracy(rows, first), 100 * run_accuracy(rows, second), ARITHMETIC_CHANCE)


def plain_variants(transfer: pd.DataFrame) -> pd.DataFrame:
    """The rows of variants that transfer the selected subnetwork as discovered (not a top-k kept-% dial, not a
    label-budget discovery): what the paper's figures compare."""
    keep = pd.Series(True, index=transfer.index)
    for column in ("top_k", "discovery_rows"):
        if column in transfer:
            keep &= transfer[column].isna()
    return transfer[keep]


def plain_variants_of(transfer: pd.DataFrame, kind: str) -> list[str]:
    """The variants that run `kind` as the paper does, recognised by their settings (their plans), not their
    names: subnetwork (SI) and sampled frozen (lr_scale 0) with the base's unmasked tensors, random init from a
    fresh network; none with a kept-% dial, a label budget, subtask rows, a rewind or another init."""
    rows = transfer[transfer["kind"] == kind]
    for column in ("top_k", "discovery_rows", "subtask_rows", "masked_init_std"):
        if column in rows:
            rows = rows[rows[column].isna()]
    if "init" in rows:
        rows = rows[rows["init"].fillna("fresh") == "fresh"]
    if kind == "random":
        rows = rows[~rows["inherit_unmasked"].astype(bool)]
    else:
        rows = rows[(rows["lr_scale"] == 0) & rows["inherit_unmasked"].astype(bool)]
    return sorted(rows["variant"].unique())


def discovered_fraction(transfer: pd.DataFrame, base: str, subtask: str, target: str, layers: int) -> float:
    """Mean kept fraction of the subnetworks SI transfers in one experiment at one depth (over chains; nan when
    SI did not run there)."""
    plain = transfer[transfer["variant"].isin(plain_variants_of(transfer, "subnetwork")) & (transfer["base"] == base)
                     & (transfer["subtask"] == subtask)
                     & (transfer["target"] == target) & (transfer["layers"] == layers)]
    return plain["mask_fraction"].mean() if len(plain) and "mask_fraction" in plain else float("nan")


def sparsity_dial_markdown(transfer: pd.DataFrame, protocol: str) -> str:
    """The kept-% dial: per experiment, depth and n, test accuracy of SI and of the count-matched sampled
    control at each top-k fraction of the discovery's scores (mean ± std over chains), SI minus sampled in
    every chain, and SI's agreement with the competing rules."""
    rows = transfer[(transfer["protocol"] == protocol) & transfer["top_k"].notna()] if "top_k" in transfer else transfer[:0]
    if rows.empty:
        return "No top-k variants were run (arithmetic.transfer.variants.*.top_k).\n"
    agree = sorted(column for column in rows.columns if column.startswith("test_agree_"))
    lines = []
    for (base, subtask, target, layers, n), part in rows.groupby(EXPERIMENT + ["layers", "n"]):
        discovered = discovered_fraction(transfer, base, subtask, target, layers)
        lines += [f"### {subtask} of {base} -> {target}, {layers} layers, n = {n}, protocol `{protocol}` "
                  f"(the discovered subnetwork keeps {fixed(100 * discovered, 2)}% on average)", "",
                  "| top k % | SI | sampled | SI − sampled per run (points; * beyond noise) | verdict | "
                  + " | ".join(f"SI agrees with {c.removeprefix('test_agree_')}" for c in agree) + " |",
                  "|---|---|---|---|---|" + "---|" * len(agree)]
        rows_of_k, by_k = [], {}
        for k, at_k in part.groupby("top_k"):
            by = {kind: at_k[at_k["kind"] == kind] for kind in ("subnetwork", "sampled")}
            cells = []
            for kind in ("subnetwork", "sampled"):
                values = by[kind].groupby(RUN)["test_accuracy"].mean()
                cells.append(mean_std(values.mean(), values.std(ddof=1), len(values)) if len(values) else "—")
            runs = sorted({(r.chain, r.replicate) for r in part.itertuples()})
            names = [by[kind]["variant"].iloc[0] if len(by[kind]) else None for kind in ("subnetwork", "sampled")]
            difference, counted = run_differences(at_k, *names, runs)
            by_k[k] = difference
            rows_of_k.append((k, cells, difference, counted, [f"{fixed(by['subnetwork'][c].mean(), 3)}" for c in agree]))
        judged = judge(by_k, smallest=smallest_effect())   # Holm over the dial's sizes at this n
        for k, cells, difference, counted, agreement in rows_of_k:
            judgement = judged[k]
            verdict = (f"{judgement.summary()}: {judgement.said()}{judgement.equivalence_text()}" if judgement.complete
                       else f"incomplete: {judgement.tally.gaps}")
            lines.append(f"| {100 * k:g} | {cells[0]} | {cells[1]} | " + format_paired(difference, counted)
                         + f" | {verdict} | " + " | ".join(agreement) + " |")
        lines.append("")
    return "\n".join(lines)


def same_labels_markdown(transfer: pd.DataFrame, protocol: str) -> str:
    """The same labels given as data (variants with subtask_rows): per experiment, depth and n, each baseline's
    target test accuracy beside its own accuracy on the subtask's held-out test rows (as its rows were given:
    marked or not), how its rows and start were set, and SI and random init of the same runs beside it."""
    rows = transfer[transfer["protocol"] == protocol]
    baselines = rows[rows["subtask_rows"].notna()] if "subtask_rows" in rows else rows[:0]
    if baselines.empty:
        return "No variant trained on the subtask rows in this run (arithmetic.transfer.variants.*.subtask_rows).\n"
    lines = [rows_statement(transfer), ""]
    for (base, subtask, target, layers, n), part in baselines.groupby(EXPERIMENT + ["layers", "n"]):
        runs = sorted({(r.chain, r.replicate) for r in part.itertuples()})
        same_runs = rows[(rows["base"] == base) & (rows["subtask"] == subtask) & (rows["target"] == target)
                         & (rows["layers"] == layers) & (rows["n"] == n)
                         & pd.MultiIndex.from_frame(rows[RUN]).isin(runs)]
        lines += [f"### {subtask} of {base} -> {target}, {layers} layers, n = {n}, protocol `{protocol}` "
                  f"({len(runs)} runs)", "",
                  f"| variant | rows given | start | {target} test accuracy | {subtask} test accuracy (own) |",
                  "|---|---|---|---|---|"]
        references = plain_variants_of(rows, "subnetwork") + plain_variants_of(rows, "random")  # SI, random init
        for name in references + sorted(part["variant"].unique()):
            own = same_runs[same_runs["variant"] == name]
            if own.empty:
                continue
            first = own.iloc[0]
            if pd.isna(first["subtask_rows"]):
                given = "target rows only"
            else:
                given = f"{first['subtask_rows']}, " + ("marked `a b SEP2 c`" if first["task_marker"] else
                                                        "unmarked (one input, two answers)")
            start = {"subnetwork": "fresh + frozen subnetwork, inherited unmasked tensors",
                     "random": "base's unmasked tensors, rest fresh" if first["inherit_unmasked"] else "fresh"
                     }.get(first["kind"], first["kind"])
            values = own.groupby(RUN)["test_accuracy"].mean()
            subtask_cell = "—"
            if "subtask_test_accuracy" in own and own["subtask_test_accuracy"].notna().any():
                sub = own.groupby(RUN)["subtask_test_accuracy"].mean()
                subtask_cell = mean_std(sub.mean(), sub.std(ddof=1), len(sub))
            lines.append(f"| {name} | {given} | {start} | {mean_std(values.mean(), values.std(ddof=1), len(values))} "
                         f"| {subtask_cell} |")
        lines.append("")
    return "\n".join(lines) + ("\nOwn subtask accuracy: on the subtask's held-out test pairs (the target's test pairs, "
                               "labelled by the subtask), given as the variant's subtask rows were (marked or not); "
                               "the paired comparisons with SI are in chains.md.\n")
