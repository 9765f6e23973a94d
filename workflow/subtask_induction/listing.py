"""A user's folder tracked by content, not by time stamps (torch-free: the workflow calls it while building the
DAG).

A directory's modification time changes only when an entry of the directory itself changes, so an image
added, replaced or removed under `train/<wnid>/` left the ImageNet builder "up to date"; and an image's own
time changes when nothing in it does (`touch`, a copy to a cluster's scratch disk, `rsync` without `-t`, a
restore from a backup). So every image's relative path, size and **content hash** go into a listing whose digest
is written to a small file, rewritten only when the digest changes: rules that read the folder take that file
as an input, so a changed image reruns them (and what depends on them) and an untouched, touched or copied
folder reruns nothing.

Hashing every image on every DAG build would cost a read of the whole dataset each time, so (as DVC does) a
cache beside the record keeps each image's (size, modification time) -> sha256: only images whose size or time
changed are read again (benchmarks/listing_cost.py prints the cost per 10,000 images).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .files import write_json

IMAGE_SUFFIXES = {".jpeg", ".jpg", ".png"}


def _images(root: Path):
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in files:
            if not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES:
                yield Path(folder) / name


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def listing_digest(root: str | os.PathLike, cache: dict | None = None) -> tuple[str, int, dict]:
    """(sha256 of every image's relative path, size and content sha256, sorted; the number of images; the cache
    of relative path -> [size, mtime in ns, sha256] for the next call). `cache` (the previous call's) saves
    reading the images whose size and time are unchanged."""
    root, cache = Path(root), cache or {}
    entries, fresh = [], {}
    for path in _images(root):
        name, stat = str(path.relative_to(root)), path.stat()
        known = cache.get(name)
        if known and known[0] == stat.st_size and known[1] == stat.st_mtime_ns:
            content = known[2]
        else:
            content = file_sha256(path)
        fresh[name] = [stat.st_size, stat.st_mtime_ns, content]
        entries.append(f"{name}\t{stat.st_size}\t{content}")
    entries.sort()
    return hashlib.sha256("\n".join(entries).encode()).hexdigest(), len(entries), fresh


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


def track_folder(root: str | os.PathLike, record: str | os.PathLike) -> str:
    """Write `record` (JSON: digest, image count) unless it already holds this folder's digest; return its path,
    for a rule's input. The hash cache lives beside it (`<record>.files.json`)."""
    record = Path(record)
    cache_file = record.with_name(record.stem + ".files.json")
    cache = _read_json(cache_file)
    digest, count, fresh = listing_digest(root, cache if isinstance(cache, dict) else None)
    if fresh != cache:
        write_json(cache_file, fresh)
    wanted = {"digest": digest, "images": count}
    if _read_json(record) != wanted:
        write_json(record, wanted)
    return str(record)


def folder_digest(record: str | os.PathLike) -> str:
    """The content digest a `track_folder` record holds ('' for no record): a rule's params, so that the rule
    reruns when the folder's content changes while its input files stay the same."""
    value = _read_json(Path(record)) if record else None
    return value["digest"] if isinstance(value, dict) else ""
