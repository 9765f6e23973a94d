"""Collect the vision family's per-run metrics of every chain into Table 1 and Table 2 (CSV + Markdown),
per-chain tables, the comparisons that hold in every chain, and long-form per-class and training-curve
tables for the figures."""

import argparse
import json
from pathlib import Path

from ..method.masks import load_subnetwork
from ..method.overlap import mask_overlap
from ..runtime import save_text
from ..page_tables import PageTables, tables_path
from ..vision.tables import (collect, comparisons_markdown, label_free_markdown, per_chain_markdown, table1_markdown,
                             table2_markdown)
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base", nargs="+", required=True, help="base metrics.json of every chain")
    p.add_argument("--discovery", nargs="+", required=True)
    p.add_argument("--selected", nargs="+", required=True, help="selected.json of each chain and init")
    p.add_argument("--transfer", nargs="+", required=True)
    p.add_argument("--cue-conflict", nargs="*", default=[],
                   help="each chain's cue_conflict.json (none: no cue-conflict columns)")
    p.add_argument("--report", type=json.loads, required=True,
                   help='JSON: config vision.report, {"order": Table 1\'s rows, "comparisons": [[first, second], ...]}')
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    selected, chosen_files = {}, {}
    for path in args.selected:
        chosen = json.loads(Path(path).read_text())
        selected[(chosen["chain"], chosen["init"])] = chosen["l0_weight"]
        chosen_files[(chosen["chain"], chosen["init"])] = chosen["subnetwork"]
    # the label-free subnetwork against the labelled one, chain by chain: the files the selections chose (the
    # selection's own inputs, so a changed subnetwork rewrites its selected.json and reruns this step)
    overlaps = {chain: mask_overlap(*(load_subnetwork(chosen_files[(chain, init)])["masks"]
                                      for init in ("pretrained", "label_free")))
                for chain, init in chosen_files if init == "label_free" and (chain, "pretrained") in chosen_files}
    cue = {}
    for path in args.cue_conflict:
        record = json.loads(Path(path).read_text())
        cue[record["chain"]] = record["scores"]
    tables = collect(args.base, args.discovery, selected, args.transfer, overlaps, cue, args.report["order"])
    out = Path(args.outdir)
    for name in ("table1", "table2"):
        save_text(tables[name].to_csv(index=False), out / f"{name}.csv")
    table1_tables = PageTables()   # the pages quote Table 1's and the comparisons' rows from these (page_tables.py)
    save_text(table1_markdown(tables["table1"], table1_tables), out / "table1.md")
    save_text(table1_tables.long().to_csv(index=False), tables_path(out / "table1.md"))
    save_text(table2_markdown(tables["table2"]) + label_free_markdown(tables["label_free"]), out / "table2.md")
    save_text(tables["runs"].drop(columns=["items"]).to_csv(index=False), out / "chains.csv")  # items: records only
    save_text(per_chain_markdown(tables["runs"]), out / "chains.md")
    compared = PageTables()
    comparisons = comparisons_markdown(tables["runs"], args.report["comparisons"],
                                       args.report.get("original_comparisons", []),
                                       classes=tables["per_class"]["category"].nunique() or None, tables=compared)
    save_text(comparisons, out / "comparisons.md")
    save_text(compared.long().to_csv(index=False), tables_path(out / "comparisons.md"))
    save_text(tables["per_class"].to_csv(index=False), out / "per_class.csv")
    save_text(tables["curves"].to_csv(index=False), out / "curves.csv")
    save_text(tables["discovery_curves"].to_csv(index=False), out / "discovery_curves.csv")
    print(table1_markdown(tables["table1"]))
    print(table2_markdown(tables["table2"]) + label_free_markdown(tables["label_free"]))
    print(comparisons)


if __name__ == "__main__":
    run_step(main)
