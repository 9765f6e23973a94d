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

from subtask_induction.vision.classes import CATEGORIES

_NAME = re.compile(r"(?P<shape>[a-z]+)\d+-(?P<texture>[a-z]+)\d+\.png")


@dataclass(frozen=True)
class ConflictImage:
    path: Path
    shape: str
    texture: str


def cue_conflict_problems(folder: Path, categories=CATEGORIES) -> tuple[list[ConflictImage], list[str]]:
    """(every stimulus that fits the layout, every problem found): names only, no image opened, so the
    workflow checks a user's folder this way while building the DAG and lists all problems at once."""
    folder = Path(folder)
    if not folder.is_dir():
        return [], [f"cue-conflict folder {folder} does not exist"]
    items, problems = [], []
    for shape_dir in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        if not shape_dir.is_dir():
            problems.append(f"{shape_dir}: expected only shape-class folders in {folder}")
            continue
        if shape_dir.name not in categories:
            problems.append(f"{shape_dir}: folder name is not a category; expected one of {list(categories)}")
            continue
        for path in sorted(p for p in shape_dir.iterdir() if not p.name.startswith(".")):
            match = _NAME.fullmatch(path.name)
            if not path.is_file() or match is None:
                problems.append(f"{path}: expected a file named <shape><i>-<texture><j>.png")
            elif match["shape"] != shape_dir.name:
                problems.append(f"{path}: shape '{match['shape']}' in the name differs from its folder '{shape_dir.name}'")
            elif match["texture"] not in categories:
                problems.append(f"{path}: texture '{match['texture']}' is not a category")
            else:
                items.append(ConflictImage(path, match["shape"], match["texture"]))
    if not items and not problems:
        problems.append(f"no cue-conflict images under {folder}")
    return items, problems


def read_cue_conflict(folder: Path, categories=CATEGORIES) -> list[ConflictImage]:
    """Every stimulus under folder, sorted by (shape folder, file name); same-class images included.

    Hidden files (.DS_Store, ...) are skipped; any other file that does not fit the layout is a
    ValueError naming it (every such file, in one message), so a wrong folder fails loudly instead of
    scoring a partial set.
    """
    if not Path(folder).is_dir():
        raise FileNotFoundError(f"cue-conflict folder {folder} does not exist")
    items, problems = cue_conflict_problems(folder, categories)
    if problems:
        raise ValueError("\n".join(problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])))
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
