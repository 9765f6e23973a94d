"""A run's lock held by the kernel (issue 91): no live run's Snakemake lock is removed, no dead one is kept.

Snakemake locks a working folder in `.snakemake/locks/` while it runs and removes the lock when it ends; killed
(SIGKILL, a closed terminal, a session's end) it leaves the lock, and the same command then stops on "Directory cannot
be locked". Whether the run that left it is dead is what this module decides, and it asks the kernel rather than
reading processes: every process of a run holds a `flock` on one file of the run folder (RUN_LOCK), and the kernel
releases a process's flock only when the last descriptor holding it is closed, a SIGKILL included.

- A make target that starts the workflow runs Snakemake through `python workflow/subtask_induction/run_lock.py --
  snakemake ...`: it takes the file's exclusive lock without waiting. Taken, no process of an earlier run of this folder
  is alive, so a leftover `.snakemake/locks` is a dead run's and is removed, with one line saying so; the lock is then
  turned shared and Snakemake is exec'd holding it, for its whole life. Not taken, nothing is removed: one line names
  who holds it (the file records who took it, when, and the command) and the `snakemake --unlock` for a user who knows
  better, and the target stops.
- Snakemake itself (the Snakefile, in its main process) and every job step (`python -m subtask_induction.steps...`,
  whose descriptors Snakemake's shell closes) hold the shared lock for their whole life, so a bare `snakemake`, any
  interpreter option, and a job whose Snakemake was killed all keep the folder's lock held.
- Two make targets starting at once are ordered by a second file (RUN_GATE, exclusive, held only while one decides),
  so neither sees the other's moment between its exclusive and its shared lock.

A folder where the lock file cannot be opened, or a file system whose `flock` fails, stops the make target with one
line that says why and what to do, before any job. On a cluster (the SLURM profile) the jobs run on other hosts, where
this host's locks mean nothing: the submitting Snakemake holds the lock while jobs are queued and running; a job there
holds it only where the shared file system carries flock, and goes on without it where not (docs/running.md).

Torch-free, as the Snakefile and every step import it; run as a file it needs no PYTHONPATH, so the Snakemake it execs
gets the environment it was given. Its flock is the package's one (files.flock).

    python workflow/subtask_induction/run_lock.py [--] snakemake [ARGS...]     # a make target's run
"""

from __future__ import annotations

import fcntl
import getpass
import os
import shlex
import socket
import sys
import time
from pathlib import Path

if __package__:
    from .files import flock
else:   # run as a file (the make targets): the package beside it, not this folder, on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])
    from subtask_induction.files import flock

RUN_LOCK = Path(".snakemake") / "run.lock"
RUN_GATE = Path(".snakemake") / "run.gate"
SNAKEMAKE_LOCKS = Path(".snakemake") / "locks"


class LockError(Exception):
    """The run lock cannot be taken here at all (its message says why and what to do)."""


class Held(Exception):
    """A live process of a run of this folder holds the run lock (its message names who, and the way out)."""


def _open(path: Path) -> int:
    """The lock file's descriptor, the file and its folder made where missing; read-only where another user's file
    cannot be written (flock needs no write access)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o664)
        except PermissionError:
            return os.open(path, os.O_RDONLY)
    except OSError as error:
        raise LockError(f"cannot open the run lock {path} ({error.strerror}): the run folder must be writable by "
                        "whoever starts the run; run in a folder of your own, or fix its permissions") from error


def _flock(fd: int, operation: int, path: Path) -> bool:
    """files.flock, a file system that refuses it said as the run lock's LockError (a live run cannot be told from a
    dead one there)."""
    return flock(fd, operation, path, LockError)


def holder(folder: Path) -> str:
    """Who took the run lock last, as its file records it (one line), or "" where it records nothing."""
    try:
        return (folder / RUN_LOCK).read_text().strip().splitlines()[0]
    except (OSError, IndexError):
        return ""


def _record(fd: int, command: list[str]) -> None:
    """Write who holds the lock into its file (best effort: another user's read-only file records nothing)."""
    line = (f"pid {os.getpid()}, user {getpass.getuser()}, host {socket.gethostname()}, since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}: {shlex.join(command)}\n")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, line.encode(), 0)
    except OSError:
        pass


def unlock_command(folder: Path) -> str:
    """The `snakemake --unlock` that removes the folder's Snakemake lock by hand."""
    words = ["snakemake", "--unlock"] + ([] if Path(folder) == Path(".") else ["--directory", str(folder)])
    return shlex.join(words)


def start(folder: Path, command: list[str]) -> tuple[int, str | None]:
    """Decide for a run about to start in `folder`: (the run lock's descriptor, held shared and inheritable, for the
    run's Snakemake; the line saying a dead run's Snakemake lock was removed, or None). Held where a live process of a
    run of this folder holds the lock; LockError where the lock cannot be taken here."""
    folder = Path(folder)
    gate = _open(folder / RUN_GATE)
    try:
        _flock(gate, fcntl.LOCK_EX, folder / RUN_GATE)   # one deciding at a time
        fd = _open(folder / RUN_LOCK)
        if not _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, folder / RUN_LOCK):
            os.close(fd)
            who = holder(folder)
            raise Held(f"{folder}: a run of this folder is alive (its Snakemake or one of its jobs holds "
                       f"{folder / RUN_LOCK}" + (f"; taken by {who}" if who else "") + "), so its lock stays; wait "
                       f"for it to end, or, if you know it is dead, `{unlock_command(folder)}`")
        line = None
        locks = folder / SNAKEMAKE_LOCKS
        stale = sorted(locks.iterdir()) if locks.is_dir() else []
        if stale:   # no process of an earlier run holds the lock: its Snakemake lock is a dead run's
            for path in stale:
                path.unlink(missing_ok=True)
            line = f"{folder}: removed the lock a killed Snakemake run left ({len(stale)} file{'s' if len(stale) != 1 else ''}; no process of a run " \
                   "of this folder is alive)"
        _record(fd, command)
        _flock(fd, fcntl.LOCK_SH, folder / RUN_LOCK)   # the run's own: its jobs take it shared beside it
        os.set_inheritable(fd, True)
        return fd, line
    finally:
        os.close(gate)


def hold_shared(folder: Path = Path("."), job: bool = False) -> int | None:
    """Hold the run lock of `folder` shared for the rest of this process (Snakemake's main process; a job step with
    `job`): the descriptor stays open until the process ends. It waits only while a make target decides (its exclusive
    moment), never while a run holds the lock shared. A job step outside a run folder (no .snakemake/, a step run by
    hand or by a test) holds nothing; where the lock cannot be taken (a cluster node's file system without flock) a job
    goes on without it and Snakemake says so in one line: the make targets have stopped there before any job."""
    folder = Path(folder)
    if job and not (folder / ".snakemake").is_dir():
        return None
    try:
        fd = _open(folder / RUN_LOCK)
        _flock(fd, fcntl.LOCK_SH, folder / RUN_LOCK)
        return fd
    except LockError as error:
        if not job:
            print(f"warning: run lock: {error}", file=sys.stderr)
        return None


def hold_for_workflow(workflow) -> int | None:
    """The Snakefile's hold: its main process holds its folder's lock shared for its whole life (Snakemake changes to
    the run folder, its --directory, before it reads the Snakefile); a job's Snakemake on a cluster node holds nothing
    (its submitting Snakemake does)."""
    if not getattr(workflow, "is_main_process", True):
        return None
    return hold_shared(Path("."))


def snakemake_folder(argv: list[str]) -> Path:
    """The run folder of a Snakemake command line: its --directory (or -d), else the current folder."""
    folder = Path(".")
    for i, arg in enumerate(argv):
        if arg in ("--directory", "-d") and i + 1 < len(argv):
            folder = Path(argv[i + 1])
        elif arg.startswith("--directory="):
            folder = Path(arg.split("=", 1)[1])
    return folder


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: run_lock.py [--] snakemake [ARGS...]", file=sys.stderr)
        return 2
    try:
        _, line = start(snakemake_folder(command), command)
    except (Held, LockError) as error:
        print(f"run lock: {error}", file=sys.stderr)
        return 1
    if line:
        print(line, file=sys.stderr)
    sys.stdout.flush()
    os.execvp(command[0], command)   # the run's Snakemake, holding the shared lock for its whole life


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
