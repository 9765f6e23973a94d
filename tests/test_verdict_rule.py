"""The verdict rule (claims.judge; docs/decisions.md, "The verdict rule") has the properties a reader relies on: no
effect seldom reads "holds", the verdict follows the sign and not the scale or the order of the chains, one more chain
that agrees never reverses it, and a missing run is "incomplete" whatever the others show."""

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


def test_no_effect_reads_holds_at_most_at_the_level_s_rate():
    """Null calibration by simulation: 2,000 claims of 8 chains drawn around 0 (normal and heavy-tailed)."""
    rng = np.random.default_rng(0)
    for draw in (lambda: rng.normal(0, 1, 8), lambda: rng.standard_t(2, 8)):
        holds = sum(judge({"": pd.Series(draw(), index=[str(c) for c in range(8)])})[""].verdict == HOLDS
                    for _ in range(2000))
        assert holds / 2000 <= LEVEL / 2 + 0.01   # two-sided at LEVEL: "holds" is the upper half


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
    assert not judged[where].complete and judged[where].verdict == ""
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
