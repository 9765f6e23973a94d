"""A planned record names its plan (issue 93): every job's metrics must name the plan's commit, unchanged, and the
record keeps the digest of the plan's configs and docs/decisions.md at that commit (run_records.plan_of)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from subtask_induction.pages.record_schemas import RecordError
from subtask_induction.pages.run_records import plan_of
from subtask_induction.pages.sections.provenance import plan_text


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout.strip()


def planned_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "clone"
    (repo / "config").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "config/config.yaml").write_text("families: [arithmetic]\n")
    (repo / "config/confirmatory.yaml").write_text("arithmetic: {chains: [40, 41], spare_chains: [90]}\n")
    (repo / "docs/decisions.md").write_text("# The plan\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plan")
    return repo, git(repo, "rev-parse", "--short", "HEAD")


def job(results: Path, path: str, code) -> None:
    target = results / "results" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"metrics": {}, "provenance": {"code": code}}))


CONFIGS = ["config/config.yaml", "config/confirmatory.yaml"]


def test_every_job_naming_the_plan_s_commit_gives_the_plan_and_its_digest(tmp_path):
    repo, commit = planned_repo(tmp_path)
    for chain in (40, 41):
        job(repo, f"arithmetic/chain{chain}/base/a+ab/layers2/metrics.json", {"commit": commit, "modified": False})
    plan = plan_of(repo, repo, commit, CONFIGS)
    assert plan["commit"] == commit[:7] and plan["jobs"] == 2 and len(plan["digest"]) == 12
    assert plan["files"] == [*CONFIGS, "docs/decisions.md"]
    assert f"all 2 jobs' metrics name it; digest {plan['digest']}" in plan_text(plan)
    # the digest is of the files at the plan's commit: another plan, another digest; a later edit, the same
    (repo / "docs/decisions.md").write_text("# Edited after the record's first job\n")
    assert plan_of(repo, repo, commit, CONFIGS)["digest"] == plan["digest"]
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "another plan")
    later = git(repo, "rev-parse", "--short", "HEAD")
    for chain in (40, 41):
        job(repo, f"arithmetic/chain{chain}/base/a+ab/layers2/metrics.json", {"commit": later, "modified": False})
    assert plan_of(repo, repo, later, CONFIGS)["digest"] != plan["digest"]


@pytest.mark.parametrize("code, why", [
    ({"commit": "0000000", "modified": False}, "another commit"),
    ("same, modified", "a changed checkout"),
    (None, "outside a checkout"),
])
def test_a_job_that_did_not_run_the_plan_s_commit_unchanged_is_refused_by_name(tmp_path, code, why):
    repo, commit = planned_repo(tmp_path)
    job(repo, "vision/chain40/base/metrics.json", {"commit": commit, "modified": False})
    job(repo, "vision/chain41/base/metrics.json",
        {"commit": commit, "modified": True} if code == "same, modified" else code)
    with pytest.raises(RecordError, match=r"1 of 2 jobs did not run the plan's commit .*vision/chain41/base/metrics.json"):
        plan_of(repo, repo, commit, CONFIGS)


def test_a_run_with_no_job_or_an_unknown_commit_is_refused(tmp_path):
    repo, commit = planned_repo(tmp_path)
    with pytest.raises(RecordError, match="no job's metrics.json"):
        plan_of(repo, repo, commit, CONFIGS)
    job(repo, "arithmetic/chain40/base/a+ab/layers2/metrics.json", {"commit": commit, "modified": False})
    with pytest.raises(RecordError, match="the plan's commit 1234567 is not a commit of its history"):
        plan_of(repo, repo, "1234567", CONFIGS)
