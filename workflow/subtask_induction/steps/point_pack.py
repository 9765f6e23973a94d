"""Several points of a one-point step in one process (a pack; docs/running.md, "Packs"): the imports and the
start-up are paid once, not once per point.

The step's own `main(argv)` runs each point, with exactly the arguments its job alone would get, from the same
state a fresh process starts in (torch's generator at its start-up seed; every step seeds every generator from
its point's own seeds before it draws), so a point's numbers do not depend on its pack. Records (sweep.py): once a
point's outputs are written, its first output (its metrics JSON) gets the point's fingerprint and the outputs
are linked to records beside them; a point whose records hold the same fingerprint is restored instead of
trained. The fingerprint covers the step, the point's arguments, the device, the contents of the files it reads
and the code (records.fingerprint): a retrained base retrains the points that read it, and only those.
A point's resume checkpoints are deleted once its records are written (a job killed before keeps them).

    python -m subtask_induction.steps.point_pack --step vision_transfer --points P.json --manifest M.json \\
        --threads 1 --device cpu --checkpoint-interval-s 60

Each point of P.json: {"name", "argv" (the step's arguments but --threads, --device, --checkpoint-interval-s),
"outputs" (the first a JSON file), "reads" (files and folders whose contents the point's numbers depend on),
"checkpoints" (files deleted once the point is kept), "retrain" (optional: train even with a finished record)}.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
from pathlib import Path

import torch

from ..records import fingerprint
from ..runtime import content_hash, save_json
from ..sweep import read_points, run_pack
from ..timing import run_step
from .common import parser

POINT_KEYS = ("name", "argv", "outputs", "reads", "checkpoints")
# The one-point steps a pack may run (their `main(argv)`): the steps that train or score one point.
STEPS = ("arithmetic_base", "arithmetic_discover", "vision_base", "vision_discover", "vision_transfer",
         "vision_cue_conflict")
# torch's default generator as a fresh process has it (its start-up seed), put back before every point
_FRESH_SEED = torch.initial_seed()


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--step", required=True, choices=STEPS, help="the one-point step each point runs")
    p.add_argument("--points", required=True, help=f"JSON file: the pack's points, each with {list(POINT_KEYS)}")
    p.add_argument("--manifest", required=True, help="written last: the pack's points, and which were trained or restored")
    args = p.parse_args(argv)
    points = read_points(args.points, POINT_KEYS)
    for point in points:
        if not point["outputs"] or not str(point["outputs"][0]).endswith(".json"):
            raise SystemExit(f"error: point {point['name']} of {args.points}: its first output must be a JSON file")
    step = importlib.import_module(f"{__package__}.{args.step}")
    common = ["--threads", str(args.threads), "--device", args.device,
              "--checkpoint-interval-s", repr(args.checkpoint_interval_s)]
    digest = functools.lru_cache(maxsize=None)(content_hash)  # a data folder the points share is read once

    def point_fingerprint(point):
        return fingerprint({"step": args.step, "device": args.device}, point["argv"],
                           [digest(path) for path in point["reads"]])

    def train(todo):
        for point in todo:
            torch.manual_seed(_FRESH_SEED)
            try:
                step.main(point["argv"] + common)
            except SystemExit as error:
                if error.code in (None, 0):
                    raise SystemExit(f"error: point {point['name']}: the step exited before writing") from None
                yield point, str(error.code)
                continue
            except Exception as error:  # noqa: BLE001 (one point's failure is named; its mates still train)
                print(f"error: point {point['name']}: {type(error).__name__}: {error}", flush=True)
                yield point, f"{type(error).__name__}: {error}"
                continue
            mark(point["outputs"][0], point_fingerprint(point))
            gc.collect()
            yield point, None  # run_pack keeps its records before the next point trains
            for path in point["checkpoints"]:  # its records are written: its checkpoints have done their job
                Path(path).unlink(missing_ok=True)

    run_pack(points, lambda point: point["outputs"], point_fingerprint, train, args.manifest)


def mark(path: str, point_fingerprint: str) -> None:
    """The point's metrics JSON, with its fingerprint (what a record is restored by), written atomically."""
    record = json.loads(Path(path).read_text())
    save_json({**record, "fingerprint": point_fingerprint}, path)


if __name__ == "__main__":
    run_step(main)
