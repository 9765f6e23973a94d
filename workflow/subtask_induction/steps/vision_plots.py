"""Draw the vision figures (Fig 5, Fig 11, per-class accuracy) from the aggregated tables."""

import argparse
from pathlib import Path

import pandas as pd

from ..vision.figures import fig5, fig11, per_class
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--summary", required=True, help="folder of the vision_aggregate tables")
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    summary, out = Path(args.summary), Path(args.outdir)
    written = fig5(pd.read_csv(summary / "curves.csv"), out)
    written += fig11(pd.read_csv(summary / "discovery_curves.csv"), out)
    written += per_class(pd.read_csv(summary / "per_class.csv"), out)
    print("\n".join(str(path) for path in written))


if __name__ == "__main__":
    run_step(main)
