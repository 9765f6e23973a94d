"""One transfer sweep point: train a variant (SI or a control) on the target with n disambiguation rows."""

import torch

from ..arithmetic.data import COMPETING_RULES, transfer_training_rows
from ..arithmetic.model import accuracy, build_gpt2, lm_loss, load_gpt2, shuffled_batches
from ..method.transfer import parameter_groups, prepare_transfer_model
from ..runtime import configure, load_torch, resolve_device, save_json
from ..training import fit, remove_checkpoint
from .common import fingerprint, parser, provenance, require


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--base", required=True)
    p.add_argument("--subnetwork", required=True)
    p.add_argument("--data", required=True, help="transfer dataset .pt of the target computation")
    p.add_argument("--variant", required=True, help="name of the variant (for the record)")
    p.add_argument("--n", type=int, required=True, help="disambiguation rows")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True, help="metrics.json")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "training", "variant")
    t, v = s["training"], s["variant"]
    require(t, "epochs", "batch_size", "lr", where="transfer training settings")
    require(v, "method", "lr_scale", "inherit_unmasked", where=f"variant '{args.variant}'")
    configure(args.threads, args.seed)
    device = resolve_device(args.device)
    base, meta = load_gpt2(args.base)
    subnetwork = load_torch(args.subnetwork, ("masks",), "subnetwork")
    dataset = load_torch(args.data, ("splits", "n_numbers", "modulus", "computation"), "arithmetic dataset")
    train = transfer_training_rows(dataset, args.n).to(device)
    eval_rows, test = dataset["splits"]["eval"].to(device), dataset["splits"]["test"].to(device)
    fresh = build_gpt2(meta["n_numbers"], meta["layers"], meta["model_settings"], seed=args.seed)
    model = prepare_transfer_model(
        v["method"], base, fresh, subnetwork["masks"], lr_scale=v["lr_scale"],
        inherit_unmasked=v["inherit_unmasked"], generator=torch.Generator().manual_seed(args.seed),
    ).to(device)
    optimizer = torch.optim.AdamW(parameter_groups(model, t["lr"], v["lr_scale"]),
                                  weight_decay=t.get("weight_decay", 0.01))
    rules = {rule: rule for rule in COMPETING_RULES}
    checkpoint = args.out + ".ckpt"
    point = {**s, "variant_name": args.variant, "n_disambiguation": args.n, "seed": args.seed,
             "target": dataset["computation"], "subtask": subnetwork.get("subtask"), "base": meta}
    result = fit(
        model, optimizer, lm_loss, lambda epoch: shuffled_batches(train, t["batch_size"], args.seed, epoch),
        lambda net: {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]}, t["epochs"],
        patience=t.get("patience"), stop_at=t.get("stop_at"), checkpoint=checkpoint,
        checkpoint_interval_s=s.get("checkpoint_interval_s", 60), fingerprint=fingerprint(point),
        desc=f"transfer {args.variant} n={args.n} seed={args.seed}",
    )
    test_metrics = accuracy(model, test, rules, dataset["modulus"])
    metrics = {"eval_accuracy": result.best_metrics["eval_accuracy"], "test_accuracy": test_metrics.pop("accuracy"),
               **{f"test_{key}": value for key, value in test_metrics.items()}}
    save_json({"metrics": metrics, "best_epoch": result.best_epoch, "curve": result.history, "seed": args.seed,
               "config": point, "provenance": provenance()}, args.out)
    remove_checkpoint(checkpoint)
    print(f"{args.variant} n={args.n} seed={args.seed}: test {metrics['test_accuracy']:.4f} (epoch {result.best_epoch})")


if __name__ == "__main__":
    main()
