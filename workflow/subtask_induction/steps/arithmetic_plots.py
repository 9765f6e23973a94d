"""Draw the arithmetic figures (Fig 3, Fig 6, Fig 7, discovery curves) as PNG and PDF."""

import argparse
from pathlib import Path

import pandas as pd

from ..arithmetic.figures import discovery_curves, fig3, fig6, fig7


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--transfer", required=True, help="summary/transfer.csv")
    p.add_argument("--curves", required=True, help="summary/discovery_curves.csv")
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    out = Path(args.outdir)
    transfer = pd.read_csv(args.transfer)
    written = fig3(transfer, out) + fig6(transfer, out) + fig7(transfer, out)
    written += discovery_curves(pd.read_csv(args.curves), out)
    print("\n".join(map(str, written)))


if __name__ == "__main__":
    main()
