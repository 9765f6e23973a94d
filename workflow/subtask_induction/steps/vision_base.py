"""The base ("pretrained") model: import a local timm weight file, or, without one, train the network
on the generated world's pretraining split (texture correlated with class). Evaluated on the test images as
in Table 1 (the cue-conflict images: vision_cue_conflict, from the saved model)."""

from ..rounding import fixed
from ..runtime import configure, resolve_device, save_json, save_torch
from ..training import Checkpointing, EpochRun, Schedule, fit
from ..vision.classes import run_classes
from ..vision.models import build_classifier, load_pretrained_classifier, save_classifier
from ..vision.tasks import (accuracy, class_weights, make_optimizer, nll_loss, open_split,
                            shuffled_batches)
from ..seeds import vision_seeds
from ..records import fingerprint, provenance
from .common import add_identity, parser, require
from .vision_common import EvaluationSets, add_evaluation_arguments
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--train", help="folder of pretraining images (when no weight file is configured)")
    p.add_argument("--eval", help="folder of eval images (model selection while training the base)")
    add_evaluation_arguments(p)
    p.add_argument("--out-model", required=True)
    p.add_argument("--out-metrics", required=True)
    add_identity(p)
    args = p.parse_args(argv)
    s = args.settings
    require(s, "chain", "model", "data", "training", "eval_batch_size")
    seeds = vision_seeds("base", s["chain"])
    configure(args.threads, seeds["batches"])
    device = resolve_device(args.device)
    spec, data, t = s["model"]["spec"], s["data"], s["training"]
    classes = run_classes(s)
    evaluation = EvaluationSets(args, data, classes)
    record = {}
    if s["model"].get("weights"):
        model = load_pretrained_classifier(spec, s["model"]["weights"]).to(device)
        record["weights"] = s["model"]["weights"]
    else:
        if not (args.train and args.eval):
            raise SystemExit("error: without a weight file the base is trained: give --train and --eval")
        require(t, "epochs", "batch_size", "lr", where="base training settings")
        train, eval_set = open_split(args.train, data, "pretraining", classes), open_split(args.eval, data, "eval", classes)
        model = build_classifier(spec, seeds["init"]).to(device)
        checkpoint = args.out_model + ".ckpt"
        result = fit(
            model, make_optimizer(model.parameters(), t),
            nll_loss(class_weights(train.labels, t.get("class_weighted", False), len(classes))),
            shuffled_batches(train, t["batch_size"], seeds["batches"], device),
            lambda net: {"eval_accuracy": accuracy(net, eval_set, s["eval_batch_size"], device)},
            Schedule(t["epochs"], patience=t.get("patience"), stop_at=t.get("stop_at")),
            Checkpointing(checkpoint, args.checkpoint_interval_s, fingerprint(s, inputs=[args.train, args.eval])),
            EpochRun(desc="base", settings=s),
        )
        record.update(best_epoch=result.best_epoch, curve=result.history, eval_accuracy=result.best_metrics["eval_accuracy"])
    metrics = evaluation(model, s["eval_batch_size"], device)
    save_torch(save_classifier(model, spec), args.out_model)
    save_json({"identity": args.identity, "metrics": metrics, **record, "seeds": seeds, "config": s, "provenance": provenance()}, args.out_metrics)
    print(f"base: original {fixed(metrics['original_accuracy'], 3)} pooled {fixed(metrics['pooled_accuracy'], 3)}")


if __name__ == "__main__":
    run_step(main)
