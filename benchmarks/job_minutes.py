"""Where a run's time went (a benchmark, not a test): job-minutes per family from the run's Snakemake
benchmark records, and the share of them spent starting Python processes (importing torch, transformers,
timm, scikit-learn and the package before any work), measured here by starting each family's step modules.

    .venv/bin/python benchmarks/job_minutes.py [RUN_FOLDER]      # default: the current directory

Start-up share = jobs x (measured seconds to import the family's training step, median of 3) / job-seconds.
Run it on the machine that ran the jobs: start-up, like the steps, is slower on a slower CPU.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The step module of each family's training jobs: what every job of that family imports before working.
STEPS = {"arithmetic": "arithmetic_transfer", "vision": "vision_transfer", "submasking": "submasking_train"}


def start_up_seconds(step: str, repeats: int = 3) -> float:
    """Median wall time of `python -c 'import <the step>'` with one thread, as the rules start it."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import subtask_induction.steps.{step}"], env=env, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv=None):
    run = Path((argv or sys.argv[1:] or ["."])[0])
    records = sorted((run / "results/benchmarks").rglob("*.jsonl"))
    if not records:
        raise SystemExit(f"error: no benchmark records under {run / 'results/benchmarks'} (run the workflow first)")
    seconds, jobs, rules = defaultdict(float), defaultdict(int), defaultdict(lambda: defaultdict(float))
    for path in records:
        family = path.relative_to(run / "results/benchmarks").parts[0]
        for line in path.read_text().splitlines():
            record = json.loads(line)
            seconds[family] += record["s"]
            jobs[family] += 1
            rule = record.get("rule_name", "?")
            rules[family][rule.split("_pack_")[0] + ("_pack" if "_pack_" in rule else "")] += record["s"]
    print(f"{'family':<12} {'jobs':>5} {'job-min':>8} {'start-up s/job':>15} {'start-up share':>15}   largest rules (job-min)")
    total = 0.0
    for family in sorted(seconds):
        start = start_up_seconds(STEPS[family]) if family in STEPS else float("nan")
        share = jobs[family] * start / seconds[family]
        largest = ", ".join(f"{rule} {s / 60:.1f}" for rule, s in sorted(rules[family].items(), key=lambda x: -x[1])[:3])
        print(f"{family:<12} {jobs[family]:>5} {seconds[family] / 60:>8.1f} {start:>15.1f} {100 * share:>14.0f}%   {largest}")
        total += seconds[family]
    print(f"{'all':<12} {sum(jobs.values()):>5} {total / 60:>8.1f}")


if __name__ == "__main__":
    main()
