"""Geirhos' texture-vs-shape cue-conflict stimuli (paper §5): reading them and scoring a model's decisions.

Layout (texture-vs-shape `stimuli/style-transfer-preprocessed-512`): one folder per shape class, files
`<shape><i>-<texture><j>.png`, e.g. `airplane1-bicycle2.png`. Of the 1,280 images, 80 have shape ==
texture; they carry no conflict and are left out of every metric, as Geirhos does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from subtask_induction.vision.imagenet16 import CATEGORIES

_NAME = re.compile(r"(?P<shape>[a-z]+)\d+-(?P<texture>[a-z]+)\d+\.png")


@dataclass(frozen=True)
class ConflictImage:
    path: Path
    shape: str
    texture: str


def read_cue_conflict(folder: Path, categories=CATEGORIES) -> list[ConflictImage]:
    """Every stimulus under folder, sorted by (shape folder, file name); same-class images included.

    Hidden files (.DS_Store, ...) are skipped; any other file that does not fit the layout is a
    ValueError naming it, so a wrong folder fails loudly instead of scoring a partial set.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"cue-conflict folder {folder} does not exist")
    items = []
    for shape_dir in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        if not shape_dir.is_dir():
            raise ValueError(f"{shape_dir}: expected only shape-class folders in {folder}")
        if shape_dir.name not in categories:
            raise ValueError(f"{shape_dir}: folder name is not a category; expected one of {list(categories)}")
        for path in sorted(p for p in shape_dir.iterdir() if not p.name.startswith(".")):
            match = _NAME.fullmatch(path.name)
            if not path.is_file() or match is None:
                raise ValueError(f"{path}: expected a file named <shape><i>-<texture><j>.png")
            shape, texture = match["shape"], match["texture"]
            if shape != shape_dir.name:
                raise ValueError(f"{path}: shape '{shape}' in the name differs from its folder '{shape_dir.name}'")
            if texture not in categories:
                raise ValueError(f"{path}: texture '{texture}' is not a category")
            items.append(ConflictImage(path, shape, texture))
    if not items:
        raise ValueError(f"no cue-conflict images under {folder}")
    return items


def _scores(pairs: list[tuple[ConflictImage, str]]) -> dict:
    n = len(pairs)
    shape_hits = sum(pred == item.shape for item, pred in pairs)
    # Each image's own texture label (the authors compared against a stale variable from another image).
    texture_hits = sum(pred == item.texture for item, pred in pairs)
    decisive = shape_hits + texture_hits
    return {
        "n": n,
        "shape_accuracy": shape_hits / n if n else math.nan,
        "texture_accuracy": texture_hits / n if n else math.nan,
        "robustness": (n - texture_hits) / n if n else math.nan,
        "shape_bias": shape_hits / decisive if decisive else math.nan,
    }


def cue_conflict_metrics(items: list[ConflictImage], predictions: list[str], categories=CATEGORIES) -> dict:
    """Shape/texture accuracy, robustness and shape bias over conflict images (shape != texture) only.

    robustness = fraction of conflict images NOT decided as their texture class (denominator: all of
    them); shape_bias = shape decisions / (shape + texture decisions), NaN when there are none.
    per_class maps each shape category that has conflict images to the same numbers plus n.
    """
    if len(items) != len(predictions):
        raise ValueError(f"{len(items)} images but {len(predictions)} predictions")
    unknown = sorted({p for p in predictions if p not in categories})
    if unknown:
        raise ValueError(f"predictions {unknown} are not categories; expected names from {list(categories)}")
    conflict = [(item, pred) for item, pred in zip(items, predictions) if item.shape != item.texture]
    overall = _scores(conflict)
    per_class = {}
    for c in categories:
        of_class = [(item, pred) for item, pred in conflict if item.shape == c]
        if of_class:
            per_class[c] = _scores(of_class)
    return {
        "shape_accuracy": overall["shape_accuracy"],
        "texture_accuracy": overall["texture_accuracy"],
        "robustness": overall["robustness"],
        "shape_bias": overall["shape_bias"],
        "n_conflict": overall["n"],
        "n_same_class": len(items) - len(conflict),
        "per_class": per_class,
    }
