"""Issue 63's nine defects, one test each (each failed on 36a1aff): a crashed tool needs no hand repair, a rollback
never loses an original, an old folder is known by what it holds, the record store is a transaction, and the pairing
checks what it pairs."""

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from harness import REPO
from subtask_induction import claims as rule
from subtask_induction import files, upgrade
from subtask_induction.pages import run_records
from test_crash_sweep import child, finished, killed, leftovers
from test_upgrade_journal import old_run, quiet, snapshot

DATA = REPO / "docs" / "data"


# 1. A killed upgrade's lock file stopped the rerun and the rollback until a person deleted it.
def test_a_lock_file_left_by_a_killed_upgrade_is_no_lock(tmp_path):
    run = old_run(tmp_path / "run")
    original = snapshot(run)
    killed(child("upgrade", run, 40))
    assert (run / upgrade.UPGRADE_LOCK).exists()   # what the kill left
    finished(child("upgrade", run))
    finished(child("rollback", run))
    assert snapshot(run) == original and leftovers(run) == []


# 2. atomic_write's temporaries were never removed after a kill.
def test_the_upgrade_removes_the_temporaries_a_kill_left(tmp_path):
    run = old_run(tmp_path / "run")
    (run / upgrade.UPGRADE).mkdir(parents=True)
    left = [run / "results" / f".table.csv.abcdefgh{files.TEMPORARY_SUFFIX}",
            run / ".snakemake" / "metadata" / f".cmVzdWx0cw.abcdefgh{files.TEMPORARY_SUFFIX}",
            run / upgrade.UPGRADE / f".done.abcdefgh{files.TEMPORARY_SUFFIX}"]
    for path in left:
        path.write_text("half")
    upgrade.upgrade_run(run, log=quiet)
    assert not any(path.exists() for path in left) and leftovers(run) == []


# 3. A kill between unlinking a renamed record and writing its original back lost the record for good.
def test_a_rollback_killed_right_after_removing_a_renamed_record_loses_nothing(tmp_path):
    original_run = old_run(tmp_path / "original")
    original = snapshot(original_run)
    run = tmp_path / "run"
    shutil.copytree(original_run, run)
    finished(child("upgrade", run))
    killed(child("rollback", run, "after:os.remove:.snakemake/metadata"))
    finished(child("rollback", run))
    assert snapshot(run) == original


# 4. The rollback skipped a file a later run had rewritten, then deleted the journal: its original's only copy.
def test_a_rollback_keeps_the_journal_and_names_what_it_could_not_restore(tmp_path):
    run = old_run(tmp_path / "run")
    original = snapshot(run)
    upgrade.upgrade_run(run, log=quiet)
    table = run / "results/arithmetic/summary/transfer.csv"
    table.write_text(table.read_text() + "\n")   # a later run rewrote it
    done = upgrade.rollback(run)
    assert [line.split(":")[0] for line in done.skipped] == ["results/arithmetic/summary/transfer.csv"]
    assert (run / upgrade.UPGRADE / "journal.json").exists()
    printed = subprocess.run([sys.executable, "-m", "subtask_induction.upgrade", "--rollback", str(run)],
                             capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": "workflow"})
    assert printed.returncode == 1 and "transfer.csv: changed since the upgrade" in printed.stdout
    assert "--rollback --overwrite" in printed.stdout and "--rollback --discard" in printed.stdout
    upgrade.rollback(run, overwrite=True)
    kept = run / upgrade.OVERWRITTEN / "results/arithmetic/summary/transfer.csv"
    assert kept.read_text().endswith("\n\n") and snapshot(run) == original


# 5. pending() knew an old folder only by `seed*` folders: replicate folders with `method` keys ran on.
def test_a_folder_with_only_the_key_rename_pending_stops_a_run(tmp_path):
    run = old_run(tmp_path / "run")
    assert upgrade.pending(run)
    paths, commands = upgrade.STEPS[1], upgrade.STEPS[0]
    upgrade.upgrade_run(run, steps=(paths, commands), log=quiet)   # an 0.5.0-dev folder: renamed, keys not yet
    shutil.rmtree(run / upgrade.UPGRADE)
    assert not list(run.glob("results/arithmetic/chain*/transfer/*/*/*/layers*/*/n*/seed*"))
    why = upgrade.pending(run)
    assert why and "earlier version's names" in why and "subtask_induction.upgrade" in why
    upgrade.upgrade_run(run, log=quiet)
    assert upgrade.pending(run) is None


# 6. The record store: no lock, a fixed staging name, dot-folders loaded as records, no `default` after a kill
# between its two renames.
def test_the_record_store_is_locked_and_its_leftovers_are_never_records(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA / "default", data / "default")
    shutil.copytree(DATA / "default", data / ".default.old")
    assert list(run_records.load_all(data)) == ["default"]
    with run_records.store_lock(data):
        with pytest.raises(run_records.RecordError, match="another store"):
            run_records.store(tmp_path, "default", "t", "c", ["config/config.yaml"], 1.0, "w", data)
    os.replace(data / "default", data / ".default.new-abc")   # a kill between the swap's two renames
    files.write_json(data / ".default.swap", {"record": "default", "staged": ".default.new-abc"})
    with pytest.raises(run_records.RecordError, match="interrupted.*--recover"):
        run_records.load_all(data)
    with run_records.store_lock(data):
        assert run_records.recover(data)
    assert list(run_records.load_all(data)) == ["default"] and leftovers(data) == []


# 7. Pairing and counting.
def test_a_paired_test_refuses_two_test_sets():
    from subtask_induction.arithmetic.tables import run_differences

    rows = pd.DataFrame([{"chain": 0, "replicate": 0, "variant": v, "test_accuracy": 0.5, "test_items": items,
                          "test_correct": rule.correct_bits([True] * items)} for v, items in (("si", 995),
                                                                                                ("sampled", 1000))])
    with pytest.raises(ValueError, match="995 test items.*1000"):
        run_differences(rows, "si", "sampled", [(0, 0)])


def test_means_and_bands_read_only_the_planned_runs():
    from subtask_induction.pages.curves import our_curves

    record = run_records.load("paper_depth2")
    transfer = record.csv("arithmetic/transfer.csv")
    every = our_curves(transfer)
    planned = our_curves(transfer, record.provenance["unplanned"])
    at = lambda curves: curves[(curves["curve"] == "random") & (curves["n"] == 2500) & (curves["label"] == "")
                               & (curves["protocol"] == "eval")]["count"].max()
    assert at(every) == 2 and at(planned) == 1


def test_a_comparison_no_config_planned_is_incomplete():
    from subtask_induction.pages.claims import holds_text

    judged = rule.judge({"n = 0": pd.Series([1.0], index=["0/0"])}, {"n = 0": []})
    assert not judged["n = 0"].complete and holds_text(judged).startswith("**incomplete**")


def test_the_complement_check_follows_the_kind_s_mask_not_its_name():
    from subtask_induction.method.kinds import KINDS

    assert KINDS["complement_authors"].outside_subnetwork and KINDS["complement"].outside_subnetwork
    assert not KINDS["sampled_authors"].outside_subnetwork
    source = (REPO / "workflow/subtask_induction/arithmetic/jobs.py").read_text()
    assert '["kind"] == "complement"' not in source


# 8. A bad record made `make docs` print a traceback around its message.
def test_make_docs_names_each_bad_record_in_one_line(tmp_path):
    data = tmp_path / "data"
    for name in ("default", "groupnorm"):
        shutil.copytree(DATA / name, data / name)
    for name in ("default", "groupnorm"):
        table = data / name / "vision" / "table1.csv"
        frame = pd.read_csv(table)
        frame.loc[0, "pooled_accuracy"] = float("nan")
        frame.to_csv(table, index=False)
    result = subprocess.run([sys.executable, "-m", "subtask_induction.pages", "--check", "--data", str(data)],
                            capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": "workflow"})
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(lines) == 2
    assert all("vision/table1.csv" in line and "fix:" in line for line in lines)


# 9. A kill between a rollback's write and its times left the original bytes with today's time, for good.
def test_a_rollback_sets_the_times_of_an_original_a_kill_left_without_them(tmp_path):
    run = old_run(tmp_path / "run")
    original = snapshot(run)
    upgrade.upgrade_run(run, log=quiet)
    operation = next(op for op in upgrade.Journal(run).operations() if op["op"] == "rewrite")
    path = run / operation["path"]
    path.write_bytes(upgrade.Journal(run).bytes("backup", operation["bytes"]))   # the original, today's time
    upgrade.rollback(run)
    assert snapshot(run) == original
