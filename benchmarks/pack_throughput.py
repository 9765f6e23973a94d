"""Per-point throughput of the arithmetic transfer sweep: packs of M points against one process per point.

    PYTHONPATH=workflow python benchmarks/pack_throughput.py                 # CPU, one thread
    PYTHONPATH=workflow python benchmarks/pack_throughput.py --device cuda   # adds K concurrent processes

Measures, at the paper's model (vocab 1001, d 128, 4 heads, inner 512) and batch 50:
- a pack of M stacked points (M = 1, 8, 32, 128), half of them with a frozen subnetwork (the where()),
  trained by StackedAdamW: ms per optimizer step, steps/s per point;
- the single-point baseline: a fresh `python` process that imports torch and transformers, builds an HF
  GPT2LMHeadModel and trains it with torch's AdamW (start-up measured, steps timed inside);
- on CUDA, K = 4, 8, 16 such processes sharing the GPU at once.
From these and config/paper.yaml (points, depths, steps per point) it prints sweep points per hour and an
estimate of the paper grid's device-hours. Training steps only: per-epoch scoring adds a few percent.
A benchmark prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import torch
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from subtask_induction.arithmetic.data import trained_rows  # noqa: E402
from subtask_induction.arithmetic.model import build_gpt2, lm_loss, masked_weight_names  # noqa: E402
from subtask_induction.arithmetic.stacked import StackedGPT2, optimizer_groups  # noqa: E402
from subtask_induction.method.transfer import TransferPlan  # noqa: E402
from subtask_induction.points import arithmetic_points  # noqa: E402
from subtask_induction.stacked_training import StackedAdamW  # noqa: E402
from subtask_induction.workflow_config import upgrade_keys  # noqa: E402

MODEL = {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.0}
VOCAB = 1000  # numbers; the model adds SEP

SINGLE = r"""
import sys, time, json
began = time.perf_counter()
import torch
torch.set_num_threads({threads})
sys.path.insert(0, {workflow!r})
from subtask_induction.arithmetic.model import build_gpt2, lm_loss
device = torch.device({device!r})
model = build_gpt2({vocab}, {layers}, {model!r}, seed=0).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
batch = torch.randint(0, {vocab}, (50, 4), device=device)
def step():
    optimizer.zero_grad(); lm_loss(model, batch).backward(); optimizer.step()
for _ in range(3): step()
if device.type == "cuda": torch.cuda.synchronize()
ready = time.perf_counter()
for _ in range({steps}): step()
if device.type == "cuda": torch.cuda.synchronize()
done = time.perf_counter()
print(json.dumps({{"startup": ready - began, "step": (done - ready) / {steps}}}))
"""


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def pack_step_ms(size: int, layers: int, device: torch.device, steps: int) -> float:
    """ms per optimizer step of a pack of `size` points (half with a frozen subnetwork)."""
    base = build_gpt2(VOCAB, layers, MODEL, seed=0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.1
             for name in masked_weight_names(base)}
    plans = [TransferPlan("subnetwork" if index % 2 else "random", inherit_unmasked=True) for index in range(size)]
    models = [plan.build(base, build_gpt2(VOCAB, layers, MODEL, seed=index), masks, torch.Generator().manual_seed(index))
              for index, plan in enumerate(plans)]
    model = StackedGPT2.from_models(models, list(range(size)), plans).to(device)
    del models
    optimizer = StackedAdamW(optimizer_groups(model, 1e-4, plans), weight_decay=0.01)
    batch = torch.randint(0, VOCAB, (size, 50, 4), device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        lm_loss(model, batch).sum().backward()
        optimizer.step()

    for _ in range(2):
        step()
    sync(device)
    began = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    return (time.perf_counter() - began) / steps * 1000


def single_processes(count: int, layers: int, device: str, threads: int, steps: int) -> list[dict]:
    """`count` single-point processes started at once; each reports its start-up and step time."""
    code = SINGLE.format(threads=threads, workflow=str(REPO / "workflow"), device=device, vocab=VOCAB,
                         layers=layers, model=MODEL, steps=steps)
    began = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(count)]
    results = [json.loads(proc.communicate()[0].strip().splitlines()[-1]) for proc in procs]
    wall = time.perf_counter() - began
    for result in results:
        result["wall"] = wall
    return results


def paper_points(path: Path) -> list[tuple[int, int]]:
    """(layers, optimizer steps) of every transfer point of the paper config, as the workflow enumerates them
    (points.arithmetic_points: chains, replicates, each experiment's own lists)."""
    config = yaml.safe_load(path.read_text())
    upgrade_keys(config)  # a config of before 0.5.0 names the replicates `seeds`
    arithmetic = config["arithmetic"]
    transfer = arithmetic["transfer"]
    steps = {}
    for n in {point.n for point in arithmetic_points(arithmetic)}:
        train = trained_rows(arithmetic["n_numbers"], n, transfer["holdout_fraction"])["train"]
        steps[n] = transfer["epochs"] * math.ceil(train / transfer["batch_size"])
    return [(point.layers, steps[point.n]) for point in arithmetic_points(arithmetic)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    p.add_argument("--layers", type=int, default=2, help="depth of the timed packs")
    p.add_argument("--deep", type=int, default=12, help="second depth, for the per-layer cost of the estimate")
    p.add_argument("--steps", type=int, default=20, help="timed steps per pack (a pack of 128 on CPU uses steps // 4)")
    p.add_argument("--concurrent", type=int, nargs="*", default=None, help="K for K processes at once (CUDA: 4 8 16)")
    p.add_argument("--paper", default=str(REPO / "config/paper.yaml"))
    p.add_argument("--estimate-csv", type=Path, help="also write the estimate here as data (a GPU check's "
                   "pack_estimate.csv, which the README's paper-scale line reads)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {args.threads} thread(s)"
    print(f"# pack throughput on {name}; torch {torch.__version__}; GPT-2 d128, {args.layers} layers, batch 50\n")

    single = single_processes(1, args.layers, args.device, args.threads, args.steps)[0]
    points = paper_points(Path(args.paper))
    mean_steps = sum(steps for _, steps in points) / len(points)
    baseline_point_s = single["startup"] + mean_steps * single["step"]
    rows = [("1 process per point", 1, single["step"] * 1000, single["step"] * 1000, baseline_point_s)]
    pack_ms = {}
    for size in args.sizes:
        steps = max(3, args.steps // 4) if device.type == "cpu" and size >= 64 else args.steps
        pack_ms[size] = pack_step_ms(size, args.layers, device, steps)
        per_point_ms = pack_ms[size] / size
        # one pack process per `size` points: its start-up (as a single process) shared among them
        rows.append((f"pack of {size}", size, pack_ms[size], per_point_ms,
                     single["startup"] / size + mean_steps * per_point_ms / 1000))
    print(f"single process: start-up {single['startup']:.1f} s (imports, model, 3 warm-up steps)")
    print(f"paper grid: {len(points)} points, {mean_steps:.0f} optimizer steps per point on average\n")
    print("| run | points/process | ms per step | ms per step per point | steps/s per point | points/hour | vs 1 process per point |")
    print("|---|---|---|---|---|---|---|")
    for label, size, step_ms, per_point_ms, point_s in rows:
        print(f"| {label} | {size} | {step_ms:.1f} | {per_point_ms:.2f} | {1000 / per_point_ms:.1f} | "
              f"{3600 / point_s:.1f} | {baseline_point_s / point_s:.2f}x |")

    if args.concurrent is None and device.type == "cuda":
        args.concurrent = [4, 8, 16]
    for count in args.concurrent or []:
        results = single_processes(count, args.layers, args.device, args.threads, args.steps)
        step = sum(r["step"] for r in results) / count
        print(f"\n{count} single-point processes at once: {step * 1000:.1f} ms per step each, "
              f"{count / step:.0f} steps/s together (start-up {max(r['startup'] for r in results):.1f} s); "
              f"points/hour {3600 * count / (max(r['startup'] for r in results) + mean_steps * step):.1f}")

    # Estimate: step cost per point grows linearly with depth; measured at a second depth for each pack size.
    print(f"\nestimated paper arithmetic transfer grid ({len(points)} points) on {name}, training steps only "
          f"(scoring each epoch adds a few percent):")
    per_step = f"ms per step per point at {args.layers} / {args.deep} layers"
    print(f"| run | {per_step} | device-hours |")
    print("|---|---|---|")
    estimate = []
    for size in sorted(args.sizes):
        steps = max(2, (max(3, args.steps // 4) if device.type == "cpu" and size >= 64 else args.steps) // 2)
        deep_ms = pack_step_ms(size, args.deep, device, steps) / size
        shallow_ms = pack_ms[size] / size
        per_layer = (deep_ms - shallow_ms) / (args.deep - args.layers)
        seconds = sum(count * (shallow_ms + per_layer * (layers - args.layers)) / 1000 for layers, count in points)
        seconds += math.ceil(len(points) / size) * single["startup"]
        print(f"| pack of {size} | {shallow_ms:.2f} / {deep_ms:.2f} | {seconds / 3600:.0f} |")
        estimate.append((f"pack of {size}", f"{shallow_ms:.2f} / {deep_ms:.2f}", f"{seconds / 3600:.0f}"))
    shallow_ms = single["step"] * 1000
    deep_ms = single_processes(1, args.deep, args.device, args.threads, args.steps)[0]["step"] * 1000
    per_layer = (deep_ms - shallow_ms) / (args.deep - args.layers)
    seconds = sum(single["startup"] + count * (shallow_ms + per_layer * (layers - args.layers)) / 1000
                  for layers, count in points)
    print(f"| 1 process per point | {shallow_ms:.2f} / {deep_ms:.2f} | {seconds / 3600:.0f} |")
    estimate.append(("1 process per point", f"{shallow_ms:.2f} / {deep_ms:.2f}", f"{seconds / 3600:.0f}"))
    if args.estimate_csv:   # the same cells as the table above, with the grid's points, the device and the start-up
        import pandas as pd

        frame = pd.DataFrame(estimate, columns=["run", per_step, "device-hours"])
        frame.assign(points=len(points), device=name, start_up_s=round(single["startup"], 1)).to_csv(
            args.estimate_csv, index=False)

if __name__ == "__main__":
    main()
