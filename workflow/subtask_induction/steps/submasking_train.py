"""Submasking points of one backbone and one task, one process: each (adaptation, label fraction, seed) ->
test accuracy, mask, k-NN accuracy, bytes.

Points that share a task train one after another in one process (a pack: the imports and the task's images
are read once, not once per point), each on its own backbone and from its own seeds exactly as alone. Records (sweep.py): a point whose record was written for the same fingerprint (its settings,
adaptation, fraction, seed, the contents of the task folder and backbone file, and the code the step runs) is
restored instead of trained, so adding a seed trains only the new points. A point's resume checkpoint is
deleted once its outputs and records are written.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import torch

from ..rounding import fixed
from ..method.masks import kept_fraction, save_subnetwork
from ..runtime import configure, content_hash, derive_seed, resolve_device, save_json
from ..submasking.adaptations import (ADAPTATIONS, features, linear_probe, train_submask_or_finetune,
                                  trained_backbone_context)
from ..submasking.model import TaskModel, load_backbone, masked_weight_names, storage_bytes
from ..submasking.tasks import label_subset, read_task
from ..sweep import read_points, run_pack
from ..training import Checkpointing, EpochRun
from ..records import fingerprint, provenance
from .common import parser, require
from ..timing import evaluating, run_step

# identity: points.SubmaskingPoint.identity (backbone, task, adaptation, fraction, replicate), recorded as given;
# metrics and mask: the point's outputs
POINT_KEYS = ("identity", "metrics", "mask")


def adaptation_fraction_replicate(point: dict) -> tuple[str, float, int]:
    identity = point["identity"]
    return identity["adaptation"], float(identity["fraction"]), int(identity["replicate"])


@torch.no_grad()
def scores(model, train, test, k: int, batch_size: int, device) -> tuple[float, float]:
    """Test accuracy of the head, and k-NN (cosine) accuracy of the backbone's features fitted on the
    labelled training rows: one pass of the backbone over each split serves both."""
    with evaluating():
        return _scores(model, train, test, k, batch_size, device)


def _scores(model, train, test, k: int, batch_size: int, device) -> tuple[float, float]:
    from sklearn.neighbors import KNeighborsClassifier

    train_x = features(model, train.images, batch_size, device)
    test_x = features(model, test.images, batch_size, device)
    predictions = model.head(test_x.to(device)).argmax(-1).cpu()
    knn = KNeighborsClassifier(n_neighbors=min(k, len(train_x)), metric="cosine")
    knn.fit(train_x.numpy(), train.labels.numpy())
    return (float((predictions == test.labels).float().mean()),
            float(np.mean(knn.predict(test_x.numpy()) == test.labels.numpy())))


def train_point(point: dict, s: dict, splits: dict, backbone_file: str | None, threads: int, device,
                checkpoint_interval_s: float, point_fingerprint: str) -> None:
    """One point, from its own seeds: the numbers it would have in a process of its own."""
    t = s["training"]
    adaptation, fraction, seed = adaptation_fraction_replicate(point)  # the replicate is the point's seed
    configure(threads, seed)
    train, test = splits["train"], splits["test"]
    labelled = train.subset(label_subset(train.labels, fraction, seed))
    torch.manual_seed(derive_seed("submasking head", seed))
    model = TaskModel(load_backbone(s["backbone"], backbone_file), len(train.classes)).to(device)
    storage = storage_bytes(model, adaptation, masked_weight_names(model))
    batch = t["batch_size"]
    name = f"{adaptation} {fraction:g} replicate {seed}"
    checkpoint = point["mask"] + ".ckpt"
    def saving(path):  # each stage's resume state, for this point's settings and inputs
        return Checkpointing(path, checkpoint_interval_s, point_fingerprint)

    binary, pretext = {}, []
    if adaptation == "lp":
        history = linear_probe(model, labelled, t, seed, device, saving(checkpoint), EpochRun(desc=f"lp {name}", settings=s))
    elif adaptation in ("fs", "fft"):
        history, binary = train_submask_or_finetune(model, adaptation, labelled, t, seed, device, saving(checkpoint),
                                                    EpochRun(desc=name, settings=s))
    else:  # ss_fs / ss_fft: label-free pretext on every training image, then a linear probe on the labels
        ss = {**t, **s["self_supervised"]}
        pretext, binary = train_submask_or_finetune(model, adaptation, train, ss, seed, device,
                                                    saving(checkpoint + ".pretext"),
                                                    EpochRun(desc=f"pretext {name}", settings=s))
        history = linear_probe(model, labelled, t, seed, device, saving(checkpoint),
                               EpochRun(desc=f"probe {name}", settings=s))
    # optimiser steps the mask trained for (more steps flip more masks: compare off-fractions at equal steps)
    mask_steps = (t["epochs"] * -(-len(labelled) // batch) if adaptation == "fs" else
                  s["self_supervised"]["epochs"] * -(-len(train) // batch) if adaptation == "ss_fs" else 0)
    with trained_backbone_context(model):
        test_accuracy, knn = scores(model, labelled, test, s["knn"]["k"], batch, device)
    fractions = kept_fraction(binary) if binary else None
    save_subnetwork(point["mask"], binary, adaptation=adaptation, task=s["task"]["name"], seed=seed, fraction=fraction)
    save_json({"metrics": {"test_accuracy": test_accuracy, "knn_accuracy": knn,
                           "off_fraction": fractions["off"] if fractions else None, **storage},
               "off_per_tensor": {k: 1 - v for k, v in fractions["per_tensor"].items()} if fractions else None,
               "rows": {"train": len(train), "labelled": len(labelled), "test": len(test)},
               "classes": train.classes, "curve": history, "pretext_curve": pretext, "mask_steps": mask_steps,
               "config": s, "identity": point["identity"],
               "fingerprint": point_fingerprint, "provenance": provenance()}, point["metrics"])
    print(f"{s['task']['name']} {name}: test {fixed(test_accuracy, 4)}, k-NN {fixed(knn, 4)}"
          + (f", off {fixed(fractions['off'], 4)}" if fractions else ""), flush=True)


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--backbone", default=None, help="model.pt of the vision family's base (source vision_base), for "
                   "points that name none")
    p.add_argument("--task-root", required=True, help="the task's folder (train/, test/, optional val/) or CIFAR folder")
    p.add_argument("--points", required=True,
                   help=f"JSON file: the list of points, each with {list(POINT_KEYS)} (metrics and mask: output paths) "
                        "and optionally its own settings and backbone (else --settings, --backbone)")
    p.add_argument("--manifest", help="written last: the pack's points, and which were trained or restored")
    args = p.parse_args(argv)
    points = read_points(args.points, POINT_KEYS)
    settings = {point["metrics"]: point.get("settings") or args.settings for point in points}
    backbones = {}
    for point in points:
        s = settings[point["metrics"]]
        require(s, "backbone", "task", "image_size", "training", "self_supervised", "knn", where=f"settings of {point['metrics']}")
        require(s["training"], "epochs", "batch_size", "head_lr", "mask_lr", "mask_init", "threshold", "finetune_lr",
                where="submasking.training")
        require(point["identity"], "adaptation", "fraction", "replicate", where=f"identity of {point['metrics']}")
        if point["identity"]["adaptation"] not in ADAPTATIONS:
            raise SystemExit(f"error: point {point}: adaptation must be one of {list(ADAPTATIONS)}")
        backbone = ((point.get("backbone") or args.backbone) if s["backbone"]["source"] == "vision_base"
                    else s["backbone"].get("weights"))
        if not backbone or not Path(backbone).exists():
            raise SystemExit(f"error: backbone file {backbone!r} (submasking.backbones, {s['backbone']['name']}) of "
                             f"{point['metrics']} does not exist")
        backbones[point["metrics"]] = backbone
    first = settings[points[0]["metrics"]]
    if len({json.dumps([s["task"], s["image_size"]], sort_keys=True) for s in settings.values()}) != 1:
        raise SystemExit(f"error: the points of {args.points} name more than one task or image size (a pack reads one)")
    configure(args.threads, adaptation_fraction_replicate(points[0])[2])
    digest = functools.lru_cache(maxsize=None)(content_hash)  # a replaced weight file or task folder retrains

    def point_fingerprint(point):
        return fingerprint(settings[point["metrics"]], *adaptation_fraction_replicate(point),
                           [digest(args.task_root), digest(backbones[point["metrics"]])])

    def train(todo):
        device = resolve_device(args.device)
        splits = read_task(first["task"], args.task_root, first["image_size"])
        for point in todo:
            train_point(point, settings[point["metrics"]], splits, backbones[point["metrics"]], args.threads, device,
                        args.checkpoint_interval_s, point_fingerprint(point))
            yield point, None  # run_pack keeps its records before the next point trains
            for suffix in (".ckpt", ".ckpt.pretext"):  # its records are written: the checkpoint has done its job
                Path(point["mask"] + suffix).unlink(missing_ok=True)

    run_pack(points, lambda point: [point["metrics"], point["mask"]], point_fingerprint, train, args.manifest)


if __name__ == "__main__":
    run_step(main)
