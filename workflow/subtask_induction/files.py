"""The package's one way to write a file: atomic and durable. Torch-free (the Snakefile, the listings, the steps and
the run upgrade all write through it).

Atomic: the new content goes to a temporary file beside the target and is renamed onto it, so a reader (another job,
a killed run's resume) never sees half a file. Durable: the temporary file is fsynced before the rename and the folder
after it, so after a power loss the target holds the old content or the new, never an empty file. The target keeps
its mode and group where it exists (a shared group's read-only record stays read-only, Snakemake's 0660 stays
writable by the group); a new file gets what a plain open() would give (0666 less the umask), not mkstemp's 0600."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path


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
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
