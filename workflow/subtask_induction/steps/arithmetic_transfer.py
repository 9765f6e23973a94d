"""Transfer sweep points: train variants (SI or a control) on the target with n disambiguation rows.

One process trains a pack of points that share their shapes (depth and number of training rows) as one
stacked model (arithmetic.stacked; docs/running.md, "Packs"); a pack of one is a single point. Each point trains a
fixed number of epochs on every a=b row and its n disambiguation rows (the paper's rows) and records, per
epoch, the eval accuracy (target-labelled a!=b rows); the test rows are scored at the epochs the protocols select
(arithmetic.transfer.PackEvaluation). Its metrics.json reports the test
metrics under each selection protocol of protocols.py, `eval` (the paper's) and `last` (leak-free), both from
this one run, and under `rows` what the run trained on. With `holdout_fraction` > 0 the run is another
experiment: it trains on the rest of its rows, records accuracy and loss on the held-out slice, and adds the
`train_holdout` protocol; its rows then are not the paper's, and its record says so (`rows.paper_rows`).

Records (sweep.py): next to each metrics.json, `record.json` (a hard link to it) survives Snakemake deleting
the job's outputs. A pack restores every point whose record was written for the same fingerprint
(arithmetic/transfer.py says what it covers) instead of training it again, so adding a replicate trains only
the new points and a failed or killed pack does not retrain its finished members. --retrain ignores records;
so does a point with "retrain": true (a single-point rerun).
"""

from __future__ import annotations

from ..arithmetic.transfer import Inputs, point_seeds, train_points
from ..method.kinds import batch_rows
from ..runtime import configure
from ..sweep import read_points, run_pack
from .common import parser, require
from ..timing import run_step

# identity: the point's identity (points.ArithmeticPoint.identity: chain, layers, variant, n, replicate, ...),
# recorded as given; variant_settings: its variant's config settings; then the files it reads and writes.
POINT_KEYS = ("identity", "variant_settings", "base", "subnetwork", "data", "out")


def main(argv=None):
    args = parse_arguments(argv)
    configure(args.threads, point_seeds(args.points[0])["batches"])
    inputs = Inputs.load(args.points, args.settings)
    run_pack(args.points, lambda point: [point["out"]], inputs.fingerprint,
             lambda todo: train_points(todo, inputs, args.device, args.checkpoint, args.checkpoint_interval_s),
             args.manifest, retrain=args.retrain)


def parse_arguments(argv):
    p = parser(__doc__)
    p.add_argument("--points", required=True,
                   help=f"JSON file: the list of points, each with {list(POINT_KEYS)}; all with the same n")
    p.add_argument("--checkpoint", required=True, help="the pack's resume checkpoint")
    p.add_argument("--manifest", help="written last: the pack's points, and which were trained or restored")
    p.add_argument("--retrain", action="store_true", help="train every point, ignoring finished records")
    args = p.parse_args(argv)
    require(args.settings, "training")
    require(args.settings["training"], "epochs", "batch_size", "lr", "holdout_fraction",
            where="transfer training settings")
    args.points = points = read_points(args.points, POINT_KEYS)
    for point in points:
        require(point["identity"], "chain", "variant", "n", "replicate", where=f"identity of {point['out']}")
        require(point["variant_settings"], "kind", "lr_scale", "inherit_unmasked",
                where=f"variant '{point['identity']['variant']}'")
    if len({point["identity"]["n"] for point in points}) != 1:
        raise SystemExit("error: a pack shares its number of training rows; got n = "
                         f"{sorted({q['identity']['n'] for q in points})}")
    if len({point["out"] for point in points}) != len(points):
        raise SystemExit("error: two points of the pack write the same file")
    batches = {batch_rows(point["variant_settings"]) for point in points}
    if len(batches) != 1:
        raise SystemExit(f"error: a pack trains one kind of batch; got (subtask_rows, task_marker) {sorted(map(str, batches))}")
    rows, _ = next(iter(batches))
    if rows and any("subtask_data" not in point for point in points):
        raise SystemExit(f"error: subtask_rows {rows} needs each point's subtask_data (the discovery dataset)")
    return args


if __name__ == "__main__":
    run_step(main)
