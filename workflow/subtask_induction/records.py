"""Finished sweep points kept as records, so that a pack trains only what is new (docs/running.md, "Packs").

A pack (several sweep points trained by one process: arithmetic transfer points, submasking points) writes
each point's outputs and, next to them, a record of each: a hard link (a copy where links are not
possible) that survives Snakemake deleting a job's outputs before it reruns the job. The point's JSON
output carries its fingerprint; when the pack runs again (a seed was added, a pack was re-formed, the job
was killed), every point whose record holds the same fingerprint is put back instead of trained again.
The pack writes a manifest last: its points, and which it restored, trained, or lost to a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .runtime import save_json


def record_of(output: str | Path) -> Path:
    """metrics.json -> record.json; mask.pt -> record_mask.pt (beside the output)."""
    output = Path(output)
    return output.with_name("record.json" if output.name == "metrics.json" else f"record_{output.name}")


def _link(source: Path, target: Path) -> None:
    """target becomes the same file as source, atomically (a hard link, else a copy)."""
    tmp = target.with_name(f".{target.name}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:  # a file system without hard links
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def restore(outputs: list[str | Path], fingerprint: str) -> bool:
    """Put a finished point's records back as its outputs, if its JSON record (the first output's) was
    written for `fingerprint` and every record exists."""
    records = [record_of(output) for output in outputs]
    try:
        finished = json.loads(records[0].read_text())
    except (OSError, ValueError):
        return False
    if finished.get("fingerprint") != fingerprint or not all(record.is_file() for record in records):
        return False
    for record, output in zip(records, outputs):
        _link(record, Path(output))
    return True


def keep(outputs: list[str | Path]) -> None:
    """Record a finished point's outputs (the first one a JSON file holding its fingerprint). The JSON
    record is linked last: a kill in between leaves an old fingerprint beside new files (retrained on the
    next run), never a new fingerprint beside an old mask (restored as if it were current)."""
    for output in list(outputs[1:]) + [outputs[0]]:
        _link(Path(output), record_of(output))


def write_manifest(path: str | Path | None, points: list[str], restored: list[str], trained: list[str],
                   failed: list[str] = ()) -> None:
    """What a pack did with its points (written last, so a manifest means the pack finished)."""
    if path:
        save_json({"points": list(points), "restored": list(restored), "trained": list(trained),
                   "failed": list(failed)}, path)
