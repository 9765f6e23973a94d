"""Nothing lost from any starting state (issue 71): a second upgrade killed while it sets the first one's journal
aside, a folder whose rollback was cut short, two processes and one lock, a stored record's mode, the store's lock
around every write into a record, a read of the records while a store swaps one in, folders made durable in their
parents, and a lock file this user cannot write."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from subtask_induction import files, upgrade
from subtask_induction.pages import run_records
from test_crash_sweep import child, finished, killed, leftovers
from test_evidence import finished_run  # noqa: F401 (the fixture: a finished default's tables in a clone)
from test_upgrade_journal import old_run, quiet, snapshot

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "data"


def journal_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_second_upgrade_killed_as_it_sets_the_first_aside_loses_none_of_the_first_s_originals(tmp_path):
    """The fixture upgraded by two of the steps, then the full upgrade killed right after it moved the first journal
    aside, then run again: the first journal is whole in its aside folder, so both upgrades roll back to the
    original bytes (the second from its journal, then the first from the aside)."""
    run = old_run(tmp_path / "run")
    original = snapshot(run)
    upgrade.upgrade_run(run, steps=(upgrade.STEPS[1], upgrade.STEPS[0]), log=quiet)
    first = journal_files(run / upgrade.UPGRADE)
    killed(child("upgrade", run, "after:os.rename:upgrade"))
    finished(child("upgrade", run))
    asides = sorted(run.glob(".snakemake/upgrade-*"))
    assert len(asides) == 1 and journal_files(asides[0]) == first
    assert upgrade.pending(run) is None
    finished(child("rollback", run))
    os.rename(asides[0], run / upgrade.UPGRADE)   # the first journal back where a rollback reads it
    finished(child("rollback", run))
    assert snapshot(run) == original and leftovers(run) == []


def test_a_folder_whose_rollback_was_cut_short_stops_a_run_and_an_upgrade(tmp_path):
    run = old_run(tmp_path / "run")
    upgrade.upgrade_run(run, log=quiet)
    killed(child("rollback", run, 40))
    reason = upgrade.pending(run)
    assert reason and "--rollback" in reason and "interrupted" in reason
    with pytest.raises(upgrade.UpgradeRefused, match="rollback of this folder was interrupted"):
        upgrade.upgrade_run(run, log=quiet)
    finished(child("rollback", run))
    assert upgrade.pending(run) is not None   # rolled back whole: the old names, so an upgrade is due again
    assert "interrupted" not in upgrade.pending(run)


def test_a_rollback_that_skipped_a_file_keeps_the_folder_pending(tmp_path):
    run = old_run(tmp_path / "run")
    upgrade.upgrade_run(run, log=quiet)
    operation = next(op for op in upgrade.Journal(run).operations() if op["op"] == "rewrite")
    (run / operation["path"]).write_text("a later run's bytes\n")
    done = upgrade.rollback(run)
    assert done.skipped
    reason = upgrade.pending(run)
    assert reason and "--rollback --overwrite" in reason and "--rollback --discard" in reason


LOCK_HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from subtask_induction.files import FolderLock
    with FolderLock(sys.argv[1], "busy"):
        print("held", flush=True)
        sys.stdin.readline()   # hold it until the test says so
""")


def test_a_lock_holder_never_removes_a_lock_another_process_holds(tmp_path):
    """Holder A's file is moved away under it (as a rollback once renamed the journal folder, lock included); C
    locks a new file at the path; A's exit must leave C's file, so D is refused while C holds it."""
    path = tmp_path / "state" / "lock"
    a = files.FolderLock(path, "busy")
    a.__enter__()
    os.rename(path, tmp_path / "state" / "moved")
    c = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(path), str(REPO / "workflow")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert c.stdout.readline().strip() == "held"   # the barrier: C holds the path's lock before A lets go
        a.__exit__(None, None, None)
        assert path.exists()
        with pytest.raises(RuntimeError, match=rf"busy \(pid {c.pid} holds"):
            with files.FolderLock(path, "busy"):
                pass
    finally:
        c.communicate("\n", timeout=30)
    with files.FolderLock(path, "busy"):   # C is done: the lock is free again
        pass


def test_a_lock_file_this_user_cannot_write_is_refused_in_one_line(tmp_path, monkeypatch):
    """A lock another user made (0644 under umask 022) cannot be opened for writing: one line naming the file and
    what to do, not a traceback. (The tests run as root, who may write anything: the refusal is the kernel's, stood
    in for here.)"""
    path = tmp_path / "lock"
    path.write_text("123")
    real_open = os.open

    def refused(name, flags, *args):
        if Path(name) == path:
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(run_records.RecordError) as error:
        with files.FolderLock(path, "another store of run records is running", run_records.RecordError):
            pass
    message = str(error.value)
    assert "\n" not in message and str(path) in message and "for writing" in message and "remove the file" in message


def test_a_file_system_without_flock_is_refused_in_one_line(tmp_path, monkeypatch):
    import fcntl

    def no_flock(handle, operation):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    with pytest.raises(upgrade.UpgradeRefused, match=r"refuses a lock .*Lustre.*flock.*NFS.*nolock"):
        with files.FolderLock(tmp_path / "lock", "busy", upgrade.UpgradeRefused):
            pass


def test_new_folders_are_made_durable_in_their_parents(tmp_path, monkeypatch):
    """A SIGKILL keeps the page cache, so no kill can show a missing fsync: the test checks that one is made, into
    each new folder's parent, for the lock's folder and an atomic write's."""
    synced = []
    real = files.fsync_folder
    monkeypatch.setattr(files, "fsync_folder", lambda folder: (synced.append(Path(folder)), real(folder)))
    with files.FolderLock(tmp_path / "a" / "b" / "lock", "busy"):
        pass
    files.write_text(tmp_path / "c" / "d" / "file.txt", "x")
    for parent in (tmp_path, tmp_path / "a", tmp_path / "c"):
        assert parent in synced


def test_a_stored_record_has_the_mode_a_plain_mkdir_gives(tmp_path, finished_run):
    data = tmp_path / "data"
    folder = run_records.store(finished_run, "default", "t", "make reproduce", ["config/config.yaml"], 10.0,
                               "1 min", data)
    expected = 0o777 & ~files.current_umask()
    assert folder.stat().st_mode & 0o777 == expected
    assert all(p.stat().st_mode & 0o777 == expected for p in folder.rglob("*") if p.is_dir())


def test_planned_points_are_written_only_under_the_store_s_lock(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copytree(DATA / "groupnorm", data / "groupnorm")
    with run_records.store_lock(data):
        with pytest.raises(run_records.RecordError, match="another store"):
            run_records.plan("groupnorm", data)


def test_reading_the_records_while_a_store_swaps_one_in_never_drops_it(tmp_path, monkeypatch):
    """The swap's two renames happen while load_all lists the folder: the record is gone from that listing for a
    moment. load_all reads again until no swap is under way, so the record is there."""
    data = tmp_path / "data"
    for name in ("gpu_check", "make_test"):
        shutil.copytree(DATA / name, data / name)
    real = run_records.record_names
    calls = []

    def mid_swap(folder):
        calls.append(1)
        if len(calls) == 1:   # a store has moved make_test aside and not yet put the new one in
            os.replace(data / "make_test", data / ".make_test.old")
            names = real(folder)
            files.write_json(data / ".make_test.swap", {"record": "make_test", "staged": ".make_test.new-x"})
            os.replace(data / ".make_test.old", data / ".make_test.new-x")
            return names
        if len(calls) == 2:   # ... and has finished it
            with run_records.store_lock(data):
                run_records.recover(data)
        return real(folder)

    monkeypatch.setattr(run_records, "record_names", mid_swap)
    assert sorted(run_records.load_all(data)) == ["gpu_check", "make_test"]


def test_a_rollback_killed_after_its_journal_went_away_leaves_no_lock(tmp_path):
    """Killed right after its last rename (the journal away, the lock not yet released), the rollback run again
    finds only the finished journal: it removes it under the lock, so no lock file is left."""
    from test_crash_sweep import mutation_kinds

    run = old_run(tmp_path / "run")
    upgrade.upgrade_run(run, log=quiet)
    probe = tmp_path / "probe"
    shutil.copytree(run, probe)
    kinds = mutation_kinds(child("rollback", probe))
    last_rename = max(i for i, kind in enumerate(kinds) if kind == "os.rename")
    killed(child("rollback", run, last_rename + 1))
    finished(child("rollback", run))
    assert leftovers(run) == [] and snapshot(run) == snapshot(probe)
