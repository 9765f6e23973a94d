"""The equivalence verdict (docs/decisions.md, "The decisive record"): a claim that neither holds nor is reversed is
"no effect larger than S" when the 90% t interval of its chain means lies inside (-S, +S), otherwise "undecided";
checked against intervals computed here by hand (mean ± t(0.95, k-1) · SD / √k, the quantiles written out)."""

import math

import pandas as pd
import pytest

from subtask_induction.claims import (HOLDS, NO_EFFECT, REVERSED, TOO_FEW, UNDECIDED, Evidence, judge,
                                      smallest_effect)

# t quantiles at 0.95 (a two-sided 90% interval), from a table
T95 = {2: 2.919986, 7: 1.894579}


def by_hand(values):
    k = len(values)
    mean = sum(values) / k
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1))
    half = T95[k - 1] * sd / math.sqrt(k)
    return mean - half, mean + half


def chains(values):
    return pd.Series(values, index=[str(i) for i in range(len(values))], dtype=float)


INSIDE = [0.5, -0.4, 0.3, 0.1, -0.2, 0.6, 0.0, 0.2]          # 90%: [-0.09, +0.36]
STRADDLING = [2.5, -1.0, 3.0, 1.5, -2.0, 4.0, 0.0, 2.5]      # 90%: [-0.10, +2.72]: inside ±3, past ±2
WIDE = [20.0, -15.0, 18.0, -10.0, 25.0, -12.0, 22.0, -8.0]   # 90%: both ends far past ±3


@pytest.mark.parametrize("values, smallest, verdict", [
    (INSIDE, 3.0, NO_EFFECT),
    (INSIDE, 0.3, UNDECIDED),        # the same chains, a smaller S: the interval's top (+0.36) reaches past it
    (STRADDLING, 3.0, NO_EFFECT),
    (STRADDLING, 2.0, UNDECIDED),
    (WIDE, 3.0, UNDECIDED),
])
def test_the_verdict_reads_the_hand_computed_90_percent_interval_against_s(values, smallest, verdict):
    low, high = by_hand(values)
    assert (-smallest < low and high < smallest) == (verdict == NO_EFFECT)   # the cases are what they say
    judged = judge({"": chains(values)}, smallest=smallest)[""]
    assert judged.verdict == verdict
    assert judged.equivalence == pytest.approx((low, high), abs=1e-5)
    assert judged.smallest == smallest


def test_holds_and_reversed_are_kept_whatever_s_and_without_s_nothing_changes():
    up = [5.0, 4.0, 3.0, 1.0, 2.0, 6.0, 3.0, 2.0]
    assert judge({"": chains(up)}, smallest=3.0)[""].verdict == HOLDS
    assert judge({"": chains([-v for v in up])}, smallest=3.0)[""].verdict == REVERSED
    # a significant effect inside ±S still holds: the direction is decided, and the interval is beside it
    small = [0.2, 0.3, 0.25, 0.2, 0.3, 0.2, 0.25, 0.3]
    assert judge({"": chains(small)}, smallest=3.0)[""].verdict == HOLDS
    assert judge({"": chains(INSIDE)})[""].verdict == "no evidence either way"


def test_too_few_chains_bars_no_effect_even_where_their_interval_lies_inside_s():
    """Issue 79: too few precedes no effect (claims.PRECEDENCE); the code had let 3 chains read "no effect"."""
    tight = [0.1, -0.1, 0.05]   # 90% with 2 degrees of freedom: [-0.16, +0.19]
    low, high = by_hand(tight)
    assert -3 < low and high < 3
    assert judge({"": chains(tight)}, smallest=3.0)[""].verdict == TOO_FEW
    spread = [4.0, -3.0, 5.0]
    assert judge({"": chains(spread)}, smallest=3.0)[""].verdict == TOO_FEW


def test_each_size_is_decided_on_its_own_interval_and_evidence_carries_s():
    evidence = Evidence({"n = 0": chains(INSIDE), "n = 250": chains(WIDE)}, {}, smallest_effect())
    judged = evidence.judge()
    assert (judged["n = 0"].verdict, judged["n = 250"].verdict) == (NO_EFFECT, UNDECIDED)
    assert smallest_effect() == 3.0 and smallest_effect("shape_bias") == 5.0 and smallest_effect("cue_robustness") == 3.0
