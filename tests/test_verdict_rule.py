"""The verdict rule (claims.judge; docs/decisions.md, "The verdict rule") has the properties a reader relies on: no
effect seldom reads "holds", the verdict follows the sign and not the scale or the order of the chains, one more chain
that agrees never reverses it, and a missing run is "incomplete" whatever the others show."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subtask_induction.claims import (HOLDS, LEVEL, NO_EVIDENCE, REVERSED, TOO_FEW, holm, judge, sign_flip_p,
                                      smallest_p)

NONZERO = st.floats(0.01, 60, allow_nan=False).flatmap(lambda v: st.sampled_from([v, -v]))
CHAINS = st.lists(NONZERO, min_size=1, max_size=9)
SIZES = st.lists(CHAINS, min_size=1, max_size=3)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def claim(sizes, replicates: int = 1) -> dict:
    """Per size, one difference per run `chain/replicate` (each replicate the chain's value: the chain mean is it)."""
    return {f"n = {i}": pd.Series([v for v in values for _ in range(replicates)],
                                  index=[f"{c}/{r}" for c in range(len(values)) for r in range(replicates)])
            for i, values in enumerate(sizes)}


def verdicts(sizes, **kwargs) -> dict:
    return {where: j.verdict for where, j in judge(claim(sizes, **kwargs)).items()}


@FAST
@given(SIZES)
def test_negating_every_difference_swaps_holds_and_reversed(sizes):
    swap = {HOLDS: REVERSED, REVERSED: HOLDS, NO_EVIDENCE: NO_EVIDENCE, TOO_FEW: TOO_FEW}
    negated = [[-v for v in values] for values in sizes]
    assert verdicts(negated) == {where: swap[v] for where, v in verdicts(sizes).items()}


@FAST
@given(SIZES, st.floats(0.01, 100))
def test_scaling_every_difference_changes_no_verdict(sizes, scale):
    assert verdicts([[scale * v for v in values] for values in sizes]) == verdicts(sizes)


@FAST
@given(SIZES, st.randoms(use_true_random=False))
def test_permuting_the_chains_changes_nothing(sizes, random):
    shuffled = [random.sample(values, len(values)) for values in sizes]
    before, after = judge(claim(sizes)), judge(claim(shuffled))
    for where in before:
        assert after[where].verdict == before[where].verdict
        assert after[where].p == pytest.approx(before[where].p)
        assert after[where].mean == pytest.approx(before[where].mean)


@FAST
@given(SIZES, st.floats(0.01, 60))
def test_a_chain_that_agrees_never_turns_holds_into_reversed(sizes, extra):
    before = verdicts(sizes)
    for where, verdict in before.items():
        if verdict in (HOLDS, REVERSED):
            sign = 1 if verdict == HOLDS else -1
            index = int(where.split()[-1])
            grown = [values + [sign * extra] if i == index else values for i, values in enumerate(sizes)]
            assert verdicts(grown)[where] in (verdict, NO_EVIDENCE)
            assert verdicts(grown)[where] != {HOLDS: REVERSED, REVERSED: HOLDS}[verdict]


@FAST
@given(SIZES, st.integers(1, 3))
def test_replicates_inside_a_chain_do_not_count_as_chains(sizes, replicates):
    assert verdicts(sizes, replicates=replicates) == verdicts(sizes)


@FAST
@given(SIZES, st.data())
def test_a_missing_run_still_reads_incomplete(sizes, data):
    differences = claim(sizes)
    where = data.draw(st.sampled_from(sorted(differences)))
    hole = data.draw(st.sampled_from(list(differences[where].index)))
    differences[where] = differences[where].copy()
    differences[where][hole] = float("nan")
    judged = judge(differences)
    assert not judged[where].complete and judged[where].verdict == "incomplete"
    dropped = {w: d.drop(hole) if w == where else d for w, d in claim(sizes).items()}
    named = {w: list(d.index) for w, d in claim(sizes).items()}
    assert not judge(dropped, named)[where].complete


def test_too_few_chains_is_the_design_s_limit_not_the_data_s():
    """Unanimous chains decide exactly when m sizes x 2/2^k < LEVEL."""
    for chains in range(1, 10):
        for sizes in (1, 3):
            unanimous = [[float(c + 1) for c in range(chains)]] * sizes
            expected = HOLDS if sizes * smallest_p(chains) < LEVEL else TOO_FEW
            assert set(verdicts(unanimous).values()) == {expected}


def test_the_exact_test_and_holm_by_hand():
    assert sign_flip_p([1.0, 2.0, 3.0]) == pytest.approx(0.25)          # 2 of 8 patterns as extreme
    assert sign_flip_p([1.0, 2.0, -3.0]) == pytest.approx(1.0)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def patterns(magnitudes) -> np.ndarray:
    """Every sign pattern over `magnitudes` (2^k rows)."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(magnitudes))))
    return signs * np.asarray(magnitudes)


def brute_force_p(values) -> float:
    """The exact two-sided sign-flip p by enumeration: the share of sign patterns whose |mean| is at least the
    observed one (ties counted, to a relative 1e-12)."""
    values = np.asarray(values, dtype=float)
    means = np.abs(patterns(np.abs(values)).mean(axis=1))
    observed = abs(values.mean())
    return float(np.mean(means >= observed * (1 - 1e-12)))


def test_holds_and_reversed_each_at_most_half_the_level_under_a_symmetric_null():
    """Under a symmetric null every sign pattern of the chains' magnitudes is equally likely: over all 256 patterns of
    8 chains, judge itself says "holds" for 6 and "reversed" for 6 (6/256 = 0.023 each, two-sided at 0.05); a
    one-sided test would say holds for 12, a test counting only strictly more extreme patterns for more."""
    rng = np.random.default_rng(1)
    for magnitudes in (rng.uniform(0.5, 5, 8), rng.exponential(2, 8)):
        counts = {HOLDS: 0, REVERSED: 0, NO_EVIDENCE: 0, TOO_FEW: 0}
        for values in patterns(magnitudes):
            counts[judge({"": pd.Series(values, index=[str(c) for c in range(8)])})[""].verdict] += 1
        assert counts[HOLDS] / 256 <= LEVEL / 2 and counts[REVERSED] / 256 <= LEVEL / 2
        assert counts[HOLDS] == counts[REVERSED] == 6 and counts[TOO_FEW] == 0


def test_the_family_wise_rate_over_three_sizes_stays_under_the_level():
    """Three sizes of 8 chains, each sign pattern equally likely and independent: the chance that judge calls any
    size holds or reversed, computed over every combination of each size's 12 patterns that p < 0.05 alone (6 pairs
    of a pattern and its negation, weight 2 each) and one pattern standing for the other 244 (whose p >= 0.05 can be
    no size's rejection and sorts after every p that can). With Holm it is 1 - (1 - 4/256)^3 = 0.046; without it,
    0.134."""
    rng = np.random.default_rng(2)
    magnitudes = [rng.uniform(0.5, 5, 8) for _ in range(3)]
    classes = []
    for size in magnitudes:
        every = patterns(size)
        order = np.argsort(-np.abs(every.mean(axis=1)), kind="stable")
        extreme = [every[i] for i in order[:12] if every[i][0] > 0]          # one of each pair
        ordinary = every[order[-1]]
        assert len(extreme) == 6 and sign_flip_p(ordinary) >= LEVEL and sign_flip_p(every[order[12]]) >= LEVEL
        classes.append([(values, 2) for values in extreme] + [(ordinary, 244)])
    rejected = 0
    for combination in itertools.product(*classes):
        sizes = {f"n = {i}": pd.Series(values, index=[str(c) for c in range(8)])
                 for i, (values, _) in enumerate(combination)}
        if any(j.verdict in (HOLDS, REVERSED) for j in judge(sizes).values()):
            rejected += np.prod([weight for _, weight in combination])
    rate = rejected / 256 ** 3
    assert rate <= LEVEL
    assert rate == pytest.approx(1 - (1 - 4 / 256) ** 3)


def test_holm_s_correction_is_applied_across_a_claim_s_sizes():
    """One size with 6 unanimous chains (p = 1/32) holds alone, but not beside two sizes that show nothing
    (Holm: 3 x 1/32 > 0.05), and does beside two that hold as strongly."""
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert verdicts([six]) == {"n = 0": HOLDS}
    mixed = [1.0, -2.0, 3.0, -4.0, 5.0, -6.0]
    assert verdicts([six, mixed, mixed])["n = 0"] != HOLDS
    eight = [float(c + 1) for c in range(8)]
    assert verdicts([six, eight, eight])["n = 0"] == HOLDS


def test_too_few_is_judged_per_size_with_the_other_sizes_data_kept():
    """Sizes A and B with 8 unanimous chains and C with 6: C's Holm-adjusted p is 0.031, so C holds; the rule's
    "too few" is for a size that could not reach the level even with its own chains unanimous."""
    eight = [float(c + 1) for c in range(8)]
    six = [float(c + 1) for c in range(6)]
    judged = judge(claim([eight, eight, six]))
    assert judged["n = 2"].adjusted == pytest.approx(2 / 64)
    assert {where: j.verdict for where, j in judged.items()} == {"n = 0": HOLDS, "n = 1": HOLDS, "n = 2": HOLDS}
    # with 5 chains C could reach 2/32 = 0.0625 at best, whatever A and B show: too few
    assert judge(claim([eight, eight, six[:5]]))["n = 2"].verdict == TOO_FEW
    # and beside two sizes that show nothing, 6 unanimous chains could reach only 3 x 1/32: too few
    mixed = [1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0]
    assert judge(claim([mixed, mixed, six]))["n = 2"].verdict == TOO_FEW


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=2, max_size=10))
def test_the_exact_p_is_the_share_of_patterns_at_least_as_extreme(values):
    """Against brute force over all 2^k patterns, ties included (small integers make many)."""
    assert sign_flip_p(values) == pytest.approx(brute_force_p(values) if any(values) else 1.0)


def test_the_exact_test_stays_exact_past_thirteen_chains():
    """From 14 chains on, scipy's default of 9,999 resamples would turn the exact test random: the p must still be
    the enumeration's, identically on every call."""
    rng = np.random.default_rng(3)
    values = rng.normal(0.3, 1, 15)
    assert sign_flip_p(values) == pytest.approx(brute_force_p(values), abs=1e-12)
    assert sign_flip_p(values) == sign_flip_p(values)


def exact_p(values) -> float:
    """The sign-flip p in exact rational arithmetic (the floats as the exact fractions they are): no rounding, so a
    tie is a tie."""
    from fractions import Fraction

    exact = [Fraction(v) for v in values]
    observed = abs(sum(exact))
    extreme = sum(abs(sum(s * abs(v) for s, v in zip(signs, exact))) >= observed
                  for signs in itertools.product([1, -1], repeat=len(exact)))
    return extreme / 2 ** len(exact)


def test_the_p_does_not_depend_on_the_chains_order_when_large_differences_cancel():
    """Large differences that nearly cancel: every order of the chains gives the exact p (scipy's tolerance, scaled
    by the observed mean, lost such ties to rounding in some orders)."""
    values = [16.37, -16.37, 16.51, -16.46]   # scipy gave 0.875 in some orders, 1.0 in others
    expected = exact_p(values)
    assert {sign_flip_p(list(order)) for order in itertools.permutations(values)} == {expected}


def test_the_exact_test_enumerates_past_one_block_of_patterns():
    """19 chains: 2^19 patterns in eight blocks of 2^16, each block's signs of the last three chains its own (with
    two, a wrong sign for the last would cancel by symmetry)."""
    rng = np.random.default_rng(4)
    values = rng.normal(0.4, 1, 19)
    assert sign_flip_p(values) == pytest.approx(brute_force_p(values), abs=1e-12)


def test_ties_survive_rounding_at_any_scale():
    """The tie tolerance follows the values' scale: the same near-cancelling chains in millions give the same p in
    every order."""
    values = [v * 1e6 / 3 for v in (16.37, -16.37, 16.51, -16.46)]
    assert {sign_flip_p(list(order)) for order in itertools.permutations(values)} == {exact_p(values)}
