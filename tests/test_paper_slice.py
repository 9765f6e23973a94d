"""The paper configuration run as a user with their own data would run it, shrunk by an overlay to minutes:
`make test-paper` (not part of `make test`: about 2 minutes on 2 cores).

Vision: config/paper.yaml on a generated ImageNet-shaped tree (every WNID of the 16-class map, real JPEGs,
one corrupt file and one empty WNID folder), a real-architecture timm resnet18 weight file with random
weights, the real cue-conflict reader on generated stimuli in Geirhos' layout, and SAM through the documented
tiny-SAM route. Submasking: the paper's grid shrunk to a user's image-folder task and a timm weight file.
Each run shows what the user sees: the corrupt file named before any training, the chance-level subnetwork
stopped at selection, then the tables.
"""

import copy
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import timm
import torch
import yaml
from PIL import Image

from harness import REPO, copy_workflow, snakemake
from subtask_induction.vision.classes import CATEGORIES, read_class_table

pytestmark = pytest.mark.paper_slice


def jpeg(rng, size=40) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (size, size, 3), dtype=np.uint8)).save(buffer, format="JPEG")
    return buffer.getvalue()


def imagenet_tree(root, rng):
    """train/<wnid>/ (3 images) and val/<wnid>/ (1 image) for every member WNID of the 16-class map."""
    table = read_class_table()
    for category in CATEGORIES:
        for wnid in table[category]:
            for split, count in (("train", 3), ("val", 1)):
                (root / split / wnid).mkdir(parents=True)
                for i in range(count):
                    (root / split / wnid / f"{wnid}_{i}.JPEG").write_bytes(jpeg(rng))
    return table


def stimuli(root, rng):
    """Geirhos' layout: <shape>/<shape><i>-<texture><j>.png, two per shape, one of them same-class."""
    for k, shape in enumerate(CATEGORIES):
        (root / shape).mkdir(parents=True)
        for i, texture in enumerate((shape, CATEGORIES[(k + 1) % 16])):
            Image.fromarray(rng.integers(0, 255, (48, 48, 3), dtype=np.uint8)).save(root / shape / f"{shape}{i}-{texture}{i}.png")


def resnet18_file(path):
    """timm's real resnet18 (1000 classes), random weights, saved as a user's downloaded weight file."""
    torch.manual_seed(0)
    torch.save(timm.create_model("resnet18", pretrained=False, num_classes=1000).state_dict(), path)
    return path


def run(workdir, *overlays):
    files = [str(workdir / "config/paper.yaml")] + [str(path) for path in overlays]
    return snakemake(workdir, "--cores", "2", "--configfile", *files, timeout=900)


def test_the_paper_vision_path_on_a_users_data(tmp_path):
    rng = np.random.default_rng(0)
    data = tmp_path / "data"
    table = imagenet_tree(data / "imagenet", rng)
    corrupt = data / "imagenet/train" / table["cat"][0] / "broken.JPEG"
    corrupt.write_bytes(b"\xff\xd8 not a JPEG")
    empty = data / "imagenet/train" / table["dog"][3]
    for file in empty.iterdir():
        file.unlink()
    stimuli(data / "stimuli", rng)
    workdir = copy_workflow(tmp_path / "wf", yaml.safe_load((REPO / "config/config.yaml").read_text()))
    sam = workdir / "tiny_sam.pth"  # the documented route to a SAM without the 2.4 GB checkpoint
    subprocess.run([sys.executable, "-m", "subtask_induction.steps.tiny_sam", str(sam)], check=True,
                   env={**os.environ, "PYTHONPATH": str(workdir / "workflow")})
    overlay = {"families": ["vision"], "threads_per_job": 1, "device": "cpu", "checkpoint_interval_s": 0,
               "vision": {"chains": [0], "eval_batch_size": 64,
                          "data": {"imagenet": {"root": str(data / "imagenet"), "discovery_per_class": 2,
                                                "eval_per_class": 1},
                                   "cue_conflict": str(data / "stimuli"),
                                   "reading": {"image_size": 32, "resize": 36, "in_memory": True, "workers": 0}},
                          "pooling": {"sam": {"model_type": "tiny", "checkpoint": str(sam), "points_per_side": 4,
                                              "crop_n_layers": 0, "points_per_batch": 16},
                                      "min_area": 1, "shards": {"discovery": 1, "eval": 1, "test": 1}},
                          "model": {"weights": str(resnet18_file(data / "resnet18.bin"))},
                          "discovery": {"epochs": 1, "batch_size": 16, "l0_weights": [1.0e-6]},
                          "transfer": {"epochs": 1, "batch_size": 32},
                          "diagnostics": {"bn_images": 32}}}
    paths = tmp_path / "my_paths.yaml"
    paths.write_text(yaml.safe_dump(overlay))

    # 1. The corrupt JPEG stops the run at the tree's check, before the splits are built, named by its own path
    #    (the check's log, one per content of the tree); nothing is built and nothing trains.
    result = run(workdir, paths)
    checks = list((workdir / "logs/vision/data/checks/imagenet16").glob("*.log"))
    assert result.returncode != 0 and len(checks) == 1 and str(corrupt) in checks[0].read_text()
    assert not (workdir / "results/vision/data/imagenet16").exists(), "the builder did not start"
    assert not (workdir / "results/vision/chain0").exists(), "no training job ran"
    corrupt.unlink()

    # 2. The real architecture loads (the default's quarter-width channels do not leak), the splits list the
    #    empty folder, and a subnetwork no better than chance stops the run at selection, before SI trains.
    result = run(workdir, paths)
    assert result.returncode != 0
    selection_log = (workdir / "logs/vision/chain0/discovery/pretrained/select.log").read_text()
    assert "keeps 0.00%" in selection_log or "no better than chance" in selection_log, selection_log[-2000:]
    manifest = yaml.safe_load((workdir / "results/vision/data/imagenet16/manifest.json").read_text())
    assert manifest["empty_wnid_folders"]["train"] == [str(empty)]
    assert not (workdir / "results/vision/chain0/transfer/si").exists()
    base = yaml.safe_load((workdir / "results/vision/chain0/base/metrics.json").read_text())
    assert base["config"]["model"]["spec"]["model_kwargs"] == {}

    # 3. With the floor off (a user who wants to see the tables anyway) the run reaches every table.
    floor_off = tmp_path / "floor_off.yaml"
    floor_off.write_text(yaml.safe_dump({"vision": {"discovery": {"floor": False}}}))
    result = run(workdir, paths, floor_off)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    comparisons = (workdir / "results/vision/summary/comparisons.md").read_text()
    assert "one chain only" in comparisons and "every chain" not in comparisons
    assert (workdir / "results/vision/summary/table1.md").is_file()
    assert "robustness" in (workdir / "results/vision/summary/table1.md").read_text()


def test_the_paper_submasking_path_on_a_users_folder_task_and_timm_file(tmp_path):
    rng = np.random.default_rng(1)
    task = tmp_path / "mytask"
    for split, count in (("train", 6), ("test", 3)):
        for name in ("ant", "bee", "cow"):
            (task / split / name).mkdir(parents=True)
            for i in range(count):
                Image.fromarray(rng.integers(0, 255, (40, 40, 3), dtype=np.uint8)).save(task / split / name / f"{i}.png")
    corrupt = task / "train/bee/broken.png"
    corrupt.write_bytes(b"\x89PNG\r\n truncated")
    weights = resnet18_file(tmp_path / "resnet18.bin")
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    submasking = copy.deepcopy(paper["submasking"])
    submasking.update(backbones=[{"name": "r18", "source": "timm", "arch": "resnet18", "weights": str(weights),
                                  "image_size": 32}],
                      tasks=[{"name": "mytask", "source": "folder", "root": str(task)}],
                      adaptations=["lp", "fs"], label_fractions=[1.0], replicates=[0],
                      training={**submasking["training"], "epochs": 1, "batch_size": 8},
                      self_supervised={"epochs": 1})
    overlay = tmp_path / "my_paths.yaml"
    overlay.write_text(yaml.safe_dump({"families": ["submasking"], "device": "cpu", "threads_per_job": 1,
                                       "checkpoint_interval_s": 0, "submasking": submasking}))
    workdir = copy_workflow(tmp_path / "wf", yaml.safe_load((REPO / "config/config.yaml").read_text()))
    result = run(workdir, overlay)
    assert result.returncode != 0
    assert str(corrupt) in (workdir / "logs/submasking/checks/mytask.log").read_text()
    assert not (workdir / "results/submasking/points").exists(), "no point trained"
    corrupt.unlink()
    result = run(workdir, overlay)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    points = (workdir / "results/submasking/summary/points.csv").read_text().splitlines()
    assert len(points) == 1 + 2 and all(",mytask," in line for line in points[1:])
