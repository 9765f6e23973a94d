"""A killed Snakemake's lock, removed so that the same command resumes, and only where its run is provably dead.

Snakemake locks a working folder's inputs and outputs in `.snakemake/locks/` for as long as it runs and removes the
lock when it ends. Killed (SIGKILL, a closed terminal, a session's or a job allocation's end), it leaves the lock, and
the next run of the same command stops on "Directory cannot be locked" until a person runs `snakemake --unlock`. The
make targets run this module first: where no Snakemake process on this host works in the folder, the lock is a dead
run's and is removed (what `snakemake --unlock` does); where one does, nothing is touched and Snakemake's own refusal
stands, as it should.

Removing a live run's lock lets a second run write the same outputs beside it, so "no Snakemake works here" must be
seen, never assumed from what could not be seen. Two users of one group may share a results folder, and /proc shows
another user's processes only in part: their command lines, but not their working folders, and under /proc's
`hidepid` option not even that. Where the lock might be another's live run's, this module removes nothing and says in
one line what it could not see and the `snakemake --unlock` that removes the lock by hand; Snakemake's own refusal
follows. It refuses where
- a lock file is owned by another user (their run's, whether or not it is alive: only they, or a person who knows
  it is dead, should remove it);
- /proc is mounted with `hidepid` (other users' processes are not listed at all);
- a process's command line cannot be read (it might be a Snakemake), or a Snakemake's working folder cannot be read
  (it might be ours). A process that is not a Snakemake by its command line cannot hold the lock, so another user's
  shell or a root daemon, whose working folder no other user may read, does not stop the removal. A process that
  ended meanwhile is skipped.
A Snakemake on another host of a shared file system is not visible here: run there, or unlock by hand.

Linux only (it reads /proc); elsewhere it does nothing and Snakemake's own message says what to do.

    python -m subtask_induction.stale_lock [FOLDER]
"""

from __future__ import annotations

import os
import pwd
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")

VISIBLE = {"0", "off"}  # hidepid values under which every process is listed; any other hides some


class Unseen(Exception):
    """What could not be seen that decides whether a live run holds the lock (its message says what)."""


def is_snakemake(argv: list[str]) -> bool:
    """Whether a command line is Snakemake's: its program, or `python -m snakemake`, among its first words."""
    names = [Path(arg).name for arg in argv[:3]]
    return "snakemake" in names or any(argv[i:i + 2] == ["-m", "snakemake"] for i in range(min(len(argv), 3)))


def snakemake_folder(argv: list[str], cwd: Path) -> Path | None:
    """The working folder of a process whose command line is Snakemake's (its `--directory`, else its cwd), or None."""
    if not is_snakemake(argv):
        return None
    folder = cwd
    for i, arg in enumerate(argv):
        if arg in ("--directory", "-d") and i + 1 < len(argv):
            folder = cwd / argv[i + 1]
        elif arg.startswith("--directory="):
            folder = cwd / arg.split("=", 1)[1]
    return folder.resolve()


def proc_options() -> list[str]:
    """The mount options of /proc (PROC): from its mountinfo, else from its mounts; Unseen where neither says."""
    points = {str(PROC), str(PROC.resolve())}
    for table, point_at, options_at in (("mountinfo", 4, -1), ("mounts", 1, 3)):
        try:
            lines = (PROC / "self" / table).read_text().splitlines()
        except OSError:
            continue
        found = None
        for line in lines:
            fields = line.split()
            if table == "mountinfo" and "-" in fields:  # ... mount-point per-mount-options [tags] - type source super
                tail = fields[fields.index("-") + 1:]
                if len(fields) > 5 and fields[point_at] in points and len(tail) >= 3:
                    found = fields[5].split(",") + tail[2].split(",")
            elif table == "mounts" and len(fields) > 3 and fields[point_at] in points:
                found = fields[options_at].split(",")
        if found is not None:
            return found  # the last mount at that point is the one on top
    raise Unseen(f"{PROC}'s mount options cannot be read (from {PROC}/self/mountinfo or {PROC}/self/mounts)")


def check_proc_lists_all() -> None:
    """Unseen where /proc is mounted with `hidepid` other than 0/off (other users' processes are hidden)."""
    for option in proc_options():
        if option.startswith("hidepid=") and option.split("=", 1)[1] not in VISIBLE:
            raise Unseen(f"{PROC} is mounted with {option} (other users' processes are hidden)")


def live_snakemakes(folder: Path) -> list[int]:
    """Process ids of the Snakemake processes on this host (other than this one) working in `folder`.

    Unseen where a process's command line, or a Snakemake's working folder, cannot be read; a process that ended
    meanwhile is skipped."""
    folder = folder.resolve()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        except OSError as error:
            raise Unseen(f"process {entry.name}'s command line cannot be read ({error.strerror or error})") from error
        if not is_snakemake(argv):
            continue  # kernel threads (no command line) and every other program: none holds a Snakemake lock
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile (a zombie has no working folder either)
        except OSError as error:
            raise Unseen(f"Snakemake process {entry.name}'s working folder cannot be read "
                         f"({error.strerror or error})") from error
        if snakemake_folder(argv, cwd) == folder:
            found.append(int(entry.name))
    return found


def owner(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def check_locks_are_ours(held: list[Path]) -> None:
    """Unseen where a lock file is owned by a user other than this process's (its effective uid)."""
    me = os.geteuid()
    for path in held:
        try:
            uid = path.lstat().st_uid
        except FileNotFoundError:
            continue  # its run ended meanwhile
        if uid != me:
            raise Unseen(f"lock file {path} is owned by {owner(uid)}, not you")


def unlock_command(folder: Path) -> str:
    """The command that removes `folder`'s lock by hand, run where this one was: this environment's Snakemake."""
    here = Path.cwd()
    program = Path(sys.executable).parent / "snakemake"
    if not program.exists():
        name = "snakemake"
    elif program.is_relative_to(here):
        name = str(program.relative_to(here))
    else:
        name = str(program)
    words = [name, "--unlock"]
    if folder.resolve() != here.resolve():
        words += ["--directory", str(folder)]
    return shlex.join(words)


@dataclass(frozen=True)
class Decision:
    """What to do with `folder`'s lock: `held` its lock files (none: nothing to do), `live` the Snakemake processes
    working there (their lock stands), `unseen` what could not be seen where it cannot be ruled out that one does."""
    folder: Path
    held: tuple[Path, ...] = ()
    live: tuple[int, ...] = ()
    unseen: str | None = None

    @property
    def dead(self) -> bool:
        """Whether the lock is provably a dead run's, and so removed."""
        return bool(self.held) and not self.live and self.unseen is None

    def line(self) -> str | None:
        """The one line to tell a person where the lock is kept for what could not be seen, else None."""
        if not self.held or self.live or self.unseen is None:
            return None
        return (f"{self.folder}: kept the Snakemake lock in .snakemake/locks/ because {self.unseen}, so a live run "
                f"there cannot be ruled out; if none runs, remove it by hand: {unlock_command(self.folder)}")


def decide(folder: Path) -> Decision:
    """Whether `folder`'s Snakemake lock is provably a dead run's (see the module's docstring)."""
    locks = folder / ".snakemake" / "locks"
    held = tuple(sorted(locks.iterdir())) if locks.is_dir() else ()
    if not held or not PROC.is_dir():
        return Decision(folder)
    try:
        check_locks_are_ours(list(held))
        check_proc_lists_all()
        live = live_snakemakes(folder)
    except Unseen as unseen:
        return Decision(folder, held, unseen=str(unseen))
    return Decision(folder, held, live=tuple(live))


def clear(folder: Path) -> str | None:
    """Remove a dead run's Snakemake lock in `folder`; a line saying what was done, or why the lock was kept where
    what decides it could not be seen, or None where nothing was to be done (no lock, or a live run's)."""
    decision = decide(folder)
    if not decision.dead:
        return decision.line()  # a running Snakemake's lock: its own refusal names the folder
    for path in decision.held:
        path.unlink(missing_ok=True)  # killed halfway, the next run removes the rest
    return (f"{folder}: removed the lock a killed Snakemake run left ({len(decision.held)} files in .snakemake/locks/; "
            "no Snakemake process on this host works in this folder); its finished jobs are kept and it resumes")


def main(args: list[str]) -> int:
    line = clear(Path(args[0] if args else "."))
    if line:
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
