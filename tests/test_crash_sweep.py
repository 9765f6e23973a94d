"""Nothing lost at any instruction (issue 63): the upgrade, its rollback and the record store are killed with SIGKILL
(a real crash: no `finally`, no `except`) just before each filesystem mutation they make (tests/crash_child.py counts
them as Python's audit events), then run again with no manual step. After each kill the rerun gives the clean run's
bytes, modes and modification times (whole folders: results/ and .snakemake/metadata/, or the record store), the
rollback gives the original's, and no lock or temporary file is left.

The full sweep (every mutation) is marked slow; `make test` kills each tool once right after a mutation of each kind
it makes (open for writing, rename, replace, remove, rmdir, mkdir, chmod, utime), never before its first (a kill
there changes nothing)."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import REPO
from test_evidence import finished_run  # noqa: F401  (the fixture: a clone-like folder with the default's tables)
from subtask_induction import upgrade
from test_upgrade_journal import old_run, snapshot

CHILD = REPO / "tests" / "crash_child.py"


def child(action: str, folder: Path, kill_at: int = -1, data: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, str(CHILD), action, str(folder), str(kill_at)]
                          + ([str(data)] if data else []), capture_output=True, text=True, env=env)


def finished(result: subprocess.CompletedProcess) -> int:
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.split()[-1])


def mutation_kinds(result: subprocess.CompletedProcess) -> list[str]:
    """The kind of each mutation a finished child made, in order (its next-to-last line)."""
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-2].split()


def killed(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr[-2000:])


def leftovers(folder: Path) -> list[str]:
    """Temporaries, locks and staging folders anywhere in the folder: what a crashed tool must not leave."""
    found = [p for p in folder.rglob("*") if p.name.endswith(".atomic-tmp") or p.name in ("lock", "upgrade.lock", ".store.lock", "upgrade.new")
             or ".new-" in p.name or p.name.endswith((".swap", ".old"))]
    return sorted(str(p.relative_to(folder)) for p in found)


def kill_points(kinds: list[str], full: bool) -> list[int]:
    """Where to kill: before every mutation (the full sweep), or right after the middle mutation of each kind (the
    sample: a kill before mutation i + 1 leaves mutation i done; the last mutation has nothing after it, so a kind
    found only there is killed just before it)."""
    if full:
        return list(range(len(kinds)))
    points = set()
    for kind in sorted(set(kinds)):
        at = [i for i, k in enumerate(kinds) if k == kind]
        middle = at[len(at) // 2]
        points.add(middle + 1 if middle + 1 < len(kinds) else max(middle, 1))
    return sorted(points)


def kill_and_rerun(start: Path, action: str, expected: dict, tmp_path: Path, kinds: list[str], full: bool,
                   then=None, after_kill=None) -> None:
    """Each kill point: a copy of `start`, `action` killed there, then run again with no manual step; the result
    must be `expected` (bytes, modes, times) with nothing left over; `after_kill(run)` checks the killed folder,
    `then(run)` what follows the rerun."""
    for kill_at in kill_points(kinds, full):
        run = tmp_path / f"kill{kill_at}"
        shutil.copytree(start, run)
        killed(child(action, run, kill_at))
        if after_kill:
            after_kill(run, kill_at)
        finished(child(action, run))
        assert snapshot(run) == expected, f"the {action} killed at mutation {kill_at}, then run again"
        assert leftovers(run) == [], f"killed at {kill_at}: left {leftovers(run)}"
        if then:
            then(run, kill_at)
        shutil.rmtree(run)


def sweep_upgrade(tmp_path: Path, full: bool) -> int:
    original_run = old_run(tmp_path / "original")
    original = snapshot(original_run)
    clean_run = tmp_path / "clean"
    shutil.copytree(original_run, clean_run)
    done = child("upgrade", clean_run)
    count, kinds = finished(done), mutation_kinds(done)
    clean = snapshot(clean_run)
    assert clean != original and leftovers(clean_run) == []

    def rolls_back(run: Path, kill_at: int) -> None:
        finished(child("rollback", run))
        assert snapshot(run) == original, f"the rollback after a kill at {kill_at}"
        assert leftovers(run) == [] and not (run / ".snakemake" / "upgrade").exists()

    kill_and_rerun(original_run, "upgrade", clean, tmp_path, kinds, full, then=rolls_back)
    return count


def sweep_rollback(tmp_path: Path, full: bool) -> int:
    original_run = old_run(tmp_path / "original")
    original = snapshot(original_run)
    upgraded = tmp_path / "upgraded"
    shutil.copytree(original_run, upgraded)
    finished(child("upgrade", upgraded))
    probe = tmp_path / "probe"
    shutil.copytree(upgraded, probe)
    done = child("rollback", probe)
    count, kinds = finished(done), mutation_kinds(done)
    assert snapshot(probe) == original

    before = snapshot(upgraded)

    def stops_a_run(run: Path, kill_at: int) -> None:
        """Once the killed rollback has changed a file, no run may start until it is finished."""
        if snapshot(run) != before:
            assert upgrade.pending(run) is not None, f"a rollback killed at {kill_at} left a folder a run may start in"

    kill_and_rerun(upgraded, "rollback", original, tmp_path, kinds, full, after_kill=stops_a_run)
    return count


def sweep_second_upgrade(tmp_path: Path, full: bool) -> int:
    """A folder an earlier upgrade already changed (two of the steps), upgraded again: killed at each mutation, the
    rerun gives the clean second upgrade; then the second journal rolls back, and the first (set aside whole) too,
    to the original bytes."""
    original_run = old_run(tmp_path / "original")
    original = snapshot(original_run)
    upgrade.upgrade_run(original_run, steps=(upgrade.STEPS[1], upgrade.STEPS[0]), log=lambda *_: None)
    clean_run = tmp_path / "clean"
    shutil.copytree(original_run, clean_run)
    done = child("upgrade", clean_run)
    count, kinds = finished(done), mutation_kinds(done)
    clean = snapshot(clean_run)

    def rolls_back_both(run: Path, kill_at: int) -> None:
        finished(child("rollback", run))
        asides = sorted(run.glob(".snakemake/upgrade-*"))
        assert len(asides) == 1, f"killed at {kill_at}: {asides}"
        os.rename(asides[0], run / upgrade.UPGRADE)
        finished(child("rollback", run))
        assert snapshot(run) == original, f"the two rollbacks after a kill at {kill_at}"

    kill_and_rerun(original_run, "upgrade", clean, tmp_path, kinds, full, then=rolls_back_both)
    return count


def files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def sweep_store(run: Path, tmp_path: Path, full: bool) -> int:
    """A store over an existing record with other tables (the swap included): killed at each mutation, the folder
    holds the previous record whole or the new one whole (once a recovery has finished what the kill cut), never
    neither and never a mix; the next store gives the clean store's record."""
    from subtask_induction.pages import run_records

    base = tmp_path / "base"
    finished(child("store", run, -1, base))
    table = base / "default" / "arithmetic" / "transfer.csv"   # the previous record differs from the new one
    table.write_text(table.read_text().replace("0.3479999899864197", "0.3499999940395355", 1))
    previous = files(base / "default")
    clean_data = tmp_path / "clean"
    shutil.copytree(base, clean_data)
    done = child("store", run, -1, clean_data)
    count, kinds = finished(done), mutation_kinds(done)
    clean = files(clean_data)
    assert files(clean_data / "default") != previous and leftovers(clean_data) == []
    for kill_at in kill_points(kinds, full):
        data = tmp_path / f"kill{kill_at}"
        shutil.copytree(base, data)
        killed(child("store", run, kill_at, data))
        seen = tmp_path / "seen"
        shutil.copytree(data, seen)
        with run_records.store_lock(seen):
            run_records.recover(seen)
        assert files(seen / "default") in (previous, files(clean_data / "default")), f"killed at {kill_at}: a mix"
        shutil.rmtree(seen)
        finished(child("store", run, -1, data))
        assert files(data) == clean, f"the store killed at mutation {kill_at}, then run again"
        assert leftovers(data) == [], f"killed at {kill_at}: left {leftovers(data)}"
        shutil.rmtree(data)
    return count


def test_a_kill_at_sampled_mutations_of_the_upgrade_is_finished_by_running_it_again(tmp_path):
    assert sweep_upgrade(tmp_path, full=False) > 50


def test_a_kill_at_sampled_mutations_of_the_rollback_is_finished_by_running_it_again(tmp_path):
    assert sweep_rollback(tmp_path, full=False) > 50


def test_a_kill_at_sampled_mutations_of_a_store_is_finished_by_storing_again(finished_run, tmp_path):  # noqa: F811
    assert sweep_store(finished_run, tmp_path, full=False) > 10


@pytest.mark.slow
def test_a_kill_at_every_mutation_of_the_upgrade(tmp_path):
    sweep_upgrade(tmp_path, full=True)


@pytest.mark.slow
def test_a_kill_at_every_mutation_of_the_rollback(tmp_path):
    sweep_rollback(tmp_path, full=True)


@pytest.mark.slow
def test_a_kill_at_every_mutation_of_a_second_upgrade(tmp_path):
    sweep_second_upgrade(tmp_path, full=True)


@pytest.mark.slow
def test_a_kill_at_every_mutation_of_a_store(finished_run, tmp_path):  # noqa: F811
    sweep_store(finished_run, tmp_path, full=True)


def test_the_sample_kills_right_after_a_mutation_of_every_kind():
    kinds = ["os.mkdir", "open", "open", "os.replace", "os.chmod", "open", "os.utime", "os.rename", "os.remove"]
    points = kill_points(kinds, full=False)
    assert 0 not in points
    for kind in set(kinds):
        assert any(kinds[p - 1] == kind or (p == len(kinds) - 1 and kinds[p] == kind) for p in points), kind
