"""The rule closed (issue 89): the exact sign-flip test at any number of chains, one rounding rule, the leave-one-out
judged by the rule, tables compared by their numbers."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from subtask_induction.claims import HALF, _at_least, _at_least_on_grid, on_grid, sign_flip_greater, sign_flip_p


def halves_count(values, threshold):
    """The count by halves (the enumeration the rule uses up to 44 chains), whatever _at_least does beyond."""
    from subtask_induction.claims import _sums

    ordered = np.sort(np.abs(values))[::-1]
    half = len(ordered) // 2
    first, second = _sums(ordered[:half]), np.sort(_sums(ordered[half:]))
    return int((len(second) - np.searchsorted(second, threshold - first, side="left")).sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-150, 150), min_size=2, max_size=2 * HALF), st.sampled_from([0.2, 0.1, 5 / 64, 1 / 3]),
       st.floats(-3, 3))
def test_the_grid_count_equals_the_enumeration_up_to_44_chains(units, step, shift):
    values = np.array(units) * step
    for threshold in (abs(values.sum()) - 1e-9 * np.abs(values).sum(), values.sum() - 1e-9 * np.abs(values).sum(),
                      round(shift / step) * step - 1e-12):
        assert _at_least_on_grid(values, threshold) == halves_count(values, threshold)


def test_a_p_beyond_44_chains_is_exact():
    """100 chains of one value each: the patterns at least as extreme are a binomial tail, counted exactly."""
    k = 100
    for units, kept in ((np.full(k, 2), 100), (np.r_[np.full(60, 2), np.full(40, -2)], 20)):
        values = units * 0.1
        expected = sum(math.comb(k, j) for j in range(k + 1) if abs(2 * j - k) >= kept)
        assert sign_flip_p(values) == pytest.approx(expected / 2 ** k, rel=1e-15)
        assert _at_least(values, abs(values.sum()) - 1e-9 * np.abs(values).sum()) * 2 == expected
    one_sided = sign_flip_greater(np.full(k, 0.2))
    assert one_sided == 2.0 ** -k   # one pattern of 2^100: beyond every float count's reach


def test_a_difference_on_no_grid_is_named_beyond_44_chains():
    values = np.random.default_rng(0).normal(size=50)
    with pytest.raises(ValueError, match="no grid"):
        sign_flip_p(values)
    assert on_grid([0.2, -0.4, 12.45])[1] == 20


def test_accuracies_stored_as_float32_are_counted_on_their_grid_beyond_44_chains():
    """The training steps store an accuracy as a float32: over 48 chains of 800 test items the differences in points
    are multiples of 1/8 off by float32 rounding, and their p is the p of the grid values they stand for."""
    rng = np.random.default_rng(3)
    first, second = (rng.integers(300, 700, 48) / 800 for _ in range(2))
    stored = [np.float32(a).item() for a in first], [np.float32(b).item() for b in second]
    noisy = 100 * (np.array(stored[0]) - np.array(stored[1]))
    exact = 100 * (first - second)
    assert not np.array_equal(noisy, exact) and on_grid(np.abs(noisy))[1] in (1, 2, 4, 8)
    assert sign_flip_p(noisy) == sign_flip_p(exact) == sign_flip_p(np.round(exact * 8) / 8)
    assert sign_flip_greater(noisy + 3.0) == sign_flip_greater(exact + 3.0)


def test_a_ratio_beyond_44_chains_is_off_grid_and_named():
    """A shape bias (shape / (shape + texture) answers) has no common step: beyond 44 chains the exact test refuses."""
    from subtask_induction.claims import OffGrid

    rng = np.random.default_rng(4)
    shape, texture = rng.integers(20, 200, 48), rng.integers(20, 200, 48)
    with pytest.raises(OffGrid, match="no grid"):
        sign_flip_p(100 * (shape / (shape + texture) - 0.5))


def test_a_size_a_leave_one_out_empties_is_judged_and_an_unchanged_verdict_is_not_fragile():
    """Leaving out the one chain of a size leaves it no chain: the rule judges it (too few chains), and a size whose
    verdict does not change (here every size: the other size never had that chain) is not fragile."""
    import pandas as pd

    from subtask_induction.claims import INCOMPLETE, judge

    strong = pd.Series([6.0, 7.5, 5.2, 8.1, 6.6, 7.0, 5.9, 6.3, 7.7, 6.8], index=[str(c) for c in range(1, 11)])
    lone = pd.Series([4.0], index=["11"])
    judged = judge({"n = 0": strong, "n = 250": lone}, smallest=3.0)
    assert judged["n = 0"].verdict == "holds" and judged["n = 250"].verdict == "too few chains to decide"
    assert judged["n = 0"].fragile == () and judged["n = 250"].fragile == ()
    assert INCOMPLETE not in {verdict for j in judged.values() for _, verdict in j.fragile}


def test_same_tables_compares_numbers_never_a_verdicts_words(tmp_path):
    """A rerun whose numbers equal the record's is the same tables though a page's cells word a verdict otherwise (a
    rule version); a number that differs is named."""
    from types import SimpleNamespace

    import pandas as pd

    from subtask_induction.pages.run_records import different_tables

    record = tmp_path / "record" / "vision"
    run = tmp_path / "run" / "results" / "vision" / "summary"
    for folder in (record, run):
        folder.mkdir(parents=True)
        pd.DataFrame({"model": ["si", "base"], "chain": [16, 16], "pooled_accuracy": [0.2, 0.14],
                      "seconds": [10.0, 12.0]}).to_csv(folder / "chains.csv", index=False)
    for folder, word in ((record, "holds"), (run, "holds, by more than 3 points")):
        pd.DataFrame({"table": [0], "heading": [""], "row": [0], "column": [4], "name": ["verdict"],
                      "cell": [word]}).to_csv(folder / "comparisons.tables.csv", index=False)
    stored = SimpleNamespace(folder=tmp_path / "record")
    assert different_tables(tmp_path / "run", stored) == []
    frame = pd.read_csv(run / "chains.csv")
    frame.loc[0, "pooled_accuracy"] = 0.21
    frame.to_csv(run / "chains.csv", index=False)
    assert different_tables(tmp_path / "run", stored) == ["vision/chains.csv: columns ['pooled_accuracy']"]


@pytest.mark.parametrize("value, digits, sign, printed", [
    (-0.35, 1, True, "-0.4"), (12.45, 1, True, "+12.5"), (0.25, 1, False, "0.3"), (-2.5, 0, False, "-3"),
    (0.125, 2, False, "0.13"), (2.675, 2, False, "2.68"), (-0.04, 1, True, "-0.0"), (3.0, 1, True, "+3.0")])
def test_one_rounding_rule_rounds_an_exact_half_away_from_zero(value, digits, sign, printed):
    from subtask_induction.rounding import fixed

    assert fixed(value, digits, sign) == printed


def test_a_mean_that_is_an_exact_half_prints_by_the_rule_on_the_pages():
    """A claim whose chains' mean is +12.45 (a half of the grid's 0.1) and one at -0.35 print +12.5 and -0.4, as every
    other number the pages print (the judgement's summary, the first screen's table)."""
    import pandas as pd

    from subtask_induction.claims import judge

    up = pd.Series([12.4, 12.5], index=["1", "2"])
    down = pd.Series([-0.3, -0.4], index=["1", "2"])
    judged = judge({"n = 250": up, "n = 0": down})
    assert judged["n = 250"].summary().startswith("+12.5 [")
    assert judged["n = 0"].summary().startswith("-0.4 [")


def test_no_number_is_printed_by_a_format_spec_of_its_own():
    """Every fixed-point or percent number the package prints goes through rounding.fixed / percent."""
    import re

    from harness import REPO

    spec = re.compile(r":\+?\.\d[f%]\}")
    package = sorted(path for path in (REPO / "workflow/subtask_induction").rglob("*.py") if path.name != "rounding.py")
    found = [f"{path.relative_to(REPO)}:{i}" for path in package
             for i, line in enumerate(path.read_text().splitlines(), 1) if spec.search(line)]
    assert found == []


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(-40, 40), min_size=2, max_size=9), min_size=1, max_size=3))
def test_the_interval_beside_a_verdict_is_the_one_its_corrected_test_reads(sizes):
    """No effect larger than S exactly when the printed interval lies inside ±S; an undecided size's interval reaches
    past it (the interval at Holm's level for that size, not the uncorrected 90%)."""
    import pandas as pd

    from subtask_induction.claims import NO_EFFECT, UNDECIDED, judge

    differences = {f"n = {i}": pd.Series(np.array(units) * 0.25, index=[str(c) for c in range(len(units))])
                   for i, units in enumerate(sizes)}
    for j in judge(differences, smallest=3.0).values():
        if j.verdict in (NO_EFFECT, UNDECIDED) and np.isfinite(j.equivalence[0]):
            inside = -3.0 < j.equivalence[0] and j.equivalence[1] < 3.0
            assert inside == (j.verdict == NO_EFFECT), (j.equivalence, j.equivalence_confidence, j.verdict)
            assert j.equivalence_confidence >= 0.9 - 1e-12
            if len(sizes) == 1:
                assert j.equivalence_confidence == pytest.approx(0.9)


def test_si_against_sampled_at_n_0_prints_the_interval_holm_reads():
    """The decisive record's SI − sampled at n = 0 printed "90% [-2.8, +2.1]" and called it past ±3; the interval its
    Holm-corrected test reads is wider and does reach past ±3."""
    from harness import REPO
    from subtask_induction.pages import claims as page_claims, run_records

    decisive = run_records.load("decisive", REPO / "docs/data")
    claim = next(c for c in page_claims.decisive(decisive) if c.id == "arithmetic/si-sampled")
    j = claim.evidence.judge()["n = 0"]
    assert j.verdict == "undecided" and j.equivalence_confidence > 0.9
    assert j.equivalence[0] <= -3.0 or j.equivalence[1] >= 3.0
    assert j.equivalence_text().startswith(f"; {round(100 * j.equivalence_confidence, 1)}% [")


def test_the_pages_rule_version_is_the_rule_that_decides():
    """The hand-numbered version the pages name has the digest of what decides today's verdicts: a change that moves
    a verdict, a p or a share of the fixed claims fails here until the version is raised and its digest recorded."""
    from subtask_induction.claims import RULE_DIGESTS, RULE_VERSION, rule_digest

    assert RULE_DIGESTS[RULE_VERSION] == rule_digest()


def shares_made(monkeypatch):
    """The verdict files' shares for one decided claim, counting how often subset_share computes them."""
    from subtask_induction.pages import verdicts

    made = []
    real = verdicts.subset_share
    monkeypatch.setattr(verdicts, "subset_share", lambda *a, **k: made.append(1) or real(*a, **k))
    return made


def test_a_changed_rule_recomputes_every_share_it_keys(monkeypatch, tmp_path):
    """Verdict files are keyed by the rule's digest: after the precedence table or the subsets' count changes, a share
    made under the old rule is never served (the files of b1f8476 served 35 and 16 stale shares after such changes)."""
    import pandas as pd

    from subtask_induction import claims
    from subtask_induction.claims import judge
    from subtask_induction.pages import verdicts

    monkeypatch.setattr(verdicts, "_SHARES", {})
    monkeypatch.setattr(verdicts, "_LOADED", {str(verdicts.FOLDER)})   # no stored file: this test's shares only
    made = shares_made(monkeypatch)
    means = pd.Series([4.0, 6.5, 5.0, 3.5, 7.0, 5.5, 4.5, 6.0, 5.0, 6.5], index=[str(c) for c in range(10)])
    judged = judge({"": means}, smallest=3.0)
    first = verdicts.share(judged, 3.0, None)
    assert made == [1] and verdicts.share(judged, 3.0, None) == first and made == [1]   # read back, not made again
    old = claims.rule_digest()
    rows = list(claims.PRECEDENCE)
    rows[4], rows[5] = rows[5], rows[4]   # at floor and no effect larger than S swapped
    monkeypatch.setattr(claims, "PRECEDENCE", tuple(rows))
    assert claims.rule_digest() != old
    verdicts.share(judged, 3.0, None)
    assert made == [1, 1]
    monkeypatch.setattr(claims, "SUBSETS_DRAWN", claims.SUBSETS_DRAWN + 1)
    verdicts.share(judged, 3.0, None)
    assert made == [1, 1, 1]


def test_an_undecided_verdict_has_no_share(monkeypatch):
    """Even where a share is stored for its evidence (planted here), an undecided size's row has none."""
    import pandas as pd

    from subtask_induction.claims import Evidence
    from subtask_induction.pages import verdicts
    from subtask_induction.pages.claims import Claim

    means = pd.Series([0.5, -4.0, 5.0, -0.5, 4.5, -5.5, 6.0, 0.0, 1.0], index=[str(c) for c in range(9)])
    evidence = Evidence({"": means}, {"": list(means.index)}, 3.0)
    judged = evidence.judge()
    assert judged[""].verdict == "undecided"
    monkeypatch.setattr(verdicts, "_SHARES", {verdicts.digest(judged, 3.0, None): {"": 0.75}})
    monkeypatch.setattr(verdicts, "_LOADED", {str(verdicts.FOLDER)})
    claim = Claim("vision", "s", "c", "", "", "r", evidence=evidence, id="vision/a-b/pooled_accuracy")
    assert [row[f"share_{verdicts.SMALLER}"] for row in verdicts.rows(claim)] == [""]


def test_pages_check_names_a_verdict_file_whose_record_is_gone(tmp_path):
    from subtask_induction.pages.__main__ import orphaned

    (tmp_path / "decisive.csv").write_text("claim_id\n")
    (tmp_path / "removed_record.csv").write_text("claim_id\n")
    assert orphaned({tmp_path / "decisive.csv": ""}, tmp_path) == [tmp_path / "removed_record.csv"]


def test_every_page_names_which_accuracy_a_failed_chain_reads_in_percent():
    """Chain 24's base: eval 41.4 %, test 40.6 %; each page says which it read, the same way, in percent."""
    import re

    from harness import REPO
    from subtask_induction.validity import base_accuracy

    assert base_accuracy("arithmetic", 0.414) == "base eval accuracy 41.4 %"
    for page in ("README.md", "docs/results.md"):
        text = (REPO / page).read_text()
        named = re.findall(r"chain 24[:]? \(?(base [a-z ]*accuracy [0-9.]+ %)", text)
        assert named and set(named) == {"base eval accuracy 41.4 %"}, page
        assert "base accuracy 0.414" not in text


def test_the_post_hoc_tests_stand_beside_each_verdict_on_the_results_page_only():
    """Beside every verdict of the deciding records: the t test's and bootstrap-t's Holm p, labelled post hoc, and
    the rows where either would read another direction say so; the README carries none of it."""
    from harness import REPO
    from subtask_induction.pages import results, run_records
    from subtask_induction.pages.sections import post_hoc

    found = results.all_claims(run_records.load_all())
    rows = [row for claim in found if claim.evidence is not None and claim.record in post_hoc.RECORDS
            for row in post_hoc.rows(claim)]
    assert len(rows) > 20
    for row in rows:
        words = {name: post_hoc.direction(p, row["claim"].evidence.judge()[row["where"]].mean)
                 for name, p in (("t", row["t"]), ("bootstrap-t", row["bootstrap"]))}
        exact = post_hoc.direction(row["exact"], row["claim"].evidence.judge()[row["where"]].mean)
        assert row["differs"] == "; ".join(f"{n} would read {w}" for n, w in words.items() if w != exact)
    assert any(row["differs"] for row in rows)
    page = (REPO / "docs/results.md").read_text()
    assert "## The direction test beside two others (post hoc)" in page
    assert "post hoc" not in (REPO / "README.md").read_text()
