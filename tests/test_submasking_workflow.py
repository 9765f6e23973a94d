"""The submasking DAG through the Snakemake CLI: the session's smoke run (conftest.py; the tiny world's
base), and DAG-build errors."""

import pandas as pd
import pytest
import yaml

from harness import REPO, copy_workflow, smoke_config, snakemake


def submasking_config() -> dict:
    return smoke_config("submasking")


def test_submasking_dag_writes_every_table_and_figure(smoke_run):
    summary = smoke_run / "results/submasking/summary"
    points = pd.read_csv(summary / "points.csv")
    assert len(points) == 2 * 2 * 2 * 2  # tasks x adaptations x label fractions x seeds
    assert set(points["task"]) == {"world", "faces"} and points["test_accuracy"].between(0, 1).all()
    assert points[points["adaptation"] == "lp"]["off_fraction"].isna().all()
    assert points[points["adaptation"] == "fs"]["off_fraction"].between(0, 1).all()
    similarity = pd.read_csv(summary / "mask_similarity.csv")
    assert set(zip(similarity["task"], similarity["other"])) == {("faces", "world")}
    stability = pd.read_csv(summary / "mask_stability.csv")
    assert len(stability) == 2 * 2  # fs x 2 tasks x 2 fractions, seeds 0 vs 1
    tables = (summary / "tables.md").read_text()
    for heading in ("## Test accuracy", "## Fraction of masked weights off", "## k-NN accuracy", "## Bytes"):
        assert heading in tables
    for figure in ("sparsity_per_layer", "label_fractions", "mask_similarity"):
        assert (smoke_run / f"results/submasking/figures/{figure}.png").stat().st_size > 1000
    assert (smoke_run / "results/submasking/tasks/faces/train/face").is_dir()
    assert not list(smoke_run.glob("results/**/*.ckpt*")), "the rule deletes checkpoints after the step"


@pytest.mark.parametrize("edit,message", [
    (lambda c: c["submasking"]["tasks"].append({"name": "dtd", "source": "folder", "root": "/nowhere/dtd"}),
     "config submasking.tasks.dtd.root: /nowhere/dtd does not exist"),
    (lambda c: c["submasking"]["tasks"].append({"name": "c10", "source": "cifar10", "root": "/tmp"}),
     "config submasking.tasks.c10.root: /tmp lacks"),
    (lambda c: c["submasking"]["backbones"].append({"name": "r18", "source": "timm", "arch": "resnet18",
                                                    "weights": "/nowhere/r18.bin", "image_size": 224}),
     "config submasking.backbones.r18.weights: /nowhere/r18.bin does not exist"),
    (lambda c: c["submasking"]["tasks"].append({"name": "faces", "source": "digits"}),
     "config submasking.tasks: the name 'faces' appears more than once"),
])
def test_missing_task_or_backbone_fails_at_dag_build_naming_key_and_path(tmp_path, edit, message):
    config = submasking_config()
    edit(config)
    workdir = copy_workflow(tmp_path, config)
    result = snakemake(workdir, "-n", "--cores", "1")
    assert result.returncode != 0 and message in result.stdout + result.stderr, result.stderr[-2000:]


def test_a_folder_task_missing_its_test_split_is_named(tmp_path):
    root = tmp_path / "mytask"
    (root / "train" / "a").mkdir(parents=True)
    config = submasking_config()
    config["submasking"]["tasks"].append({"name": "mine", "source": "folder", "root": str(root)})
    (tmp_path / "wf").mkdir()
    result = snakemake(copy_workflow(tmp_path / "wf", config), "-n", "--cores", "1")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"{root}/test is missing or has no class folders" in output, output[-2000:]


def test_paper_config_lists_the_drafts_grid(tmp_path):
    """3 backbones x 8 tasks x 5 adaptations x 3 label fractions x 3 seeds, once the USER paths exist."""
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    sub = paper["submasking"]
    for backbone in sub["backbones"]:
        backbone["weights"] = str(tmp_path / f"{backbone['name']}.bin")
        (tmp_path / f"{backbone['name']}.bin").write_bytes(b"")
    for task in sub["tasks"]:
        root = tmp_path / task["name"]
        task["root"] = str(root)
        if task["source"] == "folder":
            for split in ("train", "test"):
                (root / split / "a").mkdir(parents=True)
        else:
            root.mkdir()
            files = ["data_batch_1", "test_batch", "batches.meta"] if task["source"] == "cifar10" else ["train", "test", "meta"]
            for name in files:
                (root / name).write_bytes(b"")
    overrides = tmp_path / "paper_paths.yaml"
    overrides.write_text(yaml.safe_dump({"families": ["submasking"], "submasking": sub}))
    result = snakemake(REPO, "-n", "--configfile", "config/paper.yaml", str(overrides), "--quiet", "rules", "--cores", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    counts = {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines()
              if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert len(sub["backbones"]) == 3 and len(sub["tasks"]) == 8
    packs = {rule: count for rule, count in counts.items()
             if rule.startswith("submasking_pack_") and rule != "submasking_pack_points"}
    points = 3 * 8 * 5 * 3 * 3  # 45 points per (backbone, task) in packs of at most 9: 5 each
    assert len(packs) == 3 * 8 * 5 and set(packs.values()) == {1} and points == 1080
    assert counts["submasking_pack_points"] == len(packs)  # each pack's points file
