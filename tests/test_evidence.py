"""Evidence that cannot mislead (issue 55): a claim is computed from every run its record planned, or reads
"incomplete" naming the runs without a number; a row says what it is judged on; two records pair only on the same
depth, chain, replicate and n and the same subnetwork; a record is checked when stored and loaded, and a failed store
leaves the old one. Each defect test builds its record from the stored ones with one hole (RunRecord, bypassing the
load-time checks, as a record on disk before those checks existed would have been read)."""

import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import REPO
from subtask_induction import claims as verdicts
from subtask_induction.pages import claims, run_records, wording
from subtask_induction.pages.curves import rival_beside_si

DATA = REPO / "docs" / "data"


def copied(tmp_path, *names):
    data = tmp_path / "data"
    for name in names:
        shutil.copytree(DATA / name, data / name)
    return data


def record(data, name):
    """The record as a page would read it, without the load-time checks (the defects are in the claims' code)."""
    return run_records.RunRecord(name, data / name, yaml.safe_load((data / name / "run.yaml").read_text()))


def edit_csv(path, change):
    frame = pd.read_csv(path)
    change(frame).to_csv(path, index=False)


# Defect 1: a missing or NaN run was neither higher nor lower, so an n whose runs are all missing read "tied".
def test_a_rival_whose_runs_are_all_missing_is_incomplete_not_tied(tmp_path):
    data = copied(tmp_path, "paper_depth2", "paper_depth2_magnitude")
    edit_csv(data / "paper_depth2_magnitude" / "arithmetic" / "transfer.csv",
             lambda f: f.assign(test_accuracy=f["test_accuracy"].where(f["n"] != 2500)))
    records = {name: record(data, name) for name in ("paper_depth2", "paper_depth2_magnitude")}
    claim, = claims.magnitude_rival(records, "paper_depth2", 2)
    assert claim.holds.startswith("**incomplete**") and "tied" not in claim.holds, claim.holds
    assert "n = 2,500" in claim.holds and "missing" in claim.holds
    with pytest.raises(run_records.RecordError, match=r"transfer.csv breaks its schema:\n  test_accuracy is empty"):
        run_records.load("paper_depth2_magnitude", data)


def test_a_record_checked_once_is_checked_again_when_its_bytes_change(tmp_path, monkeypatch):
    """load's checks are remembered by the record's bytes (the page tests load the same records many times): the
    same bytes elsewhere pass unread, one changed cell is read and refused, and a folder that changed while it was
    checked is not remembered."""
    data = copied(tmp_path, "paper_depth2")
    run_records.load("paper_depth2", data)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(data, elsewhere)
    checked = []
    read = run_records._check_tables
    monkeypatch.setattr(run_records, "_check_tables", lambda record: checked.append(record.folder) or read(record))
    run_records.load("paper_depth2", elsewhere)
    assert checked == []
    edit_csv(elsewhere / "paper_depth2" / "arithmetic" / "transfer.csv",
             lambda f: f.assign(test_accuracy=f["test_accuracy"].where(f.index != 3)))
    with pytest.raises(run_records.RecordError, match="test_accuracy is empty"):
        run_records.load("paper_depth2", elsewhere)
    assert checked == [elsewhere / "paper_depth2"]

    moving = copied(tmp_path / "moving", "paper_depth2")
    table = moving / "paper_depth2" / "arithmetic" / "transfer.csv"

    def changed_while_read(record):
        read(record)
        table.write_text(table.read_text() + "\n")   # a writer beside the load: its bytes are not the ones passed
    monkeypatch.setattr(run_records, "_check_tables", changed_while_read)
    edit_csv(table, lambda f: f.assign(seconds=f["seconds"] + 1))
    as_read = run_records.record_digest(moving / "paper_depth2")
    run_records.load("paper_depth2", moving)
    assert {as_read, run_records.record_digest(moving / "paper_depth2")}.isdisjoint(run_records._PASSED)


# Defect 2: a third replicate whose accuracies are missing still read "yes" (pivot_table dropped it); with only its
# fs missing it read "no (2 of 3)": a missing number counted as a loss.
@pytest.mark.parametrize("hole", ["every adaptation", "fs only"])
def test_a_replicate_without_numbers_makes_the_submasking_claims_incomplete(tmp_path, hole):
    data = copied(tmp_path, "default")
    points = data / "default" / "submasking" / "points.csv"

    def third(frame):
        extra = frame[frame["replicate"] == 0].assign(replicate=2)
        if hole == "every adaptation":
            extra = extra.assign(test_accuracy=float("nan"))
        else:
            extra = extra.assign(test_accuracy=extra["test_accuracy"].where(extra["adaptation" if "adaptation" in extra else "method"] != "fs"))
        return pd.concat([frame, extra], ignore_index=True)

    edit_csv(points, third)
    planned = data / "default" / "planned" / "submasking.csv"   # the configs planned three replicates
    if planned.exists():
        edit_csv(planned, lambda f: pd.concat([f, f[f["replicate"] == 0].assign(replicate=2)], ignore_index=True))
    found = claims.submasking_default(record(data, "default"))
    assert found and all(c.holds.startswith("**incomplete**") for c in found), [c.holds for c in found]
    assert all("2 missing" in c.holds for c in found)


# Defect 3: the column said "holds in every run?" over rows judged on a mean or a band.
def test_every_row_says_what_it_is_judged_on():
    found = run_records.load_all()
    table = wording.markdown(__import__("subtask_induction.pages.results", fromlist=["x"]).all_claims(found), found)
    header = next(line for line in table.splitlines() if line.startswith("| family"))
    assert "judged on" in header and "holds in every run" not in header
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and not line.startswith("| family")]
    judged = {row[1]: row[2] for row in rows}
    assert all(value.startswith("the mean") for claim, value in judged.items() if claim.startswith("The paper's text"))
    assert all(value.startswith("a band") for claim, value in judged.items() if "Fig 6" in claim)
    assert all(value.startswith("the chains") for claim, value in judged.items() if claim.startswith("SI beats random"))
    assert "**the mean**" in table and "**a band**" in table and "**incomplete**" in table   # the legend


# Defect 4: a rival's rows were paired with the slice's on (n, replicate) only: not on chain, not on the subnetwork,
# and never checked unique.
def test_a_rival_pairs_only_on_its_own_chain_and_subnetwork(tmp_path):
    data = copied(tmp_path, "paper_depth2", "paper_depth2_magnitude")
    names = ("paper_depth2", "paper_depth2_magnitude")
    rival = data / "paper_depth2_magnitude" / "arithmetic" / "transfer.csv"
    paired = rival_beside_si({n: record(data, n) for n in names}, "paper_depth2", "magnitude", 2)
    assert len(paired) == 4 and paired["si"].notna().all()

    edit_csv(rival, lambda f: f.assign(chain=1))   # another chain's runs: the slice has no SI of chain 1
    reason = rival_beside_si({n: record(data, n) for n in names}, "paper_depth2", "magnitude", 2)
    assert reason == "the slice paper_depth2 has no SI run of chain 1"
    claim, = claims.magnitude_rival({n: record(data, n) for n in names}, "paper_depth2", 2)
    assert claim.holds.startswith("**incomplete** (not paired")

    edit_csv(rival, lambda f: f.assign(chain=0, mask_fraction=f["mask_fraction"] + 0.01))   # another discovery's
    assert "the subnetworks differ at chain 0" in rival_beside_si({n: record(data, n) for n in names},
                                                                   "paper_depth2", "magnitude", 2)
    edit_csv(rival, lambda f: pd.concat([f.assign(mask_fraction=f["mask_fraction"] - 0.01), f.iloc[[0]].assign(
        mask_fraction=f["mask_fraction"].iloc[0] - 0.01)]))   # one row twice
    assert "more than one magnitude row" in rival_beside_si({n: record(data, n) for n in names},
                                                            "paper_depth2", "magnitude", 2)


# Defect 5: store copied whatever results/*/summary held, recorded HEAD over a dirty tree, deleted the old record
# first; load checked only run.yaml's keys.
@pytest.fixture()
def finished_run(tmp_path):
    """A clone-like folder: the workflow's config and package at a commit, and the default record's tables as its
    results/<family>/summary/ (the tables a finished default leaves)."""
    run = tmp_path / "run"
    for name in ("config", "workflow"):
        shutil.copytree(REPO / name, run / name, ignore=shutil.ignore_patterns("__pycache__"))
    for family in ("arithmetic", "vision", "submasking"):
        shutil.copytree(DATA / "default" / family, run / "results" / family / "summary")
    (run / ".gitignore").write_text("results/\n")
    git = ["git", "-C", str(run), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "run"], check=True)
    return run


def store(run, data, name="stored"):
    return run_records.store(run, name, "t", "make reproduce", ["config/config.yaml"], 10.0, "1 min", data)


def test_a_stored_record_is_checked_and_a_failed_store_leaves_the_old_one(finished_run, tmp_path):
    data = tmp_path / "records"
    folder = store(finished_run, data)
    loaded = run_records.load("stored", data)
    assert loaded.provenance["version"] and (folder / "planned" / "arithmetic.csv").exists()
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    edit_csv(finished_run / "results" / "vision" / "summary" / "chains.csv",
             lambda f: f.assign(shape_bias=f["shape_bias"].mask(f.index == 4)))
    with pytest.raises(run_records.RecordError, match=r"vision/chains.csv breaks its schema:\n  shape_bias is empty "
                                                      r"\(NaN\) at line 6"):
        store(finished_run, data)
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before and sorted(p.name for p in data.iterdir()) == ["stored"]


def test_store_refuses_a_dirty_tree_a_missing_point_and_a_missing_table(finished_run, tmp_path):
    data = tmp_path / "records"
    config = finished_run / "config" / "config.yaml"
    config.write_text(config.read_text() + "\n# a change not committed\n")
    with pytest.raises(run_records.RecordError, match="(?s)differ from its commit.*config/config.yaml"):
        store(finished_run, data)
    subprocess.run(["git", "-C", str(finished_run), "checkout", "--", "config"], check=True)

    edit_csv(finished_run / "results" / "arithmetic" / "summary" / "transfer.csv",
             lambda f: f[~((f["variant"] == "si") & (f["n"] == 250) & (f["chain"] == 1))])
    with pytest.raises(run_records.RecordError, match=r"(?s)transfer.csv lacks 1 point\(s\).*\n  chain 1, base a\+ab, "
                                                      r"subtask ab, target a2\+ab, layers 2, variant si, n 250"):
        store(finished_run, data)
    (finished_run / "results" / "arithmetic" / "summary" / "transfer.csv").unlink()
    with pytest.raises(run_records.RecordError, match="arithmetic/transfer.csv is missing"):
        store(finished_run, data)
    assert not data.exists() or not any(data.iterdir())


def test_same_tables_as_is_computed_from_the_run_and_a_difference_is_refused(finished_run, tmp_path):
    """A record's same_tables_as is made when it is stored, from the run's tables against the named record's (each
    training's `seconds` left out), never typed: a run whose tables differ is refused, naming the table."""
    data = tmp_path / "records"
    shutil.copytree(DATA / "default", data / "default")
    commit = run_records.load("default", data).provenance["commit"]
    timed = finished_run / "results" / "arithmetic" / "summary" / "transfer.csv"
    edit_csv(timed, lambda f: f.assign(seconds=f["seconds"] * 2))   # another run's wall times: the same tables
    folder = run_records.store(finished_run, "timed", "t", "make reproduce", ["config/config.yaml"], 10.0, "1 min",
                               data, same_as=["default"])
    assert yaml.safe_load((folder / "run.yaml").read_text())["same_tables_as"] == {"default": commit}
    edit_csv(timed, lambda f: f.assign(test_accuracy=f["test_accuracy"].mask(f.index == 3, 0.5)))
    with pytest.raises(run_records.RecordError, match=r"did not make the tables of run record default.*"
                                                      r"arithmetic/transfer.csv: columns \['test_accuracy'\]"):
        run_records.store(finished_run, "timed", "t", "make reproduce", ["config/config.yaml"], 10.0, "1 min", data,
                          same_as=["default"])
    assert yaml.safe_load((folder / "run.yaml").read_text())["same_tables_as"] == {"default": commit}  # kept as it was


def test_a_table_of_an_earlier_config_is_refused(finished_run, tmp_path):
    """A point no config of the record planned (left by an earlier config in results/) is a stale table."""
    edit_csv(finished_run / "results" / "arithmetic" / "summary" / "transfer.csv",
             lambda f: pd.concat([f, f[f["n"] == 750].assign(n=5000)], ignore_index=True))
    with pytest.raises(run_records.RecordError, match=r"(?s)no config of the record planned.*n 5000"):
        store(finished_run, tmp_path / "records")


# The one tally, adversarially: random runs with holes.
RUN = st.sampled_from([f"{c}/{r}" for c in range(3) for r in range(3)])
DIFFERENCE = st.one_of(st.just(0.0), st.floats(-50, 50, allow_nan=False).filter(lambda v: v != 0), st.just(float("nan")))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(named=st.lists(RUN, min_size=1, max_size=6, unique=True), present=st.lists(st.tuples(RUN, DIFFERENCE),
                                                                                 max_size=10))
def test_a_tally_with_a_hole_is_incomplete_and_a_whole_one_is_a_count(named, present):
    series = pd.Series([d for _, d in present], index=[r for r, _ in present], dtype=float)
    counted = verdicts.tally(series, named)
    listed = [r for r, _ in present]
    holes = [r for r in named if listed.count(r) != 1 or pd.isna(dict(present)[r])]
    if holes:
        assert not counted.complete
        assert set(counted.missing) | set(counted.duplicated) == set(holes)
        assert wording.holds_text(verdicts.judge({"here": series}, {"here": named})).startswith("**incomplete**")
        return
    values = [dict(present)[r] for r in named]
    higher, lower = sum(v > 0 for v in values), sum(v < 0 for v in values)
    assert counted.complete and (counted.higher, counted.lower, counted.tied) == (higher, lower,
                                                                                  len(values) - higher - lower)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(0.1, 50), min_size=2, max_size=8), flip=st.integers(0, 7))
def test_one_chain_flipped_never_strengthens_a_verdict(values, flip):
    runs = [str(i) for i in range(len(values))]
    before = verdicts.judge({"": pd.Series(values, index=runs)})[""]
    flipped = list(values)
    flipped[flip % len(values)] *= -1
    after = verdicts.judge({"": pd.Series(flipped, index=runs)})[""]
    assert after.p >= before.p - 1e-12 and after.verdict != verdicts.REVERSED
    assert (before.tally.higher, after.tally.higher) == (len(values), len(values) - 1)


@settings(max_examples=100, deadline=None)
@given(first=st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1)), max_size=6),
       second=st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1)), max_size=6))
def test_pairing_by_run_never_averages_a_duplicate_away(first, second):
    a = pd.Series([v for _, v in first], index=[r for r, _ in first], dtype=float)
    b = pd.Series([v for _, v in second], index=[r for r, _ in second], dtype=float)
    runs = list(range(4))
    counted = verdicts.tally(claims.paired_by_run(a, b), runs)
    for run in runs:
        once = list(a.index).count(run) == 1 and list(b.index).count(run) == 1
        if not once:
            assert run in counted.missing + counted.duplicated
        else:
            assert run not in counted.missing + counted.duplicated


@pytest.fixture(scope="module")
def slice_and_rival():
    return (run_records.load("paper_depth2").csv("arithmetic/transfer.csv"),
            run_records.load("paper_depth2_magnitude").csv("arithmetic/transfer.csv"))


class Frames:
    """A record stand-in that serves a table already in memory (the pairing reads only transfer.csv)."""

    def __init__(self, frame):
        self.frame = frame

    def csv(self, table):
        return self.frame


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_rival_is_paired_only_with_the_slice_s_run_of_the_same_key(slice_and_rival, data):
    """Random chains, replicates and n on the rival's rows, and duplicated rows on either side: the pairing is a
    reason it cannot pair, or pairs each rival row with the slice's one SI run of exactly its key."""
    slice_rows, rival = slice_and_rival
    rival = rival.copy()
    rival["chain"] = data.draw(st.lists(st.integers(0, 1), min_size=len(rival), max_size=len(rival)))
    rival["replicate"] = data.draw(st.lists(st.integers(0, 5), min_size=len(rival), max_size=len(rival)))
    rival["n"] = data.draw(st.lists(st.sampled_from([1000, 2500, 640]), min_size=len(rival), max_size=len(rival)))
    if data.draw(st.booleans()):
        slice_rows = pd.concat([slice_rows, slice_rows.sample(1, random_state=data.draw(st.integers(0, 99)))])
    paired = rival_beside_si({"s": Frames(slice_rows), "s_magnitude": Frames(rival)}, "s", "magnitude", 2)
    if isinstance(paired, str):
        return
    si = slice_rows[(slice_rows["kind"] == "subnetwork") & (slice_rows["protocol"] == "eval")
                    & (slice_rows["variant"] == "si")]
    for row in paired.itertuples():
        match = si[(si["chain"] == row.chain) & (si["replicate"] == row.replicate) & (si["n"] == row.n)]
        assert len(match) <= 1
        assert (pd.isna(row.si) and match.empty) or row.si == match["test_accuracy"].iloc[0]
