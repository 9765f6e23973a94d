"""Write one arithmetic dataset (base, discovery or transfer splits) for one computation."""

from ..arithmetic.data import PURPOSES, build_dataset
from ..runtime import configure, save_torch
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--purpose", required=True, choices=sorted(PURPOSES))
    p.add_argument("--computation", required=True)
    p.add_argument("--out", required=True, help="output .pt file")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "n_numbers", "modulus", "seed", "eval_rows", "test_rows")
    if args.purpose != "transfer":
        require(s, "train_rows")
    configure(args.threads, s["seed"])
    dataset = build_dataset(args.purpose, args.computation, n_numbers=s["n_numbers"], modulus=s["modulus"],
                            seed=s["seed"], train_rows=s.get("train_rows"), eval_rows=s["eval_rows"],
                            test_rows=s["test_rows"], disambiguation=s.get("disambiguation", "uniform"))
    save_torch(dataset, args.out)
    print({name: len(rows) for name, rows in dataset["splits"].items()})


if __name__ == "__main__":
    run_step(main)
