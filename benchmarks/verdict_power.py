"""Benchmark (not a test): how many chains the verdict rule needs (docs/decisions.md, "The verdict rule").

Simulates claims judged by the rule itself (claims.judge: chain means, exact sign-flip test, Holm over the claim's
sizes) with chain means drawn from a normal distribution, and prints, per number of chains k:
  - the chance that a size reads "holds" when the true mean difference is the one measured (power), for the
    spreads measured between chains (SI - `sampled` at n = 250, DESIGN §13: AMD, Intel, both pooled);
  - the chance that it reads "holds" when there is no effect (the null: at most the level's rate);
  - whether the rule can decide at all at k (every size "too few chains to decide" otherwise).
A claim has `--sizes` sizes (the default's n = 0, 250, 750), each with the same effect: Holm corrects over them.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.claims import HOLDS, LEVEL, TOO_FEW, judge, smallest_p  # noqa: E402

# Chain means of SI - `sampled` at n = 250 (accuracy, 0-1), each chain the mean of its two replicates (DESIGN §13)
MEASURED = {
    "AMD (e26076c record)": [0.194, 0.119, 0.201],
    "Intel (36a1aff run)": [0.008, 0.093, 0.241],
}
MEASURED["pooled (six chains)"] = MEASURED["AMD (e26076c record)"] + MEASURED["Intel (36a1aff run)"]


def holds_rate(mean: float, sd: float, chains: int, sizes: int, draws: int, rng) -> float:
    """Share of simulated claims whose first size reads "holds"."""
    holds = 0
    for _ in range(draws):
        differences = {size: pd.Series(rng.normal(mean, sd, chains), index=[str(c) for c in range(chains)])
                       for size in range(sizes)}
        holds += judge(differences)[0].verdict == HOLDS
    return holds / draws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chains", type=int, nargs="+", default=[3, 4, 5, 6, 8, 10, 12])
    parser.add_argument("--sizes", type=int, default=3)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"rule: exact two-sided sign-flip test over chain means, Holm over {args.sizes} sizes, level {LEVEL}")
    print("measured chain means (SI - sampled, n = 250):")
    for name, values in MEASURED.items():
        print(f"  {name}: mean {np.mean(values):.3f}, chain-level SD {np.std(values, ddof=1):.3f}, "
              f"standardised effect {np.mean(values) / np.std(values, ddof=1):.2f}")
    header = ["chains", "can decide"] + [f"power, {name}" for name in MEASURED] + ["holds under no effect"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for chains in args.chains:
        decides = args.sizes * smallest_p(chains) < LEVEL
        cells = [str(chains), "yes" if decides else f"no ({TOO_FEW})"]
        for values in MEASURED.values():
            rate = holds_rate(np.mean(values), np.std(values, ddof=1), chains, args.sizes, args.draws, rng)
            cells.append(f"{rate:.2f}")
        cells.append(f"{holds_rate(0.0, 0.086, chains, args.sizes, args.draws, rng):.3f}")
        print("| " + " | ".join(cells) + " |")
    print(f"({args.draws} simulated claims a cell, seed {args.seed})")


if __name__ == "__main__":
    main()
