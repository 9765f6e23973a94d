"""Vision on a user's own class-per-folder tree (data source `folder`): any number of classes, any image size,
checked before training as ImageNet-16 is, and without a cue-conflict folder the shape-bias columns are absent,
not zero."""

import json

import numpy as np
import pytest
import yaml
from PIL import Image

from harness import copy_workflow, jobs_run, smoke_config, snakemake

CLASSES = ["circle", "cross", "square", "stripe", "triangle"]


def class_tree(root, classes=CLASSES, per_split=(("train", 10), ("val", 3)), size=(40, 30)):
    """root/{train,val}/<class>/*.png: 40x30 images (not square), a bright block whose place is the class."""
    rng = np.random.default_rng(0)
    for split, count in per_split:
        for k, name in enumerate(classes):
            folder = root / split / name
            folder.mkdir(parents=True)
            for i in range(count):
                image = np.full((size[1], size[0], 3), rng.integers(0, 120, 3), dtype=np.uint8)
                x = 4 + 6 * k
                image[8:20, x:x + 6] = 255
                Image.fromarray(image).save(folder / f"{name}_{i}.png")
    return root


def test_a_class_per_folder_tree_is_split_with_its_own_classes(tmp_path):
    from subtask_induction.vision.imagenet16 import build_folder_splits

    root = class_tree(tmp_path / "tree")
    manifest = build_folder_splits(root, tmp_path / "out", discovery_per_class=4, eval_per_class=2, seed=0)
    assert manifest["class_order"] == CLASSES  # sorted folder names give the indices
    assert manifest["counts"]["eval"] == {name: 2 for name in CLASSES}
    assert manifest["counts"]["train"] == {name: 8 for name in CLASSES}  # every train image but eval's
    assert manifest["counts"]["test"] == {name: 3 for name in CLASSES}  # the val split
    eval_names = {p.name for p in (tmp_path / "out/eval/square").iterdir()}
    train_names = {p.name for p in (tmp_path / "out/train/square").iterdir()}
    assert len(eval_names) == 2 and not eval_names & train_names
    assert train_names <= {f"square_{i}.png" for i in range(10)}  # the user's own names, no doubled class prefix

    (root / "val/hexagon").mkdir()
    with pytest.raises(ValueError, match="differ between") as error:
        build_folder_splits(root, tmp_path / "out2")
    assert "hexagon" in str(error.value)


def folder_config(tmp_path, **folder):
    config = smoke_config("vision")
    vision = config["vision"]
    vision["chains"] = [0]
    vision["data"]["source"] = "folder"
    vision["data"]["folder"] = {"root": str(class_tree(tmp_path / "tree")), "discovery_per_class": 6,
                                "eval_per_class": 2, "link": "symlink", **folder}
    vision["model"]["num_outputs"] = len(CLASSES)
    vision["discovery"]["inits"] = ["pretrained"]
    vision["transfer"]["run"] = ["si", "scratch"]
    return config


def test_start_up_names_a_wrong_output_count_and_classes_that_differ_between_splits(tmp_path):
    config = folder_config(tmp_path)
    config["vision"]["model"]["num_outputs"] = 16
    workdir = copy_workflow(tmp_path / "wf", config)
    result = snakemake(workdir, "-n", "--cores", "1")
    assert result.returncode != 0 and "vision.model.num_outputs: 16" in result.stdout + result.stderr
    assert "set num_outputs: 5" in result.stdout + result.stderr

    (tmp_path / "tree/val/hexagon").mkdir()
    result = snakemake(workdir, "-n", "--cores", "1")
    assert result.returncode != 0 and "only in val ['hexagon']" in result.stdout + result.stderr
    assert not (workdir / "results").exists()


def test_si_runs_on_a_five_class_folder_without_cue_conflict_images(tmp_path):
    config = folder_config(tmp_path)
    workdir = copy_workflow(tmp_path / "wf", config)
    result = snakemake(workdir, "--cores", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = jobs_run(result)
    assert "vision_folder" in ran and "vision_world" not in ran and "vision_check_cue_conflict" not in ran

    manifest = json.loads((workdir / "results/vision/data/folder/manifest.json").read_text())
    assert manifest["class_order"] == CLASSES
    si = json.loads((workdir / "results/vision/chain0/transfer/si/metrics.json").read_text())
    assert sorted(si["per_class"]) == CLASSES and si["config"]["classes"] == CLASSES
    assert "shape_bias" not in si["metrics"] and "cue_shape_accuracy" not in si["metrics"]  # absent, not zero
    assert si["metrics"]["items"]["n_test"] == 3 * len(CLASSES)
    table1 = (workdir / "results/vision/summary/table1.md").read_text()
    header = table1.splitlines()[0]
    assert "pooled" in header and "shape bias" not in header and "cue-conflict" not in header
    assert "| si |" in table1 and "| scratch |" in table1 and "| subnetwork |" in table1
    assert "shape_bias" not in (workdir / "results/vision/summary/table1.csv").read_text().splitlines()[0]
    assert (workdir / "results/vision/figures/samples.png").is_file()
    assert yaml.safe_load((workdir / "config/config.yaml").read_text())["vision"]["data"]["cue_conflict"] is None

    # A bad image caught by the check costs minutes, not the run: the check fails before the builder starts,
    # so the finished build and everything trained from it stay; put back, nothing runs again.
    image = tmp_path / "tree" / "train" / "circle" / "circle_3.png"
    whole = image.read_bytes()
    built = sorted(path.name for path in (workdir / "results/vision/data/folder/train/circle").iterdir())
    image.write_bytes(whole[: len(whole) // 2])  # cut at half its bytes
    broken = snakemake(workdir, "--cores", "2")
    assert broken.returncode != 0 and jobs_run(broken) == ["vision_check_user_tree"]
    assert str(image) in "".join(path.read_text() for path in (workdir / "logs/vision/data/checks/folder").iterdir())
    assert sorted(path.name for path in (workdir / "results/vision/data/folder/train/circle").iterdir()) == built
    image.write_bytes(whole)  # the fix: the same bytes again, a new modification time
    planned = snakemake(workdir, "-n")
    assert planned.returncode == 0 and "Nothing to be done" in planned.stdout + planned.stderr, planned.stdout[-2000:]


def test_images_left_out_as_unreadable_are_named_on_the_console(tmp_path):
    config = folder_config(tmp_path, skip_unreadable=True)
    empty = tmp_path / "tree/train/cross/cross_0.png"
    empty.write_bytes(b"")
    workdir = copy_workflow(tmp_path / "wf", config)
    built = snakemake(workdir, "results/vision/data/folder", "--cores", "1")
    assert built.returncode == 0, built.stderr[-3000:]
    planned = snakemake(workdir, "-n")
    assert f"warning: 1 unreadable image(s) left out (vision.data.folder.skip_unreadable: true), e.g. {empty}" \
        in planned.stderr
    check = next((workdir / "results/vision/data/checks/folder").glob("*.json"))
    assert json.loads(check.read_text())["unreadable_skipped"] == [str(empty)]
