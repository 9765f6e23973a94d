"""Nothing lost at any instruction (issue 63): the upgrade, its rollback and the record store are killed with SIGKILL
(a real crash: no `finally`, no `except`) just before each filesystem mutation they make (tests/crash_child.py counts
them as Python's audit events), then run again with no manual step. After each kill the rerun gives the clean run's
bytes, modes and modification times (whole folders: results/ and .snakemake/metadata/, or the record store), the
rollback gives the original's, and no lock or temporary file is left.

The full sweep (every mutation) is marked slow; `make test` runs an evenly spread sample of each."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import REPO
from test_evidence import finished_run  # noqa: F401  (the fixture: a clone-like folder with the default's tables)
from test_upgrade_journal import old_run, snapshot

CHILD = REPO / "tests" / "crash_child.py"
SAMPLE = 3   # kills per sweep in `make test` (first, middle, last)


def child(action: str, folder: Path, kill_at: int = -1, data: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, str(CHILD), action, str(folder), str(kill_at)]
                          + ([str(data)] if data else []), capture_output=True, text=True, env=env)


def finished(result: subprocess.CompletedProcess) -> int:
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.split()[-1])


def killed(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr[-2000:])


def leftovers(folder: Path) -> list[str]:
    """Temporaries, locks and staging folders anywhere in the folder: what a crashed tool must not leave."""
    found = [p for p in folder.rglob("*") if p.name.endswith(".atomic-tmp") or p.name in ("lock", ".store.lock")
             or ".new-" in p.name or p.name.endswith((".swap", ".old"))]
    return sorted(str(p.relative_to(folder)) for p in found)


def kill_points(count: int, full: bool) -> list[int]:
    if full or count <= SAMPLE:
        return list(range(count))
    return sorted({round(i * (count - 1) / (SAMPLE - 1)) for i in range(SAMPLE)})


def kill_and_rerun(start: Path, action: str, expected: dict, tmp_path: Path, count: int, full: bool,
                   then=None) -> None:
    """Each kill point: a copy of `start`, `action` killed there, then run again with no manual step; the result
    must be `expected` (bytes, modes, times) with nothing left over; `then(run)` checks what follows."""
    for kill_at in kill_points(count, full):
        run = tmp_path / f"kill{kill_at}"
        shutil.copytree(start, run)
        killed(child(action, run, kill_at))
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
    count = finished(child("upgrade", clean_run))
    clean = snapshot(clean_run)
    assert clean != original and leftovers(clean_run) == []

    def rolls_back(run: Path, kill_at: int) -> None:
        finished(child("rollback", run))
        assert snapshot(run) == original, f"the rollback after a kill at {kill_at}"
        assert leftovers(run) == [] and not (run / ".snakemake" / "upgrade").exists()

    kill_and_rerun(original_run, "upgrade", clean, tmp_path, count, full, then=rolls_back)
    return count


def sweep_rollback(tmp_path: Path, full: bool) -> int:
    original_run = old_run(tmp_path / "original")
    original = snapshot(original_run)
    upgraded = tmp_path / "upgraded"
    shutil.copytree(original_run, upgraded)
    finished(child("upgrade", upgraded))
    probe = tmp_path / "probe"
    shutil.copytree(upgraded, probe)
    count = finished(child("rollback", probe))
    assert snapshot(probe) == original
    kill_and_rerun(upgraded, "rollback", original, tmp_path, count, full)
    return count


def files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def sweep_store(run: Path, tmp_path: Path, full: bool) -> int:
    """A store over an existing record (the swap included): killed at each mutation, the next store gives the
    clean store's record; the old record is whole until the new one is in, and never are both gone."""
    base = tmp_path / "base"
    finished(child("store", run, -1, base))
    # the second store replaces the record: the same tables, so the clean result equals the first (dates aside)
    clean_data = tmp_path / "clean"
    shutil.copytree(base, clean_data)
    count = finished(child("store", run, -1, clean_data))
    clean = files(clean_data)
    assert leftovers(clean_data) == []
    for kill_at in kill_points(count, full):
        data = tmp_path / f"kill{kill_at}"
        shutil.copytree(base, data)
        killed(child("store", run, kill_at, data))
        record = data / "default"
        assert (record / "run.yaml").exists() or any(data.glob(".default.*")), f"killed at {kill_at}: no record left"
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
def test_a_kill_at_every_mutation_of_the_upgrade_and_the_rollback(tmp_path):
    sweep_upgrade(tmp_path / "upgrade", full=True)
    sweep_rollback(tmp_path / "rollback", full=True)


@pytest.mark.slow
def test_a_kill_at_every_mutation_of_a_store(finished_run, tmp_path):  # noqa: F811
    sweep_store(finished_run, tmp_path, full=True)
