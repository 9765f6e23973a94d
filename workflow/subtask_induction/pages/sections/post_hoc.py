"""## The direction test beside two others, post hoc (issue 89): for every verdict of the records that decide the
headlines, the Holm-corrected p of the rule's exact sign-flip test beside the one-sample t test's and a bootstrap-t
test's over the same chain means, and where either would have read another direction verdict. Chosen after the rule
was fixed (docs/decisions.md, "The rule closed"), so shown as a check on the results page only, never in the README,
and never a verdict."""

from __future__ import annotations

import numpy as np

from ...claims import HOLDS, LEVEL, REVERSED, holm
from ...rounding import fixed
from ..page import CONFIRMATORY, DECISIVE, DECISIVE_CROSS_DOMAIN, VISION_AUTHORS, VISION_CAUSES

RECORDS = (CONFIRMATORY, DECISIVE, DECISIVE_CROSS_DOMAIN, VISION_CAUSES, VISION_AUTHORS)
RESAMPLES = 4000   # a bootstrap p's standard error at 0.05: about 0.0034


def t_p(values: np.ndarray) -> float:
    """The one-sample t test's two-sided p of "mean 0"."""
    from scipy import stats

    if len(values) < 2:
        return 1.0
    if np.std(values) == 0:   # every chain equal: certain where they are not all 0
        return 0.0 if values.any() else 1.0
    return float(stats.ttest_1samp(values, 0.0).pvalue)


def bootstrap_t_p(values: np.ndarray, seed: int) -> float:
    """The bootstrap-t test's two-sided p of "mean 0": the share of resampled t statistics, centred on the chains'
    mean, at least as far from 0 as the observed one (RESAMPLES draws of the chains with replacement)."""
    k = len(values)
    spread = np.std(values, ddof=1) if k > 1 else 0.0
    if k < 2 or spread == 0:
        return t_p(values)
    observed = values.mean() / (spread / np.sqrt(k))
    draws = values[np.random.default_rng(seed).integers(0, k, (RESAMPLES, k))]
    spreads = draws.std(1, ddof=1) / np.sqrt(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        resampled = np.where(spreads > 0, (draws.mean(1) - values.mean()) / spreads, 0.0)
    return float((np.sum(np.abs(resampled) >= abs(observed)) + 1) / (RESAMPLES + 1))


def direction(p: float, mean: float) -> str:
    return (HOLDS if mean > 0 else REVERSED) if p < LEVEL else "neither"


def rows(claim) -> list[dict]:
    """One row per size of a rule-judged claim: the three Holm p and, where t or bootstrap-t would read another
    direction than the exact test, which."""
    from ...runtime import derive_seed

    judged = {where: j for where, j in claim.evidence.judge().items() if j.complete and j.chains}
    if not judged:
        return []
    sizes = list(judged)
    values = {where: np.asarray(judged[where].means, dtype=float) for where in sizes}
    t_holm = holm([t_p(values[w]) for w in sizes])
    boot_holm = holm([bootstrap_t_p(values[w], derive_seed("post hoc bootstrap-t", claim.id, w)) for w in sizes])
    out = []
    for i, where in enumerate(sizes):
        j = judged[where]
        exact = direction(j.adjusted, j.mean)
        other = {name: direction(p, j.mean) for name, p in (("t", t_holm[i]), ("bootstrap-t", boot_holm[i]))}
        differs = [f"{name} would read {word}" for name, word in other.items() if word != exact]
        out.append({"claim": claim, "where": where, "verdict": j.verdict, "exact": j.adjusted, "t": t_holm[i],
                    "bootstrap": boot_holm[i], "differs": "; ".join(differs)})
    return out


def _p(value: float) -> str:
    return fixed(value, 4)


def section(found: list) -> list[str]:
    table = [row for claim in found if claim.record in RECORDS and claim.evidence is not None
             for row in rows(claim)]
    if not table:
        return []
    lines = ["## The direction test beside two others (post hoc)", "",
             "Chosen after the rule was fixed, so a check and never a verdict: for each size the rule judged, the "
             "Holm-corrected p of the rule's exact sign-flip test beside the one-sample t test's and a bootstrap-t "
             f"test's ({RESAMPLES:,} resamples of the chains) over the same chain means; the last column names where "
             "either would have read another direction (holds, reversed or neither) at 0.05. Why the rule keeps the "
             "exact test: docs/decisions.md, \"The rule closed\".", "",
             "| record | claim | size | verdict | exact sign-flip | t | bootstrap-t | another verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for row in table:
        claim = row["claim"]
        lines.append(f"| `{claim.record}` | {claim.claim} | {row['where'] or '—'} | {row['verdict']} | "
                     f"{_p(row['exact'])} | {_p(row['t'])} | {_p(row['bootstrap'])} | {row['differs'] or '—'} |")
    return lines + [""]
