"""Benchmark (not a test): cost of masked and frozen-subnetwork steps, and one paper-setting transfer run.

Prints
  1. a discovery step (continuous-sparsification masks on every attention/MLP weight) and a transfer step
     (frozen subnetwork) as a ratio to a plain training step of the same GPT-2 and batch;
  2. the wall time of one whole transfer run at the paper's settings: 2 layers, 1000 numbers,
     1000 ambiguous + 1000 disambiguation rows, batch 50, 100 epochs, eval on 1000 rows every epoch.
Runs on one thread by default (`--threads`), on the CPU unless `--device` says otherwise.
"""

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.arithmetic.data import build_dataset, transfer_training_rows  # noqa: E402
from subtask_induction.arithmetic.model import (accuracy, build_gpt2, lm_loss, masked_weight_names,  # noqa: E402
                                                shuffled_batches)
from subtask_induction.method.masks import attach_masks, l0_penalty, mask_parameters  # noqa: E402
from subtask_induction.method.transfer import TransferPlan  # noqa: E402
from subtask_induction.runtime import configure, resolve_device  # noqa: E402
from subtask_induction.training import EpochRun, Schedule, fit  # noqa: E402

MODEL = {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.0}
N_NUMBERS = 1000


def time_steps(model, optimizer, loss_fn, rows, steps, warmup=5):
    for i in range(warmup + steps):
        if i == warmup:
            started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model, rows).backward()
        optimizer.step()
    return (time.perf_counter() - started) / steps


def random_masks(model, fraction=0.07):
    generator = torch.Generator().manual_seed(0)
    return {name: torch.rand(model.get_parameter(name).shape, generator=generator) < fraction
            for name in masked_weight_names(model)}


def step_ratios(device, batch, steps):
    rows = torch.randint(0, N_NUMBERS, (batch, 4), device=device)
    plain = build_gpt2(N_NUMBERS, 2, MODEL, 0).to(device)
    plain_s = time_steps(plain, torch.optim.AdamW(plain.parameters(), lr=1e-3), lm_loss, rows, steps)

    masked = build_gpt2(N_NUMBERS, 2, MODEL, 0).to(device).eval()
    masks = attach_masks(masked, masked_weight_names(masked))
    for mask in masks.values():
        mask.beta = 100.0  # late-discovery regime, where denormals used to hurt
    masked_s = time_steps(masked, torch.optim.AdamW(mask_parameters(masks), lr=1e-3),
                          lambda m, r: lm_loss(m, r) + 1e-7 * l0_penalty(masks), rows, steps)

    base = build_gpt2(N_NUMBERS, 2, MODEL, 0)
    plan = TransferPlan("subnetwork", 0.0, True)
    transfer = plan.build(base, build_gpt2(N_NUMBERS, 2, MODEL, 1), random_masks(base), torch.Generator()).to(device)
    transfer_s = time_steps(transfer, torch.optim.AdamW(plan.parameter_groups(transfer, 1e-3)), lm_loss, rows, steps)
    return plain_s, masked_s, transfer_s


def paper_transfer_run(device):
    data = build_dataset("transfer", "a2+ab", n_numbers=N_NUMBERS, modulus=7, seed=0, train_rows=1000,
                         eval_rows=1000, test_rows=1000)
    train = transfer_training_rows(data, 1000).to(device)
    eval_rows = data["splits"]["eval"].to(device)
    base = build_gpt2(N_NUMBERS, 2, MODEL, 0)
    plan = TransferPlan("subnetwork", 0.0, True)
    model = plan.build(base, build_gpt2(N_NUMBERS, 2, MODEL, 1), random_masks(base), torch.Generator()).to(device)
    optimizer = torch.optim.AdamW(plan.parameter_groups(model, 2e-4), weight_decay=0.01)
    started = time.perf_counter()
    result = fit(model, optimizer, lm_loss, lambda e: shuffled_batches(train, 50, 0, e),
                 lambda net: {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]}, Schedule(100),
                 run=EpochRun(desc="paper transfer"))
    return time.perf_counter() - started, result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--skip-run", action="store_true", help="only the step ratios")
    args = p.parse_args()
    configure(args.threads, 0)
    device = resolve_device(args.device)
    print(f"device {device}, {args.threads} thread(s), GPT-2 2 layers, vocab {N_NUMBERS + 1}, d 128")
    for batch in (50, 500):
        plain_s, masked_s, transfer_s = step_ratios(device, batch, args.steps)
        print(f"batch {batch:4d}: plain {1e3 * plain_s:7.2f} ms | discovery (masked) {1e3 * masked_s:7.2f} ms "
              f"= {masked_s / plain_s:.2f}x | transfer (frozen subnetwork) {1e3 * transfer_s:7.2f} ms "
              f"= {transfer_s / plain_s:.2f}x")
    if not args.skip_run:
        seconds, result = paper_transfer_run(device)
        steps = sum(1 for _ in range(0, 2000, 50)) * 100
        print(f"paper-setting transfer run (n=1000, batch 50, 100 epochs, eval every epoch): {seconds:.1f} s "
              f"({steps} steps, {1e3 * seconds / steps:.2f} ms/step incl. eval)")


if __name__ == "__main__":
    main()
