"""Benchmark (not a test): our discovery against the authors' engine (NeuroSurgeon 0.1.0) on a finished run's own
base, data and settings, for every epoch of a whole discovery.

tests/test_neurosurgeon_oracle.py checks the two engines on a tiny GPT-2 for 32 steps. This runs the comparison at
the pipeline's size: the base, the subtask's rows, the settings and the batch seed a finished run's discovery used
(its metrics.json), the same batches in the same order through our `discover_subnetwork` and through NeuroSurgeon's
`CircuitModel` (the authors' loop: AdamW on the mask logits, the temperature set at each epoch's start,
`output.loss` backward). Prints, and writes as JSON (--out), per epoch the largest score difference and the hard-mask
entries that differ; at the end the kept fraction and the subtask's test accuracy of both hard masks, and those of the
run's own subnetwork (which our engine here must reproduce exactly: it runs under the run's kernel pins).

    python benchmarks/engine_equality.py RUN_FOLDER [--chain 0 --base a+ab --subtask ab --layers 2 --lambda 1e-06]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.arithmetic.model import accuracy, lm_loss, load_gpt2, masked_weight_names, shuffled_batches  # noqa: E402
from subtask_induction.method.discovery import MaskSearch, discover_subnetwork  # noqa: E402
from subtask_induction.method.masks import find_masks, hard_masks_on, mask_scores  # noqa: E402
from subtask_induction.runtime import configure, load_torch  # noqa: E402


def theirs(base, names, settings, l0_weight, batches, epochs, test):
    """The authors' discovery loop on NeuroSurgeon (math/ablate.py's), scores and hard masks after every epoch."""
    from NeuroSurgeon.Models.circuit_model import CircuitModel
    from NeuroSurgeon.Models.model_configs import CircuitConfig

    config = CircuitConfig(mask_method="continuous_sparsification",
                           mask_hparams={"ablation": "none", "mask_unit": "weight", "mask_bias": False,
                                         "mask_init_value": settings["mask_init"]},
                           target_layers=[name.removesuffix(".weight") for name in names], freeze_base=True,
                           add_l0=True, l0_lambda=l0_weight)
    model = CircuitModel(config, copy.deepcopy(base))
    layers = {f"{name}.weight": model.wrapped_model.get_submodule(name) for name in config.target_layers}
    parameters = [layer.weight_mask_params for layer in layers.values()]
    optimizer = torch.optim.AdamW(parameters, lr=settings["lr"], weight_decay=settings.get("weight_decay", 0.0))
    seen = []
    for epoch in range(epochs):
        model.temperature = settings["beta_final"] ** (epoch / epochs)
        model.train(True)
        for batch in batches(epoch):
            optimizer.zero_grad()
            model(input_ids=batch, labels=batch).loss.backward()
            optimizer.step()
        model.eval()
        seen.append({name: layer.weight_mask_params.detach().clone() for name, layer in layers.items()})
    # NeuroSurgeon's own hard masks in eval mode (s > 0) on the subtask's test rows: its wrapped GPT-2 computes the
    # same forward as ours with those masks, so accuracy() reads its logits through the same code
    with torch.no_grad():
        logits = model(input_ids=test).logits
    correct = (logits[:, 2].argmax(-1) == test[:, 3]).float().mean().item()
    return seen, correct


def ours(base, names, settings, l0_weight, batches, epochs, eval_rows):
    model = copy.deepcopy(base)
    seen = []

    def evaluate(net):
        seen.append(mask_scores(find_masks(net)))
        return {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]}

    _, result = discover_subnetwork(model, names, lm_loss, batches, evaluate,
                                    MaskSearch(epochs, settings["lr"], l0_weight, beta_final=settings["beta_final"],
                                               mask_init=settings["mask_init"],
                                               weight_decay=settings.get("weight_decay", 0.0)))
    return model, seen, result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a finished run's folder (its results/arithmetic/)")
    parser.add_argument("--chain", type=int, default=0)
    parser.add_argument("--base", default="a+ab")
    parser.add_argument("--subtask", default="ab")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lambda", dest="l0", default="1e-06", help="the λ folder's tag")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    root = args.run / "results" / "arithmetic"
    found = root / f"chain{args.chain}" / "discovery" / args.base / args.subtask / f"layers{args.layers}" / f"lambda{args.l0}"
    record = json.loads((found / "metrics.json").read_text())
    # the run's kernel pins (cpu_kernels: avx2 sets them in the rule's shell) are read once, when torch loads: run
    # again under them, or our engine here would compute with other kernels than the run did
    pins = record["provenance"].get("kernel_environment", {})
    if any(os.environ.get(key) != value for key, value in pins.items()):
        os.execve(sys.executable, [sys.executable, __file__, *(sys.argv[1:] if argv is None else argv)],
                  {**os.environ, **pins})
    settings, l0_weight = record["config"], record["config"]["l0_weight"]
    configure(1, record["seeds"]["batches"])
    torch.set_flush_denormal(True)
    base, _ = load_gpt2(str(root / f"chain{args.chain}" / "base" / args.base / f"layers{args.layers}" / "model.pt"))
    dataset = load_torch(root / "data" / "discovery" / f"{args.subtask}.pt", ("splits",), "arithmetic dataset")
    train, eval_rows, test = (dataset["splits"][k] for k in ("train", "eval", "test"))
    epochs = record["epochs"]
    names = masked_weight_names(base)

    def batches(epoch):   # the pipeline's batches: a function of (seed, epoch) only
        return shuffled_batches(train, settings["batch_size"], record["seeds"]["batches"], epoch)

    start = time.perf_counter()
    model, mine, result = ours(base, names, settings, l0_weight, batches, epochs, eval_rows)
    ours_s = time.perf_counter() - start
    torch.manual_seed(0)   # NeuroSurgeon's layers draw a throwaway weight from the global RNG when built
    start = time.perf_counter()
    reference, their_accuracy = theirs(base, names, settings, l0_weight, batches, epochs, test)
    theirs_s = time.perf_counter() - start
    total = sum(scores.numel() for scores in mine[0].values())
    per_epoch = []
    for epoch, (a, b) in enumerate(zip(mine, reference, strict=True), start=1):
        per_epoch.append({"epoch": epoch,
                          "max_score_difference": max(float((a[n] - b[n]).abs().max()) for n in a),
                          "hard_mask_entries_differing": sum(int(((a[n] > 0) != (b[n] > 0)).sum()) for n in a)})
    last_ours, last_theirs = mine[-1], reference[-1]
    kept = lambda scores: sum(int((s > 0).sum()) for s in scores.values()) / total  # noqa: E731
    # our engine with the run's own selection (the best eval epoch) must be the run's subnetwork
    stored = json.loads((found / "metrics.json").read_text())["metrics"]
    with hard_masks_on(find_masks(model)):
        our_selected_accuracy = accuracy(model, test)["accuracy"]
    figures = {
        "run": str(args.run), "chain": args.chain, "layers": args.layers, "l0_weight": l0_weight, "epochs": epochs,
        "steps": epochs * -(-len(train) // settings["batch_size"]), "masked_entries": total,
        "weight_decay": settings.get("weight_decay", 0.0), "per_epoch": per_epoch,
        "last_epoch": {"hard_mask_entries_differing": per_epoch[-1]["hard_mask_entries_differing"],
                       "kept_ours": kept(last_ours), "kept_theirs": kept(last_theirs),
                       "test_accuracy_theirs": their_accuracy},
        "selected_epoch_ours": result.best_epoch,
        "ours_selected": {"kept": stored["kept_fraction"], "test_accuracy": our_selected_accuracy,
                          "kept_here": kept(mine[result.best_epoch - 1]),
                          "equals_the_run_s_own_record": kept(mine[result.best_epoch - 1]) == stored["kept_fraction"]
                          and our_selected_accuracy == stored["test_accuracy"]},
        "seconds": {"ours": round(ours_s, 1), "theirs": round(theirs_s, 1)},
    }
    for row in per_epoch:
        print(f"epoch {row['epoch']:3d}: max |Δs| {row['max_score_difference']:.2e}, hard-mask entries differing "
              f"{row['hard_mask_entries_differing']} of {total:,}")
    last = figures["last_epoch"]
    print(f"after {figures['steps']} steps: {last['hard_mask_entries_differing']} of {total:,} entries differ; kept "
          f"{100 * last['kept_ours']:.3f}% (ours) vs {100 * last['kept_theirs']:.3f}% (theirs); NeuroSurgeon's "
          f"test accuracy on {args.subtask} {their_accuracy:.3f}; ours at its selected epoch {result.best_epoch}: kept "
          f"{100 * stored['kept_fraction']:.3f}%, test {our_selected_accuracy:.3f} (the run's record: "
          f"{stored['test_accuracy']:.3f})")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
