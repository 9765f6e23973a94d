"""Discover the subnetwork of a base model that performs a subtask (e.g. ab), for one L0 weight."""

import math
from itertools import islice

from ..rounding import fixed
from ..arithmetic.model import accuracy, lm_loss, load_gpt2, masked_weight_names, shuffled_batches
from ..method.discovery import MaskSearch, discover_subnetwork, majority_share, mask_settings
from ..method.masks import find_masks, hard_masks_on, kept_fraction, mask_scores, save_subnetwork
from ..runtime import configure, load_torch, resolve_device, save_json
from ..seeds import arithmetic_discovery_seeds
from ..training import Checkpointing, EpochRun
from ..records import fingerprint, provenance
from .common import add_identity, parser, require
from ..timing import run_step


def parse_arguments(argv=None):
    p = parser(__doc__)
    p.add_argument("--base", required=True, help="base model .pt")
    p.add_argument("--data", required=True, help="discovery dataset .pt (subtask labels)")
    p.add_argument("--l0-weight", type=float, required=True, help="lambda")
    p.add_argument("--train-rows", type=int, default=None,
                   help="discover from only the first this many training rows (a label budget); default all")
    p.add_argument("--match-steps", action="store_true",
                   help="with --train-rows: train as many optimiser steps as a discovery on every row would (more "
                        "epochs over fewer rows, the last one cut short), so a label budget is not also a step budget")
    p.add_argument("--out-subnetwork", required=True)
    p.add_argument("--out-metrics", required=True)
    add_identity(p)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    s = args.settings
    require(s, "seed", "epochs", "batch_size", "lr", "beta_final", "mask_init")
    model, meta = load_gpt2(args.base)
    dataset = load_torch(args.data, ("splits", "n_numbers"), "arithmetic dataset")
    seeds = arithmetic_discovery_seeds(s["seed"], meta["computation"], dataset["computation"], meta["layers"])
    configure(args.threads, seeds["batches"])
    device = resolve_device(args.device)
    if dataset["n_numbers"] != meta["n_numbers"]:
        raise SystemExit(f"error: {args.data} uses {dataset['n_numbers']} numbers, {args.base} {meta['n_numbers']}")
    model.to(device)
    train, eval_rows, test = (dataset["splits"][k].to(device) for k in ("train", "eval", "test"))
    if args.train_rows is not None:
        if not 0 < args.train_rows <= len(train):
            raise SystemExit(f"error: --train-rows {args.train_rows}: {args.data} holds {len(train)} training rows")
        train = train[:args.train_rows]  # a prefix: the covering lead rows first, then uniform pairs
    every_row_steps = math.ceil(len(dataset["splits"]["train"]) / s["batch_size"]) * s["epochs"]
    per_epoch = math.ceil(len(train) / s["batch_size"])
    steps = every_row_steps if args.match_steps else per_epoch * s["epochs"]
    epochs = math.ceil(steps / per_epoch)

    def batches(epoch):  # epochs count from 0; the last one stops at the step budget
        return islice(shuffled_batches(train, s["batch_size"], seeds["batches"], epoch), steps - epoch * per_epoch)

    checkpoint = args.out_subnetwork + ".ckpt"
    method, options = mask_settings(s)
    masks, result = discover_subnetwork(
        model, masked_weight_names(model), lm_loss, batches,
        lambda net: {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]},
        MaskSearch(epochs, s["lr"], args.l0_weight, beta_final=s["beta_final"], mask_init=s["mask_init"],
                   mask_method=method, mask_options=options, weight_decay=s.get("weight_decay", 0.0)),
        Checkpointing(checkpoint, args.checkpoint_interval_s,
                      fingerprint(s, args.l0_weight, args.train_rows, args.match_steps, inputs=[args.base, args.data])),
        EpochRun(desc=f"discover {dataset['computation']} lambda={args.l0_weight:g}",
                 settings={**s, "l0_weight": args.l0_weight}),
    )
    with hard_masks_on(find_masks(model)):  # the best epoch's masks, tested hard
        test_accuracy = accuracy(model, test)["accuracy"]
    kept = kept_fraction(masks)
    chance = majority_share(dataset["splits"]["eval"][:, 3])
    save_subnetwork(args.out_subnetwork, masks, kept=kept, l0_weight=args.l0_weight, mask_method=method,
                    eval_accuracy=result.best_metrics["eval_accuracy"], test_accuracy=test_accuracy,
                    chance_accuracy=chance, subtask=dataset["computation"], train_rows=len(train),
                    selection_rows=len(eval_rows), steps=steps,
                    scores=mask_scores(find_masks(model)))
    save_json({"identity": args.identity,
               "metrics": {"eval_accuracy": result.best_metrics["eval_accuracy"], "test_accuracy": test_accuracy,
                           "kept_fraction": kept["overall"], "chance_accuracy": chance}, "mask_method": method,
               "kept_per_tensor": kept["per_tensor"], "best_epoch": result.best_epoch, "curve": result.history,
               "seed": s["seed"], "seeds": seeds, "train_rows": len(train),
               "selection_rows": len(eval_rows), "epochs": epochs, "steps": steps,
               "config": {**s, "l0_weight": args.l0_weight, "subtask": dataset["computation"],
                                             "base": meta}, "provenance": provenance()}, args.out_metrics)
    print(f"subnetwork for {dataset['computation']}: kept {fixed(100 * kept['overall'], 2)}% "
          f"eval {fixed(result.best_metrics['eval_accuracy'], 4)} test {fixed(test_accuracy, 4)}")


if __name__ == "__main__":
    run_step(main)
