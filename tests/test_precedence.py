"""The verdict rule's precedence is one table, as data (claims.PRECEDENCE; issue 79): judge takes its order from it,
each row is reached by an input made for it, and every page that explains the rule is rendered from it."""

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from subtask_induction import claims
from subtask_induction.claims import (AT_FLOOR, HOLDS, INCOMPLETE, NO_EFFECT, NO_EVIDENCE, PRECEDENCE, REVERSED,
                                      TOO_FEW, UNDECIDED, judge)
from subtask_induction.pages import __main__ as pages_main
from subtask_induction.pages import wording

REPO = Path(__file__).resolve().parents[1]


def chains(values):
    return pd.Series(values, index=[str(i) for i in range(len(values))], dtype=float)


TIGHT = [0.5, -0.4, 0.3, 0.1, -0.2, 0.6, 0.0, 0.2, -0.3, 0.1, 0.2, -0.1]   # 90% [-0.08, +0.25], far inside ±3
WIDE = [20.0, -15.0, 18.0, -10.0, 25.0, -12.0, 22.0, -8.0]
# one judge input per row: (differences, planned runs, S, headroom)
INPUTS = {
    INCOMPLETE: ({"": chains([1.0, 2.0])}, {"": ["0", "1", "2"]}, 3.0, None),
    HOLDS: ({"": chains([5.0, 4.0, 6.0, 3.0, 5.0, 4.0, 6.0, 5.0])}, None, 3.0, None),
    REVERSED: ({"": chains([-5.0, -4.0, -6.0, -3.0, -5.0, -4.0, -6.0, -5.0])}, None, 3.0, None),
    TOO_FEW: ({"": chains([0.1, -0.1, 0.05])}, None, 3.0, None),          # its interval lies inside ±S
    AT_FLOOR: ({"": chains(TIGHT)}, None, 3.0, {"": 1.5}),               # an arm 1.5 points above chance
    NO_EFFECT: ({"": chains(TIGHT)}, None, 3.0, {"": 40.0}),
    UNDECIDED: ({"": chains(WIDE)}, None, 3.0, None),
    NO_EVIDENCE: ({"": chains(WIDE)}, None, None, None),
}


def test_every_row_has_an_input_and_the_table_has_no_other_row():
    assert [row.verdict for row in PRECEDENCE] == list(INPUTS)


@pytest.mark.parametrize("verdict", list(INPUTS))
def test_each_row_s_input_gets_that_row_s_verdict(verdict):
    differences, runs, smallest, headroom = INPUTS[verdict]
    assert judge(differences, runs, smallest=smallest, headroom=headroom)[""].verdict == verdict


def test_judge_takes_its_order_from_the_table(monkeypatch):
    """Swapping two rows swaps which wins where both apply: 3 tight chains are too few (too few precedes no effect);
    with no effect first, the same chains read no effect."""
    differences, runs, smallest, headroom = INPUTS[TOO_FEW]
    order = list(PRECEDENCE)
    few, none = order.index(next(r for r in order if r.verdict == TOO_FEW)), order.index(
        next(r for r in order if r.verdict == NO_EFFECT))
    order[few], order[none] = order[none], order[few]
    monkeypatch.setattr(claims, "PRECEDENCE", tuple(order))
    assert judge(differences, runs, smallest=smallest, headroom={"": 40.0})[""].verdict == NO_EFFECT


def test_changing_a_row_changes_every_page_that_explains_the_rule(monkeypatch):
    marker = "WHEN THE MOON IS FULL"
    changed = tuple(replace(row, condition=marker) if row.verdict == UNDECIDED else row for row in PRECEDENCE)
    monkeypatch.setattr(claims, "PRECEDENCE", changed)
    glossary = pages_main.fill((REPO / "docs" / "glossary.md").read_text(), pages_main.glossary_blocks(), "glossary")
    decisions = pages_main.fill((REPO / "docs" / "decisions.md").read_text(), pages_main.decisions_blocks(),
                                "decisions")
    for page in (wording.readme_key(), wording.legend(), glossary, decisions):
        assert marker in page
    assert marker not in (REPO / "docs" / "glossary.md").read_text()   # the committed pages hold today's table


def test_holds_says_how_large():
    big = judge({"": chains([9.0, 8.0, 10.0, 9.5, 8.5, 9.0, 10.0, 9.0])}, smallest=3.0)[""]
    small = judge({"": chains([1.0, 1.2, 0.8, 1.1, 0.9, 1.0, 1.3, 0.7])}, smallest=3.0)[""]
    assert (big.verdict, big.beyond, big.said()) == (HOLDS, True, "holds, by more than 3 points")
    assert (small.verdict, small.beyond, small.said()) == (HOLDS, False, "holds, may be under 3 points")
    down = judge({"": chains([-9.0, -8.0, -10.0, -9.5, -8.5, -9.0, -10.0, -9.0])}, smallest=3.0)[""]
    assert down.said() == "reversed, by more than 3 points"


def test_a_verdict_one_chain_carries_is_fragile_and_names_it():
    # seven small gains and one chain far below: without chain 7 every chain is above 0
    values = [2.0, 2.5, 1.5, 3.0, 2.0, 2.5, 1.0, -4.0]
    judged = judge({"": chains(values)}, smallest=3.0)[""]
    assert judged.verdict != HOLDS
    assert ("7", HOLDS) in judged.fragile
    steady = judge({"": chains([5.0] * 12)}, smallest=3.0)[""]
    assert steady.fragile == ()


def test_equivalence_is_corrected_over_the_sizes_as_direction_is():
    """One size's equivalence p just under 0.05 alone: with two more sizes in the claim Holm triples it."""
    from subtask_induction.claims import equivalence_p

    values = [5.3, -6.7, 4.1, -1.9, 6.9, -5.5, 0.9, -2.3, 4.5, 2.5, -4.3, 0.1]
    p = equivalence_p(values, 3.0)
    assert 0.05 / 3 < p < 0.05   # decides alone, not after Holm over three sizes
    alone = judge({"n": chains(values)}, smallest=3.0)["n"]
    assert alone.verdict == NO_EFFECT and alone.equivalence_adjusted == pytest.approx(p)
    wide = chains([30.0, -25.0, 28.0, -20.0, 35.0, -22.0, 32.0, -18.0, 30.0, -25.0, 28.0, -20.0])
    three = judge({"n": chains(values), "m": wide, "k": wide}, smallest=3.0)["n"]
    assert three.equivalence_adjusted == pytest.approx(min(1.0, 3 * p))
    assert three.verdict == UNDECIDED
