"""CPU-hours of the paper's arithmetic grid, extrapolated from a measured run of a slice of it (a benchmark).

    .venv/bin/python benchmarks/paper_grid_hours.py RUN_FOLDER [--configfile config/paper.yaml]

RUN_FOLDER ran a slice of the paper config (e.g. config/paper_depth2.yaml) to the end. From its Snakemake
benchmark records (one per job; `cpu_time`, the CPU-seconds of the job, which a pause or a busy machine does not inflate as it does wall time) and its pack manifests it takes
  - seconds per optimiser step of a transfer point (transfer packs' job-seconds / their points' steps),
  - job-seconds of a base and of one discovery (one λ),
at the depth it ran, and scales them to every depth of the paper grid by the per-step cost of a plain GPT-2
step at each depth relative to the measured depth, timed here (`--steps` steps at batch 50, vocab 1001, one
thread, like benchmarks/step_costs.py). It prints job-hours per depth and for the whole grid: transfer points
(every experiment, variant, target, n and seed of the config), bases, discoveries (every λ), overlap runs.
An estimate, stated as one: eval costs, start-up and packing are folded into the measured per-step figure.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))


def step_seconds(layers: int, steps: int) -> float:
    import torch

    from subtask_induction.arithmetic.model import build_gpt2, lm_loss

    torch.set_num_threads(1)
    model = build_gpt2(1000, layers, {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.1}, seed=0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    rows = torch.randint(0, 1000, (50, 4))
    for i in range(steps + 5):
        if i == 5:
            started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        lm_loss(model, rows).backward()
        optimizer.step()
    return (time.perf_counter() - started) / steps


def records(run: Path, pattern: str) -> list[dict]:
    return [json.loads(line) for path in glob.glob(str(run / "results/benchmarks" / pattern), recursive=True)
            for line in Path(path).read_text().splitlines() if line.strip()]


def point_steps(config: dict, n: int) -> int:
    from subtask_induction.arithmetic.data import trained_rows

    t = config["arithmetic"]["transfer"]
    train = trained_rows(config["arithmetic"]["n_numbers"], n, t["holdout_fraction"])["train"]
    return math.ceil(train / t["batch_size"]) * t["epochs"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path)
    p.add_argument("--configfile", default=str(REPO / "config/paper.yaml"))
    p.add_argument("--steps", type=int, default=60)
    args = p.parse_args(argv)
    config = yaml.safe_load(Path(args.configfile).read_text())
    from subtask_induction.workflow_config import upgrade_keys

    upgrade_keys(config)  # a config of before 0.5.0 names the replicates `seeds`
    arithmetic = config["arithmetic"]

    # the run: transfer seconds per step, a base, a discovery
    manifests = [json.loads(Path(path).read_text()) for path in glob.glob(str(args.run / "results/arithmetic/transfer/packs/*.json"))]
    trained = [point for manifest in manifests for point in manifest["trained"]]
    steps = 0
    for point in trained:
        record = json.loads(Path(args.run / point).read_text())
        steps += point_steps(config, record["config"]["n_disambiguation"])
    transfer_s = sum(r["cpu_time"] for r in records(args.run, "arithmetic/transfer/**/*.jsonl"))
    measured_depth = json.loads(Path(args.run / trained[0]).read_text())["config"]["base"]["layers"]
    base_s = max(r["cpu_time"] for r in records(args.run, "arithmetic/chain*/base/**/*.jsonl"))
    discovery = records(args.run, "arithmetic/chain*/discovery/**/*.jsonl")
    discovery_s = sum(r["cpu_time"] for r in discovery) / len(discovery)
    per_step = transfer_s / steps
    print(f"measured at {measured_depth} layers: {len(trained)} transfer points, {steps:,} steps, "
          f"{transfer_s / 3600:.2f} job-hours: {1000 * per_step:.2f} ms per step (eval, start-up included); "
          f"base {base_s / 60:.1f} job-min; one discovery {discovery_s / 60:.1f} job-min")

    # the grid
    layers = arithmetic["layers"]
    reference = step_seconds(measured_depth, args.steps)
    ratio = {depth: step_seconds(depth, args.steps) / reference for depth in layers}
    print("plain step ratio to the measured depth: " + ", ".join(f"{d} layers {r:.2f}x" for d, r in ratio.items()))
    sizes, seeds = arithmetic["transfer"]["disambiguation_rows"], arithmetic["transfer"]["replicates"]
    combos = sum(len(e["targets"]) * len(e.get("variants", arithmetic["transfer"]["variants"])) for e in arithmetic["experiments"])
    grid_steps = combos * len(seeds) * sum(point_steps(config, n) for n in sizes)
    bases = len({e["base"] for e in arithmetic["experiments"]})
    discoveries = len({(e["base"], e["subtask"]) for e in arithmetic["experiments"]}) * len(arithmetic["discovery"]["l0_weights"])
    overlap = arithmetic.get("overlap") or {"layers": [], "runs": []}
    overlap_runs = len({(e["base"], e["subtask"]) for e in arithmetic["experiments"]}) * len(overlap["runs"])
    chains = len(arithmetic["chains"])
    total = 0.0
    print("| depth | transfer points | transfer job-hours | bases + discoveries + overlap job-hours | total |")
    print("|---|---|---|---|---|")
    for depth in layers:
        transfer_h = chains * grid_steps * per_step * ratio[depth] / 3600
        other_h = chains * (bases * base_s + discoveries * discovery_s) * ratio[depth] / 3600
        other_h += overlap_runs * discovery_s * ratio[depth] / 3600 if depth in overlap["layers"] else 0.0
        total += transfer_h + other_h
        points = combos * len(seeds) * len(sizes) * chains
        print(f"| {depth} | {points:,} | {transfer_h:,.0f} | {other_h:,.1f} | {transfer_h + other_h:,.0f} |")
    print(f"whole grid: {total:,.0f} CPU job-hours on this machine's single thread")


if __name__ == "__main__":
    main()
