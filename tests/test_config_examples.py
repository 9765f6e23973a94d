"""config/examples/: a filled-in overlay per family over config/paper.yaml. Each is dry-run on generated
stand-in data with only its EDIT lines changed, and lists its family's jobs; a family whose data is set
but which `families` leaves out is named in a warning."""

import re

import numpy as np
import pytest
import yaml

from harness import REPO, snakemake

EXAMPLES = sorted(path for path in (REPO / "config/examples").glob("*.yaml") if path.name != "trial.yaml")
TRIAL = REPO / "config/examples/trial.yaml"


def stand_in_data(root):
    """Empty files and folders where the examples point: the DAG is built from names (the jobs would
    decode the images; tests/test_paper_slice.py runs those paths on real generated images)."""
    from subtask_induction.vision.classes import CATEGORIES, read_class_table

    table = read_class_table()
    for split in ("train", "val"):
        for wnid in (wnid for category in CATEGORIES for wnid in table[category]):
            (root / "imagenet" / split / wnid).mkdir(parents=True)
    for k, shape in enumerate(CATEGORIES):
        (root / "stimuli" / shape).mkdir(parents=True)
        (root / "stimuli" / shape / f"{shape}1-{CATEGORIES[(k + 1) % 16]}1.png").write_bytes(b"")
    for name in ("resnet18.bin", "sam.pth"):
        (root / name).write_bytes(b"")
    for split in ("train", "test"):
        for label in ("a", "b"):
            (root / "mytask" / split / label).mkdir(parents=True)
    for split in ("train", "val"):  # a class-per-folder tree of three classes
        for label in ("cat", "cow", "dog"):
            (root / "myimages" / split / label).mkdir(parents=True)
    return {"imagenet": root / "imagenet", "stimuli": root / "stimuli", "pytorch_model.bin": root / "resnet18.bin",
            "sam_vit_h": root / "sam.pth", "mytask": root / "mytask", "myimages": root / "myimages"}


def filled_in(example, data) -> str:
    """The example with each EDIT line's path replaced by the stand-in's."""
    lines = []
    for line in example.read_text().splitlines():
        if "# EDIT" in line and "/data/" in line:
            path = re.search(r"/data/[^\s,}]+", line).group(0)
            key = next(key for key in data if key in path)
            line = line.replace(path, str(data[key]))
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_there_is_an_example_per_family():
    families = {yaml.safe_load(path.read_text())["families"][0] for path in EXAMPLES}
    assert families == {"arithmetic", "vision", "submasking"}  # vision twice: own ImageNet, own class folders
    for path in EXAMPLES:
        assert "# EDIT" in path.read_text(), f"{path.name} marks no line a user edits"


def planned_jobs(result) -> dict[str, int]:
    """rule -> count, from a dry run's job table (--quiet rules)."""
    rows = (line.split() for line in result.stdout.splitlines())
    return {row[0]: int(row[1]) for row in rows if len(row) == 2 and row[1].isdigit() and row[0] != "total"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_an_example_overlay_and_its_trial_dry_run_on_stand_in_data(example, tmp_path):
    """Each example plans its own family's jobs only, with no warning (a renamed key, a family left out);
    config/examples/trial.yaml after it plans the same path, smaller (one chain, one shard per split: fewer or
    equal jobs), with no warning either."""
    overlay = tmp_path / example.name
    overlay.write_text(filled_in(example, stand_in_data(tmp_path / "data")))
    plans = {}
    for name, files in (("paper", [str(overlay)]), ("trial", [str(overlay), str(TRIAL)])):
        result = snakemake(REPO, "-n", "--quiet", "rules", "--directory", str(tmp_path / name),
                           "--configfile", "config/config.yaml", "config/paper.yaml", *files)
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        warnings = [line for line in result.stderr.splitlines() if line.lower().startswith(("warning", "note"))]
        assert warnings == [], f"{example.name} ({name}) greets a user with: {warnings}"
        plans[name] = planned_jobs(result)
    family = yaml.safe_load(example.read_text())["families"][0]
    for plan in plans.values():
        assert any(job.startswith(family) for job in plan) and not any(
            job.startswith(other) for job in plan for other in {"arithmetic", "vision", "submasking"} - {family})
    assert sum(plans["trial"].values()) <= sum(plans["paper"].values())
    assert sum(plans["trial"].values()) < sum(plans["paper"].values()) or family == "submasking"
    if family == "vision":  # one chain, one shard per split
        assert plans["trial"].get("vision_mean_pool", 0) == 3 and plans["trial"].get("vision_base", 0) <= 1


def test_a_family_with_data_but_left_out_of_families_is_named_in_a_warning(tmp_path):
    data = stand_in_data(tmp_path / "data")
    overlay = tmp_path / "paths.yaml"
    overlay.write_text(yaml.safe_dump({"vision": {"data": {"imagenet": {"root": str(data["imagenet"])}}}}))
    result = snakemake(REPO, "-n", "--quiet", "rules", "--directory", str(tmp_path / "run"),
                       "--configfile", "config/config.yaml", "config/paper.yaml", str(overlay))
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "leaves vision out" in warnings[0]
