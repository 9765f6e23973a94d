"""One submasking point: (backbone, task, method, label fraction, seed) -> test accuracy, mask, k-NN, bytes."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.neighbors import KNeighborsClassifier

from ..method.masks import kept_fraction, save_subnetwork
from ..runtime import configure, derive_seed, resolve_device, save_json
from ..submasking.methods import (METHODS, features, linear_probe, train_submask_or_finetune,
                                  trained_backbone_context)
from ..submasking.model import TaskModel, load_backbone, masked_weight_names, storage_bytes
from ..submasking.tasks import label_subset, read_task
from .common import fingerprint, parser, provenance, require


@torch.no_grad()
def scores(model, train, test, k: int, batch_size: int, device) -> tuple[float, float]:
    """Test accuracy of the head, and k-NN (cosine) accuracy of the backbone's features fitted on the
    labelled training rows: one pass of the backbone over each split serves both."""
    train_x = features(model, train.images, batch_size, device)
    test_x = features(model, test.images, batch_size, device)
    predictions = model.head(test_x.to(device)).argmax(-1).cpu()
    knn = KNeighborsClassifier(n_neighbors=min(k, len(train_x)), metric="cosine")
    knn.fit(train_x.numpy(), train.labels.numpy())
    return (float((predictions == test.labels).float().mean()),
            float(np.mean(knn.predict(test_x.numpy()) == test.labels.numpy())))


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--backbone", default=None, help="model.pt of the vision family's base (source vision_base)")
    p.add_argument("--task-root", required=True, help="the task's folder (train/, test/, optional val/) or CIFAR folder")
    p.add_argument("--method", required=True, choices=METHODS)
    p.add_argument("--fraction", type=float, required=True, help="fraction of training labels used")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out-metrics", required=True)
    p.add_argument("--out-mask", required=True, help="bit-packed masks (empty for methods without one)")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "backbone", "task", "image_size", "training", "self_supervised", "knn")
    t = s["training"]
    require(t, "epochs", "batch_size", "head_lr", "mask_lr", "mask_init", "threshold", "finetune_lr",
            where="submasking.training")
    configure(args.threads, args.seed)
    device = resolve_device(args.device)
    splits = read_task(s["task"], args.task_root, s["image_size"])
    train, test = splits["train"], splits["test"]
    labelled = train.subset(label_subset(train.labels, args.fraction, args.seed))
    torch.manual_seed(derive_seed("submasking head", args.seed))
    model = TaskModel(load_backbone(s["backbone"], args.backbone), len(train.classes)).to(device)
    names = masked_weight_names(model)
    storage = storage_bytes(model, args.method, names)
    batch = t["batch_size"]
    point = f"{args.method} {args.fraction:g} seed {args.seed}"
    checkpoint = args.out_mask + ".ckpt"
    common = {"checkpoint_interval_s": args.checkpoint_interval_s, "settings": s,
              "fingerprint": fingerprint(s, args.method, args.fraction, args.seed, inputs=[args.task_root]
                                         + ([args.backbone] if args.backbone else []))}
    binary, pretext = {}, []
    if args.method == "lp":
        history = linear_probe(model, labelled, t, args.seed, device, checkpoint=checkpoint, desc=f"lp {point}", **common)
    elif args.method in ("fs", "fft"):
        history, binary = train_submask_or_finetune(model, args.method, labelled, t, args.seed, device,
                                                    checkpoint=checkpoint, desc=f"{point}", **common)
    else:  # ss_fs / ss_fft: label-free pretext on every training image, then a linear probe on the labels
        ss = {**t, **s["self_supervised"]}
        pretext, binary = train_submask_or_finetune(model, args.method.removeprefix("ss_"), train, ss, args.seed,
                                                    device, objective="rotation", checkpoint=checkpoint + ".pretext",
                                                    desc=f"pretext {point}", **common)
        history = linear_probe(model, labelled, t, args.seed, device, checkpoint=checkpoint,
                               desc=f"probe {point}", **common)
    # optimiser steps the mask trained for (more steps flip more masks: compare off-fractions at equal steps)
    mask_steps = (t["epochs"] * -(-len(labelled) // batch) if args.method == "fs" else
                  s["self_supervised"]["epochs"] * -(-len(train) // batch) if args.method == "ss_fs" else 0)
    with trained_backbone_context(model):
        test_accuracy, knn = scores(model, labelled, test, s["knn"]["k"], batch, device)
    fractions = kept_fraction(binary) if binary else None
    save_subnetwork(args.out_mask, binary, method=args.method, task=s["task"]["name"], seed=args.seed,
                    fraction=args.fraction)
    save_json({"metrics": {"test_accuracy": test_accuracy, "knn_accuracy": knn,
                           "off_fraction": fractions["off"] if fractions else None, **storage},
               "off_per_tensor": {k: 1 - v for k, v in fractions["per_tensor"].items()} if fractions else None,
               "rows": {"train": len(train), "labelled": len(labelled), "test": len(test)},
               "classes": train.classes, "curve": history, "pretext_curve": pretext,
               "mask_steps": mask_steps,
               "config": {**s, "method": args.method, "fraction": args.fraction}, "seed": args.seed,
               "provenance": provenance()}, args.out_metrics)
    print(f"{s['task']['name']} {point}: test {test_accuracy:.4f}, k-NN {knn:.4f}"
          + (f", off {fractions['off']:.4f}" if fractions else ""))


if __name__ == "__main__":
    main()
