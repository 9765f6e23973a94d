"""Benchmark (not a test): how many chains a confirmatory record needs (issue 93's power analysis).

For each size of the headline claims that the decisive record left undecided or fragile, the chance that the verdict rule
(claims.verdicts_batch, the rule itself) reaches a decided verdict (holds, reversed, or no effect larger than S) at k
chains, under the planned effects: the true mean difference at S (the direction test must find it) and at 0 (the
equivalence test must bound it). Chains are drawn normal with the planning standard deviations (the decisive record's,
given to the issue), the claim's sizes independent, each mean rounded to the grid a test set imposes (0.2 points, 500
test items), every size of a claim at the same truth. Prints, per size, the power at each k and the smallest k with
both powers at least 0.8.

    python benchmarks/power.py [--claims 400] [--chains 12 24 36 48 64 80 96]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.claims import HOLDS, NO_EFFECT, REVERSED, smallest_effect, verdicts_batch  # noqa: E402
from subtask_induction.runtime import derive_seed  # noqa: E402

S = smallest_effect()
GRID = 0.2
POWER = 0.8
# claim -> (sizes judged together, planning SD per size, the sizes to plan for: undecided or fragile in `decisive`)
PLANNING = {
    "SI - sampled (arithmetic)": (("n = 0", "n = 250", "n = 750"), (7.1, 6.6, 5.2), ("n = 0",)),
    "SI - full (arithmetic)": (("n = 0", "n = 250", "n = 750"), (5.9, 7.2, 3.4), ("n = 0", "n = 250", "n = 750")),
    "vision robustness, SI - the mixture as the authors' code ran it": (("",), (6.2,), ("",)),
    "vision pooled, SI - base": (("",), (4.6,), ("",)),
}


def decided_share(sds: tuple, truth: float, chains: int, claims: int, seed: int) -> np.ndarray:
    """Per size, the share of simulated claims whose verdict is decided (holds, reversed, no effect larger than S)."""
    rng = np.random.default_rng(seed)
    values = [np.round(rng.normal(truth, sd, (claims, chains)) / GRID) * GRID for sd in sds]
    verdict = verdicts_batch(values, smallest=S)["verdict"]
    return np.isin(verdict, [HOLDS, REVERSED, NO_EFFECT]).mean(0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=400, help="simulated claims per cell")
    parser.add_argument("--chains", type=int, nargs="+", default=[12, 24, 36, 48, 64, 80, 96])
    args = parser.parse_args(argv)
    print(f"S = {S:g} points, grid {GRID:g} points, {args.claims} claims a cell; power = P(decided verdict) with the "
          f"true difference at S / at 0")
    print("| claim | size | planning SD | " + " | ".join(f"{k} chains" for k in args.chains) + f" | chains for {POWER:g} |")
    print("|---|---|---|" + "---|" * len(args.chains) + "---|")
    for claim, (sizes, sds, planned) in PLANNING.items():
        shares = {}
        for k in args.chains:
            at_s = decided_share(sds, S, k, args.claims, derive_seed("power", claim, "S", k))
            at_0 = decided_share(sds, 0.0, k, args.claims, derive_seed("power", claim, "0", k))
            shares[k] = (at_s, at_0)
        for j, size in enumerate(sizes):
            if size not in planned:
                continue
            cells = [f"{shares[k][0][j]:.2f} / {shares[k][1][j]:.2f}" for k in args.chains]
            enough = next((k for k in args.chains if min(shares[k][0][j], shares[k][1][j]) >= POWER), None)
            print(f"| {claim} | {size or '—'} | {sds[j]:g} | " + " | ".join(cells)
                  + f" | {enough if enough is not None else f'over {max(args.chains)}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
