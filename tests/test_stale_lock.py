"""A Snakemake run killed with SIGKILL resumes by the same make command: its lock is removed only where no Snakemake on
this host works in the folder, and only where that is seen: a lock another user owns, /proc mounted with hidepid, or a
process that cannot be read keeps the lock and says so in one line (subtask_induction/stale_lock.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from subtask_induction import stale_lock

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

TINY = """
rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "sleep {config[sleep]} && echo done > {output}"
"""


def run(folder: Path, sleep: float) -> subprocess.CompletedProcess:
    return subprocess.run([str(SNAKEMAKE), "--cores", "1", "--config", f"sleep={sleep}"], cwd=folder,
                          capture_output=True, text=True, timeout=120)


def test_a_snakemake_killed_mid_job_resumes_by_the_same_command(tmp_path):
    (tmp_path / "Snakefile").write_text(TINY)
    job = subprocess.Popen([str(SNAKEMAKE), "--cores", "1", "--config", "sleep=60"], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    locks = tmp_path / ".snakemake" / "locks"
    deadline = time.monotonic() + 60
    while not (locks.is_dir() and any(locks.iterdir())):
        assert job.poll() is None and time.monotonic() < deadline, "Snakemake never took its lock"
        time.sleep(0.2)
    # While it runs, its lock is its own: nothing is removed.
    assert stale_lock.live_snakemakes(tmp_path) == [job.pid]
    assert stale_lock.clear(tmp_path) is None and any(locks.iterdir())
    os.killpg(job.pid, signal.SIGKILL)  # the run and its job, as a closed session kills them
    job.wait()

    refused = run(tmp_path, 0)
    assert refused.returncode != 0 and "cannot be locked" in refused.stderr  # what a user met before

    line = stale_lock.clear(tmp_path)
    assert line and "removed the lock a killed Snakemake run left" in line
    resumed = run(tmp_path, 0)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "done.txt").read_text() == "done\n"
    assert stale_lock.clear(tmp_path) is None  # a finished run leaves no lock


@pytest.mark.parametrize(("argv", "cwd", "folder"), [
    (["/v/bin/python", "/v/bin/snakemake", "--cores", "2"], "/w/run", "/w/run"),
    (["python", "-m", "snakemake", "-d", "runs/groupnorm"], "/w/run", "/w/run/runs/groupnorm"),
    (["snakemake", "--directory=/elsewhere"], "/w/run", "/elsewhere"),
    (["/v/bin/python", "-m", "subtask_induction.steps.train", "snakemake"], "/w/run", None),
    (["bash", "-c", "snakemake --cores 1"], "/w/run", None),
])
def test_which_processes_are_snakemake_and_where_they_work(argv, cwd, folder):
    found = stale_lock.snakemake_folder(argv, Path(cwd))
    assert found == (Path(folder).resolve() if folder else None)


def fake_proc(tmp_path: Path, monkeypatch, processes: dict[int, tuple[list[str], Path]],
              proc_options: str = "rw,nosuid,nodev,noexec,relatime") -> Path:
    """A /proc tree in tmp_path, the module's PROC: a pid's cmdline and `cwd` link, and its own mountinfo."""
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(
        "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"
        f"23 1 0:22 / {proc} rw,nosuid,nodev,noexec,relatime shared:12 - proc proc {proc_options}\n")
    for pid, (argv, cwd) in processes.items():
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (proc / str(pid) / "cwd").symlink_to(cwd)
    monkeypatch.setattr(stale_lock, "PROC", proc)
    return proc


def locked(folder: Path) -> Path:
    """A folder holding a killed Snakemake's lock (its two files)."""
    locks = folder / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(f"{folder}/in\n")
    (locks / "0.output.lock").write_text(f"{folder}/out\n")
    return locks


def unreadable(monkeypatch, path: Path, what: str) -> None:
    """`path` (a fake process's cwd or cmdline) raises PermissionError, as another user's does (root reads every one,
    so chmod cannot stand in)."""
    if what == "cwd":
        readlink = os.readlink
        monkeypatch.setattr(os, "readlink",
                            lambda p, *a, **k: _raise(p) if Path(p) == path else readlink(p, *a, **k))
    else:
        read_bytes = Path.read_bytes
        monkeypatch.setattr(Path, "read_bytes", lambda self: _raise(self) if self == path else read_bytes(self))


def _raise(path):
    raise PermissionError(13, "Permission denied", str(path))


def test_a_lock_another_user_owns_is_kept_and_the_line_says_whose(tmp_path, monkeypatch, capsys):
    run_folder = tmp_path / "shared"
    locks = locked(run_folder)
    os.chown(locks / "0.output.lock", 12345, 12345)  # a group-shared folder: user A's run, user B's make
    fake_proc(tmp_path, monkeypatch, {4242: (["bash"], tmp_path)})
    assert stale_lock.main([str(run_folder)]) == 0
    assert sorted(p.name for p in locks.iterdir()) == ["0.input.lock", "0.output.lock"]
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert "0.output.lock is owned by uid 12345, not you" in line
    assert f"snakemake --unlock --directory {run_folder}" in line


@pytest.mark.parametrize("what", ["cwd", "cmdline"])
def test_a_process_that_cannot_be_read_keeps_the_lock_and_the_line_names_it(tmp_path, monkeypatch, what):
    run_folder = tmp_path / "run"
    locks = locked(run_folder)
    proc = fake_proc(tmp_path, monkeypatch, {
        4242: (["/v/bin/python", "/v/bin/snakemake", "--cores", "4"], tmp_path / "elsewhere"),
        4343: (["/v/bin/python", "/v/bin/snakemake", "--cores", "4"], run_folder)})
    unreadable(monkeypatch, proc / "4343" / what, what)  # another user's live run in our folder
    line = stale_lock.clear(run_folder)
    assert len(list(locks.iterdir())) == 2
    assert line and "\n" not in line
    assert ("Snakemake process 4343's working folder cannot be read" if what == "cwd"
            else "process 4343's command line cannot be read") in line
    assert "snakemake --unlock --directory" in line
    decision = stale_lock.decide(run_folder)
    assert not decision.dead and decision.line() == line


def test_hidepid_keeps_the_lock_and_the_line_says_so(tmp_path, monkeypatch):
    run_folder = tmp_path / "run"
    locks = locked(run_folder)
    fake_proc(tmp_path, monkeypatch, {4242: (["bash"], run_folder)}, "rw,hidepid=invisible,gid=27")
    line = stale_lock.clear(run_folder)
    assert len(list(locks.iterdir())) == 2
    assert line and "is mounted with hidepid=invisible" in line and "--unlock" in line


@pytest.mark.parametrize(("options", "hidden"), [
    ("rw", False), ("rw,hidepid=0", False), ("rw,hidepid=off", False), ("rw,hidepid=1", True),
    ("rw,hidepid=2", True), ("rw,hidepid=noaccess", True), ("rw,hidepid=ptraceable", True)])
def test_which_hidepid_values_hide_processes(tmp_path, monkeypatch, options, hidden):
    fake_proc(tmp_path, monkeypatch, {}, options)
    if hidden:
        with pytest.raises(stale_lock.Unseen, match="hidepid"):
            stale_lock.check_proc_lists_all()
    else:
        stale_lock.check_proc_lists_all()


def test_a_process_that_ended_meanwhile_is_skipped_and_the_dead_lock_removed(tmp_path, monkeypatch):
    run_folder = tmp_path / "run"
    locks = locked(run_folder)
    proc = fake_proc(tmp_path, monkeypatch, {
        4242: (["snakemake", "--cores", "1"], run_folder), 4343: (["bash"], tmp_path)})
    (proc / "4242" / "cwd").unlink()  # a Snakemake that ended between its listing and its reading
    (proc / "4343" / "cmdline").unlink()
    line = stale_lock.clear(run_folder)
    assert line and "removed the lock a killed Snakemake run left" in line
    assert not any(locks.iterdir())


def test_a_readable_proc_with_no_snakemake_in_the_folder_removes_the_lock(tmp_path, monkeypatch):
    run_folder = tmp_path / "run"
    locks = locked(run_folder)
    proc = fake_proc(tmp_path, monkeypatch, {
        4242: (["snakemake", "--cores", "1"], tmp_path / "other"),  # another folder's run
        4343: (["sshd: alice"], Path("/")),  # another user's program: its cwd unreadable, and no Snakemake
        4444: ([], Path("/"))})  # a kernel thread
    unreadable(monkeypatch, proc / "4343" / "cwd", "cwd")
    assert stale_lock.live_snakemakes(run_folder) == []
    line = stale_lock.clear(run_folder)
    assert line and "removed the lock a killed Snakemake run left (2 files" in line
    assert not any(locks.iterdir())


def test_a_live_snakemake_in_the_folder_keeps_the_lock_without_a_line(tmp_path, monkeypatch):
    run_folder = tmp_path / "run"
    locks = locked(run_folder)
    fake_proc(tmp_path, monkeypatch, {4242: (["python", "-m", "snakemake", "-d", "run"], tmp_path)})
    assert stale_lock.clear(run_folder) is None and len(list(locks.iterdir())) == 2


def test_the_unlock_command_is_this_environments_snakemake_in_the_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program = Path(sys.executable).parent / "snakemake"
    assert program.exists(), "the venv's snakemake"
    assert stale_lock.unlock_command(Path(".")) == f"{program} --unlock"
    assert stale_lock.unlock_command(Path("runs/a b")) == f"{program} --unlock --directory 'runs/a b'"
    monkeypatch.chdir(ROOT)
    if program.is_relative_to(ROOT):
        assert stale_lock.unlock_command(Path("runs/x")).startswith(f"{program.relative_to(ROOT)} --unlock ")


def test_every_make_target_that_runs_snakemake_clears_its_own_folder_first():
    lines = (ROOT / "Makefile").read_text().splitlines()
    runs = [i for i, line in enumerate(lines) if re.match(r"\t\$\(BIN\)/snakemake --cores", line)]
    assert runs, "no snakemake run in the Makefile"
    for i in runs:
        directory = re.search(r"--directory (\S+)", lines[i])
        expected = "\t$(UNLOCK)" + (f" {directory.group(1)}" if directory else "")
        assert lines[i - 1] == expected, (lines[i - 1], lines[i])
