"""One transfer sweep point: train a variant (SI or a control) on the target with n disambiguation rows.

The run trains a fixed number of epochs and records, per epoch, the eval accuracy (target-labelled
a!=b rows), the accuracy and loss on a held-out slice of its own training rows, and the test metrics.
metrics.json reports the test metrics under each selection protocol (see selection.py): `eval` (the
paper's), `train_holdout` and `last`; all three come from this one run."""

import torch

from ..arithmetic.data import competing_rules, split_holdout, transfer_training_rows
from ..arithmetic.model import accuracy, build_gpt2, lm_loss, load_gpt2, mean_loss, shuffled_batches
from ..method.masks import load_subnetwork
from ..method.transfer import parameter_groups, prepare_transfer_model
from ..runtime import configure, load_torch, resolve_device, save_json
from ..selection import PROTOCOLS, select_all
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
    require(t, "epochs", "batch_size", "lr", "holdout_fraction", where="transfer training settings")
    require(v, "method", "lr_scale", "inherit_unmasked", where=f"variant '{args.variant}'")
    configure(args.threads, args.seed)
    device = resolve_device(args.device)
    base, meta = load_gpt2(args.base)
    subnetwork = load_subnetwork(args.subnetwork)
    dataset = load_torch(args.data, ("splits", "n_numbers", "modulus", "computation"), "arithmetic dataset")
    rows = transfer_training_rows(dataset, args.n)
    train, holdout = (part.to(device) for part in split_holdout(
        rows, len(dataset["splits"]["ambiguous"]), t["holdout_fraction"], args.seed))
    if len(holdout) == 0:
        raise SystemExit(f"error: holdout_fraction {t['holdout_fraction']} leaves no held-out row of {len(rows)}")
    eval_rows, test = dataset["splits"]["eval"].to(device), dataset["splits"]["test"].to(device)
    fresh = build_gpt2(meta["n_numbers"], meta["layers"], meta["model_settings"], seed=args.seed)
    model = prepare_transfer_model(
        v["method"], base, fresh, subnetwork["masks"], lr_scale=v["lr_scale"],
        inherit_unmasked=v["inherit_unmasked"], generator=torch.Generator().manual_seed(args.seed),
    ).to(device)
    optimizer = torch.optim.AdamW(parameter_groups(model, t["lr"], v["lr_scale"]),
                                  weight_decay=t.get("weight_decay", 0.01))
    rules = {rule: rule for rule in competing_rules(dataset["computation"], dataset["n_numbers"], dataset["modulus"])}

    def evaluate(net):
        tested = accuracy(net, test, rules, dataset["modulus"])
        return {"eval_accuracy": accuracy(net, eval_rows)["accuracy"],
                "holdout_accuracy": accuracy(net, holdout)["accuracy"], "holdout_loss": mean_loss(net, holdout),
                "test_accuracy": tested.pop("accuracy"), **{f"test_{key}": value for key, value in tested.items()}}

    checkpoint = args.out + ".ckpt"
    point = {**s, "variant_name": args.variant, "n_disambiguation": args.n, "seed": args.seed,
             "target": dataset["computation"], "subtask": subnetwork.get("subtask"), "base": meta}
    result = fit(
        model, optimizer, lm_loss, lambda epoch: shuffled_batches(train, t["batch_size"], args.seed, epoch),
        evaluate, t["epochs"], select="holdout_accuracy", checkpoint=checkpoint,
        checkpoint_interval_s=s.get("checkpoint_interval_s", 60),
        fingerprint=fingerprint(point, inputs=[args.base, args.subnetwork, args.data]),
        desc=f"transfer {args.variant} n={args.n} seed={args.seed}", settings=point,
    )
    protocols = select_all(result.history)
    save_json({"metrics": protocols, "protocols": PROTOCOLS, "competing_rules": sorted(rules),
               "rows": {"train": len(train), "holdout": len(holdout)}, "curve": result.history,
               "seed": args.seed, "config": point, "provenance": provenance()}, args.out)
    remove_checkpoint(checkpoint)
    print(f"{args.variant} n={args.n} seed={args.seed}: test accuracy "
          + ", ".join(f"{name} {record['test_accuracy']:.4f} (epoch {record['epoch']})" for name, record in protocols.items()))


if __name__ == "__main__":
    main()
