"""Benchmark (not a test): how many chains each headline needs to be decided at S, the smallest effect that matters
(issue 73; docs/decisions.md, "The decisive record"). Run before the decisive record's first job; its output is
copied into docs/decisions.md.

For each headline, the per-chain differences (points) of the two stored 8-chain records of the default are pooled
(16 chains of disjoint seeds); per size the spread's upper 80% confidence limit is taken (chi-square, so a spread
measured on few chains is not trusted low). Claims are simulated by resampling whole chain vectors (every size of a
chain together, so the sizes stay correlated), centred, scaled to that spread and shifted by the effect, and judged by
`claims.judge` itself. Printed per headline and chain count:
  - power: at the headline's weakest size, the share of claims that read "holds" there when the true effect is +S;
  - equivalence: at its weakest size, the share whose 90% t interval lies inside ±S when the true effect is 0 (the
    decisive rule's "no effect larger than S");
and the time `judge` takes for one claim at the largest count.

    PYTHONPATH=workflow python benchmarks/decisive_plan.py [--draws 200] [--chains 8 12 16 20 24]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.claims import HOLDS, judge, smallest_effect, t_interval  # noqa: E402
from subtask_induction.pages import claims, run_records  # noqa: E402

RECORDS = ("default", "default_replication")


def headlines(records: dict) -> dict[str, tuple[str, pd.DataFrame]]:
    """{headline: (its S, chains x sizes of per-chain differences in points)} over both records, chains of the second
    record renumbered after the first's (submasking: its backbones)."""
    out = {}
    for offset, name in enumerate(RECORDS):
        record = records[name]
        gathered = (claims.arithmetic_default(record) + claims.vision_default(record)
                    + claims.submasking_default(record))
        for claim in gathered:
            smallest = claim.evidence.smallest if claim.evidence.smallest is not None else smallest_effect()
            frame = pd.DataFrame({where: difference.groupby(lambda run: str(run).split("/")[0]).mean()
                                  for where, difference in claim.evidence.differences.items()})
            frame.index = [f"{name}:{chain}" for chain in frame.index]
            previous = out.get(claim.claim, (smallest, pd.DataFrame()))[1]
            out[claim.claim] = (smallest, pd.concat([previous, frame]))
    return out


def upper_sd(values: np.ndarray, confidence: float = 0.8) -> float:
    """The spread's upper `confidence` limit from k chains (chi-square with k - 1 degrees of freedom)."""
    k = len(values)
    return float(np.std(values, ddof=1) * np.sqrt((k - 1) / stats.chi2.ppf(1 - confidence, k - 1)))


def simulate(chains: pd.DataFrame, smallest: float, k: int, draws: int, rng) -> tuple[float, float]:
    """(power, equivalence) at k chains: the smallest over the headline's sizes of the share of claims whose size
    reads "holds" at a true +S, and of those whose size's 90% t interval lies inside ±S at a true 0."""
    centred = chains - chains.mean()
    scale = np.array([upper_sd(chains[c].to_numpy()) / max(np.std(chains[c], ddof=1), 1e-12) for c in chains])
    holds = np.zeros(len(chains.columns))
    equivalent = np.zeros(len(chains.columns))
    index = [str(i) for i in range(k)]
    for _ in range(draws):
        picked = centred.iloc[rng.integers(0, len(centred), k)].to_numpy() * scale
        effect = judge({c: pd.Series(picked[:, j] + smallest, index=index) for j, c in enumerate(chains)})
        holds += [effect[c].verdict == HOLDS for c in chains]
        for j in range(len(chains.columns)):
            values = picked[:, j]
            low, high = t_interval(values, 0.90)   # the interval the rule's equivalence reads
            equivalent[j] += -smallest < low and high < smallest
    return float(holds.min() / draws), float(equivalent.min() / draws)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--chains", type=int, nargs="+", default=[8, 12, 16, 20, 24])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    records = {name: run_records.load(name) for name in RECORDS}
    print(f"pooled chains of {', '.join(RECORDS)}; {args.draws} claims a cell; power / equivalence at the weakest "
          "size: holds at +S / 90% interval inside ±S at 0")
    print("| headline | S | chains pooled | SD per size (upper 80%) | " + " | ".join(f"{k} chains" for k in args.chains)
          + " |")
    print("|---|---|---|---|" + "---|" * len(args.chains))
    for text, (smallest, chains) in headlines(records).items():
        spreads = ", ".join(f"{np.std(chains[c], ddof=1):.1f} ({upper_sd(chains[c].to_numpy()):.1f})" for c in chains)
        cells = [f"{p:.2f} / {e:.2f}" for p, e in (simulate(chains, smallest, k, args.draws, rng) for k in args.chains)]
        print(f"| {text} | {smallest:g} | {len(chains)} | {spreads} | " + " | ".join(cells) + " |", flush=True)
    k = max(args.chains)
    values = {c: pd.Series(rng.normal(1, 3, k), index=[str(i) for i in range(k)]) for c in range(3)}
    start = time.perf_counter()
    judge(values)
    print(f"judge over 3 sizes of {k} chains (exact sign-flip enumeration): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
