"""Sweep points trained in packs (several points in one process: arithmetic transfer points, submasking
points), for every family that has them: read the pack's points, restore the finished ones, train the rest,
keep each as it finishes, write the manifest (docs/running.md, "Packs"). A step hands `run_pack` its points,
a function that fingerprints a point and a function that trains the points to do.

Records: a pack writes each point's outputs and, next to them, a record of each: a hard link (a copy where
links are not possible) that survives Snakemake deleting a job's outputs before it reruns the job. The
point's JSON output carries its fingerprint; when the pack runs again (a seed was added, a pack was
re-formed, the job was killed), every point whose record holds the same fingerprint is put back instead of
trained again. The pack writes a manifest last: its points, and which it restored, trained, or lost to a
failure.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from .runtime import save_json


def read_points(path: str | Path, keys: Iterable[str]) -> list[dict]:
    """A pack's points, from the JSON file its rule wrote (the rules' `*_pack_points`), each with `keys`."""
    try:
        points = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"error: --points {path}: not a readable JSON file ({error})") from None
    if not isinstance(points, list) or not points:
        raise SystemExit(f"error: --points {path} lists no point")
    for point in points:
        missing = [key for key in keys if key not in point]
        if missing:
            raise SystemExit(f"error: point {point} of {path} lacks {missing}")
    return points


def run_pack(points: list[dict], outputs: Callable[[dict], list[str]], fingerprint: Callable[[dict], str],
             train: Callable[[list[dict]], Iterable[tuple[dict, str | None]]], manifest: str | None,
             retrain: bool = False) -> None:
    """A pack from start to end. `outputs(point)`: the point's output files, the first a JSON file holding
    its fingerprint. `train(todo)` yields `(point, None)` once a point's outputs are written (it is kept
    then, before the next point trains) and `(point, why)` for a point that failed. The points whose records
    hold their fingerprint are restored instead (all are trained with `retrain`, and a point with
    "retrain": true is). Failed points stop the job after the manifest, naming why; their mates are kept."""
    restored = [] if retrain else [q for q in points if not q.get("retrain") and restore(outputs(q), fingerprint(q))]
    todo = [q for q in points if q not in restored]
    print(f"pack of {len(points)}: {len(restored)} restored from their records, {len(todo)} to train", flush=True)
    trained, failed = [], {}
    for point, why in train(todo) if todo else ():
        if why is None:
            keep(outputs(point))
            trained.append(point)
        else:
            failed[outputs(point)[0]] = why
    write_manifest(manifest, [outputs(q)[0] for q in points], [outputs(q)[0] for q in restored],
                   [outputs(q)[0] for q in trained], list(failed))
    if failed:
        raise SystemExit("error: these points wrote nothing (their pack mates finished and are kept; a rerun trains "
                         "only these): " + "; ".join(f"{name}: {why}" for name, why in failed.items()))


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
