"""What per-run differences can claim, for every family's comparisons tables and every page: the one verdict rule.

- `tally` counts the runs a comparison names (chain, or chain/replicate) and names those without one number (missing,
  NaN, listed twice): a claim is read only from a complete tally, otherwise it is "incomplete".
- `judge` is the rule over independent subnetworks (docs/decisions.md, "The verdict rule"): chain means, an exact
  sign-flip test, Holm over a claim's sizes, a t interval, and with the smallest effect that matters (S) the tests
  against S; the verdict is the first row of PRECEDENCE (data: the pages and docs/decisions.md render the same table)
  that a size meets; a verdict that one chain's absence changes is fragile, and names the chain.
- A run's own difference is marked `*` where it is beyond noise on the same test items (McNemar's exact test at
  PAIRED_LEVEL; shape bias by a paired bootstrap): which runs carried a claim, shown beside the verdict."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .rounding import fixed, percent


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
    return ", ".join("missing" if pd.isna(d) else f"{fixed(d, 1, sign=True)}" + ("*" if c != 0 else "")
                     for d, c in zip(differences, counted))


# The verdict rule over independent subnetworks (docs/decisions.md, "The verdict rule"). The unit is the chain: one
# base -> discovery -> transfer line, hence one subnetwork; a chain's replicates (transfer seeds over the same
# subnetwork) are averaged inside it first, because they are not independent of it. Over the chain means: an exact
# two-sided sign-flip permutation test of "the mean difference is 0" (every one of the 2^k sign patterns), Holm's
# step-down correction over the sizes (n) of one claim, at LEVEL family-wise; beside it a CONFIDENCE t interval of
# the mean over chains, which describes and does not decide. Which verdict a size gets is the first row of
# PRECEDENCE whose condition it meets: the order is data, so the code, the pages and docs/decisions.md read one table.
LEVEL = 0.05
CONFIDENCE = 0.95
# Raised whenever the same chain means could get another verdict (the pages name it; records' pages are compared only
# under one version); what decides a verdict is also a digest (rule_digest, RULE_DIGESTS), which keys the verdict files.
RULE_VERSION = 2
HOLDS, REVERSED, NO_EVIDENCE, TOO_FEW = "holds", "reversed", "no evidence either way", "too few chains to decide"
# With the smallest effect that matters (S): "no effect larger than S" when the two one-sided t tests put the mean
# inside (-S, +S) at LEVEL after Holm over the claim's sizes, as the direction is corrected; "at floor" where an arm
# scores less than S above chance (a difference of S could not show); otherwise "undecided" at its chains.
NO_EFFECT, UNDECIDED, AT_FLOOR = "no effect larger than S", "undecided", "at floor"
INCOMPLETE = "incomplete"   # a planned run without one number: wins over every verdict
# S in percentage points, fixed in docs/decisions.md before the decisive record: every accuracy (and cue-conflict
# robustness) 3 points, shape bias 5.
SMALLEST_EFFECT = {"shape_bias": 5.0}
ACCURACY_S = 3.0


def smallest_effect(metric: str = "accuracy") -> float:
    """S for a metric (percentage points): 5 for shape bias, 3 for every accuracy."""
    return SMALLEST_EFFECT.get(metric, ACCURACY_S)


@dataclass(frozen=True)
class Facts:
    """What the precedence table reads of one size: every test's outcome, each already corrected over the claim's
    sizes. `equivalence` and `floor` are NaN / False where no S was given."""

    complete: bool = True
    direction: float = 1.0      # Holm-adjusted exact sign-flip p of "mean 0"
    mean: float = 0.0
    too_few: bool = False       # even every chain on one side could not reach the level
    floor: bool = False         # an arm scores less than S above chance
    equivalence: float = float("nan")   # Holm-adjusted p of the two one-sided t tests (the larger of the two)
    smallest: bool = False      # S was given


@dataclass(frozen=True)
class Row:
    """One row of the precedence table: a verdict and the condition under which it is the verdict."""

    verdict: str
    condition: str
    applies: object = field(repr=False, compare=False, default=None)   # (Facts, level) -> bool


PRECEDENCE = (
    Row(INCOMPLETE, "a run the claim names has no single number (missing, NaN or listed twice)",
        lambda f, level: not f.complete),
    Row(HOLDS, "an exact sign-flip test over the chains puts the mean difference above 0 at p < 0.05, Holm-corrected "
               "over the claim's sizes", lambda f, level: f.direction < level and f.mean > 0),
    Row(REVERSED, "the same test puts it below 0", lambda f, level: f.direction < level and f.mean < 0),
    Row(TOO_FEW, "even every chain on one side could not reach p < 0.05 (the claim's other sizes kept)",
        lambda f, level: f.too_few),
    Row(AT_FLOOR, "an arm's mean is less than S above chance: neither learned enough for a difference of S to show",
        lambda f, level: f.floor),
    Row(NO_EFFECT, "the two one-sided t tests put the mean inside ±S (S, the smallest effect that matters) at p < 0.05, "
                   "Holm-corrected over the claim's sizes: its t interval at the corrected level (90% at one size, "
                   "wider where Holm corrects) lies inside ±S",
        lambda f, level: f.equivalence < level),
    Row(UNDECIDED, "none of the above, S given: more chains could decide it", lambda f, level: f.smallest),
    Row(NO_EVIDENCE, "none of the above, no S given", lambda f, level: True),
)
VERDICTS = tuple(row.verdict for row in PRECEDENCE if row.verdict != INCOMPLETE)
# A holds or reversed says how large: a one-sided t test of the mean beyond S in its direction, Holm over the sizes.
BEYOND_S, MAYBE_UNDER_S = "by more than S", "may be under S"
QUALIFIERS = ((BEYOND_S, "a one-sided t test puts the mean beyond S in the verdict's direction at p < 0.05, "
                         "Holm-corrected over every size of the claim (each tested in its own mean's direction, "
                         "whatever its verdict)"),
              (MAYBE_UNDER_S, "otherwise: the effect is not shown to reach S"))


def verdict_of(facts: Facts, level: float = LEVEL) -> str:
    """The first row of PRECEDENCE whose condition the size meets (read at each call: the table is the order)."""
    return next(row.verdict for row in PRECEDENCE if row.applies(facts, level))


def headroom(first, second, chance: float) -> float:
    """How far the lower arm scores above chance (points; each arm's values in points, one per run or chain): what
    the floor row of PRECEDENCE reads. NaN where an arm has no value."""
    arms = [np.asarray(arm, dtype=float) for arm in (first, second)]
    if any(not len(arm) for arm in arms):
        return float("nan")
    return float(min(arm.mean() for arm in arms)) - chance


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
HALF = 22   # the largest half enumerated: 44 chains; beyond, the patterns are counted on the values' grid


@functools.lru_cache(maxsize=None)
def sign_patterns(k: int) -> np.ndarray:
    """Every one of the 2^k sign patterns of k values, one per row (+1 / -1), made once per k."""
    if k > HALF:
        raise ValueError(f"the exact sign-flip test enumerates at most {2 * HALF} chains, not {2 * k}")
    patterns = (1 - 2 * ((np.arange(2 ** k)[:, None] >> np.arange(k)) & 1)).astype(float)
    patterns.flags.writeable = False
    return patterns


def _sums(magnitudes: np.ndarray) -> np.ndarray:
    """The signed sums of every sign pattern of `magnitudes`."""
    return sign_patterns(len(magnitudes)) @ magnitudes


def _at_least(magnitudes: np.ndarray, threshold: float) -> int:
    """How many of the 2^k sign patterns of `magnitudes` sum to at least `threshold`. Up to 44 values: every pattern of
    each half of the (sorted) magnitudes, one half's sums sorted and searched for each of the other's (independent of
    the chains' order). Beyond: counted over the grid the values lie on (on_grid), exactly, in time linear in k and in
    the grid's span."""
    if len(magnitudes) > 2 * HALF:
        return _at_least_on_grid(magnitudes, threshold)
    ordered = np.sort(np.abs(magnitudes))[::-1]
    half = len(ordered) // 2
    first, second = _sums(ordered[:half]), np.sort(_sums(ordered[half:]))
    return int((len(second) - np.searchsorted(second, threshold - first, side="left")).sum())


# A grid's finest step a value may need (its denominator), and the widest span of signed sums counted on it: an
# accuracy difference in points is a multiple of 100 / test items (100 / 1,280 = 5/64 on the world's cue-conflict
# images), a mean over r replicates of 1 / r of that, and S a multiple of 1 / 2.
GRID_DENOMINATOR = 10 ** 6
GRID_SPAN = 2 * 10 ** 7
LIMB = 62   # bits of a count each int64 limb holds (a sum of two stays below 2^63)
# How far from its grid point a value may lie and still be on the grid: the training steps store an accuracy as a
# float32 (half an ulp of 1 is 2^-24), so a difference of two in points is off its multiple of 100 / test items by up
# to 100 x 2^-23. The values are counted as the grid points they stand for; a value further off is on no grid.
GRID_NOISE = 100 * 2.0 ** -23


class OffGrid(ValueError):
    """Values beyond 44 chains that lie on no grid: the exact sign-flip test cannot count them (a shape bias, a
    ratio of two counts, has no common step)."""
    WORDS = f"the exact sign-flip test cannot count more than {2 * HALF} chains of values on no grid"


def _simplest_within(value: float, tolerance: float):
    """The fraction of smallest denominator among `value`'s continued-fraction convergents within `tolerance` of it."""
    from fractions import Fraction

    exact, rest = Fraction(value), Fraction(value)
    numerators, denominators = (0, 1), (1, 0)
    while True:
        whole = rest.numerator // rest.denominator
        numerators = (numerators[1], whole * numerators[1] + numerators[0])
        denominators = (denominators[1], whole * denominators[1] + denominators[0])
        convergent = Fraction(numerators[1], denominators[1])
        rest -= whole
        if abs(convergent - exact) <= tolerance or rest == 0:
            return convergent
        rest = 1 / rest


def on_grid(values, noise: float = GRID_NOISE) -> tuple[np.ndarray, int]:
    """`values` as integers on the coarsest grid that holds them all: (integers, denominator), each value within
    `noise` of its integer / denominator (GRID_NOISE: an accuracy stored as a float32). A value on no grid of
    denominator up to GRID_DENOMINATOR (or a grid whose sums span more than GRID_SPAN) cannot be counted exactly beyond
    44 chains: OffGrid says so."""
    values = [float(v) for v in values]
    fractions = [_simplest_within(v, noise) for v in values]
    denominator = math.lcm(*(f.denominator for f in fractions))
    integers = [int(f * denominator) for f in fractions]
    if denominator > GRID_DENOMINATOR or 2 * sum(abs(i) for i in integers) > GRID_SPAN:
        raise OffGrid(f"the exact sign-flip test counts more than {2 * HALF} chains on the grid their values lie on "
                      f"(an accuracy difference is a multiple of 100 / test items); these values lie on no grid "
                      f"of step 1/{GRID_DENOMINATOR} or finer whose sums span at most {GRID_SPAN:,} steps: "
                      f"{values[:3]}")
    return np.array(integers, dtype=np.int64), denominator


def _at_least_on_grid(magnitudes: np.ndarray, threshold: float) -> int:
    """_at_least beyond enumeration: the number of sign patterns at each signed sum, built value by value on the values'
    grid (on_grid) in integers of LIMB-bit int64 limbs (2^k outgrows one int64), then summed from the threshold up."""
    integers, denominator = on_grid(np.abs(magnitudes))
    if 2 * len(integers) * GRID_NOISE * denominator >= 1:   # the sums' noise could reach half a step
        raise OffGrid(f"{len(integers)} values on a grid of step 1/{denominator}: their sums' float32 noise could reach "
                      "half a step, so the exact sign-flip test cannot count them")
    total = int(integers.sum())
    limbs = len(integers) // LIMB + 2
    counts = np.zeros((limbs, 2 * total + 1), dtype=np.int64)
    counts[0, total] = 1
    mask = (1 << LIMB) - 1
    for a in (int(a) for a in integers):
        if a == 0:
            counts = 2 * counts
        else:
            moved = np.zeros_like(counts)
            moved[:, a:] += counts[:, :-a]
            moved[:, :-a] += counts[:, a:]
            counts = moved
        for limb in range(limbs - 1):   # carry each limb's overflow into the next
            counts[limb + 1] += counts[limb] >> LIMB
            counts[limb] &= mask
    # a threshold within the values' noise of a grid sum is that sum (the callers' tie margin TIE is far finer)
    at = threshold * denominator
    nearest = round(at)
    first = max((nearest if abs(at - nearest) <= len(integers) * GRID_NOISE * denominator + 1e-6 else math.ceil(at))
                + total, 0)
    return sum(int(counts[limb, first:].astype(object).sum()) << (LIMB * limb) for limb in range(limbs))


def sign_flip_p(values) -> float:
    """Exact two-sided sign-flip permutation p of "mean 0" over `values` (one per chain): the share of all 2^k sign
    patterns whose |sum| is at least the observed |sum| (ties within TIE counted)."""
    values = np.asarray(values, dtype=float)
    k = len(values)
    if k < 2 or not values.any():   # one value's two sign patterns are equally extreme
        return 1.0
    threshold = abs(values.sum()) - TIE * np.abs(values).sum()
    if threshold <= 0:
        return 1.0
    return min(1.0, 2 * _at_least(values, threshold) / 2 ** k)   # the patterns at -threshold mirror those at +


def sign_flip_greater(values) -> float:
    """Exact one-sided sign-flip p of "mean 0" against "mean above 0": the share of sign patterns whose sum is at
    least the observed sum (ties within TIE counted)."""
    values = np.asarray(values, dtype=float)
    if not len(values) or not values.any():
        return 1.0
    return _at_least(values, values.sum() - TIE * np.abs(values).sum()) / 2 ** len(values)


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


def equivalence_p(values, smallest: float) -> float:
    """The two one-sided t tests against ±S: the larger of their p (below the level exactly when the 1 - 2 level t
    interval lies inside (-S, +S))."""
    return float(equivalence_batch(np.asarray(values, dtype=float)[None, :], smallest)[0])


def equivalence_exact_p(values, smallest: float) -> float:
    """The exact sign-flip version of equivalence_p: one-sided sign-flip tests of the chains' differences from +S
    (mean below S) and from -S (mean above -S), the larger p."""
    values = np.asarray(values, dtype=float)
    return max(sign_flip_greater(smallest - values), sign_flip_greater(values + smallest))


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


ENUMERATED = 14   # up to this many chains a batch's sign patterns are enumerated at once (2^14 a row)


def sign_flip_batch(values: np.ndarray) -> np.ndarray:
    """sign_flip_p of every row of `values` (rows: records to judge, columns: chains): the same p, every pattern
    enumerated for all rows at once where there are few chains, row by row (sign_flip_p) where there are many."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    rows, k = values.shape
    if k > ENUMERATED or k < 2:
        return np.array([sign_flip_p(row) for row in values])
    magnitudes = np.abs(values)
    threshold = np.abs(values.sum(1)) - TIE * magnitudes.sum(1)
    extreme = (np.abs(magnitudes @ sign_patterns(k).T) >= threshold[:, None]).sum(1)
    return np.where((threshold > 0) & values.any(1), np.minimum(1.0, extreme / 2 ** k), 1.0)


def t_below_batch(values: np.ndarray, bound: float) -> np.ndarray:
    """t_below of every row: the one-sided t test's p of "mean >= bound" against "mean < bound"."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    k = values.shape[1]
    if k < 2:
        return np.ones(len(values))
    mean = values.mean(1)
    spread = values.std(1, ddof=1) / np.sqrt(k)
    from scipy.special import stdtr   # Student's t distribution function, as scipy.stats.t.cdf computes it

    with np.errstate(divide="ignore", invalid="ignore"):
        p = stdtr(k - 1, (mean - bound) / spread)
    return np.where(spread == 0, np.where(mean < bound, 0.0, 1.0), p)


def equivalence_batch(values: np.ndarray, smallest: float) -> np.ndarray:
    """equivalence_p of every row."""
    return np.maximum(t_below_batch(values, smallest), t_below_batch(-values, smallest))


def beyond_batch(values: np.ndarray, smallest: float) -> np.ndarray:
    """A one-sided t test of the mean beyond S in the direction of its sign (above +S, or below -S), every row (p 1
    where a row has no chains: a size a leave-one-out emptied)."""
    if values.shape[1] == 0:
        return np.ones(len(values))
    return np.where(values.mean(1) >= 0, t_below_batch(-values, -smallest), t_below_batch(values, -smallest))


def holm_batch(pvalues: np.ndarray) -> np.ndarray:
    """holm over the columns (a claim's sizes) of every row."""
    pvalues = np.atleast_2d(np.asarray(pvalues, dtype=float))
    m = pvalues.shape[1]
    order = np.argsort(pvalues, axis=1, kind="stable")
    ranked = np.take_along_axis(pvalues, order, 1) * (m - np.arange(m))
    ranked = np.maximum.accumulate(np.minimum(1.0, ranked), axis=1)
    out = np.empty_like(ranked)
    np.put_along_axis(out, order, ranked, 1)
    return out


def verdicts_batch(values: list[np.ndarray], level: float = LEVEL, smallest: float | None = None,
                   headroom: list | None = None, exact: bool = False) -> dict:
    """The rule's tests and verdicts for a batch of claims judged alike: `values[j]` the chain means of size j, one
    row per claim of the batch (its own chains as columns). Returns arrays of shape (rows, sizes): `p`, `adjusted`,
    `too_few`, `equivalence` (Holm), `exact` and `exact_verdict` (the exact equivalence version, Holm, and the verdict
    it would give; with exact=True), `equivalence_raw` (before Holm), `beyond` (Holm) and `verdict` (PRECEDENCE's, as objects). judge_means, the leave-one-out and the subsets all judge here."""
    rows = len(values[0])
    sizes = len(values)
    p = np.column_stack([sign_flip_batch(v) for v in values])
    adjusted = holm_batch(p)
    too_few = np.zeros((rows, sizes), dtype=bool)
    for j, v in enumerate(values):
        best = p.copy()
        best[:, j] = smallest_p(v.shape[1])
        too_few[:, j] = holm_batch(best)[:, j] >= level
    out = {"p": p, "adjusted": adjusted, "too_few": too_few}
    means = np.column_stack([v.mean(1) if v.shape[1] else np.full(rows, np.nan) for v in values])
    room = np.array([np.nan if headroom is None or headroom[j] is None else headroom[j] for j in range(sizes)])
    if smallest is not None:
        out["equivalence_raw"] = np.column_stack([equivalence_batch(v, smallest) for v in values])
        out["equivalence"] = holm_batch(out["equivalence_raw"])
        out["beyond"] = holm_batch(np.column_stack([beyond_batch(v, smallest) for v in values]))
        if exact:
            out["exact"] = holm_batch(np.column_stack(
                [[equivalence_exact_p(row, smallest) for row in v] for v in values]))
    verdict = np.empty((rows, sizes), dtype=object)
    exact_verdict = np.empty((rows, sizes), dtype=object)
    for i in range(rows):
        for j in range(sizes):
            facts = Facts(direction=adjusted[i, j], mean=means[i, j], too_few=too_few[i, j],
                          floor=smallest is not None and bool(room[j] < smallest),
                          equivalence=out["equivalence"][i, j] if smallest is not None else np.nan,
                          smallest=smallest is not None)
            verdict[i, j] = verdict_of(facts, level)
            if "exact" in out:   # the same facts, the exact equivalence test's p in place of the t tests'
                exact_verdict[i, j] = verdict_of(replace(facts, equivalence=out["exact"][i, j]), level)
    out["verdict"] = verdict
    if "exact" in out:
        out["exact_verdict"] = exact_verdict
    out["mean"] = means
    return out


@dataclass(frozen=True)
class Judgement:
    """One size's comparison under the rule: its tally (per run, with the pipeline's `*`), the chain means, their
    mean with its interval, the exact p and Holm's adjusted p over the claim's sizes, the tests against S, and the
    verdict (the first row of PRECEDENCE it meets). An incomplete tally has no verdict of the rule: `incomplete` wins."""

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
    equivalence: tuple = (float("nan"), float("nan"))   # the t interval the Holm-corrected two one-sided tests read
    equivalence_adjusted: float = float("nan")   # their p (the larger), Holm over the sizes
    equivalence_confidence: float = float("nan")   # that interval's confidence (equivalence_level): 90% at one size
    exact_verdict: str = ""          # the verdict the exact sign-flip equivalence test would give, where it differs
    beyond: bool | None = None       # holds / reversed: the mean beyond S by a one-sided test (Holm); else None
    headroom: float = float("nan")   # the lower arm's mean less chance, in points, where both were given
    fragile: tuple = ()              # (chain, the verdict without it) for each chain whose absence changes the verdict

    @property
    def complete(self) -> bool:
        return self.tally.complete

    def said(self) -> str:
        """The verdict in a table's words: S's value for "no effect larger than S" and for how large a holds or
        reversed is, the chains for "undecided"."""
        if self.verdict == NO_EFFECT:
            return f"no effect larger than {self.smallest:g} points"
        if self.verdict == UNDECIDED:
            return f"undecided at {len(self.chains)} chains"
        if self.verdict in (HOLDS, REVERSED) and self.beyond is not None:
            return f"{self.verdict}, {size_word(self.beyond, self.smallest)}"
        return self.verdict

    def read_interval(self) -> bool:
        """Whether the verdict read the equivalence test (no effect, undecided, at floor) and its interval exists."""
        return self.verdict in (NO_EFFECT, UNDECIDED, AT_FLOOR) and not np.isnan(self.equivalence[0])

    def equivalence_text(self) -> str:
        """`; 96.7% [-3.5, +2.8]`, the interval the corrected equivalence test read, where it read one, else ""."""
        if not self.read_interval():
            return ""
        return f"; {interval_text(*self.equivalence, self.equivalence_confidence)}"

    def summary(self, unit: str = "") -> str:
        """`+14.3 [+6.1, +22.5]` (the mean over chains with its interval, in the differences' unit)."""
        if not self.complete or not self.chains:
            return "—"
        if np.isnan(self.low):
            return f"{fixed(self.mean, 1, sign=True)}{unit}"
        return f"{fixed(self.mean, 1, sign=True)}{unit} [{fixed(self.low, 1, sign=True)}, {fixed(self.high, 1, sign=True)}]"


def size_word(beyond: bool, smallest: float) -> str:
    """`by more than 3 points` / `may be under 3 points`."""
    return (BEYOND_S if beyond else MAYBE_UNDER_S).replace("S", f"{smallest:g} points")


def judge(differences: dict, runs: dict | None = None, level: float = LEVEL, smallest: float | None = None,
          headroom: dict | None = None, beside: bool = True) -> dict:
    """The rule over one claim: {size (any label): per-run differences (first minus second, indexed by run)} ->
    {size: Judgement}. `runs` names each size's planned runs (default: the index's); a named run that is missing,
    NaN or duplicated makes that size incomplete (tally). With `smallest` (S, in the differences' unit) the tests
    against S are made; `headroom` ({size: the lower arm's mean less chance, same unit}) lets a size read "at floor".
    The verdict is PRECEDENCE's (judge_means); beside=False makes the verdicts alone, without what a page shows beside
    them (the leave-one-chain-out and the exact equivalence test): a judgement made only for its verdicts, as a page's
    "without chain 24" or a pooled record's, needs neither."""
    runs = runs or {}
    tallies = {size: tally(difference, runs.get(size)) for size, difference in differences.items()}
    means = {}
    for size, difference in differences.items():
        counted = tallies[size]
        if counted.complete:
            means[size] = chain_means(difference[[run in set(counted.runs) for run in difference.index]])
    judged = judge_means(means, tallies, level, smallest, headroom, beside)
    return {size: judged.get(size, Judgement(tallies[size], verdict=INCOMPLETE)) for size in differences}


def judge_means(means: dict, tallies: dict, level: float = LEVEL, smallest: float | None = None,
                headroom: dict | None = None, beside: bool = True) -> dict:
    """judge's second half, on chain means: {size: one mean per chain (a Series indexed by chain)} with each size's
    complete tally -> {size: Judgement}. Per size the exact sign-flip p, and with S the equivalence p (t, and its exact
    version beside) and the p beyond S; each family of p corrected by Holm over the sizes; the verdict from
    PRECEDENCE (verdicts_batch). With `beside`, every chain is left out once (from every size) and the claim judged
    again: a size whose verdict then changes is fragile, and names the chain; and the exact equivalence test's verdict
    is kept where it differs."""
    sizes = list(means)
    if not sizes:
        return {}
    headroom = headroom or {}
    rooms = [headroom.get(size) for size in sizes]
    values = [means[size].to_numpy(dtype=float) for size in sizes]
    tested = verdicts_batch([v[None, :] for v in values], level, smallest, rooms, exact=beside and smallest is not None)
    out = {}
    for j, size in enumerate(sizes):
        v = values[j]
        low, high = t_interval(v)
        verdict = tested["verdict"][0, j]
        judgement = Judgement(tallies[size], tuple(means[size].index), tuple(float(x) for x in v), float(v.mean()),
                              low, high, float(tested["p"][0, j]), float(tested["adjusted"][0, j]), verdict,
                              headroom=float("nan") if rooms[j] is None else float(rooms[j]))
        if smallest is not None:
            other = tested["exact_verdict"][0, j] if "exact_verdict" in tested else verdict
            confidence = equivalence_level(tested["equivalence_raw"][0, j], tested["equivalence"][0, j], level)
            judgement = replace(judgement, smallest=float(smallest), equivalence=t_interval(v, confidence),
                                equivalence_confidence=confidence,
                                equivalence_adjusted=float(tested["equivalence"][0, j]),
                                exact_verdict=other if other != verdict else "",
                                beyond=bool(tested["beyond"][0, j] < level) if verdict in (HOLDS, REVERSED) else None)
        out[size] = judgement
    if beside:
        changed = _fragile(means, level, smallest, rooms, [out[size].verdict for size in sizes])
        out = {size: replace(j, fragile=tuple(changed.get(size, ()))) for size, j in out.items()}
    return out


def _fragile(means: dict, level: float, smallest: float | None, rooms: list, verdicts: list) -> dict:
    """{size: ((chain, verdict without it), ...)}: each chain left out of every size once, the claim judged again
    (one batch where every size has the same chains)."""
    sizes = list(means)
    chains = list(dict.fromkeys(chain for m in means.values() for chain in m.index))
    same = all(list(means[size].index) == chains for size in sizes)
    if same and len(chains) > 1:
        keep = ~np.eye(len(chains), dtype=bool)
        batches = [[np.stack([means[size].to_numpy(dtype=float)[row] for row in keep]) for size in sizes]]
        again = verdicts_batch(batches[0], level, smallest, rooms)["verdict"]
    else:
        rows = []
        for chain in chains:
            fewer = [means[size].drop(chain).to_numpy(dtype=float) if chain in means[size].index
                     else means[size].to_numpy(dtype=float) for size in sizes]
            # a size this chain alone made is left with none: the rule judges it (too few chains), never "incomplete"
            rows.append(verdicts_batch([v[None, :] for v in fewer], level, smallest, rooms)["verdict"][0])
        again = np.array(rows, dtype=object).reshape(len(chains), len(sizes))
    changed: dict = {}
    for i, chain in enumerate(chains):
        for j, size in enumerate(sizes):
            if again[i, j] != verdicts[j]:
                changed.setdefault(size, []).append((str(chain), again[i, j]))
    return changed


def equivalence_level(raw: float, adjusted: float, level: float = LEVEL) -> float:
    """The confidence of the t interval the Holm-corrected equivalence test reads: the two one-sided tests' p is below
    γ exactly when the 1 - 2γ interval lies inside ±S, and Holm multiplies a size's p by adjusted / raw, so the size
    reads no effect exactly when its interval at γ = level · raw / adjusted does (90% at one size; wider with more)."""
    if not (raw > 0 and adjusted > 0):
        return 1 - 2 * level
    return 1 - 2 * level * raw / adjusted


def interval_text(low: float, high: float, confidence: float = 1 - 2 * LEVEL) -> str:
    """The equivalence test's interval as every page writes it: `90% [-0.6, +5.1]`, `96.7% [-3.5, +2.8]`."""
    share = percent(confidence, 0) if round(100 * confidence, 6) == round(100 * confidence) else percent(confidence, 1)
    return f"{share} [{fixed(low, 1, sign=True)}, {fixed(high, 1, sign=True)}]"


# The share of smaller records that say what a larger one says: every subset of `chains` of its chains (without
# replacement) judged by the rule itself, enumerated where there are at most SUBSETS_EXACT, else SUBSETS_DRAWN drawn
# (a standard error of at most one point). Only a decided verdict (holds, reversed, no effect larger than S) has a
# share: an undecided one says nothing a smaller record could repeat.
SUBSETS_EXACT = 5000
SUBSETS_DRAWN = 2500
SHARED_VERDICTS = (HOLDS, REVERSED, NO_EFFECT)


def subset_share(judged: dict, chains: int, smallest: float | None = None, headroom: dict | None = None,
                 level: float = LEVEL) -> dict:
    """{size: the share of the record's `chains`-chain subsets whose verdict there equals `judged`'s}, for the sizes
    whose verdict is decided (SHARED_VERDICTS); every size of a subset judged together (the same chains), so Holm
    runs over the same sizes as in the whole record. {} where the record has no more than `chains` chains."""
    sizes = [size for size, j in judged.items() if j.complete and j.chains]
    wanted = [size for size in sizes if judged[size].verdict in SHARED_VERDICTS]
    if not wanted:
        return {}
    frame = pd.DataFrame({size: pd.Series(judged[size].means, index=judged[size].chains) for size in sizes}).dropna()
    total = len(frame)
    if total <= chains:
        return {}
    if math.comb(total, chains) <= SUBSETS_EXACT:
        subsets = list(itertools.combinations(range(total), chains))
    else:
        from .runtime import derive_seed   # torch comes with it: only a large record's share pays for it

        rng = np.random.default_rng(derive_seed("subset share", total, chains))
        subsets = [np.sort(rng.choice(total, chains, replace=False)) for _ in range(SUBSETS_DRAWN)]
    table = frame.to_numpy()
    picked = table[np.array([list(subset) for subset in subsets])]   # (subsets, chains, sizes)
    headroom = headroom or {}
    again = verdicts_batch([picked[:, :, j] for j in range(len(sizes))], level, smallest,
                           [headroom.get(size) for size in sizes])["verdict"]
    return {size: float(np.mean(again[:, sizes.index(size)] == judged[size].verdict)) for size in wanted}


@dataclass(frozen=True)
class Evidence:
    """What one claim is judged on: per size, every run's difference at the tables' full precision (indexed by run),
    the runs the record's configs planned there, S, and where an accuracy has a chance level, each size's headroom
    (the lower arm's mean less chance). A page keeps it beside the verdict, so a reader (or a test) can run the rule
    again on the very numbers, never on a rendered cell."""

    differences: dict
    runs: dict
    smallest: float | None = None   # S (claims.smallest_effect), in the differences' unit
    headroom: dict | None = None    # {size: the lower arm's mean less chance}, same unit; None where no chance applies

    def judge(self, level: float = LEVEL) -> dict:
        """The rule on this evidence, judged once per level (a page asks it again for each place it shows it; the
        Judgements are frozen, so the same ones can be handed out)."""
        judged = self.__dict__.setdefault("_judged", {})   # frozen: only __setattr__ is barred
        if level not in judged:
            judged[level] = judge(self.differences, self.runs, level, self.smallest, self.headroom)
        return judged[level]


# What decides a verdict, as data a digest is taken of (rule_digest): the rule's constants, and its verdicts, tests and
# subset shares on a fixed set of claims made here (a grid of 0.5 points; sizes of 6 to 16 chains, with and without S,
# one arm near floor), so a change of the code that moves any of them changes the digest too.
def _battery() -> list[tuple[dict, dict]]:
    rng = np.random.default_rng(89)
    def chains(k, centre, spread):   # noqa: E306
        return pd.Series(np.round(rng.normal(centre, spread, k) * 2) / 2, index=[str(c) for c in range(k)])
    return [({"n = 0": chains(10, 0.2, 2.0), "n = 250": chains(10, 6.0, 4.0), "n = 750": chains(10, -4.5, 3.0)},
             {"smallest": 3.0}),
            ({"": chains(6, 1.0, 1.5)}, {"smallest": 3.0}),
            ({"": chains(16, 2.0, 3.0)}, {"smallest": 3.0, "headroom": {"": 2.0}}),
            ({"a": chains(16, 4.0, 3.0), "b": chains(16, 0.5, 1.0)}, {"smallest": 3.0}),
            ({"": chains(8, 2.5, 2.0)}, {})]


def _rule_constants() -> str:
    """The constants that decide a verdict (the precedence table's order, not its words: wording is not deciding)."""
    return repr((LEVEL, CONFIDENCE, TIE, HALF, ACCURACY_S, sorted(SMALLEST_EFFECT.items()),
                 [row.verdict for row in PRECEDENCE], SUBSETS_EXACT, SUBSETS_DRAWN, SHARED_VERDICTS))


@functools.lru_cache(maxsize=8)
def _digest_of(constants: str) -> str:
    import hashlib
    import json

    decided = []
    for differences, settings in _battery():
        judged = judge(differences, smallest=settings.get("smallest"), headroom=settings.get("headroom"),
                       beside=False)
        shares = subset_share(judged, 8, settings.get("smallest"), settings.get("headroom"))
        decided.append({where: [j.verdict, round(j.p, 12), round(j.adjusted, 12),
                                None if np.isnan(j.equivalence_adjusted) else round(j.equivalence_adjusted, 12),
                                j.beyond, shares.get(where)] for where, j in judged.items()})
    body = json.dumps({"constants": constants, "decided": decided}, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:12]


def rule_digest() -> str:
    """A digest of what decides the rule's verdicts: its constants (the level, S, the precedence table, the subsets'
    counts, ...) and what it makes of a fixed set of claims (verdicts, p before and after Holm, the equivalence test's
    p, the 8-chain subsets' shares). The verdict files are keyed by it, so a change of any of these recomputes every
    stored share; RULE_DIGESTS holds it for each hand-numbered RULE_VERSION the pages name."""
    return _digest_of(_rule_constants())


# The digest of each RULE_VERSION (tests/test_rule_closed.py: today's must be RULE_VERSION's, so a change of what decides
# a verdict cannot keep the pages' version number): version 2 as b1f8476 computed its battery, and as today does.
RULE_DIGESTS = {2: "11c4fa7f702e"}
