"""Submasking family: task readers, label fractions, adaptations, overlap, and the step on a tiny backbone."""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from subtask_induction.method.masks import load_subnetwork
from subtask_induction.method.overlap import chance_jaccard, mask_overlap
from subtask_induction.submasking.tasks import build_embedded_task, label_subset, read_cifar, read_folder_task
from subtask_induction.points import SubmaskingPoint
from harness import REPO, points_file


def write_folder_task(root, classes=("cat", "dog", "eel"), per_class=(4, 2), val=False, size=10):
    rng = np.random.default_rng(0)
    splits = {"train": per_class[0], "test": per_class[1], **({"val": 1} if val else {})}
    for split, count in splits.items():
        for name in classes:
            (root / split / name).mkdir(parents=True)
            for i in range(count):
                Image.fromarray(rng.integers(0, 255, (size, size, 3), dtype=np.uint8)).save(root / split / name / f"{i}.png")
    return root


def test_folder_reader_reads_every_split_with_labels_from_sorted_train_classes(tmp_path):
    root = write_folder_task(tmp_path / "task", classes=("zebra", "ant", "moth"), val=True)
    splits = read_folder_task(root, image_size=8)
    assert set(splits) == {"train", "val", "test"}
    assert splits["train"].classes == ["ant", "moth", "zebra"]
    assert splits["train"].images.shape == (12, 3, 8, 8) and splits["train"].images.dtype == torch.uint8
    assert torch.equal(splits["test"].labels, torch.tensor([0, 0, 1, 1, 2, 2]))


def test_folder_reader_names_a_test_class_that_train_lacks(tmp_path):
    root = write_folder_task(tmp_path / "task")
    (root / "test" / "yak").mkdir()
    with pytest.raises(ValueError, match=r"test/ has classes \['yak'\]"):
        read_folder_task(root, image_size=8)


def test_cifar_pickle_reader(tmp_path):
    rng = np.random.default_rng(0)

    def batch(n, labels_key, labels):
        return {b"data": rng.integers(0, 255, (n, 3072), dtype=np.uint8), labels_key: labels}

    c10 = tmp_path / "cifar-10-batches-py"
    c10.mkdir()
    for i in range(1, 6):
        (c10 / f"data_batch_{i}").write_bytes(pickle.dumps(batch(2, b"labels", [i % 3, 1])))
    (c10 / "test_batch").write_bytes(pickle.dumps(batch(3, b"labels", [0, 1, 2])))
    (c10 / "batches.meta").write_bytes(pickle.dumps({b"label_names": [b"airplane", b"automobile", b"bird"]}))
    splits = read_cifar(c10, "cifar10", image_size=32)
    assert splits["train"].images.shape == (10, 3, 32, 32) and splits["train"].classes[2] == "bird"
    raw = pickle.loads((c10 / "test_batch").read_bytes())[b"data"][1].reshape(3, 32, 32)
    assert torch.equal(splits["test"].images[1], torch.from_numpy(raw))  # channel-first, as CIFAR stores it
    assert splits["test"].labels.tolist() == [0, 1, 2]
    c100 = tmp_path / "cifar-100-python"
    c100.mkdir()
    (c100 / "train").write_bytes(pickle.dumps(batch(4, b"fine_labels", [0, 1, 1, 0])))
    (c100 / "test").write_bytes(pickle.dumps(batch(2, b"fine_labels", [1, 0])))
    (c100 / "meta").write_bytes(pickle.dumps({b"fine_label_names": [b"apple", b"bear"]}))
    assert read_cifar(c100, "cifar100", image_size=16)["train"].images.shape == (4, 3, 16, 16)


def test_label_fractions_are_class_balanced_nested_and_seeded():
    labels = torch.tensor([0] * 50 + [1] * 30 + [2] * 20)
    small, large = label_subset(labels, 0.1, seed=3), label_subset(labels, 0.5, seed=3)
    assert torch.bincount(labels[small]).tolist() == [5, 3, 2]
    assert torch.bincount(labels[large]).tolist() == [25, 15, 10]
    assert set(small.tolist()) <= set(large.tolist())
    assert torch.equal(small, label_subset(labels, 0.1, seed=3))
    assert not torch.equal(small, label_subset(labels, 0.1, seed=4))
    assert torch.bincount(labels[label_subset(labels, 0.01, seed=0)]).tolist() == [1, 1, 1]  # at least one per class
    assert len(label_subset(labels, 1.0, seed=0)) == 100


def test_mask_overlap_against_chance():
    a = {"w": torch.tensor([True, True, False, False, False, False, False, False])}
    b = {"w": torch.tensor([True, False, True, False, False, False, False, False])}
    result = mask_overlap(a, b)
    assert result["jaccard"] == pytest.approx(1 / 3)
    assert result["chance"] == pytest.approx(chance_jaccard(0.25, 0.25)) == pytest.approx(0.0625 / 0.4375)
    assert mask_overlap(a, a)["jaccard"] == 1.0


def test_chance_overlap_is_computed_per_tensor():
    """Two tensors, 1,000 weights kept at 50% in both masks and 9,000 at 0%: random masks with these
    per-tensor densities overlap with Jaccard ~1/3, not the 0.026 a pooled density of 5% predicts."""
    generator = torch.Generator().manual_seed(0)
    half = lambda: torch.randperm(1000, generator=generator) < 500  # noqa: E731
    first = {"dense": half(), "empty": torch.zeros(9000, dtype=torch.bool)}
    second = {"dense": half(), "empty": torch.zeros(9000, dtype=torch.bool)}
    result = mask_overlap(first, second)
    assert result["chance"] == pytest.approx(0.25 / 0.75)  # 1000 * 0.5 * 0.5 / (1000 * (0.5 + 0.5 - 0.25))
    assert result["chance_pooled"] == pytest.approx(chance_jaccard(0.05, 0.05)) == pytest.approx(0.0256, abs=1e-4)
    assert result["jaccard"] == pytest.approx(result["chance"], abs=0.05)  # two random masks: about chance
    assert result["ratio"] == pytest.approx(1.0, abs=0.2)  # the pooled chance would call it 13x


def test_one_point_per_adaptation_on_a_tiny_backbone(tmp_path):
    from subtask_induction.runtime import save_torch
    from subtask_induction.steps import submasking_train
    from subtask_induction.vision.models import build_classifier, save_classifier

    spec = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}
    save_torch(save_classifier(build_classifier(spec, 0), spec), tmp_path / "base.pt")
    task = write_folder_task(tmp_path / "task", per_class=(8, 4), size=16)
    settings = {"backbone": {"name": "b", "source": "vision_base", "chain": 0, "image_size": 16},
                "task": {"name": "toy", "source": "folder"}, "image_size": 16,
                "training": {"epochs": 2, "batch_size": 8, "head_lr": 0.01, "mask_lr": 0.5, "mask_init": 1.0,
                             "threshold": 0.0, "finetune_lr": 0.001},
                "self_supervised": {"epochs": 1}, "knn": {"k": 3}}
    adaptations = ("lp", "fs", "fft", "ss_fs", "ss_fft")
    points = [{"identity": SubmaskingPoint("b", "toy", adaptation, "0.5", 0).identity(), "metrics": str(tmp_path / adaptation / "metrics.json"),
               "mask": str(tmp_path / adaptation / "mask.pt")} for adaptation in adaptations]
    def arguments(points, manifest):
        return ["--backbone", str(tmp_path / "base.pt"), "--task-root", str(task), "--points",
                points_file(points, tmp_path / f"{manifest}.points"), "--threads", "1", "--device", "cpu", "--checkpoint-interval-s", "0",
                "--settings", json.dumps(settings), "--manifest", str(tmp_path / manifest)]

    def run(points, manifest):
        submasking_train.main(arguments(points, manifest))
        return json.loads((tmp_path / manifest).read_text())

    assert run(points, "pack.json")["trained"] == [point["metrics"] for point in points]
    results = {}
    for adaptation in adaptations:
        out = tmp_path / adaptation
        results[adaptation] = json.loads((out / "metrics.json").read_text())
        masks = load_subnetwork(out / "mask.pt")["masks"]
        assert bool(masks) == (adaptation in ("fs", "ss_fs"))
        assert not (out / "mask.pt.ckpt").exists() and (out / "record.json").is_file()  # kept, then deleted
    # Run again: every point comes back from its record, nothing trains; a point alone equals it in the pack.
    again = run(points, "again.json")
    assert again["restored"] == again["points"] and again["trained"] == []
    # the same in a fresh interpreter, as a job: a pack of restored points builds no backbone, imports no timm (issue 81)
    script = ("import sys; from subtask_induction.steps import submasking_train; "
              f"submasking_train.main({arguments(points, 'fresh.json')!r}); print('timm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "False", done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads((tmp_path / "fresh.json").read_text())["restored"] == again["points"]
    alone = [{**points[1], "metrics": str(tmp_path / "alone/metrics.json"), "mask": str(tmp_path / "alone/mask.pt")}]
    run(alone, "alone.json")
    single = json.loads((tmp_path / "alone/metrics.json").read_text())
    untimed = lambda curve: [{k: v for k, v in epoch.items() if k != "seconds"} for epoch in curve]  # noqa: E731
    assert single["metrics"] == results["fs"]["metrics"] and untimed(single["curve"]) == untimed(results["fs"]["curve"])
    assert results["lp"]["rows"] == {"train": 24, "labelled": 12, "test": 12}
    for adaptation, record in results.items():
        assert 0 <= record["metrics"]["test_accuracy"] <= 1 and 0 <= record["metrics"]["knn_accuracy"] <= 1
    bytes_ = {m: r["metrics"]["task_bytes"] for m, r in results.items()}
    assert bytes_["lp"] < bytes_["fs"] == bytes_["ss_fs"] < bytes_["fft"] == bytes_["ss_fft"]
    assert results["fs"]["metrics"]["off_fraction"] > 0  # mask_lr 0.5 flips some masks in 4 steps
    assert results["fs"]["mask_steps"] == 2 * 2 and results["ss_fs"]["mask_steps"] == 1 * 3


def test_backbones_from_a_timm_file_and_a_swav_state_dict(tmp_path):
    import timm

    from subtask_induction.submasking.model import TaskModel, load_backbone, masked_weight_names

    kwargs = {"channels": [4, 8, 8, 8]}
    torch.manual_seed(0)
    source = timm.create_model("resnet18", pretrained=False, num_classes=10, **kwargs)
    torch.save(source.state_dict(), tmp_path / "timm.pth")
    net = load_backbone({"source": "timm", "arch": "resnet18", "weights": str(tmp_path / "timm.pth"),
                         "model_kwargs": {**kwargs, "num_classes": 10}})
    assert torch.equal(net.conv1.weight, source.conv1.weight)
    swav = {f"module.{k}": v for k, v in source.state_dict().items() if not k.startswith("fc.")}
    swav["module.projection_head.0.weight"] = torch.zeros(3, 3)
    swav["module.prototypes.weight"] = torch.zeros(3, 3)
    torch.save({"state_dict": swav}, tmp_path / "swav.pth.tar")
    net = load_backbone({"source": "swav", "arch": "resnet18", "weights": str(tmp_path / "swav.pth.tar"),
                         "model_kwargs": kwargs})
    assert torch.equal(net.layer4[1].conv2.weight, source.layer4[1].conv2.weight)
    model = TaskModel(net, num_classes=3)
    names = masked_weight_names(model)
    assert "net.conv1.weight" in names and "net.layer2.0.downsample.0.weight" in names
    assert not any(name.startswith("head") for name in names) and model(torch.zeros(2, 3, 32, 32, dtype=torch.uint8)).shape == (2, 3)
    del swav["module.layer1.0.conv1.weight"]
    torch.save(swav, tmp_path / "broken.pth")
    with pytest.raises(ValueError, match="lack backbone tensors"):
        load_backbone({"source": "swav", "arch": "resnet18", "weights": str(tmp_path / "broken.pth"), "model_kwargs": kwargs})
    with pytest.raises(FileNotFoundError, match="nowhere.pth"):
        load_backbone({"source": "timm", "arch": "resnet18", "weights": str(tmp_path / "nowhere.pth")})


@pytest.mark.parametrize("size", [32, 64, 224])
@pytest.mark.parametrize("name", ["digits", "textures", "faces"])
def test_every_embedded_task_builds_at_every_size_with_disjoint_train_and_test(tmp_path, name, size):
    """32 px is the default, 224 what a ViT or CLIP user sets; test images come from sources no train image uses."""
    counts = build_embedded_task(name, tmp_path, image_size=size, seed=0, crops_per_class=6)
    assert counts["train"] > 0 and counts["test"] > 0
    sources = json.loads((tmp_path / "sources.json").read_text())
    for path in list(sources)[::max(1, len(sources) // 5)]:
        with Image.open(tmp_path / path) as image:
            assert image.size == (size, size)
    assert len(sources) == counts["train"] + counts["test"]
    by_split = {split: [source for path, source in sources.items() if path.startswith(f"{split}/")]
                for split in ("train", "test")}
    if name == "textures":  # crops of one photograph: train boxes left of every test box, no shared pixel
        for photo in ("brick", "grass", "gravel"):
            train_right = max(s["box"][2] for s in by_split["train"] if s["photo"] == photo)
            test_left = min(s["box"][0] for s in by_split["test"] if s["photo"] == photo)
            assert train_right <= test_left
    else:
        assert not {s["index"] for s in by_split["train"]} & {s["index"] for s in by_split["test"]}
