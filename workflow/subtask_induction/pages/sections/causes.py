"""## Why SI loses its subnetwork's shape: three causes, each a variant of SI (issue 82; the record `vision_causes`, its
plan in docs/decisions.md, "Why SI loses the shape"). Its equality check against the decisive record, each cause's
share of the subnetwork's pooled accuracy with its two verdicts, and the README's sentence, all read from the records."""

from __future__ import annotations

import pandas as pd

from ...rounding import fixed, percent
from ...vision import paper
from .. import claims as claims_module
from ..page import provenance_line
from ..run_records import RunRecord
from .premises import kept_share, theirs

# The rows the record reruns of the decisive record's: its bases, subnetworks and the three transfers both run
RERUN = ("base", "subnetwork", "si", "finetune", "mixture")
# The paper's share of its subnetwork's pooled accuracy SI keeps: "as the paper reports" (docs/decisions.md)
AS_THE_PAPER = 0.75


def _rows(record: RunRecord, table: str, column: str, values, chains) -> pd.DataFrame:
    frame = record.csv(table)
    frame = frame[frame[column].isin(values) & frame["chain"].isin(chains)]
    frame = frame.drop(columns="seconds", errors="ignore")   # timings differ between runs of the same numbers
    return frame.sort_values([c for c in (column, "chain", "epoch", "category") if c in frame]).reset_index(drop=True)


def equality(record: RunRecord, decisive: RunRecord, rerun: tuple = RERUN) -> list[str]:
    """Where the record's bases, subnetworks and the transfers it reruns (`rerun`: models of chains.csv) differ from
    the decisive record's on the same chains (chains.csv, per_class.csv and curves.csv by model; discovery_curves.csv
    of the labelled discovery): one line per table, `equal` or what differs."""
    chains = sorted(record.csv("vision/chains.csv")["chain"].unique())
    lines = []
    for table, column, values in (("vision/chains.csv", "model", rerun), ("vision/per_class.csv", "model", rerun),
                                  ("vision/curves.csv", "model", rerun),
                                  ("vision/discovery_curves.csv", "init", ("pretrained",))):
        ours, theirs_ = (_rows(r, table, column, values, chains) for r in (record, decisive))
        if list(ours.columns) == list(theirs_.columns) and ours.equals(theirs_):
            lines.append(f"`{table}` ({', '.join(values)}): {len(ours)} rows, every column equal")
            continue
        if len(ours) != len(theirs_) or list(ours.columns) != list(theirs_.columns):
            lines.append(f"`{table}` ({', '.join(values)}): {len(ours)} rows against {len(theirs_)}")
            continue
        differ = [c for c in ours if not ours[c].equals(theirs_[c])]
        where = sorted({int(chain) for c in differ for chain in ours.loc[ours[c].ne(theirs_[c]), "chain"]})
        lines.append(f"`{table}` ({', '.join(values)}): differs in {differ} (chains {where})")
    return lines


def shares(record: RunRecord) -> pd.DataFrame:
    """Per cause: its pooled accuracy (mean over chains, percent) and the share of the subnetwork's it keeps, beside
    SI's (the means of chains.csv; the subnetwork's is the record's own)."""
    per_chain = record.csv("vision/chains.csv")
    mean = per_chain.groupby("model")["pooled_accuracy"].mean() * 100
    rows = [{"model": model, "pooled": mean[model], "share": mean[model] / mean["subnetwork"]}
            for model in ("si", *claims_module.CAUSES) if model in mean.index]
    return pd.DataFrame(rows).set_index("model")


def keeps(record: RunRecord, found: list) -> dict[str, str]:
    """Per cause (variant): "as the paper reports", "keeps", or "no" (docs/decisions.md: claim 1 holds; as the paper
    reports when it also keeps at least 75 % of the subnetwork's pooled accuracy)."""
    table = shares(record)
    verdict = {claim.id: claim for claim in found}
    out = {}
    for variant in claims_module.CAUSES:
        claim = verdict.get(claims_module.claim_id("vision", variant, "si", "pooled_accuracy"))
        holds = claim is not None and claim.holds.startswith("**holds")
        out[variant] = ("no" if not holds else "as the paper reports" if table.loc[variant, "share"] >= AS_THE_PAPER
                        else "keeps")
    return out


def section(record: RunRecord, decisive: RunRecord | None, found: list) -> list[str]:
    mine = [claim for claim in found if claim.record == record.name]
    table = shares(record)
    lines = ["## Why SI loses the shape (`make vision-causes`)", "", provenance_line(record), "",
             record.provenance["title"] + ".", "",
             "Each cause is SI with one thing changed (config/causes/, one overlay each): the base's BatchNorm "
             "statistics and affine weights kept, frozen in evaluation mode (`si_bn_kept`); SI's fresh BatchNorm "
             "without timm's zero initialisation of each residual block's last scale (`si_unit_scales`); the paper's "
             f"size, the top {paper.value('subnetwork', 'kept_percent'):g} % of the discovery's scores (`si_top15`). "
             "The plan, fixed before the first job: docs/decisions.md, \"Why SI loses the shape\".", ""]
    if decisive is not None:
        lines += [f"**The same chains as `{decisive.name}`**: the rows both records ran,", ""]
        lines += [f"- {line}" for line in equality(record, decisive)] + [""]
    them = theirs()
    lines += ["| model | pooled accuracy (mean over chains) | of the subnetwork's | against SI | against the mixture as "
              "the authors ran it |", "|---|---|---|---|---|"]
    by_id = {claim.id: claim for claim in mine}
    for model, row in table.iterrows():
        cells = []
        for second in ("si", "finetune"):
            claim = by_id.get(claims_module.claim_id("vision", model, second, "pooled_accuracy"))
            cells.append("—" if claim is None else claim.holds.replace("**", ""))
        lines.append(f"| `{model}` | {fixed(row['pooled'], 1)} % | {percent(row['share'], 0)} | {cells[0]} | {cells[1]} |")
    lines += [f"| the paper's SI | {fixed(them['si_pooled'], 1)} % | {percent(kept_share(them), 0)} | | |", "",
              f"Which cause keeps the shape: {sentence(record, found, link=False)}", ""]
    return lines


# The causes as the README's sentence names them (claims.CAUSES: as the claims read)
SHORT = {"si_bn_kept": "keeping the base's BatchNorm (frozen)", "si_unit_scales": "no zeroed residual scales",
         "si_top15": "the paper's size"}


def sentence(record: RunRecord, found: list, link: bool = True, brief: bool = False) -> str:
    """The README's sentence: which cause keeps the shape, by the plan's reading (brief: each share alone, where the
    sentence before it gives SI's and the paper's)."""
    kept = keeps(record, found)
    table = shares(record)
    share = {v: f"{percent(table.loc[v, 'share'], 0)}" for v in SHORT}
    held = [v for v in SHORT if kept[v] != "no"]
    rest = [SHORT[v] for v in SHORT if kept[v] == "no"]
    chains = record.csv("vision/chains.csv")["chain"].nunique()
    where = " ([causes](docs/results.md#why-si-loses-the-shape-make-vision-causes))" if link else ""
    lead = f"of three causes on the same {chains} chains, "
    if not held:
        return (f"{lead}none keeps the shape ({', '.join(SHORT.values())}: SI with each keeps "
                f"{', '.join(share.values())} of the subnetwork's pooled accuracy){where}.")
    beside = "" if brief else (f" of the subnetwork's pooled accuracy; SI {percent(table.loc['si', 'share'], 0)}, the paper's SI "
                               f"{percent(kept_share(theirs()), 0)}")
    parts = [f"{SHORT[v]} keeps {'it as the paper reports' if kept[v] == 'as the paper reports' else 'more of it'} "
             f"({share[v]}{beside})" for v in held]
    return (lead + "; ".join(parts) + (f"; {' and '.join(rest)} {'does' if len(rest) == 1 else 'do'} not" if rest else "")
            + f"{where}.")
