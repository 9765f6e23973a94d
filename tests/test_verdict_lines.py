"""The README's verdict lines never contradict a size (issue 70): a claim's group comes from its verdict at every size,
names every holds and every reversed, and never files a reversal under "no evidence either way" or "holds"."""

import re

from hypothesis import given
from hypothesis import strategies as st

from subtask_induction.claims import HOLDS, NO_EFFECT, NO_EVIDENCE, REVERSED, TOO_FEW, UNDECIDED, VERDICTS
from subtask_induction.pages import claims, readme

SIZE_VERDICTS = st.lists(st.sampled_from(VERDICTS), min_size=1, max_size=4)


def claim_with(words) -> claims.Claim:
    verdicts = tuple((f"n = {10 * i}", word) for i, word in enumerate(words))
    return claims.Claim("arithmetic", "default", "A claim", "", "", "default", verdicts=verdicts)


def said(group: str, where: str, size: str) -> str | None:
    """The verdict the line gives `size`: the uniform group's word, or the one `where` files it under."""
    uniform = {"Holds": HOLDS, "Reversed": REVERSED, "No evidence either way": NO_EVIDENCE,
               "Too few chains to decide": TOO_FEW, "No effect larger than S": NO_EFFECT,
               "Undecided at these chains": UNDECIDED, "At floor": "at floor"}
    if not where:
        return uniform.get(group)
    for part in where.split("; "):
        verdict, sizes = part.split(" at ", 1)
        if size in re.split(r", (?=n = )", sizes):
            return verdict
    return None


@given(SIZE_VERDICTS)
def test_every_size_s_verdict_is_on_the_line(words):
    claim = claim_with(words)
    group, where = readme.verdict_group(claim)
    assert group in readme.GROUPS
    for size, word in claim.verdicts:
        assert said(group, where, size) == word, (group, where)
    if REVERSED in words:
        assert group not in ("Holds", "Holds in part", "No evidence either way", "Too few chains to decide",
                             "No effect larger than S", "Undecided at these chains")
        assert "reversed" in (group + where).lower()
    if HOLDS in words:
        assert "holds" in (group + where).lower()


def test_the_issue_s_three_cases():
    assert readme.verdict_group(claim_with([NO_EVIDENCE, REVERSED, REVERSED])) == (
        "Reversed in part", "reversed at n = 10, n = 20; no evidence either way at n = 0")
    assert readme.verdict_group(claim_with([REVERSED, TOO_FEW]))[0] == "Reversed in part"
    assert readme.verdict_group(claim_with([REVERSED, HOLDS])) == (
        "Holds in part, reversed in part", "holds at n = 10; reversed at n = 0")


def test_no_effect_is_a_group_only_where_every_size_says_it_and_a_size_left_undecided_is_named():
    assert readme.verdict_group(claim_with([NO_EFFECT, NO_EFFECT])) == ("No effect larger than S", "")
    assert readme.verdict_group(claim_with([NO_EFFECT, TOO_FEW])) == (
        "Undecided at these chains", "no effect larger than S at n = 0; too few chains to decide at n = 10")
    assert readme.verdict_group(claim_with([NO_EFFECT, UNDECIDED])) == (
        "Undecided at these chains", "no effect larger than S at n = 0; undecided at n = 10")
    assert readme.verdict_group(claim_with([NO_EFFECT, HOLDS]))[0] == "Holds in part"
