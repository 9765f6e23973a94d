"""The verdict rule's parts (claims.py) give the numbers the field's own tools give: McNemar's p is scipy's binomial
test, the t interval is mean ± t.ppf · SE, Holm is the hand example, the shape-bias bootstrap is the documented one
(2,000 draws of the conflict images from default_rng(0), the same draw for both models) with known answers on
hand-made cases, and the pages' texts (format_paired, Judgement.summary) are exact. Each test here kills mutants
that the rule's other tests let survive (benchmarks/mutate_claims.sh); the survivors no input can tell apart are
listed with their reasons in benchmarks/mutate_claims_equivalent.md."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from subtask_induction.claims import (HOLDS, NO_EVIDENCE, REVERSED, TOO_FEW, Evidence, Judgement, Tally, bits_correct,
                                      chain_means, correct_bits, could_not_decide, equivalence_exact_p, format_paired,
                                      holm, judge, mcnemar_p, paired_by_run, shape_bias_difference, sign_flip_greater,
                                      sign_flip_p, smallest_p, t_interval, tally)


def chains(values) -> pd.Series:
    """One run per chain, named by the chain alone."""
    return pd.Series([float(v) for v in values], index=[str(c) for c in range(len(values))])


# --- per-run differences and the items' bits -----------------------------------------------------------------------

def test_a_run_listed_twice_stays_twice_so_tally_names_it_duplicated():
    first = pd.Series([70.0, 71.0, 60.0], index=["0/0", "0/0", "1/0"])
    second = pd.Series([50.0, 55.0], index=["0/0", "1/0"])
    paired = paired_by_run(first, second)
    assert list(paired.index) == ["0/0", "0/0", "1/0"]
    counted = tally(paired)
    assert counted.duplicated == ("0/0",) and counted.missing == () and not counted.complete


def test_paired_differences_are_floats_for_integer_columns_and_for_no_runs():
    """Item counts are integers; the difference is still a float series (a NaN can join it), as is an empty one."""
    paired = paired_by_run(pd.Series([7, 5], index=["0/0", "1/0"]), pd.Series([3, 5], index=["0/0", "1/0"]))
    assert paired.dtype == np.float64 and list(paired) == [4.0, 0.0]
    empty = paired_by_run(pd.Series([], dtype=float), pd.Series([], dtype=float))
    assert empty.dtype == np.float64 and empty.empty


@pytest.mark.parametrize("count", [1, 5, 8, 13, 17])
def test_correct_bits_round_trip_gives_booleans_for_any_length(count):
    """Lengths that are not a multiple of 8 pad the last byte; the items come back as booleans, which the vision
    tables negate with `~` (cue robustness: not the texture)."""
    flags = np.random.default_rng(count).random(count) < 0.5
    back = bits_correct(correct_bits(flags), count)
    assert back.dtype == np.bool_ and back.tolist() == flags.tolist()
    assert (~back).tolist() == [not f for f in flags]


def test_correctness_given_as_zero_one_floats_reads_as_booleans():
    """Per-item correctness often arrives as floats (`(pred == y).float()`): correct_bits and mcnemar_p read it by
    truth value, as they read booleans."""
    first = np.array([1, 1, 1, 0, 1, 0, 0, 1, 1], dtype=bool)
    second = np.array([0, 1, 0, 0, 1, 1, 0, 0, 0], dtype=bool)
    assert correct_bits(first.astype(float)) == correct_bits(first)
    assert mcnemar_p(first.astype(float), second) == mcnemar_p(first, second)
    assert mcnemar_p(first, second.astype(float)) == mcnemar_p(first, second)
    assert mcnemar_p(first.astype(np.float32), second.astype(float)) == mcnemar_p(first, second)


# --- McNemar's exact test --------------------------------------------------------------------------------------------

def test_mcnemar_p_is_scipy_s_two_sided_binomial_test_on_the_discordant_items():
    """Every split of 0..9 items right only for the first and 0..9 only for the second (with concordant items
    beside them) against scipy.stats.binomtest; no discordant item is p = 1 exactly."""
    for only_first, only_second in itertools.product(range(10), repeat=2):
        first = [True] * only_first + [False] * only_second + [True, True, False, False, False]
        second = [False] * only_first + [True] * only_second + [True, True, False, False, False]
        discordant = only_first + only_second
        expected = 1.0 if discordant == 0 else stats.binomtest(only_first, discordant, 0.5).pvalue
        assert mcnemar_p(first, second) == pytest.approx(expected, rel=1e-12), (only_first, only_second)
        assert 0.0 < mcnemar_p(first, second) <= 1.0


def test_mcnemar_p_names_the_shapes_of_items_that_are_not_the_same():
    with pytest.raises(ValueError, match=r"^paired test on \(3,\) and \(4,\) items: not the same items$"):
        mcnemar_p([True, False, True], [True, False, True, True])


# --- the shape-bias bootstrap ----------------------------------------------------------------------------------------

def documented_bootstrap_p(first_shape, first_texture, second_shape, second_texture, rounds=2000, seed=0) -> float:
    """decisions.md: 2,000 draws of the conflict images with replacement from a fixed generator, the same draw for
    both models; a draw where either model decides nothing is dropped; two-sided p = twice the smaller tail, ties
    in both. Written round by round, independently of claims.py's vectorised form."""
    arrays = [np.asarray(a, dtype=bool) for a in (first_shape, first_texture, second_shape, second_texture)]
    n = len(arrays[0])
    kept = []
    for draw in np.random.default_rng(seed).integers(0, n, size=(rounds, n)):
        fs, ft, ss, st = (int(a[draw].sum()) for a in arrays)
        if fs + ft and ss + st:
            kept.append(fs / (fs + ft) - ss / (ss + st))
    kept = np.array(kept)
    return min(1.0, 2 * min(float(np.mean(kept <= 0)), float(np.mean(kept >= 0))))


# 10 conflict images, every one decided by both models: 4 by shape for the first model and texture for the second,
# 6 the other way round. Shape bias 40% against 60%: -20 points; a resample's difference is <= 0 when it draws at
# most 5 of the 4 images, >= 0 when at least 5: the p is 2 P(Binomial(10, 0.4) >= 5) = 0.734, up to bootstrap noise.
A = np.array([True] * 4 + [False] * 6)
BINOMIAL_CASE = (A, ~A, ~A, A)


def test_the_shape_bias_p_is_twice_the_smaller_binomial_tail():
    difference, p, counted = shape_bias_difference(*BINOMIAL_CASE)
    assert difference == pytest.approx(-20.0)
    assert p == pytest.approx(2 * stats.binom.sf(4, 10, 0.4), abs=0.05)
    assert counted == 0.0


def test_the_shape_bias_p_is_the_documented_bootstrap_on_every_call():
    """The same records give the same verdict: the p is the bootstrap of 2,000 draws from default_rng(0), exactly."""
    rng = np.random.default_rng(7)
    decided = rng.random((4, 30)) < 0.5
    for case in (BINOMIAL_CASE, tuple(decided)):
        p = shape_bias_difference(*case)[1]
        assert p == documented_bootstrap_p(*case)
        assert shape_bias_difference(*case) == shape_bias_difference(*case)


def test_a_shape_bias_difference_seen_in_every_resample_is_p_zero_and_counts():
    """Only image 0 of 3 is decided by either model (shape for the first, texture for the second): 100% against 0%,
    +100 points, and every resample that draws image 0 shows it."""
    only_first = np.array([True, False, False])
    nothing = np.zeros(3, dtype=bool)
    assert shape_bias_difference(only_first, nothing, nothing, only_first) == (100.0, 0.0, 100.0)
    assert shape_bias_difference(nothing, only_first, only_first, nothing) == (-100.0, 0.0, -100.0)


def test_two_models_with_the_same_bias_on_other_images_differ_by_nothing():
    """Both models decide only by shape (100%), the first on images 0 and 1, the second on image 2: every resample
    has the same bias for both, so the difference is 0 and p = 1 (not 2: both tails hold every resample)."""
    first = np.array([True, True, False, False])
    second = np.array([False, False, True, False])
    nothing = np.zeros(4, dtype=bool)
    assert shape_bias_difference(first, nothing, second, nothing) == (0.0, 1.0, 0.0)


def test_a_model_that_decides_no_conflict_image_has_no_shape_bias_and_nothing_counts():
    undecided = np.zeros(3, dtype=bool)
    difference, p, counted = shape_bias_difference(undecided, undecided, np.array([True, True, False]),
                                                   np.array([False, False, True]))
    assert math.isnan(difference) and p == 1.0 and counted == 0.0


def test_a_shape_bias_p_equal_to_the_level_is_not_beyond_noise():
    """Counted needs p strictly below the level, as McNemar's side does (p < PAIRED_LEVEL)."""
    difference, p, _ = shape_bias_difference(*BINOMIAL_CASE)
    assert shape_bias_difference(*BINOMIAL_CASE, level=p)[2] == 0.0
    assert shape_bias_difference(*BINOMIAL_CASE, level=p + 1e-9)[2] == difference


def test_shape_bias_decisions_are_read_by_truth_value():
    """Like correct_bits, the four decision masks are read as booleans: any nonzero entry is one decision (here an
    image's number, 1 to 10), never a weight."""
    marked = [np.where(mask, np.arange(1, 11), 0) for mask in BINOMIAL_CASE]
    assert shape_bias_difference(*marked) == shape_bias_difference(*BINOMIAL_CASE)


def test_shape_bias_on_different_numbers_of_images_is_refused_by_name():
    with pytest.raises(ValueError) as refused:
        shape_bias_difference([True], [False], [True, False], [False, True])
    assert str(refused.value) == "paired shape-bias test on different numbers of conflict images"


# --- the pages' texts ------------------------------------------------------------------------------------------------

def test_format_paired_text_stars_only_counted_differences_and_names_missing_runs():
    differences = pd.Series([4.44, 0.2, float("nan"), -1.26, 3.0])
    counted = pd.Series([4.44, 0.0, float("nan"), 1.0, -3.0])
    assert format_paired(differences, counted) == "+4.4*, +0.2, missing, -1.3*, +3.0*"


def test_summary_is_the_mean_over_chains_with_its_t_interval_in_the_unit():
    judged = judge({"n": chains([10, 20, 30])})["n"]
    assert judged.summary() == "+20.0 [-4.8, +44.8]"
    assert judged.summary(" pt") == "+20.0 pt [-4.8, +44.8]"
    assert judge({"n": chains([5])})["n"].summary() == "+5.0"


def test_summary_is_a_dash_where_there_is_nothing_to_summarise():
    """An incomplete tally (whatever its chains) and a tally with no chains both read `—`."""
    incomplete = judge({"n": chains([1, 2])}, {"n": ["0", "1", "2"]})["n"]
    assert incomplete.summary() == "—"
    with_chains = Judgement(Tally(("0", "1"), higher=1, missing=("1",)), chains=("0",), means=(1.0,), mean=1.0)
    assert with_chains.summary() == "—"
    without_chains = Judgement(Tally(("0",), higher=1))
    assert without_chains.complete and without_chains.summary() == "—"


# --- chain means, the t interval, Holm, the exact test's floor -------------------------------------------------------

def test_chain_means_group_replicates_by_chain_in_first_seen_order():
    """`10` sorts before `2` as text: the order is the runs', not a sort."""
    means = chain_means(pd.Series([1.0, 2.0, 3.0, 5.0, 4.0], index=["2/0", "10/0", "2/1", "1", "10/1"]))
    assert list(means.index) == ["2", "10", "1"]
    assert list(means) == [2.0, 3.0, 5.0]


def test_chain_means_name_the_runs_without_a_number():
    with pytest.raises(ValueError, match=r"^chain means over runs without a number: \['2/1'\]$"):
        chain_means(pd.Series([1.0, float("nan"), 2.0], index=["1/0", "2/1", "2/0"]))


@pytest.mark.parametrize("values", [[0.0, 2.0], [-1.0, 1.0], [1.0, 2.0, 4.0], [3.0, -1.0, 4.0, 1.0, 5.0, -9.0, 2.6]])
@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_the_t_interval_is_the_mean_plus_minus_t_quantile_times_the_standard_error(values, confidence):
    """From two chains on (one degree of freedom), against scipy.stats.t.ppf; [0, 2] has a standard error of 1."""
    values = np.asarray(values)
    half = stats.t.ppf((1 + confidence) / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    low, high = t_interval(values, confidence)
    assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half), rel=1e-12, abs=1e-12)


def test_the_t_interval_is_undefined_under_two_chains_and_a_point_where_they_agree():
    assert all(math.isnan(v) for v in t_interval([]) + t_interval([3.0]))
    assert t_interval([2.5, 2.5, 2.5]) == (2.5, 2.5)


def test_the_interval_and_the_exact_test_compute_in_double_precision():
    """Chain means handed over as float32 (a tensor's) are read as float64: float32 arithmetic would lose the small
    chains beside a large one (16777216 + 1 == 16777216 in float32)."""
    values = [16777216.0, 1.0, 1.0, -1.0]
    single = np.array(values, dtype=np.float32)
    assert t_interval(single) == t_interval(np.array(values))
    assert sign_flip_p(single) == sign_flip_p(np.array(values)) == 0.5


def test_holm_by_hand_and_capped_at_one():
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    assert holm([0.02, 0.9, 0.3]) == pytest.approx([0.06, 0.9, 0.6])


def test_smallest_p_is_the_exact_test_s_p_for_unanimous_chains_from_none_on():
    for k in range(9):
        assert smallest_p(k) == sign_flip_p([1.0] * k)


def test_a_size_whose_best_p_equals_the_level_cannot_decide():
    """Holds needs p strictly below the level: 5 unanimous chains give 1/16 at best, too few at level 1/16."""
    assert could_not_decide([0.9], 0, 5, level=1 / 16)
    assert not could_not_decide([0.9], 0, 5, level=1 / 16 + 1e-9)
    assert judge({"n": chains([1, 2, 3, 4, 5])}, level=1 / 16)["n"].verdict == TOO_FEW


# --- judge and Evidence ----------------------------------------------------------------------------------------------

def test_an_incomplete_size_does_not_stop_the_sizes_after_it_being_judged():
    judged = judge({"n = 1": chains([1.0]), "n = 2": chains([1, 2, 3, 4, 5, 6])}, {"n = 1": ["0", "1"]})
    assert list(judged) == ["n = 1", "n = 2"]
    assert not judged["n = 1"].complete and judged["n = 1"].verdict == "incomplete"
    assert judged["n = 2"].verdict == HOLDS and judged["n = 2"].adjusted == pytest.approx(1 / 32)


def test_an_adjusted_p_equal_to_the_level_is_no_evidence():
    """[1, 2, 3, 4, 5, -1]: 3 of 64 patterns as extreme on each side, p = 6/64; at that very level it is not below."""
    values = chains([1, 2, 3, 4, 5, -1])
    p = judge({"n": values})["n"].p
    assert p == pytest.approx(6 / 64)
    assert judge({"n": values}, level=p)["n"].verdict == NO_EVIDENCE
    assert judge({"n": values}, level=p + 1e-9)["n"].verdict == HOLDS


def test_holds_and_reversed_follow_the_sign_of_a_small_mean():
    """Differences under one point (a fraction of an accuracy point) hold as any others do."""
    small = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert judge({"n": chains(small)})["n"].verdict == HOLDS
    assert judge({"n": chains([-v for v in small])})["n"].verdict == REVERSED


def test_judge_and_evidence_pass_the_level_to_every_part_of_the_rule():
    """4 unanimous chains: p = 1/8, too few at 0.05 but decided (holds) at 0.2, the too-few check included."""
    four = {"n": chains([1, 2, 3, 4])}
    assert judge(four)["n"].verdict == TOO_FEW
    assert judge(four, level=0.2)["n"].verdict == HOLDS
    evidence = Evidence(four, {"n": ["0", "1", "2", "3"]})
    assert evidence.judge()["n"].verdict == TOO_FEW
    assert evidence.judge(level=0.2)["n"].verdict == HOLDS
    assert evidence.judge(0.2)["n"].verdict == HOLDS


def test_evidence_judges_the_planned_runs_not_the_index():
    """A planned run that the differences lack makes the size incomplete, whatever the others show."""
    evidence = Evidence({"n": chains([1, 2, 3, 4, 5, 6, 7])}, {"n": [str(c) for c in range(8)]})
    judged = evidence.judge()["n"]
    assert not judged.complete and judged.tally.missing == ("7",) and judged.verdict == "incomplete"
    assert judged.summary() == "—"


def test_evidence_judges_with_its_headroom():
    """Near-zero differences whose lower arm is 2 points above chance (S = 3): at floor, not "no effect"."""
    near = {"n": chains([0.5, -0.5, 0.0, 0.5, -0.5, 0.0, 0.5, 0.0])}
    runs = {"n": [str(c) for c in range(8)]}
    assert Evidence(near, runs, smallest=3.0).judge()["n"].verdict == "no effect larger than S"
    assert Evidence(near, runs, smallest=3.0, headroom={"n": 2.0}).judge()["n"].verdict == "at floor"


def test_a_holds_without_s_is_said_as_holds_alone():
    """With no S there is no test beyond S: the verdict is said without a size."""
    judged = judge({"n": chains([5.0, 6.0, 5.5, 6.5, 5.0, 6.0])})["n"]
    assert judged.verdict == HOLDS and judged.beyond is None and judged.said() == "holds"


def test_the_exact_p_does_not_depend_on_the_values_scale():
    """Differences given as fractions (a sum under one point) decide as the same differences in points do."""
    values = [0.01, 0.02, 0.015, 0.03, 0.01, 0.025, 0.02, -0.005]
    assert sign_flip_p(values) == sign_flip_p([100 * v for v in values]) < 0.05
    assert sign_flip_greater(values) == sign_flip_greater([100 * v for v in values]) < 0.05


def test_the_one_sided_exact_p_of_nothing_is_one():
    """No chains, or every chain exactly at the bound (S - mean = 0): no evidence in either direction."""
    assert sign_flip_greater([]) == 1.0 and sign_flip_greater([0.0, 0.0, 0.0]) == 1.0
    assert equivalence_exact_p([3.0] * 6, 3.0) == 1.0


def test_the_one_sided_exact_p_counts_a_tie_lost_to_rounding_in_any_order():
    """As the two-sided p (test_claims_batch.py): 100000.1 + 200000.2 - 300000.3 is 0 in decimals only; flipping the
    three gives the observed sum again, a tie counted in every order of the chains."""
    import independent_rule as plain

    values = [100000.1, 200000.2, -300000.3, 50000.0, 60000.0, 70000.0]
    orders = [values, values[::-1], values[3:] + values[:3], [values[i] for i in (2, 4, 0, 5, 1, 3)]]
    assert {sign_flip_greater(order) for order in orders} == {plain.exact_greater(values)}
