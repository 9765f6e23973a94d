"""Checks of the data and files a config names, run while the DAG is built (before any job): every problem
named at once, by its config key. The config's own cross-field checks are config_checks.py. Torch-free: the rule
files call these and raise what they return.

Each returns a list of problems (empty: nothing wrong)."""

from __future__ import annotations

import json
from pathlib import Path

from .vision.classes import CATEGORIES
from .vision.cue_conflict import cue_conflict_problems
from .vision.sources import source_of

EMBEDDED_TASKS = ("digits", "textures", "faces")  # submasking tasks built from data inside a wheel


def retrain_problems(retrain: set[str], known: set[str], training: dict, packed: set[str] = frozenset()) -> list[str]:
    """config retrain_points never does nothing silently: a point that is not a point of the config in force
    (`known`: the arithmetic transfer points' metrics.json paths; `packed`: the other packed steps' points), or an
    arithmetic transfer point whose finished record was trained with other transfer settings than `training` (a
    run made with an overlay, retrained without it; another packed point's settings are in its fingerprint, so
    it retrains with the config in force either way)."""
    problems = [f"{path} is not a packed point (a transfer, a base, a discovery) of the config in force"
                for path in sorted(retrain - known - packed)]
    wanted = json.loads(json.dumps(training))
    for path in sorted(retrain & known):
        try:
            trained = json.loads(Path(path).read_text())["config"]["training"]
        except (FileNotFoundError, KeyError, ValueError):
            continue  # no finished record: the point trains anyway
        if trained != wanted:
            changed = sorted(key for key in set(trained) | set(wanted) if trained.get(key) != wanted.get(key))
            problems.append(f"{path} was trained with other transfer settings ({', '.join(changed)}) than the "
                            "config in force")
    return problems


def vision_data_problems(vision: dict, classes: list[str] | None) -> list[str]:
    """Local files named in the vision config must exist, and a user's folders must hold what the run reads by
    name (every member WNID folder of ImageNet-16, cue-conflict file names). `classes`: a folder source's class
    folders (None otherwise). Image contents are checked by jobs (they decode)."""
    source = source_of(vision)

    problems = []

    def require_path(key, path, what):
        if not path:
            problems.append(f"config vision.{key}: {what} is required here and not set")
        elif not Path(path).exists():
            problems.append(f"config vision.{key}: {what} {path} does not exist")
        else:
            return True
        return False

    cue_conflict = vision["data"].get("cue_conflict")
    root = (vision["data"].get(source.name) or {}).get("root")
    key = f"data.{source.name}.root"
    if source.user_tree and require_path(key, root, source.what):
        problems += [f"config vision.{key}: {problem}" for problem in source.tree_problems(root)]
    if source.cue_conflict == "required" and not cue_conflict:
        require_path("data.cue_conflict", cue_conflict,
                     "cue-conflict folder (the generated world's is used only with source: world)")
    if source.needs_weights and not vision["model"].get("weights"):
        require_path("model.weights", None, "pretrained weight file (a base is trained only on the generated world)")
    outputs = vision["model"]["num_outputs"]
    if source.classes == "folders":
        if classes and outputs != len(classes):
            problems.append(
                f"config vision.model.num_outputs: {outputs}, but vision.{key} has "
                f"{len(classes)} classes {classes[:10]}; set num_outputs: {len(classes)}"
            )
        if classes and len(classes) == 1000:
            problems.append(f"config vision.{key}: 1,000 classes would be read as ImageNet-1k's outputs")
    elif outputs not in (16, 1000):
        problems.append(
            f"config vision.model.num_outputs: {outputs}; the world and ImageNet-16 "
            "need 16 outputs (or 1000 ImageNet classes, read as the 16 categories)"
        )
    if cue_conflict and require_path("data.cue_conflict", cue_conflict, "cue-conflict folder"):
        problems += [
            f"config vision.data.cue_conflict: {problem}"
            for problem in cue_conflict_problems(cue_conflict, tuple(classes or CATEGORIES))[1][:20]
        ]
    if vision["model"].get("weights"):
        require_path("model.weights", vision["model"]["weights"], "pretrained weight file")
    if vision["pooling"]["segmenter"] == "sam":
        require_path("pooling.sam.checkpoint", vision["pooling"]["sam"].get("checkpoint"), "SAM checkpoint")
    return problems


def submasking_data_problems(sub: dict) -> list[str]:
    """Tasks and backbone files named in the submasking config must exist, named by key and path."""
    tasks = {entry["name"]: entry for entry in sub.get("tasks", [])}
    backbones = {entry["name"]: entry for entry in sub.get("backbones", [])}

    problems = []
    for name, spec in tasks.items():
        key, source = f"config submasking.tasks.{name}", spec["source"]
        if source in EMBEDDED_TASKS or source == "vision_world":
            continue
        root = Path(spec.get("root") or "")
        if not spec.get("root"):
            problems.append(f"{key}.root: required for source '{source}'")
        elif not root.is_dir():
            problems.append(f"{key}.root: {root} does not exist")
        elif source == "folder":
            for split in ("train", "test"):
                folder = root / split
                if not folder.is_dir() or not any(p.is_dir() for p in folder.iterdir()):
                    problems.append(
                        f"{key}.root: {folder} is missing or has no class folders "
                        f"(expected {split}/<class>/<image>)"
                    )
        else:  # cifar10 / cifar100 python-pickle folders as downloaded
            files = ["data_batch_1", "test_batch", "batches.meta"] if source == "cifar10" else ["train", "test", "meta"]
            missing = [f for f in files if not (root / f).is_file()]
            if missing:
                problems.append(f"{key}.root: {root} lacks {missing} (the python-pickle {source} folder)")
    for name, spec in backbones.items():
        if spec["source"] != "vision_base" and not Path(spec.get("weights") or "").is_file():
            problems.append(f"config submasking.backbones.{name}.weights: {spec.get('weights')} does not exist")
    return problems
