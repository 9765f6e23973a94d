"""Helpers for the tests that drive the workflow through the Snakemake CLI, in temporary copies."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ("Snakefile", "workflow", "config", "envs", "profiles")


def effective_config(*files: str) -> dict:
    """config/config.yaml with each file given as Snakemake's --configfile gives it (merged in order)."""
    from snakemake.utils import update_config

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in files:
        update_config(config, yaml.safe_load((REPO / name).read_text()))
    return config


# The records that decide the default's headlines and the rivals once whole (pages/results.py, decisive_claims).
DECISIVE_RECORDS = ("confirmatory", "decisive", "decisive_cross_domain")


def copied_records(tmp_path: Path, without: tuple = DECISIVE_RECORDS) -> Path:
    """docs/data copied to tmp_path/data, less the records named in `without`: a test of what the default's or
    `beyond`'s own records answer leaves out the decisive records, which answer those claims on the pages instead."""
    data, stored = tmp_path / "data", REPO / "docs" / "data"
    shutil.copytree(stored, data, ignore=lambda folder, names: [n for n in names if Path(folder) == stored and n in without])
    return data


def snakemake(workdir: Path, *args: str, timeout: int = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """`snakemake ARGS` in `workdir` as `make` runs it: this Python's environment first on PATH, under the run folder's
    lock (subtask_induction/run_lock.py: a dead run's Snakemake lock removed, a live one's refused)."""
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                   **(env or {})}
    return subprocess.run([sys.executable, str(REPO / "workflow/subtask_induction/run_lock.py"), "--", sys.executable,
                           "-m", "snakemake", *args], cwd=workdir, env=environment, text=True, capture_output=True,
                          timeout=timeout)


def smoke_config(*families: str) -> dict:
    """tests/smoke_config.yaml, with `families` replaced when given."""
    config = yaml.safe_load((REPO / "tests/smoke_config.yaml").read_text())
    if families:
        config["families"] = list(families)
    return config


def copy_workflow(destination: Path, config: dict | None = None) -> Path:
    """The workflow's files in `destination`, with `config` (default: the smoke config) as config/config.yaml."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, destination / name)
    (destination / "config/config.yaml").write_text(yaml.safe_dump(config or smoke_config()))
    return destination


def run_workflow(workdir: Path, config: dict | None = None) -> Path:
    """A copy of the workflow in `workdir`, run to the end on 2 cores (the run must succeed)."""
    copy_workflow(workdir, config)
    # a whole DAG; under `-n auto` it shares the cores with the other worker's tests
    result = snakemake(workdir, "--cores", "2", timeout=1500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return workdir


def clone_run(run: Path, destination: Path) -> Path:
    """A copy of a finished run (results, logs and Snakemake's metadata) to change without touching it."""
    shutil.copytree(run, destination, symlinks=True)
    return destination


def write_config(workdir: Path, config: dict) -> None:
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(config))


def jobs_run(result: subprocess.CompletedProcess) -> list[str]:
    """The rules of the jobs a Snakemake run (or dry run) lists, one entry per job: every rule's message
    (common.smk JOB_LINE) makes its job's line `Job N: RULE WILDCARDS`."""
    return [match.group(1) for match in re.finditer(r"^Job \d+: (\S+)", result.stdout + result.stderr, re.MULTILINE)]


def step_of(rule: str) -> str:
    """The step a job's rule runs: a pack of a one-point step (`vision_transfer_pack_<name>`, point_packs.smk) is its
    step's (`vision_transfer`); any other rule is itself."""
    from subtask_induction.packs import PACKED_STEPS

    return next((step for step in PACKED_STEPS if rule.startswith(f"{step}_pack_")), rule)


def packed_trained(workdir: Path, since: float = 0.0) -> list[tuple[str, str]]:
    """(step, metrics path) of every point a pack of a one-point step trained (its manifest's `trained`) in the runs
    after `since`: what a run trained, where its jobs say only which packs ran."""
    found = []
    for manifest in sorted(workdir.glob("results/*/packs/*/*.json")):
        if manifest.name.endswith(".points.json") or manifest.stat().st_mtime <= since:
            continue
        found += [(manifest.parent.name, path) for path in json.loads(manifest.read_text())["trained"]]
    return found


def work_done(result: subprocess.CompletedProcess, workdir: Path, since: float) -> list[str]:
    """The rules of the jobs a run ran, each pack of a one-point step replaced by its step once per point it trained
    (a pack that restored every point trained nothing): the old one-job-a-point count of what a change retrained."""
    return ([rule for rule in jobs_run(result) if step_of(rule) == rule]
            + [step for step, _ in packed_trained(workdir, since)])


def planned_work(result: subprocess.CompletedProcess, config: dict) -> dict[str, int]:
    """A dry run's `--quiet rules` counts with each pack of a one-point step counted as its points, under its step: in
    an empty folder, what a run would train."""
    from subtask_induction.workflow_config import normalise

    sweep, counts, rules = normalise(copy.deepcopy(config)), {}, {}
    packed = {step: members for family in (sweep.arithmetic, sweep.vision)
              for step, members in ((step, dict(p.packs)) for step, p in family.packed.items())}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        step = step_of(parts[0])
        size = len(packed[step][parts[0].removeprefix(f"{step}_pack_")]) if step != parts[0] else int(parts[1])
        rules[parts[0]] = (step, size)  # the job stats table may be printed more than once
    for step, size in rules.values():
        counts[step] = counts.get(step, 0) + size
    return counts


def transfer_identity(variant: str, n: int = 30, replicate: int = 0, chain: int = 0) -> dict:
    """An arithmetic transfer point's identity as the workflow hands it to the step (points.ArithmeticPoint)."""
    from subtask_induction.points import ArithmeticPoint

    return ArithmeticPoint(chain, "a+ab", "ab", "a2+ab", 2, variant, n, replicate).identity()


def points_file(points: list[dict], path: Path) -> str:
    """A pack's points as the step reads them (--points FILE; the rules' *_pack_points write it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(points))
    return str(path)


def pack_manifests(workdir: Path, since: float = 0.0, family: str = "arithmetic") -> dict[str, dict]:
    """The manifests of the packs (arithmetic transfer or submasking) that ran after `since`: what each
    trained and restored."""
    folder = workdir / ("results/arithmetic/transfer/packs" if family == "arithmetic" else "results/submasking/packs")
    return {path.stem: json.loads(path.read_text()) for path in folder.glob("*.json")
            if path.stat().st_mtime > since and not path.name.endswith(".points.json")}


def assert_reloads_as_a_plain_network(model, spec: dict, folder: Path) -> None:
    """A vision transfer's model saved as the pipeline saves it loads into a plain network of its spec (a plain
    BatchNorm, no parametrization) and computes what it computed, in evaluation mode."""
    import torch

    from subtask_induction.vision.models import FrozenStatisticsBatchNorm2d, load_classifier, save_classifier

    torch.save(save_classifier(model, spec), folder / "model.pt")
    loaded, _ = load_classifier(folder / "model.pt")
    images = torch.randint(0, 256, (4, 3, 16, 16), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    model.eval(), loaded.eval()
    assert torch.allclose(model(images), loaded(images), atol=1e-6)
    assert not any(isinstance(m, FrozenStatisticsBatchNorm2d) for m in loaded.modules())
