"""Train one Table 1 model on original images: Subtask Induction (frozen subnetwork, rest re-initialised)
or a baseline (from scratch, data mixture, linear probe), with the training loop every stage uses.

Model selection uses the original eval images (the transfer task's own eval split); the pooled eval
accuracy is only recorded, for the training-dynamics figure (Fig 5). The trained model is saved with the
weights its forward pass uses (the frozen subnetwork folded in) for the cue-conflict evaluation's own rule."""

import math


from ..rounding import fixed
from ..method.masks import load_subnetwork
from ..method.kinds import kinds_of
from ..method.transfer import TransferPlan
from ..runtime import configure, resolve_device, save_json, save_torch
from ..training import Checkpointing, EpochRun, Schedule, fit
from ..images import concatenate
from ..vision.classes import run_classes
from ..vision.models import head_parameter_names, load_classifier, save_classifier, transfer_start, variant_spec
from ..vision.tasks import accuracy, class_weights, make_optimizer, nll_loss, open_split, shuffled_batches
from ..seeds import vision_seeds, vision_train_subset_seed
from ..records import fingerprint, provenance
from .common import add_identity, parser, require
from .vision_common import EvaluationSets, add_evaluation_arguments
from ..timing import run_step


def parse_arguments(argv=None):
    p = parser(__doc__)
    p.add_argument("--base", required=True)
    p.add_argument("--subnetwork", help=f"the selected subnetwork .pt (the kinds {list(kinds_of('vision', masked=True))} need it)")
    p.add_argument("--train", required=True, help="folder of original training images")
    p.add_argument("--eval", required=True, help="folder of original eval images (model selection)")
    p.add_argument("--pooled-eval", nargs="+", required=True, help="pooled eval folders (recorded per epoch)")
    p.add_argument("--pooled-discovery", nargs="+", help="pooled discovery folders (the data-mixture baseline)")
    add_evaluation_arguments(p)
    p.add_argument("--out", required=True, help="metrics.json")
    p.add_argument("--out-model", required=True, help="model.pt: the trained model, for the cue-conflict evaluation")
    add_identity(p)  # points.VisionPoint: the chain and the variant's name
    return p.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    s = args.settings
    require(s, "chain", "data", "training", "variant", "eval_batch_size")
    identity = args.identity
    name = identity["variant"]
    t, v, data = s["training"], s["variant"], s["data"]
    require(t, "epochs", "batch_size", "lr", where="transfer training settings")
    require(v, "kind", "lr_scale", "inherit_unmasked", "data", "trainable", where=f"variant '{name}'")
    plan = TransferPlan.from_settings(v)
    if plan.reads_subnetwork and not args.subnetwork:
        raise SystemExit(f"error: variant '{name}' (kind {v['kind']}) needs --subnetwork")
    seeds = vision_seeds("transfer", s["chain"], masked_init=v.get("unkept") == "authors_frozen")
    configure(args.threads, seeds["batches"])
    device = resolve_device(args.device)
    base, spec = load_classifier(args.base)
    spec = variant_spec(spec, v)
    try:   # a top_k variant needs the discovery's scores: said before any image is read
        masks = plan.masks(load_subnetwork(args.subnetwork)) if plan.reads_subnetwork else None
    except ValueError as error:
        raise SystemExit(f"error: variant '{name}', {args.subnetwork}: {error}") from error
    classes = run_classes(s)
    train = open_split(args.train, data, "train", classes, per_class=v.get("train_per_class"),
                       seed=vision_train_subset_seed(s["chain"]))
    if v["data"] == "mixture":
        if not args.pooled_discovery:
            raise SystemExit(f"error: variant '{name}' trains on the mixture: give --pooled-discovery")
        train = concatenate(train, open_split(args.pooled_discovery, data, "pooled discovery", classes), "mixture")
    eval_set = open_split(args.eval, data, "eval", classes)
    pooled_eval = open_split(args.pooled_eval, data, "pooled eval", classes)
    evaluation = EvaluationSets(args, data, classes)
    model = transfer_start(plan, v, base, spec, masks, seeds).to(device)
    # trainable head (a linear probe): only the classifier learns, the rest stays as it was
    groups = plan.parameter_groups(model, t["lr"], head=head_parameter_names(model))
    batch = s["eval_batch_size"]
    checkpoint = args.out + ".ckpt"
    point = {**s, "identity": identity}
    result = fit(
        model, make_optimizer(groups, t), nll_loss(class_weights(train.labels, t.get("class_weighted", False), len(classes))),
        shuffled_batches(train, t["batch_size"], seeds["batches"], device),
        lambda net: {"eval_accuracy": accuracy(net, eval_set, batch, device),
                     "eval_pooled_accuracy": accuracy(net, pooled_eval, batch, device)},
        Schedule(t["epochs"], patience=t.get("patience"), stop_at=t.get("stop_at")),
        Checkpointing(checkpoint, args.checkpoint_interval_s,
                      fingerprint(point, inputs=[args.base, *([args.subnetwork] if masks is not None else []), args.train,
                                                 args.eval, *(args.pooled_discovery or [])])),
        EpochRun(train_mode=plan.trainable != "head", desc=f"transfer {name} chain={s['chain']}", settings=point),
    )
    metrics = evaluation(model, batch, device)
    save_torch(save_classifier(model, spec), args.out_model)
    save_json({"metrics": {k: val for k, val in metrics.items() if k != "per_class"}, "per_class": metrics["per_class"],
               "best_epoch": result.best_epoch, "curve": result.history, "train_images": len(train),
               "steps_per_epoch": math.ceil(len(train) / t["batch_size"]), "identity": identity,
               "seeds": seeds, "config": s, "provenance": provenance()}, args.out)
    print(f"{name} chain={s['chain']}: original {fixed(metrics['original_accuracy'], 3)} pooled "
          f"{fixed(metrics['pooled_accuracy'], 3)} (epoch {result.best_epoch})")


if __name__ == "__main__":
    run_step(main)
