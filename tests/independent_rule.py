"""The verdict rule (rule version 2) written again from its words, without the package's rule: every sign pattern
enumerated, Holm by hand, scipy's one-sample t tests and t interval, the precedence table's order as an if-chain.
The tests hold claims.py's batched and vectorised rule against this slow, plain one (tests/test_claims_batch.py,
tests/test_evidence_as_data.py)."""

from functools import lru_cache
from itertools import product

import numpy as np
from scipy import stats

LEVEL = 0.05
TIE = 1e-9


@lru_cache(maxsize=None)
def patterns(k: int) -> np.ndarray:
    return np.array(list(product((1.0, -1.0), repeat=k))).reshape(2 ** k, k)


def exact_p(values) -> float:
    """Two-sided: the share of sign patterns whose |sum| is at least the observed |sum| (ties within TIE)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or not values.any():
        return 1.0
    sums = np.abs(patterns(len(values)) @ np.abs(values))
    return float(np.mean(sums >= abs(values.sum()) - TIE * np.abs(values).sum()))


def exact_greater(values) -> float:
    """One-sided: the share of sign patterns whose sum is at least the observed sum (ties within TIE)."""
    values = np.asarray(values, dtype=float)
    if not len(values) or not values.any():
        return 1.0
    sums = patterns(len(values)) @ np.abs(values)
    return float(np.mean(sums >= values.sum() - TIE * np.abs(values).sum()))


def holm(ps) -> list:
    order, adjusted, running = np.argsort(ps, kind="stable"), [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def one_sided(values, bound: float, alternative: str) -> float:
    """scipy's one-sample t test; every value equal: 0 or 1 by which side of the bound they lie."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return 1.0
    if np.ptp(values) == 0:
        return 0.0 if (values.mean() < bound if alternative == "less" else values.mean() > bound) else 1.0
    return float(stats.ttest_1samp(values, bound, alternative=alternative).pvalue)


def interval(values, confidence: float) -> tuple:
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float("nan"), float("nan")
    if np.ptp(values) == 0:
        return float(values.mean()), float(values.mean())
    low, high = stats.t.interval(confidence, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    return float(low), float(high)


def rule(means: dict, smallest: float | None = None, headroom: dict | None = None, level: float = LEVEL,
         beside: bool = True) -> dict:
    """{size: chain means (one per chain)} -> {size: {"p", "adjusted", "too_few", "equivalence", "exact", "beyond",
    "verdict", "exact_verdict"}}: every size of a claim judged together, Holm over the sizes (beside=False: the
    verdict's tests alone, without the exact equivalence test and the test beyond S)."""
    sizes = list(means)
    values = {w: np.asarray(means[w], dtype=float) for w in sizes}
    p = [exact_p(values[w]) for w in sizes]
    direction = holm(p)
    if smallest is not None:
        raw = [max(one_sided(values[w], smallest, "less"), one_sided(values[w], -smallest, "greater")) for w in sizes]
        equivalent = holm(raw)
    if smallest is not None and beside:
        exact = holm([max(exact_greater(smallest - values[w]), exact_greater(values[w] + smallest)) for w in sizes])
        beyond = holm([one_sided(values[w], smallest, "greater") if values[w].mean() >= 0
                       else one_sided(values[w], -smallest, "less") for w in sizes])
    out = {}
    for i, where in enumerate(sizes):
        best = list(p)
        best[i] = min(1.0, 2 / 2 ** len(values[where])) if len(values[where]) else 1.0
        too_few = holm(best)[i] >= level
        room = (headroom or {}).get(where)

        def verdict(equivalence):
            if direction[i] < level:
                return "holds" if values[where].mean() > 0 else "reversed"
            if too_few:
                return "too few chains to decide"
            if smallest is not None and room is not None and room < smallest:
                return "at floor"
            if smallest is not None and equivalence < level:
                return "no effect larger than S"
            return "undecided" if smallest is not None else "no evidence either way"

        out[where] = {"p": p[i], "adjusted": direction[i], "too_few": too_few,
                      "verdict": verdict(equivalent[i] if smallest is not None else 1.0)}
        if smallest is not None:
            out[where]["equivalence"] = equivalent[i]
            # the interval the corrected test reads: below γ exactly when the 1 - 2γ interval lies inside ±S, and
            # Holm scales this size's p by equivalent / raw
            gamma = level * raw[i] / equivalent[i] if raw[i] > 0 and equivalent[i] > 0 else level
            out[where]["equivalence_interval"] = interval(values[where], 1 - 2 * gamma)
        if smallest is not None and beside:
            out[where].update(exact=exact[i], beyond=beyond[i], exact_verdict=verdict(exact[i]))
    return out


def verdicts(means: dict, smallest: float | None = None, headroom: dict | None = None, level: float = LEVEL) -> dict:
    return {where: tested["verdict"] for where, tested in rule(means, smallest, headroom, level, False).items()}
