"""How many labelled subtask rows does a discovery need? Per chain, experiment and depth: the subnetworks
discovered from the first 1k, 3k, ... subtask rows against the one the selection chose from every row (the
budget discoveries use its λ): kept fraction, test accuracy on the subtask, Jaccard overlap of the kept sets
(against the per-tensor chance of random masks), and the test accuracy of Subtask Induction from each at the
budget's n beside the sampled control of that subnetwork's own per-tensor counts (from transfer.csv; the every-row
row is variants si and sampled, which transfer the chosen subnetwork). A budget discovery trains as many optimiser
steps as the every-row one; its labelled rows count the eval rows that picked its epoch."""

import argparse
import json
from pathlib import Path

import pandas as pd

from ..arithmetic.budget import budget_figure, budget_markdown, budget_table
from ..plotting import save_figure
from ..protocols import PROTOCOLS
from ..runtime import load_torch, save_text
from ..timing import run_step


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--budget", nargs="+", required=True, help="subnetwork.pt of the discoveries from fewer rows")
    p.add_argument("--full", nargs="+", required=True, help="subnetwork.pt the selections chose (every row)")
    p.add_argument("--data", nargs="+", required=True,
                   help="the discovery datasets (<subtask>.pt): their training rows, for subnetworks that do not record them")
    p.add_argument("--transfer", required=True, help="summary/transfer.csv")
    p.add_argument("--variants", required=True,
                   help='JSON: variant name -> {"rows": discovery rows, "kind": subnetwork | sampled} (the budget variants)')
    p.add_argument("--n", type=int, required=True, help="the disambiguation rows of the budget transfer points")
    p.add_argument("--protocol", default="last", choices=sorted(PROTOCOLS))
    p.add_argument("--table", required=True)
    p.add_argument("--markdown", required=True)
    p.add_argument("--figures", required=True)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    transfer = pd.read_csv(args.transfer)
    transfer = transfer[(transfer["protocol"] == args.protocol) & (transfer["n"] == args.n)]
    every_row_rows = {Path(path).stem: len(load_torch(path, ("splits",), "arithmetic dataset")["splits"]["train"])
                      for path in args.data}
    table = budget_table(args.budget, args.full, transfer, json.loads(args.variants), every_row_rows)
    save_text(table.to_csv(index=False), args.table)
    markdown = budget_markdown(table, args.n, args.protocol)
    save_text(markdown, args.markdown)
    save_figure(budget_figure(table, args.n), Path(args.figures), "budget")
    print(markdown)


if __name__ == "__main__":
    run_step(main)
