"""Train a GPT-2 base model on one computation (e.g. a+ab) and write the best epoch's weights."""

import torch

from ..rounding import fixed
from ..arithmetic.model import accuracy, build_gpt2, lm_loss, save_gpt2, shuffled_batches
from ..runtime import configure, load_torch, resolve_device, save_json
from ..seeds import arithmetic_base_seeds
from ..training import Checkpointing, EpochRun, Schedule, fit
from ..records import fingerprint, provenance
from .common import add_identity, parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--data", required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--out-model", required=True)
    p.add_argument("--out-metrics", required=True)
    add_identity(p)
    args = p.parse_args(argv)
    s = args.settings
    require(s, "seed", "model", "training")
    t = s["training"]
    require(t, "epochs", "batch_size", "lr", where="base training settings")
    dataset = load_torch(args.data, ("splits", "n_numbers", "modulus", "computation"), "arithmetic dataset")
    seeds = arithmetic_base_seeds(s["seed"], dataset["computation"], args.layers)
    configure(args.threads, seeds["batches"])
    device = resolve_device(args.device)
    train, eval_rows, test = (dataset["splits"][k].to(device) for k in ("train", "eval", "test"))
    model = build_gpt2(dataset["n_numbers"], args.layers, s["model"], seeds["init"]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=t["lr"], betas=tuple(t.get("betas", (0.9, 0.999))),
                                  weight_decay=t.get("weight_decay", 0.0))
    checkpoint = args.out_model + ".ckpt"
    # The kept epoch: the best eval accuracy (ours), or the lowest eval loss (`select: eval_loss`, HF Trainer's
    # load_best_model_at_end, as the authors' base); their schedule also decays lr to 0 and clips at 1.0.
    select = t.get("select", "eval_accuracy")

    def evaluate(net):
        metrics = {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]}
        if select == "eval_loss":
            metrics["eval_loss"] = float(lm_loss(net, eval_rows))
        return metrics

    result = fit(
        model, optimizer, lm_loss, lambda epoch: shuffled_batches(train, t["batch_size"], seeds["batches"], epoch),
        evaluate,
        Schedule(t["epochs"], select=select, patience=t.get("patience"), stop_at=t.get("stop_at"),
                 minimize=select == "eval_loss", lr_decay=t.get("lr_decay", "constant"),
                 clip_grad_norm=t.get("clip_grad_norm")),
        Checkpointing(checkpoint, args.checkpoint_interval_s, fingerprint(s, args.layers, inputs=[args.data])),
        EpochRun(desc=f"base {dataset['computation']} {args.layers}L", settings={**s, "layers": args.layers}),
    )
    test_accuracy = accuracy(model, test)["accuracy"]
    meta = {"n_numbers": dataset["n_numbers"], "layers": args.layers, "model_settings": s["model"],
            "computation": dataset["computation"], "modulus": dataset["modulus"], "seeds": seeds}
    save_gpt2(model, meta, args.out_model)
    save_json({"identity": args.identity,
               "metrics": {"eval_accuracy": result.best_metrics["eval_accuracy"], "test_accuracy": test_accuracy,
                           **({"eval_loss": result.best_metrics["eval_loss"]} if select == "eval_loss" else {})},
               "best_epoch": result.best_epoch, "curve": result.history, "seed": s["seed"], "seeds": seeds,
               "config": {**s, "layers": args.layers, "computation": dataset["computation"]},
               "provenance": provenance()}, args.out_metrics)
    print(f"base {dataset['computation']} {args.layers} layers: eval {fixed(result.best_metrics['eval_accuracy'], 4)} "
          f"test {fixed(test_accuracy, 4)} (epoch {result.best_epoch})")


if __name__ == "__main__":
    run_step(main)
