"""What per-run differences can claim, for every family's comparisons tables and every page: the one verdict rule.

- `tally` counts the runs a comparison names (chain, or chain/replicate) and names those without one number (missing,
  NaN, listed twice): a claim is read only from a complete tally, otherwise it is "incomplete".
- `judge` is the rule over independent subnetworks (docs/decisions.md, "The verdict rule"): chain means, an exact
  sign-flip test, Holm over a claim's sizes, a t interval; holds / reversed / no evidence either way / too few
  chains to decide; and with the smallest effect that matters (S), no effect larger than S (the 90% interval inside
  ±S) / undecided in place of no evidence.
- A run's own difference is marked `*` where it is beyond noise on the same test items (McNemar's exact test at
  PAIRED_LEVEL; shape bias by a paired bootstrap): which runs carried a claim, shown beside the verdict."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Tally:
    """One comparison over the runs it names: how many show each direction, and which named runs have no single
    number (missing, NaN or duplicated). A claim is judged (judge) only from a complete tally."""

    runs: tuple            # the runs the comparison is about, in order
    higher: int = 0        # runs where the first is higher (a counted difference > 0)
    lower: int = 0
    tied: int = 0
    missing: tuple = ()    # named runs with no number, or a NaN
    duplicated: tuple = () # named runs with more than one number (never averaged into one)

    @property
    def complete(self) -> bool:
        """Every named run has one number, and at least one run is named (a comparison no config planned is no
        evidence, never a verdict)."""
        return bool(self.runs) and not self.missing and not self.duplicated

    @property
    def present(self) -> int:
        return self.higher + self.lower + self.tied

    @property
    def gaps(self) -> str:
        """The named runs without a single number, for the reader: `run 1/0 missing; run 2/1 twice`."""
        if not self.runs:
            return "no run planned"
        return "; ".join([f"{run} missing" for run in self.missing] + [f"{run} twice or more" for run in self.duplicated])


def tally(difference: pd.Series, runs=None) -> Tally:
    """Tally counted differences (first minus second; 0 where a paired test calls it noise), one value per run,
    indexed by run, over the runs named by `runs` (default: the index's). A named run absent from the index, or
    NaN, is missing; one that appears more than once is duplicated; a run not named is not read."""
    runs = tuple(dict.fromkeys(difference.index) if runs is None else runs)
    counts = difference.index.value_counts()
    missing, duplicated, values = [], [], []
    for run in runs:
        if run not in counts.index:
            missing.append(run)
        elif counts[run] > 1:
            duplicated.append(run)
        elif pd.isna(difference.loc[run]):
            missing.append(run)
        else:
            values.append(float(difference.loc[run]))
    values = np.asarray(values)
    return Tally(runs, int((values > 0).sum()), int((values < 0).sum()), int((values == 0).sum()), tuple(missing),
                 tuple(duplicated))


def paired_by_run(first: pd.Series, second: pd.Series) -> pd.Series:
    """first − second per run, both indexed by run, at the tables' full precision: a run with no value on either side
    is NaN, a run listed twice on either side is listed twice (never averaged), so tally names both. The pipeline's
    summaries and the pages both take a run's difference from here, so they judge the same numbers."""
    out = {}
    for run in dict.fromkeys(list(first.index) + list(second.index)):
        a, b = first[first.index == run], second[second.index == run]
        out[run] = [float("nan")] if a.empty or b.empty else [a.iloc[0] - b.iloc[0]] * (1 + (len(a) > 1 or len(b) > 1))
    return pd.Series([v for values in out.values() for v in values],
                     index=[run for run, values in out.items() for _ in values], dtype=float)


# A difference in one run counts only when the two models' per-item correctness on the same test items differs
# beyond noise: McNemar's exact test (two-sided binomial test on the discordant items) at this level.
PAIRED_LEVEL = 0.05


def correct_bits(correct) -> str:
    """Per-item correctness (a boolean array or tensor) as a hex string, 4 items per character: how a
    record keeps which test items a model got right, for paired tests between models."""
    return np.packbits(np.asarray(correct, dtype=bool)).tobytes().hex()   # packbits flattens


def bits_correct(bits: str, count: int) -> np.ndarray:
    """correct_bits' inverse for `count` items."""
    return np.unpackbits(np.frombuffer(bytes.fromhex(bits), dtype=np.uint8))[:count].astype(bool)


def mcnemar_p(first, second) -> float:
    """Two-sided exact McNemar p-value of two models' per-item correctness on the same items."""
    first, second = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    if first.shape != second.shape:
        raise ValueError(f"paired test on {first.shape} and {second.shape} items: not the same items")
    only_first, only_second = int((first & ~second).sum()), int((~first & second).sum())
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(only_first, only_second) + 1)) / 2 ** discordant
    return min(1.0, 2 * tail)


def shape_bias_difference(first_shape, first_texture, second_shape, second_texture, rounds: int = 2000,
                          level: float = PAIRED_LEVEL) -> tuple[float, float, float]:
    """Shape bias (shape / (shape + texture decisions)) is a ratio, not a per-item accuracy: its paired test
    resamples the conflict images (the same draw for both models; a fixed generator, so the same records give
    the same verdict). Returns (difference in points, two-sided bootstrap p, the difference that counts)."""
    arrays = [np.asarray(a, dtype=bool) for a in (first_shape, first_texture, second_shape, second_texture)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("paired shape-bias test on different numbers of conflict images")

    def bias(shape, texture, axis=-1):
        decisive = shape.sum(axis) + texture.sum(axis)
        return np.where(decisive > 0, shape.sum(axis) / np.maximum(decisive, 1), np.nan)

    difference = 100 * (bias(*arrays[:2]) - bias(*arrays[2:]))
    draws = np.random.default_rng(0).integers(0, len(arrays[0]), size=(rounds, len(arrays[0])))
    resampled = bias(arrays[0][draws], arrays[1][draws]) - bias(arrays[2][draws], arrays[3][draws])
    resampled = resampled[~np.isnan(resampled)]
    if np.isnan(difference) or not len(resampled):
        return float(difference), 1.0, 0.0
    p = min(1.0, 2 * min((resampled <= 0).mean(), (resampled >= 0).mean()))
    return float(difference), float(p), float(difference) if p < level else 0.0


def format_paired(differences: pd.Series, counted: pd.Series) -> str:
    """`+4.4*, +0.2, missing`: every run's difference in points, `*` where it is beyond noise."""
    return ", ".join("missing" if pd.isna(d) else f"{d:+.1f}" + ("*" if c != 0 else "")
                     for d, c in zip(differences, counted))


# The verdict rule over independent subnetworks (docs/decisions.md, "The verdict rule"). The unit is the chain: one
# base -> discovery -> transfer line, hence one subnetwork; a chain's replicates (transfer seeds over the same
# subnetwork) are averaged inside it first, because they are not independent of it. Over the chain means: an exact
# two-sided sign-flip permutation test of "the mean difference is 0" (every one of the 2^k sign patterns), Holm's
# step-down correction over the sizes (n) of one claim, at LEVEL family-wise; beside it a CONFIDENCE t interval of
# the mean over chains, which describes and does not decide.
LEVEL = 0.05
CONFIDENCE = 0.95
HOLDS, REVERSED, NO_EVIDENCE, TOO_FEW = "holds", "reversed", "no evidence either way", "too few chains to decide"
# Where the smallest effect that matters (S) is given, a claim that neither holds nor is reversed is decided as "no
# effect larger than S" when its 90% t interval over chains lies inside (-S, +S) (the two one-sided tests at
# LEVEL each), and is otherwise "undecided" at its chains (docs/decisions.md, "The decisive record").
NO_EFFECT, UNDECIDED = "no effect larger than S", "undecided"
VERDICTS = (HOLDS, REVERSED, NO_EFFECT, UNDECIDED, NO_EVIDENCE, TOO_FEW)
INCOMPLETE = "incomplete"   # a planned run without one number: wins over every verdict
# S in percentage points, fixed in docs/decisions.md before the decisive record: every accuracy (and cue-conflict
# robustness) 3 points, shape bias 5.
SMALLEST_EFFECT = {"shape_bias": 5.0}
ACCURACY_S = 3.0


def smallest_effect(metric: str = "accuracy") -> float:
    """S for a metric (percentage points): 5 for shape bias, 3 for every accuracy."""
    return SMALLEST_EFFECT.get(metric, ACCURACY_S)


def chain_of(run) -> str:
    """A run's chain: `2/1` (chain/replicate) -> `2`; a run named by its chain alone is its own chain."""
    return str(run).split("/")[0]


def chain_means(difference: pd.Series) -> pd.Series:
    """Per-run differences (indexed by run: `chain/replicate` or a chain) -> one mean per chain, in first-seen
    order. Only a complete tally's runs are passed: a NaN here is a caller's error."""
    if difference.isna().any():
        raise ValueError(f"chain means over runs without a number: {list(difference.index[difference.isna()])}")
    chains = pd.Index([chain_of(run) for run in difference.index])
    return difference.groupby(chains, sort=False).mean()


def smallest_p(chains: int) -> float:
    """The smallest two-sided p the exact sign-flip test can give over `chains` nonzero means (all of one sign)."""
    return min(1.0, 2 / 2 ** chains) if chains else 1.0


# Two sign patterns whose sums differ by less than TIE x sum(|values|) are tied: a tolerance on the values' own scale.
# (scipy's permutation_test scales its tolerance by the observed statistic, so chains whose large differences nearly
# cancel lost their ties to rounding and the p depended on the chains' order.)
TIE = 1e-9
BLOCK = 16   # sign patterns are enumerated 2^BLOCK at a time: 24 chains are 256 blocks


def sign_flip_p(values) -> float:
    """Exact two-sided sign-flip permutation p of "mean 0" over `values` (one per chain): the share of all 2^k sign
    patterns whose |sum| is at least the observed |sum| (ties within TIE counted), enumerated exactly at any k."""
    values = np.asarray(values, dtype=float)
    k = len(values)
    if k < 2 or not values.any():   # one value's two sign patterns are equally extreme
        return 1.0
    magnitudes = np.abs(values)
    threshold = abs(values.sum()) - TIE * magnitudes.sum()
    low = min(k, BLOCK)
    signs = 1 - 2 * ((np.arange(2 ** low)[:, None] >> np.arange(low)) & 1)
    low_sums = signs @ magnitudes[:low]
    extreme = 0
    for high in range(2 ** (k - low)):
        offset = sum(m * (1 - 2 * ((high >> j) & 1)) for j, m in enumerate(magnitudes[low:]))
        extreme += int(np.count_nonzero(np.abs(low_sums + offset) >= threshold))
    return extreme / 2 ** k


def t_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The t interval of the mean over chains ((nan, nan) under two chains; a point where they all agree)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float("nan"), float("nan")
    spread = np.std(values, ddof=1) / np.sqrt(len(values))   # scipy.stats.sem's own formula, without its wrapper
    if spread == 0:
        return float(values.mean()), float(values.mean())
    mean = values.mean()
    # scipy.stats.t.interval's own arithmetic (loc + scale x the quantile), its quantiles cached
    return (float(mean + spread * t_quantile((1 - confidence) / 2, len(values) - 1)),
            float(mean + spread * t_quantile((1 + confidence) / 2, len(values) - 1)))


@functools.lru_cache(maxsize=None)
def t_quantile(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df))


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error at the level over the list), in the list's order."""
    order = np.argsort(pvalues, kind="stable")
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def could_not_decide(pvalues: list[float], index: int, chains: int, level: float = LEVEL) -> bool:
    """Whether size `index` of a claim could not reach the level whatever its own chains showed: with its `chains`
    made unanimous (its p the smallest the exact test gives) and the other sizes' p kept, its Holm-adjusted p would
    still be at least the level. Sizes with fewer chains than the others are judged by their own count, not the
    largest factor Holm could apply."""
    best = list(pvalues)
    best[index] = smallest_p(chains)
    return holm(best)[index] >= level


@dataclass(frozen=True)
class Judgement:
    """One size's comparison under the rule: its tally (per run, with the pipeline's `*`), the chain means, their
    mean with its interval, the exact p and Holm's adjusted p over the claim's sizes, and the verdict. An incomplete
    tally has no verdict of the rule: `incomplete` wins."""

    tally: Tally
    chains: tuple = ()
    means: tuple = ()
    mean: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    p: float = float("nan")
    adjusted: float = float("nan")
    verdict: str = ""
    smallest: float = float("nan")   # S where it was given
    equivalence: tuple = (float("nan"), float("nan"))   # the 90% t interval the two one-sided tests read

    @property
    def complete(self) -> bool:
        return self.tally.complete

    def said(self) -> str:
        """The verdict in a table's words: S's value for "no effect larger than S", the chains for "undecided"."""
        if self.verdict == NO_EFFECT:
            return f"no effect larger than {self.smallest:g} points"
        if self.verdict == UNDECIDED:
            return f"undecided at {len(self.chains)} chains"
        return self.verdict

    def interval_90(self) -> str:
        """`; 90% [-0.6, +5.1]` where the equivalence test read it (no effect, undecided), else ""."""
        low, high = self.equivalence
        if self.verdict not in (NO_EFFECT, UNDECIDED) or np.isnan(low):
            return ""
        return f"; {interval_text(low, high)}"

    def summary(self, unit: str = "") -> str:
        """`+14.3 [+6.1, +22.5]` (the mean over chains with its interval, in the differences' unit)."""
        if not self.complete or not self.chains:
            return "—"
        if np.isnan(self.low):
            return f"{self.mean:+.1f}{unit}"
        return f"{self.mean:+.1f}{unit} [{self.low:+.1f}, {self.high:+.1f}]"


def judge(differences: dict, runs: dict | None = None, level: float = LEVEL, smallest: float | None = None) -> dict:
    """The rule over one claim: {size (any label): per-run differences (first minus second, indexed by run)} ->
    {size: Judgement}. `runs` names each size's planned runs (default: the index's); a named run that is missing,
    NaN or duplicated makes that size incomplete (tally). Holm's correction runs over the claim's complete sizes;
    a size that could not reach the level even with every one of its chains on one side, the other sizes' data kept
    (could_not_decide), is "too few chains to decide", whatever its data. With `smallest` (S, in the differences'
    unit), a size that neither holds nor is reversed is "no effect larger than S" when its 1 - 2 level t interval
    lies inside (-S, +S), else "undecided" (or still "too few chains to decide")."""
    runs = runs or {}
    tallies = {size: tally(difference, runs.get(size)) for size, difference in differences.items()}
    means = {}
    for size, difference in differences.items():
        counted = tallies[size]
        if counted.complete:
            means[size] = chain_means(difference[[run in set(counted.runs) for run in difference.index]])
    judged = judge_means(means, tallies, level, smallest)
    return {size: judged.get(size, Judgement(tallies[size])) for size in differences}


def judge_means(means: dict, tallies: dict, level: float = LEVEL, smallest: float | None = None) -> dict:
    """judge's second half, on chain means: {size: one mean per chain (a Series indexed by chain)} with each size's
    complete tally -> {size: Judgement}: the exact sign-flip p per size, Holm over the sizes, the verdict."""
    tested = {}
    for size, chain_mean in means.items():
        values = chain_mean.to_numpy(dtype=float)
        low, high = t_interval(values)
        tested[size] = Judgement(tallies[size], tuple(chain_mean.index), tuple(float(v) for v in values),
                                 float(values.mean()), low, high, sign_flip_p(values))
    out = {}
    if tested:
        sizes = list(tested)
        pvalues = [tested[size].p for size in sizes]
        adjusted = holm(pvalues)
        for index, (size, p) in enumerate(zip(sizes, adjusted)):
            judgement = tested[size]
            if could_not_decide(pvalues, index, len(judgement.chains), level):
                verdict = TOO_FEW
            elif p < level:
                verdict = HOLDS if judgement.mean > 0 else REVERSED
            else:
                verdict = NO_EVIDENCE
            judgement = replace(judgement, adjusted=p, verdict=verdict)
            if smallest is not None:
                judgement = equivalence(judgement, smallest, level)
            out[size] = judgement
    return out


def equivalence(judgement: Judgement, smallest: float, level: float = LEVEL) -> Judgement:
    """The two one-sided tests at `level` each: a judgement that neither holds nor is reversed becomes "no effect
    larger than S" when the 1 - 2 level t interval of its chain means lies strictly inside (-S, +S), else "undecided"
    ("too few chains to decide" stays: even unanimous chains could not have decided the direction)."""
    low, high = t_interval(np.asarray(judgement.means), 1 - 2 * level)
    judgement = replace(judgement, smallest=float(smallest), equivalence=(low, high))
    if judgement.verdict in (HOLDS, REVERSED):
        return judgement
    if -smallest < low and high < smallest:
        return replace(judgement, verdict=NO_EFFECT)
    return replace(judgement, verdict=UNDECIDED if judgement.verdict == NO_EVIDENCE else judgement.verdict)


def interval_text(low: float, high: float) -> str:
    """The equivalence test's interval as every page writes it: `90% [-0.6, +5.1]`."""
    return f"90% [{low:+.1f}, {high:+.1f}]"


POWER_DRAWS = 400   # simulated smaller records per claim: the share's standard error is at most 2.5 points
# power_at's answers in this process, by everything they depend on (the chain means, the verdicts to agree with,
# chains, S, draws): a page and the tests that render it again ask the same question many times, at 0.2 s each.
_POWER: dict = {}


def power_at(judged: dict, chains: int, smallest: float | None = None, draws: int = POWER_DRAWS) -> dict:
    """{size: the chance that a record of `chains` chains says what `judged` (one claim's judgement in a larger
    record) says there}: whole chain vectors of the larger record drawn with replacement, `chains` at a time (every
    size of a chain together, so the sizes stay correlated), and judged by the rule itself (judge_means), so the
    estimate is the larger record's, not an effect that only held in a small one. A fixed generator: the same
    records give the same figure. Sizes without a complete judgement are left out."""
    sizes = [size for size, j in judged.items() if j.complete and j.chains]
    if not sizes:
        return {}
    frame = pd.DataFrame({size: pd.Series(judged[size].means, index=judged[size].chains) for size in sizes}).dropna()
    key = (tuple(sizes), frame.to_numpy().tobytes(), frame.shape, tuple(judged[size].verdict for size in sizes),
           chains, smallest, draws)
    if key not in _POWER:
        _POWER[key] = _power(frame, {size: judged[size].verdict for size in sizes}, chains, smallest, draws)
    return dict(_POWER[key])


def _power(frame: pd.DataFrame, verdicts: dict, chains: int, smallest: float | None, draws: int) -> dict:
    """power_at's simulation: `frame` one row per chain of the larger record, one column per size."""
    sizes = list(frame.columns)
    rng = np.random.default_rng(0)
    index = pd.Index([str(i) for i in range(chains)])
    tallies = dict.fromkeys(sizes, Tally(tuple(index), chains))
    agree = dict.fromkeys(sizes, 0)
    values = frame.to_numpy()
    for _ in range(draws):
        picked = values[rng.integers(0, len(values), chains)]
        again = judge_means({size: pd.Series(picked[:, j], index=index) for j, size in enumerate(sizes)}, tallies,
                            smallest=smallest)
        for size in sizes:
            agree[size] += again[size].verdict == verdicts[size]
    return {size: agree[size] / draws for size in sizes}


@dataclass(frozen=True)
class Evidence:
    """What one claim is judged on: per size, every run's difference at the tables' full precision (indexed by run) and
    the runs the record's configs planned there. A page keeps it beside the verdict, so a reader (or a test) can run
    the rule again on the very numbers, never on a rendered cell."""

    differences: dict
    runs: dict
    smallest: float | None = None   # S (claims.smallest_effect), in the differences' unit

    def judge(self, level: float = LEVEL) -> dict:
        return judge(self.differences, self.runs, level, self.smallest)
