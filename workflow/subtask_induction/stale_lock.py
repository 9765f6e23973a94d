"""A killed Snakemake's lock, removed so that the same command resumes.

Snakemake locks a working folder's inputs and outputs in `.snakemake/locks/` for as long as it runs and removes the
lock when it ends. Killed (SIGKILL, a closed terminal, a session's or a job allocation's end), it leaves the lock, and
the next run of the same command stops on "Directory cannot be locked" until a person runs `snakemake --unlock`. The
make targets run this module first: where no Snakemake process on this host works in the folder, the lock is a dead
run's and is removed (what `snakemake --unlock` does); where one does, nothing is touched and Snakemake's own refusal
stands, as it should. A Snakemake on another host of a shared file system is not visible here: run there, or unlock
by hand.

Linux only (it reads /proc); elsewhere it does nothing and Snakemake's own message says what to do.

    python -m subtask_induction.stale_lock [FOLDER]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROC = Path("/proc")


def snakemake_folder(argv: list[str], cwd: Path) -> Path | None:
    """The working folder of a process whose command line is Snakemake's (its `--directory`, else its cwd), or None."""
    names = [Path(arg).name for arg in argv[:3]]
    is_snakemake = "snakemake" in names or any(argv[i:i + 2] == ["-m", "snakemake"] for i in range(min(len(argv), 3)))
    if not is_snakemake:
        return None
    folder = cwd
    for i, arg in enumerate(argv):
        if arg in ("--directory", "-d") and i + 1 < len(argv):
            folder = cwd / argv[i + 1]
        elif arg.startswith("--directory="):
            folder = cwd / arg.split("=", 1)[1]
    return folder.resolve()


def live_snakemakes(folder: Path) -> list[int]:
    """Process ids of the Snakemake processes on this host (other than this one) working in `folder`."""
    folder = folder.resolve()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone meanwhile, or another user's (no cwd to read: it cannot be working in our folder)
            continue
        if argv and snakemake_folder(argv, cwd) == folder:
            found.append(int(entry.name))
    return found


def clear(folder: Path) -> str | None:
    """Remove a dead run's Snakemake lock in `folder`; a line saying what was done, or None where nothing was."""
    locks = folder / ".snakemake" / "locks"
    held = sorted(locks.iterdir()) if locks.is_dir() else []
    if not held or not PROC.is_dir():
        return None
    live = live_snakemakes(folder)
    if live:
        return None  # a running Snakemake holds it: its own refusal names the folder
    for path in held:
        path.unlink(missing_ok=True)  # killed halfway, the next run removes the rest
    return (f"{folder}: removed the lock a killed Snakemake run left ({len(held)} files in .snakemake/locks/; "
            "no Snakemake process on this host works in this folder); its finished jobs are kept and it resumes")


def main(args: list[str]) -> int:
    line = clear(Path(args[0] if args else "."))
    if line:
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
