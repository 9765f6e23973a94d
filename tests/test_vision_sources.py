"""Vision data sources are data (vision/sources.py): every source the schema allows has a record, a builder step
and, for a user's tree, a config section; a new source is a record, a builder and a schema section, and the jobs
and data checks follow from the record with no other change (a hypothetical one is added here)."""

import importlib
import inspect
from pathlib import Path

import pytest
import yaml

from harness import REPO, effective_config
from subtask_induction.data_checks import vision_data_problems
from subtask_induction.vision import jobs as vision_jobs
from subtask_induction.vision import sources
from subtask_induction.vision.classes import folder_tree_problems

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def vision_schema():
    return SCHEMA["properties"]["vision"]["properties"]["data"]["properties"]


def test_every_source_the_schema_allows_has_a_record_and_a_builder_step():
    data = vision_schema()
    assert set(data["source"]["enum"]) == set(sources.SOURCES)
    for source in sources.SOURCES.values():
        importlib.import_module(f"subtask_induction.steps.{source.builder}")
        if source.user_tree:
            assert "root" in data[source.name]["properties"], source.name


def test_a_new_source_is_a_record_and_a_builder(monkeypatch, tmp_path):
    """`drawings`, a class-per-folder source of its own (its tree `sketches`): the jobs find its folders, its root
    and its classes, and the data checks name its section, from the record alone."""
    new = sources.Source("drawings", tree="sketches", what="drawing tree", base_split="train", classes="folders",
                         cue_conflict="optional", needs_weights=False, tree_problems=folder_tree_problems)
    monkeypatch.setitem(sources.SOURCES, "drawings", new)
    monkeypatch.setitem(sources.USER_TREES, "sketches", new)
    vision = effective_config()["vision"]
    vision["data"] = {**vision["data"], "source": "drawings", "drawings": {"root": str(tmp_path / "missing")}}
    vision["model"] = {**vision["model"], "num_outputs": 3}
    assert vision_data_problems(vision, None) == [
        f"config vision.data.drawings.root: drawing tree {tmp_path / 'missing'} does not exist"]
    for split in ("train", "val"):
        for label in ("cat", "cow", "dog"):
            (tmp_path / "missing" / split / label).mkdir(parents=True)
    jobs = vision_jobs.VisionJobs(vision)
    assert (jobs.source.builder, jobs.data_dir(), jobs.base_train()) == (
        "vision_sketches", "results/vision/data/sketches", "results/vision/data/sketches/train")
    assert jobs.source_root() == str(tmp_path / "missing") and jobs.classes == ["cat", "cow", "dog"]
    assert jobs.classes_setting() == {"classes": ["cat", "cow", "dog"]} and jobs.cue_conflict() == ""
    assert vision_data_problems(vision, jobs.classes) == []


@pytest.mark.parametrize("name", sorted(sources.SOURCES))
def test_the_places_a_source_is_named_are_its_record_only(name):
    """No vision code compares vision.data.source with a name: the record is the one place (rule files, jobs,
    checks and pages read it). Submasking's tasks have sources of their own, another config key."""
    from subtask_induction import config_checks, data_checks

    package = REPO / "workflow"
    texts = {str(path.relative_to(package)): path.read_text()
             for pattern in ("subtask_induction/vision/*.py", "subtask_induction/steps/vision_*.py",
                             "subtask_induction/pages/*.py", "rules/*.smk")
             for path in package.glob(pattern) if "submasking" not in path.name}
    texts |= {function.__name__: inspect.getsource(function)
              for function in (data_checks.vision_data_problems, config_checks.vision_problems)}
    places = [f"{where}: {line.strip()}" for where, text in texts.items() for line in text.splitlines()
              if f'"{name}"' in line and "source" in line and ("==" in line or " in (" in line)]
    assert places == []
