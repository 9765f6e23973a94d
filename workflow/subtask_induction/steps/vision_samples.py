"""A grid of example images (original, mean-pooled, cue-conflict), one per category, so a person can see
the data the vision family trains and tests on."""

from pathlib import Path

import numpy as np

from ..images import list_images, read_rgb
from ..vision.cue_conflict import read_cue_conflict
from ..vision.figures import sample_grid
from ..vision.classes import run_classes
from .common import parser
from ..timing import run_step


def _first_per_category(items):
    chosen = {}
    for item in items:
        chosen.setdefault(item.relative.split("/")[0], item)
    return chosen


def _load(path):
    return np.asarray(read_rgb(path))


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--test", required=True)
    p.add_argument("--pooled-test", nargs="+", required=True)
    p.add_argument("--cue-conflict", nargs="?", help="without one (or without a value), the grid has no cue-conflict row")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    classes = run_classes(args.settings)
    originals = _first_per_category(list_images(args.test, classes, what="test images"))
    pooled = {Path(i.relative).with_suffix("").as_posix(): i for i in list_images(args.pooled_test, classes, what="pooled images")}
    categories = sorted(originals)
    conflict = {}
    for image in read_cue_conflict(Path(args.cue_conflict), classes) if args.cue_conflict else []:
        if image.shape != image.texture:
            conflict.setdefault(image.shape, image)
    rows = [
        ("original", [_load(originals[c].path) for c in categories], categories),
        ("mean-pooled", [_load(pooled[Path(originals[c].relative).with_suffix("").as_posix()].path) for c in categories],
         categories),
    ] + ([("cue-conflict", [_load(conflict[c].path) for c in categories if c in conflict],
           [f"{c}/{conflict[c].texture}" for c in categories if c in conflict])] if conflict else [])
    sample_grid(rows, Path(args.out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_step(main)
