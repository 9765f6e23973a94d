"""Draw the arithmetic figures (Fig 3, Fig 6, Fig 7, selection protocols, inheritance 2x2, lr_scale dial,
the top-k kept-% dial, discovery curves) as PNG and PDF."""

import argparse
import json
from pathlib import Path

import pandas as pd

from ..arithmetic.figures import (dial, discovery_curves, fig3, fig6, fig7, inheritance, protocols_figure,
                                  sparsity_dial)
from ..protocols import PROTOCOLS
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--transfer", required=True, help="summary/transfer.csv")
    p.add_argument("--curves", required=True, help="summary/discovery_curves.csv")
    p.add_argument("--report", type=json.loads, required=True,
                   help='JSON {"protocol": main figures\' selection protocol, "dial_n": n of the lr_scale dial}')
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    out = Path(args.outdir)
    transfer = pd.read_csv(args.transfer)
    protocol, dial_n = args.report["protocol"], args.report["dial_n"]
    reference = args.report.get("paper_reference", False)
    written = fig3(transfer, out, protocol, reference) + fig6(transfer, out, protocol, reference)
    written += fig7(transfer, out, protocol)
    written += protocols_figure(transfer, out, [name for name in PROTOCOLS if name in set(transfer["protocol"])])
    written += inheritance(transfer, out, protocol, dial_n) + dial(transfer, out, protocol, dial_n)
    written += sparsity_dial(transfer, out, protocol)
    written += discovery_curves(pd.read_csv(args.curves), out)
    print("\n".join(map(str, written)))


if __name__ == "__main__":
    run_step(main)
