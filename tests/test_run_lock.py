"""A run's lock held by the kernel (issue 91; subtask_induction/run_lock.py): every process of a run (the make target's
Snakemake, a bare Snakemake under any interpreter option, each job step) holds a flock on the run folder's lock file, so
a leftover Snakemake lock is removed exactly when no process of a run of the folder is alive, whoever's and wherever
started, without reading /proc."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from subtask_induction import run_lock

ROOT = Path(__file__).resolve().parents[1]
MODULE = [sys.executable, str(ROOT / "workflow" / "subtask_induction" / "run_lock.py"), "--"]   # as make runs it
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "workflow"),
       "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

# A tiny workflow that holds the run lock as ours does (the Snakefile in its main process, the job as a step does)
TINY = f"""
import sys
sys.path.insert(0, {str(ROOT / "workflow")!r})
from subtask_induction import run_lock

RUN_LOCK = run_lock.hold_for_workflow(workflow)

rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "{sys.executable} job.py {{config[sleep]}} && echo done > {{output}}"
"""
JOB = """
import pathlib, sys, time
from subtask_induction import run_lock
run_lock.hold_shared(job=True)   # as every step's entry does (timing.run_step)
pathlib.Path("job_started").touch()
time.sleep(float(sys.argv[1]))
"""


def folder_with_workflow(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "Snakefile").write_text(TINY)
    (path / "job.py").write_text(JOB)
    return path


def started(command: list[str], folder: Path, sleep: float, run_folder: Path | None = None) -> subprocess.Popen:
    """A run in the background, its own session, started in `folder` (working in `run_folder`, default the same);
    returns once its job runs (and holds the lock)."""
    process = subprocess.Popen([*command, "--cores", "1", "--config", f"sleep={sleep}"], cwd=folder, env=ENV,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    while not ((run_folder or folder) / "job_started").exists():
        assert process.poll() is None and time.monotonic() < deadline, "the run never started its job"
        time.sleep(0.2)
    return process


def through_make(folder: Path, sleep: float, **kwargs) -> subprocess.CompletedProcess:
    """The make targets' way: this file, then Snakemake exec'd holding the lock."""
    return subprocess.run([*MODULE, "snakemake", "--cores", "1", "--config",
                           f"sleep={sleep}"], cwd=folder, env=ENV, capture_output=True, text=True, timeout=120,
                          **kwargs)


def snakemake_locks(folder: Path) -> list[Path]:
    locks = folder / run_lock.SNAKEMAKE_LOCKS
    return sorted(locks.iterdir()) if locks.is_dir() else []


def job_pids(folder: Path) -> list[int]:
    """The job's process (python job.py), found by its command line: a test's own bookkeeping, not the module's."""
    out = subprocess.run(["pgrep", "-f", "job.py"], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in out if Path(f"/proc/{pid}/cwd").resolve() == folder.resolve()]


def test_a_killed_snakemake_whose_job_still_runs_keeps_its_lock(tmp_path):
    folder = folder_with_workflow(tmp_path / "run")
    run = started([*MODULE, "snakemake"], folder, 60)
    assert snakemake_locks(folder)
    os.kill(run.pid, signal.SIGKILL)   # Snakemake alone (the make target exec'd it): its job goes on
    run.wait()
    jobs = job_pids(folder)
    assert jobs, "the job outlived its Snakemake"
    with pytest.raises(run_lock.Held, match="a run of this folder is alive"):
        run_lock.start(folder, ["snakemake"])
    assert snakemake_locks(folder)   # kept: the next make would otherwise start the job beside the live one
    refused = through_make(folder, 0)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "snakemake --unlock" in refused.stderr
    assert "taken by pid" in refused.stderr   # the file names who took it
    for pid in jobs:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.3)
    fd, line = run_lock.start(folder, ["snakemake"])   # now dead: removed, with the line
    os.close(fd)
    assert line and "removed the lock a killed Snakemake run left" in line and not snakemake_locks(folder)


def test_a_live_snakemake_under_interpreter_options_keeps_its_lock(tmp_path):
    folder = folder_with_workflow(tmp_path / "run")
    run = started([sys.executable, "-X", "importtime", "-W", "ignore", "-m", "snakemake"], folder, 60)
    try:
        with pytest.raises(run_lock.Held):
            run_lock.start(folder, ["snakemake"])
        assert snakemake_locks(folder)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()


def test_a_sigkill_of_the_whole_run_leaves_a_lock_the_next_run_removes_and_it_resumes(tmp_path):
    folder = folder_with_workflow(tmp_path / "run")
    run = started([*MODULE, "snakemake"], folder, 60)
    os.killpg(run.pid, signal.SIGKILL)   # Snakemake and its job, as a closed session kills them
    run.wait()
    time.sleep(0.3)
    assert snakemake_locks(folder)
    resumed = through_make(folder, 0)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "removed the lock a killed Snakemake run left" in resumed.stderr
    assert (folder / "done.txt").read_text() == "done\n" and not snakemake_locks(folder)


def dead_lock(folder: Path) -> Path:
    locks = folder / run_lock.SNAKEMAKE_LOCKS
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("x")
    return locks


def test_an_unrelated_snakemake_in_another_folder_leaves_a_dead_lock_removable(tmp_path):
    elsewhere = folder_with_workflow(tmp_path / "elsewhere")
    run = started([sys.executable, "-m", "snakemake", "--directory", str(elsewhere), "--snakefile",
                   str(elsewhere / "Snakefile")], tmp_path, 60, run_folder=elsewhere)
    try:
        with pytest.raises(run_lock.Held):   # the live run holds its own folder's lock, not the folder it started in
            run_lock.start(elsewhere, ["snakemake"])
        mine = tmp_path / "mine"
        dead_lock(mine)
        fd, line = run_lock.start(mine, ["snakemake"])
        os.close(fd)
        assert line and not snakemake_locks(mine)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()


def as_nobody():
    os.setgid(65534)
    os.setuid(65534)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("flock"),
                    reason="switching to another uid needs root; util-linux's flock(1) holds the lock as that user")
def test_another_uids_live_run_keeps_its_lock_and_its_run_elsewhere_changes_nothing():
    base = Path(tempfile.mkdtemp(dir="/tmp"))   # a folder every user can reach (pytest's tmp_path is root's alone)
    try:
        os.chmod(base, 0o755)
        folder = base / "shared"
        fd, _ = run_lock.start(folder, ["snakemake"])   # the folder's lock file (0664: every user may read and lock it)
        os.close(fd)
        os.chmod(folder / ".snakemake", 0o755)
        holder = subprocess.Popen([shutil.which("flock"), "--shared", str(folder / run_lock.RUN_LOCK), "sleep", "60"],
                                  preexec_fn=as_nobody)
        try:
            deadline = time.monotonic() + 10
            probe = os.open(folder / run_lock.RUN_LOCK, os.O_RDONLY)
            while fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB) is None:   # taken: nobody's lock is not yet held
                fcntl.flock(probe, fcntl.LOCK_UN)
                assert holder.poll() is None and time.monotonic() < deadline, "the other user's holder never held it"
                time.sleep(0.1)
        except BlockingIOError:
            pass
        finally:
            os.close(probe)
        try:
            dead_lock(folder)
            with pytest.raises(run_lock.Held):
                run_lock.start(folder, ["snakemake"])
            assert snakemake_locks(folder)
            other = base / "other"
            dead_lock(other)   # another user's run in another folder: our dead lock here is still removed
            fd, line = run_lock.start(other, ["snakemake"])
            os.close(fd)
            assert line and not snakemake_locks(other)
        finally:
            holder.kill()
            holder.wait()
    finally:
        shutil.rmtree(base)


def test_no_proc_is_read_so_hidepid_changes_nothing():
    source = (ROOT / "workflow" / "subtask_induction" / "run_lock.py").read_text()
    assert "/proc" not in source and "PROC" not in source
    assert not (ROOT / "workflow" / "subtask_induction" / "stale_lock.py").exists()


def test_a_folder_that_cannot_hold_the_lock_stops_in_one_line_before_any_job(tmp_path, monkeypatch, capsys):
    execed = []
    monkeypatch.setattr(os, "execvp", lambda *args: execed.append(args))
    real_open = os.open

    def refused(path, *args, **kwargs):
        if str(path).endswith(("run.lock", "run.gate")):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refused)
    assert run_lock.main(["--", "snakemake", "--directory", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot open the run lock" in err and "Permission denied" in err
    monkeypatch.setattr(os, "open", real_open)

    def unsupported(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", unsupported)
    assert run_lock.main(["--", "snakemake", "--directory", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refuses a lock" in err and "local file system" in err
    assert execed == []   # nothing started


def test_a_job_step_holds_the_lock_for_its_whole_life(tmp_path, monkeypatch):
    from subtask_induction.timing import run_step

    (tmp_path / ".snakemake").mkdir()
    monkeypatch.chdir(tmp_path)
    seen = []

    def main():
        probe = os.open(tmp_path / run_lock.RUN_LOCK, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(probe)

    run_step(main)
    assert seen == ["held"]


def test_every_make_target_that_runs_snakemake_runs_it_under_the_lock():
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^LOCKED = \$\(BIN\)/python workflow/subtask_induction/run_lock\.py --$", text, re.M)
    runs = [line for line in text.splitlines() if re.search(r"\$\(BIN\)/snakemake --cores", line)]
    assert runs and all(line.startswith("\t$(LOCKED) $(BIN)/snakemake --cores") for line in runs), runs
    assert "stale_lock" not in text and "$(UNLOCK)" not in text
