"""The package's one way to write a file: atomic and durable. Torch-free (the Snakefile, the listings, the steps and
the run upgrade all write through it).

Atomic: the new content goes to a temporary file beside the target and is renamed onto it, so a reader (another job,
a killed run's resume) never sees half a file. Durable: the temporary file is fsynced before the rename and the folder
after it, so after a power loss the target holds the old content or the new, never an empty file. The target keeps
its mode and group where it exists (a shared group's read-only record stays read-only, Snakemake's 0660 stays
writable by the group); a new file gets what a plain open() would give (0666 less the umask), not mkstemp's 0600.

A process killed mid-write (SIGKILL: no `except` runs) leaves its temporary behind. Every temporary is named in one
pattern, `.NAME.XXXXXXXX.atomic-tmp` (TEMPORARY_SUFFIX), so a tool that owns a folder removes them before it starts
(remove_temporaries); no other file of this package or of Snakemake ends so.

`FolderLock` is the package's one lock: `fcntl.flock` on a lock file, which the kernel releases when its holder dies,
so a crashed tool never leaves a lock that a person must delete; two live holders still refuse each other."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

TEMPORARY_SUFFIX = ".atomic-tmp"


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_folder(folder: Path) -> None:
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def atomic_write(path: str | os.PathLike, write, mode: int | None = None) -> None:
    """Call write(temporary_path) to fill a temporary file beside `path`, then make it `path` atomically and
    durably, keeping `path`'s mode and group where it exists (`mode`: this mode instead, set before the rename)."""
    path = Path(path)
    make_folder(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX)
    os.close(handle)
    try:
        write(temporary)
        try:
            before = path.stat()
            kept, group = stat.S_IMODE(before.st_mode), before.st_gid
        except FileNotFoundError:
            kept, group = 0o666 & ~current_umask(), None
        mode = kept if mode is None else mode
        if group is not None and group != os.stat(temporary).st_gid:
            try:
                os.chown(temporary, -1, group)
            except PermissionError:
                pass   # not a member of that group: the file keeps ours, as a plain write by us would
        os.chmod(temporary, mode)
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
        fsync_folder(path.parent)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike, data: bytes, mode: int | None = None) -> None:
    atomic_write(path, lambda temporary: Path(temporary).write_bytes(data), mode)


def write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda temporary: Path(temporary).write_text(text))


def write_json(path: str | os.PathLike, value, indent: int = 1) -> None:
    """`value` as JSON with sorted keys, in the layout the listings and the upgrade write (indent 1)."""
    write_text(path, json.dumps(value, indent=indent, sort_keys=True) + "\n")


def copy_file(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """`source`'s bytes at `target`, atomically and durably (a record's copy survives a power loss whole or not at all)."""
    write_bytes(target, Path(source).read_bytes())


def is_temporary(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(TEMPORARY_SUFFIX)


def remove_temporaries(*folders: str | os.PathLike) -> list[Path]:
    """Remove the temporaries a killed atomic_write left under `folders` (recursively); returns them. Call it only in
    a folder nothing else writes at the time (a tool holding its lock, Snakemake's lock checked)."""
    found = []
    for folder in map(Path, folders):
        if folder.is_dir():
            found += [p for p in folder.rglob(f"*{TEMPORARY_SUFFIX}") if is_temporary(p) and p.is_file()]
    for path in found:
        path.unlink(missing_ok=True)
    return found


def remove_tree(folder: str | os.PathLike) -> None:
    """A folder and everything in it, gone for good once this returns (its parent fsynced)."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
        fsync_folder(folder.parent)


def make_folder(folder: str | os.PathLike) -> Path:
    """`folder` and its missing parents, each new one fsynced into its parent, so a crash after this returns cannot
    lose them (a SIGKILL keeps the page cache; a power cut would not)."""
    folder = Path(folder)
    missing = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for new in reversed(missing):
        new.mkdir(exist_ok=True)
        fsync_folder(new.parent)
    return folder


def flock(handle: int, operation: int, path: str | os.PathLike, error=RuntimeError) -> bool:
    """`fcntl.flock(handle, operation)`: True where taken; False where another process holds it and `operation` does not
    wait (LOCK_NB); a file system that refuses flock raises `error` in one line saying what to do. FolderLock and the
    run lock (run_lock.py) take every lock through it."""
    try:
        fcntl.flock(handle, operation)
        return True
    except BlockingIOError:
        return False
    except OSError as refused:
        raise error(f"the file system of {path} refuses a lock (flock: {refused.strerror}): on Lustre mount it with the "
                    "flock option, on NFS without nolock (docs/running.md, \"Shared file systems\"), or work in a folder "
                    "on a local file system") from None


class FolderLock:
    """An exclusive lock on `path` (created if absent) held while the `with` block runs; `refused` is the message
    raised (with the holder's pid) when a live process holds it. The holder removes the file when it is done, and only
    the file it locked (a file another process made at the path since is that one's); one a killed holder left is no
    lock (nobody holds its flock) and the next holder takes it. A lock file this user cannot open for writing, and a
    file system that refuses flock, are each refused in one line saying what to do."""

    def __init__(self, path: str | os.PathLike, refused: str, error=RuntimeError):
        self.path, self.refused, self.error, self.handle = Path(path), refused, error, None

    def __enter__(self):
        make_folder(self.path.parent)
        while True:
            try:
                handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except PermissionError as error:
                owner = self.path.stat().st_uid if self.path.exists() else "?"
                raise self.error(f"cannot open the lock file {self.path} for writing ({error.strerror}; its owner's "
                                 f"uid is {owner}): run as that user, or remove the file if no process of theirs is "
                                 "running") from None
            try:
                taken = flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB, self.path, self.error)
            except self.error:
                os.close(handle)
                raise
            if not taken:
                holder = os.pread(handle, 64, 0).decode(errors="replace").strip() or "?"
                os.close(handle)
                raise self.error(f"{self.refused} (pid {holder} holds {self.path})") from None
            try:   # locked a file another holder had just removed: lock the one now at the path instead
                same = os.fstat(handle).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(handle)
        os.ftruncate(handle, 0)
        os.pwrite(handle, str(os.getpid()).encode(), 0)
        self.handle = handle
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            try:   # only the file this holder locked: one moved away and replaced at the path is another's lock
                mine = os.stat(self.path).st_ino == os.fstat(self.handle).st_ino
            except FileNotFoundError:
                mine = False
            if mine:
                self.path.unlink(missing_ok=True)   # while still held: a waiting process re-checks the inode it locked
            os.close(self.handle)   # closing the last descriptor releases the flock
            self.handle = None
        return False
