"""A user's folder tracked by content, not by the folder's time stamp (torch-free: the workflow calls it while
building the DAG).

A directory's modification time changes only when an entry of the directory itself changes, so an image
added, replaced or removed under `train/<wnid>/` left the ImageNet builder "up to date". Instead every image's
relative path, size and modification time go into a listing whose digest is written to a small file, and the
file is rewritten only when the digest changes: rules that read the folder take that file as an input, so a
changed image reruns them (and what depends on them) and an untouched folder reruns nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

IMAGE_SUFFIXES = {".jpeg", ".jpg", ".png"}


def listing_digest(root: str | os.PathLike) -> tuple[str, int]:
    """(sha256 of every image's relative path, size and mtime in ns, sorted; the number of images) under root."""
    root = Path(root)
    entries = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in files:
            if name.startswith(".") or Path(name).suffix.lower() not in IMAGE_SUFFIXES:
                continue
            path = Path(folder) / name
            stat = path.stat()
            entries.append(f"{path.relative_to(root)}\t{stat.st_size}\t{stat.st_mtime_ns}")
    entries.sort()
    return hashlib.sha256("\n".join(entries).encode()).hexdigest(), len(entries)


def track_folder(root: str | os.PathLike, record: str | os.PathLike) -> str:
    """Write `record` (JSON: folder, digest, image count) unless it already holds this folder's digest; return
    its path, for a rule's input."""
    digest, count = listing_digest(root)
    record = Path(record)
    wanted = {"folder": str(Path(root).resolve()), "digest": digest, "images": count}
    try:
        if json.loads(record.read_text()) == wanted:
            return str(record)
    except (FileNotFoundError, ValueError):
        pass
    record.parent.mkdir(parents=True, exist_ok=True)
    temporary = record.with_suffix(".tmp")
    temporary.write_text(json.dumps(wanted, indent=1) + "\n")
    temporary.replace(record)
    return str(record)
