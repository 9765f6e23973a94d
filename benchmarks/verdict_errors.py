"""Benchmark (not a test): how often the verdict rule (rule version 2) says something false (issue 79).

Simulates claims of three sizes judged by the rule itself (claims.verdicts_batch, the core judge_means calls; a
sample of the claims is judged again through claims.judge and must agree) at 8, 12 and 24 chains, from three kinds
of data:
  - normal: each chain's three sizes drawn from a normal with the spread between the decisive record's chains of
    SI - `sampled` (its per-size standard deviation) and their correlation across sizes;
  - resampled: whole chain vectors of that claim in the decisive record, centred at 0 at every size (then shifted
    to the true effect), drawn with replacement;
  - contaminated: normal data with one chain moved five standard deviations away (a chain whose base failed).
and three truths:
  - every size at 0: a false verdict is any size reading holds or reversed (the direction's family-wise error);
  - every size at S: a false verdict is any size reading "no effect larger than S";
  - one size at S, the others at 0: a false verdict is that size reading "no effect larger than S".
Each cell's false-verdict rate should be at most 0.05 + 2 standard errors. Prints the table docs/decisions.md keeps.
With --null-families it prints instead the direction test's false holds or reversed (every size at 0) under null
families drawn from no record (issue 89): three sizes correlated 0.5 through a Gaussian copula, each size's margin
gamma or lognormal at skewness 0.5, 1 and 2 (centred at its mean, unit spread), Student t with 3 degrees of freedom
(a multivariate t), and normal with one chain moved 5 SD away, beside the resampled record's cell; the direction
test's residual error under skew, which no test of a mean avoids at a fixed number of chains.

    python benchmarks/verdict_errors.py [--claims 2000]
    python benchmarks/verdict_errors.py --null-families [--claims 4000] [--resampled-claims 8000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.claims import (HOLDS, LEVEL, NO_EFFECT, REVERSED, judge, smallest_effect,  # noqa: E402
                                      verdicts_batch)
from subtask_induction.runtime import derive_seed  # noqa: E402

S = smallest_effect()
SIZES = 3


def decisive_vectors() -> np.ndarray:
    """The decisive record's chain means of SI - `sampled` at n = 0, 250, 750 (points), one row per chain."""
    from subtask_induction.pages import claims, run_records

    record = run_records.load("decisive")
    claim = next(c for c in claims.arithmetic_default(record) if c.id == "arithmetic/si-sampled")
    judged = claim.evidence.judge()
    return pd.DataFrame({where: pd.Series(j.means, index=j.chains) for where, j in judged.items()}).dropna().to_numpy()


def draw(kind: str, chains: int, claims: int, truth: np.ndarray, vectors: np.ndarray, rng) -> np.ndarray:
    """(claims, chains, sizes) chain means under `truth` (one true mean per size)."""
    centred = vectors - vectors.mean(0)
    if kind == "resampled":
        return centred[rng.integers(0, len(centred), (claims, chains))] + truth
    covariance = np.cov(centred, rowvar=False)
    data = rng.multivariate_normal(np.zeros(SIZES), covariance, (claims, chains)) + truth
    if kind == "contaminated":
        sign = rng.choice([-1.0, 1.0], claims)[:, None]
        data[:, 0, :] += 5 * sign * np.sqrt(np.diag(covariance))
    return data


CORRELATION = 0.5
SKEWNESS = (0.5, 1.0, 2.0)


def lognormal_sigma(skewness: float) -> float:
    """The log-scale spread of a lognormal of the given skewness: (e^s² + 2)·sqrt(e^s² - 1) = skewness."""
    from scipy.optimize import brentq

    return brentq(lambda s: (np.exp(s * s) + 2) * np.sqrt(np.exp(s * s) - 1) - skewness, 1e-6, 3.0)


def null_family(kind: str, chains: int, claims: int, rng) -> np.ndarray:
    """(claims, chains, sizes) chain means with mean 0 and unit spread at every size, from a family of no record."""
    from scipy import stats

    covariance = np.full((SIZES, SIZES), CORRELATION) + (1 - CORRELATION) * np.eye(SIZES)
    normal = rng.multivariate_normal(np.zeros(SIZES), covariance, (claims, chains))
    if kind.startswith("gamma"):
        shape = 4 / float(kind.split()[-1]) ** 2
        margin = stats.gamma(shape)
    elif kind.startswith("lognormal"):
        margin = stats.lognorm(lognormal_sigma(float(kind.split()[-1])))
    elif kind == "Student t3":
        scale = rng.chisquare(3, (claims, chains, 1)) / 3
        return normal / np.sqrt(scale) / np.sqrt(3.0)   # t3's variance is 3: unit spread
    elif kind == "one chain at ±5 SD":
        normal[:, 0, :] += 5 * rng.choice([-1.0, 1.0], claims)[:, None]
        return normal
    else:
        return normal
    drawn = margin.ppf(stats.norm.cdf(normal))
    return (drawn - margin.mean()) / margin.std()


def null_rate(data: np.ndarray) -> float:
    verdict = verdicts_batch([data[:, :, j] for j in range(SIZES)], smallest=S)["verdict"]
    return float(np.isin(verdict, [HOLDS, REVERSED]).any(1).mean())


def null_families(claims: int, resampled_claims: int, vectors: np.ndarray) -> None:
    kinds = (["normal"] + [f"gamma, skewness {k:g}" for k in SKEWNESS] + [f"lognormal, skewness {k:g}" for k in SKEWNESS]
             + ["Student t3", "one chain at ±5 SD"])
    print(f"False holds or reversed per claim of {SIZES} sizes (every size at 0), the exact sign-flip test with Holm; "
          f"{claims} claims a cell (resampled record: {resampled_claims}); standard error at 0.05: "
          f"{np.sqrt(LEVEL * (1 - LEVEL) / claims):.4f}")
    print("| null | 8 chains | 12 chains | 24 chains |")
    print("|---|---|---|---|")
    for kind in kinds:
        cells = []
        for chains in (8, 12, 24):
            rng = np.random.default_rng(derive_seed("verdict errors, null family", kind, chains))
            cells.append(f"{null_rate(null_family(kind.replace(', skewness', ''), chains, claims, rng)):.3f}")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    cells = []
    for chains in (8, 12, 24):
        rng = np.random.default_rng(derive_seed("verdict errors", "resampled", "all at 0", chains, resampled_claims))
        cells.append(f"{null_rate(draw('resampled', chains, resampled_claims, np.zeros(SIZES), vectors, rng)):.3f}")
    print("| the decisive record's SI - sampled, resampled | " + " | ".join(cells) + " |")


def false_rate(kind: str, truth_name: str, chains: int, claims: int, vectors: np.ndarray) -> tuple[float, float]:
    truths = {"all at 0": np.zeros(SIZES), "all at S": np.full(SIZES, S), "one at S": np.array([S, 0.0, 0.0])}
    rng = np.random.default_rng(derive_seed("verdict errors", kind, truth_name, chains))
    data = draw(kind, chains, claims, truths[truth_name], vectors, rng)
    verdict = verdicts_batch([data[:, :, j] for j in range(SIZES)], smallest=S)["verdict"]
    for i in range(0, claims, max(1, claims // 20)):   # the batch is the rule: the same claims through judge
        index = [str(c) for c in range(chains)]
        again = judge({j: pd.Series(data[i, :, j], index=index) for j in range(SIZES)}, smallest=S)
        assert [again[j].verdict for j in range(SIZES)] == list(verdict[i]), (kind, truth_name, chains, i)
    if truth_name == "all at 0":
        wrong = np.isin(verdict, [HOLDS, REVERSED]).any(1)
    elif truth_name == "all at S":
        wrong = (verdict == NO_EFFECT).any(1)
    else:
        wrong = verdict[:, 0] == NO_EFFECT
    rate = float(wrong.mean())
    return rate, float(np.sqrt(LEVEL * (1 - LEVEL) / claims))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=None, help="simulated claims per cell (2000; 4000 with "
                                                                 "--null-families)")
    parser.add_argument("--null-families", action="store_true", help="the direction test under null families of no "
                                                                      "record (issue 89)")
    parser.add_argument("--resampled-claims", type=int, default=8000, help="with --null-families: the resampled "
                                                                           "record's claims per cell")
    args = parser.parse_args(argv)
    vectors = decisive_vectors()
    if args.null_families:
        null_families(args.claims or 4000, args.resampled_claims, vectors)
        return 0
    args.claims = args.claims or 2000
    print(f"S = {S:g} points; the decisive record's SI - sampled: {len(vectors)} chains, per-size sd "
          + ", ".join(f"{sd:.1f}" for sd in vectors.std(0, ddof=1)) + f"; {args.claims} claims a cell")
    print("| data | truth | false verdict | 8 chains | 12 chains | 24 chains |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for kind in ("normal", "resampled", "contaminated"):
        for truth, what in (("all at 0", "holds or reversed at any size"), ("all at S", "no effect at any size"),
                            ("one at S", "no effect at the size at S")):
            cells = []
            for chains in (8, 12, 24):
                rate, se = false_rate(kind, truth, chains, args.claims, vectors)
                worst = max(worst, rate - (LEVEL + 2 * se))
                cells.append(f"{rate:.3f}" + (" (over 0.05 + 2 SE)" if rate > LEVEL + 2 * se else ""))
            print(f"| {kind} | {truth} | {what} | " + " | ".join(cells) + " |")
    print(f"every cell at most 0.05 + 2 standard errors: {'yes' if worst <= 0 else 'no'}")
    return 0 if worst <= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
