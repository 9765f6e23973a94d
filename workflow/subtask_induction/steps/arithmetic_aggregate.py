"""Collect every arithmetic metrics.json into CSV tables and paper Table 3 (CSV + Markdown)."""

import argparse
import json
from pathlib import Path

from ..arithmetic.paper import paper_comparison_markdown
from ..page_tables import PageTables, tables_path
from ..arithmetic.tables import (base_table, chains_markdown, chains_table, discovery_tables, plain_variants,
                                 same_labels_markdown, sparsity_dial_markdown, table3, table3_markdown, transfer_markdown, transfer_table)
from ..protocols import PROTOCOLS
from ..runtime import save_text
from ..timing import run_step


def point_files(paths: list[str]) -> list[str]:
    """metrics.json files as given, and those a pack manifest lists."""
    files = []
    for path in paths:
        if Path(path).name == "metrics.json":
            files.append(path)
        else:
            files += json.loads(Path(path).read_text())["points"]
    return files


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base", nargs="+", required=True, help="base metrics.json files")
    p.add_argument("--discovery", nargs="+", required=True, help="discovery metrics.json files")
    p.add_argument("--transfer", nargs="+", required=True,
                   help="transfer metrics.json files, or pack manifests (packs/*.json) listing them")
    p.add_argument("--protocol", default="last", choices=sorted(PROTOCOLS),
                   help="the protocol listed first in transfer.md (the main figures' protocol)")
    p.add_argument("--comparisons", type=json.loads, required=True,
                   help="JSON: config arithmetic.report.comparisons, the (first, second) variant pairs chains.md compares")
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    out = Path(args.outdir)
    discovery, curves = discovery_tables(args.discovery)
    kept = table3(discovery)
    transfer = transfer_table(point_files(args.transfer))
    chains = chains_table(plain_variants(transfer), args.protocol)
    tables = {"base.csv": base_table(args.base), "discovery.csv": discovery, "discovery_curves.csv": curves,
              "transfer.csv": transfer.drop(columns=["test_correct"], errors="ignore"),  # per-item bits: records only
              "table3.csv": kept, "chains.csv": chains}
    for name, table in tables.items():
        save_text(table.to_csv(index=False), out / name)
    save_text(table3_markdown(kept), out / "table3.md")
    order = [args.protocol] + [name for name in PROTOCOLS if name != args.protocol]
    save_text(transfer_markdown(transfer, order), out / "transfer.md")
    pages = {"chains.md": PageTables(), "paper_comparison.md": PageTables()}   # the tables the pages quote, as data
    save_text(chains_markdown(plain_variants(transfer), args.protocol, args.comparisons, pages["chains.md"]),
              out / "chains.md")
    save_text(sparsity_dial_markdown(transfer, args.protocol), out / "sparsity_dial.md")
    save_text(same_labels_markdown(transfer, args.protocol), out / "same_labels.md")
    save_text(paper_comparison_markdown(tables["base.csv"], kept, transfer, pages["paper_comparison.md"]),
              out / "paper_comparison.md")
    for page, kept_tables in pages.items():
        save_text(kept_tables.long().to_csv(index=False), tables_path(out / page))
    print(table3_markdown(kept))


if __name__ == "__main__":
    run_step(main)
