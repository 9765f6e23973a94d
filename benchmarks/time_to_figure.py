"""Where a finished run's time went (a benchmark, not a test): per family the job-minutes, start-up share,
evaluation share and CPU utilisation, then the run's wall, its scheduling efficiency and its critical path.

    .venv/bin/python benchmarks/time_to_figure.py RUN_FOLDER [--snakemake-args "--configfile config/beyond.yaml"]
        [--wall SECONDS] [--cores N] [--out FILE.md]

What it reads, all left by the run itself:
- job-minutes: each job's wall seconds from its Snakemake benchmark record (results/benchmarks/**/*.jsonl);
- start-up, evaluation and CPU seconds: the `[job time]` line each job prints at its end (subtask_induction.timing:
  start-up from the process's start to its first training step, or to its main for a step that trains nothing).
  A log without that line (a run of an older commit) falls back to `python -c 'import <the family's training
  step>'` timed here, per job, and CPU to the benchmark record's sampled figure, both marked "~" (Snakemake samples
  CPU every 30 s after a job's first 15 s and keeps the last sample, so a job's final seconds are missing there);
- wall and cores: the newest Snakemake log in .snakemake/log (first to last timestamp; "Provided cores"), unless
  --wall / --cores are given (a run of several commands: give its whole wall);
- the critical path: the longest chain of dependent jobs by their wall seconds, on the DAG Snakemake prints for
  the run's target (`snakemake --forceall --dag`, run in RUN_FOLDER with --snakemake-args): no schedule on any number
  of cores finishes before it.

Scheduling efficiency = job-minutes / (cores x wall): 100% means no core idled. Run it on the machine that ran
the jobs when a log lacks `[job time]` lines (the fallback times imports here).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The step module of each family's training jobs (the import-timing fallback for logs without `[job time]`).
STEPS = {"arithmetic": "arithmetic_transfer", "vision": "vision_transfer", "submasking": "submasking_train"}
JOB_TIME = re.compile(r"\[job time\] wall (?P<wall>[\d.]+) s; (?:start-up (?P<start>[\d.]+) s \(to the (?P<until>[^)]*)\)"
                      r"|start-up unmarked); evaluation (?P<eval>[\d.]+) s; CPU (?P<cpu>[\d.]+) s on (?P<threads>\d+) thread")
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


@dataclass
class Job:
    family: str
    rule: str
    wildcards: dict
    seconds: float            # wall, from the benchmark record
    threads: int
    start_up: float | None    # from the job's own line; None: not said
    evaluation: float | None
    cpu: float | None
    sampled_cpu: float        # the benchmark record's (sampled) CPU seconds

    @property
    def key(self) -> tuple:
        return self.rule, tuple(sorted((str(k), str(v)) for k, v in self.wildcards.items()))


def said_by(log: Path):
    """The job's own `[job time]` line (its last: a log holds its job's last attempt), or None."""
    said = list(JOB_TIME.finditer(log.read_text(errors="replace"))) if log.is_file() else []
    return said[-1] if said else None


def read_jobs(run: Path) -> list[Job]:
    """Every job with a benchmark record (its log at the same relative path under logs/), and every job whose rule
    keeps no benchmark (selection, tables, figures) but whose log says its time: its wall is the job's own."""
    records = sorted((run / "results/benchmarks").rglob("*.jsonl"))
    if not records:
        raise SystemExit(f"error: no benchmark records under {run / 'results/benchmarks'} (run the workflow first)")
    jobs, logged = [], set()
    for path in records:
        relative = path.relative_to(run / "results/benchmarks")
        log = run / "logs" / relative.with_suffix(".log")
        logged.add(log)
        said = said_by(log)
        for line in path.read_text().splitlines():
            record = json.loads(line)
            jobs.append(Job(relative.parts[0], record.get("rule_name", "?"), record.get("wildcards") or {},
                            float(record["s"]), int(record.get("threads") or 1),
                            float(said["start"]) if said and said["start"] else None,
                            float(said["eval"]) if said else None, float(said["cpu"]) if said else None,
                            float(record.get("cpu_time") or 0.0)))
    for log in sorted((run / "logs").rglob("*.log")):
        said = said_by(log) if log not in logged else None
        if said:
            family = log.relative_to(run / "logs").parts[0]
            jobs.append(Job(family, f"(no benchmark) {log.relative_to(run / 'logs')}", {}, float(said["wall"]),
                            int(said["threads"]), float(said["start"]) if said["start"] else None, float(said["eval"]),
                            float(said["cpu"]), float(said["cpu"])))
    return jobs


def import_seconds(step: str, repeats: int = 3) -> float:
    """Median wall time of `python -c 'import <the step>'` on one thread (the fallback for logs of older commits)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import subtask_induction.steps.{step}"], env=env, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def wall_and_cores(run: Path) -> tuple[float | None, int | None]:
    logs = sorted((run / ".snakemake/log").glob("*.snakemake.log"))
    if not logs:
        return None, None
    text = logs[-1].read_text(errors="replace").splitlines()
    stamps = [datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y") for m in map(STAMP.match, text) if m]
    cores = next((int(m.group(1)) for m in (re.search(r"Provided cores: (\d+)", line) for line in text) if m), None)
    return ((stamps[-1] - stamps[0]).total_seconds() if len(stamps) > 1 else None), cores


def dag(run: Path, snakemake_args: str) -> tuple[dict[int, tuple], list[tuple[int, int]]]:
    """The run's DAG: job id -> (rule, wildcards key), and edges (from, to). The dot graph gives the edges, and its
    labels shorten wildcards; a dry run of the same target names each job id's rule and wildcards in full (the two
    build one DAG in one order, so their job ids agree)."""
    command = [sys.executable, "-m", "snakemake", "--forceall", *shlex.split(snakemake_args)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    dot = subprocess.run(command + ["--dag", "--quiet"], cwd=run, env=env, capture_output=True, text=True, check=True)
    dry = subprocess.run(command + ["-n"], cwd=run, env=env, capture_output=True, text=True, check=True)
    nodes = {}
    for line in (dry.stdout + dry.stderr).splitlines():
        job = re.match(r"Job (\d+): (\S+) ?(.*)$", line.strip())
        if job:
            pairs = [pair.split("=", 1) for pair in job.group(3).split(",") if "=" in pair]
            nodes[int(job.group(1))] = (job.group(2), tuple(sorted((key, value) for key, value in pairs)))
    edges = [(int(m.group(1)), int(m.group(2)))
             for m in map(re.compile(r"\s*(\d+) -> (\d+)").match, dot.stdout.splitlines()) if m]
    return nodes, [(source, target) for source, target in edges if source in nodes and target in nodes]


def critical_path(jobs: list[Job], nodes: dict, edges: list) -> tuple[float, list[Job]]:
    """The longest chain of dependent jobs by wall seconds (a job the records lack counts 0)."""
    by_key = {job.key: job for job in jobs}
    cost = {node: by_key[key].seconds if key in by_key else 0.0 for node, key in nodes.items()}
    parents = defaultdict(list)
    for source, target in edges:
        parents[target].append(source)
    finish, via = {}, {}

    def longest(node):  # the DAG is small (hundreds of jobs): memoised recursion
        if node not in finish:
            best = max(parents[node], key=longest, default=None)
            finish[node], via[node] = cost[node] + (finish[best] if best is not None else 0.0), best
        return finish[node]

    end = max(nodes, key=longest)
    chain, node = [], end
    while node is not None:
        if nodes[node] in by_key:
            chain.append(by_key[nodes[node]])
        node = via[node]
    return finish[end], chain[::-1]


def per_rule(jobs: list[Job]) -> list[str]:
    """Per rule (packs under one name): its jobs' minutes split by stage as the jobs said them: start-up, evaluation,
    and the rest (training, saving); "not said" where a job of an older commit did not print its line."""
    rules = defaultdict(list)
    for job in jobs:
        rules[(job.family, re.sub(r"_pack_.*", "_pack", job.rule))].append(job)
    lines = ["| family | rule | jobs | job-min | start-up | evaluation | the rest (training) |", "|---|---|---|---|---|---|---|"]
    for (family, rule), mine in sorted(rules.items(), key=lambda item: (item[0][0], -sum(j.seconds for j in item[1]))):
        seconds = sum(job.seconds for job in mine)
        if all(job.start_up is not None and job.evaluation is not None for job in mine):
            start_up, evaluation = sum(job.start_up for job in mine), sum(job.evaluation for job in mine)
            stages = [f"{start_up / 60:.2f}", f"{evaluation / 60:.2f}", f"{(seconds - start_up - evaluation) / 60:.2f}"]
        else:
            stages = ["not said"] * 3
        lines.append(f"| {family} | {rule} | {len(mine)} | {seconds / 60:.2f} | " + " | ".join(stages) + " |")
    return lines


def report(run: Path, snakemake_args: str = "", wall: float | None = None, cores: int | None = None) -> str:
    jobs = read_jobs(run)
    logged_wall, logged_cores = wall_and_cores(run)
    wall, cores = wall or logged_wall, cores or logged_cores
    lines = [f"# Time to figure: {run.resolve().name}", "",
             "| family | jobs | job-min | start-up | evaluation | CPU utilisation | largest rules (job-min) |",
             "|---|---|---|---|---|---|---|"]
    estimated = False  # a figure the jobs did not say (logs of an older commit): marked "~", footnoted
    for family in sorted({job.family for job in jobs}):
        mine = [job for job in jobs if job.family == family]
        seconds = sum(job.seconds for job in mine)
        said = all(job.start_up is not None for job in mine)
        if said:
            start_up, mark = sum(job.start_up for job in mine), ""
        else:
            per_job = import_seconds(STEPS[family]) if family in STEPS else float("nan")
            start_up, mark, estimated = per_job * len(mine), "~", True
        evaluation = (f"{100 * sum(job.evaluation for job in mine) / seconds:.0f}%"
                      if all(job.evaluation is not None for job in mine) else "not said")
        cpu_said = all(job.cpu is not None for job in mine)
        estimated = estimated or not cpu_said
        cpu = sum(job.cpu if cpu_said else job.sampled_cpu for job in mine)
        thread_seconds = sum(job.seconds * job.threads for job in mine)
        rules = defaultdict(float)
        for job in mine:
            rules[re.sub(r"_pack_.*", "_pack", job.rule) if not job.rule.startswith("(") else "no benchmark"] += job.seconds
        largest = ", ".join(f"{rule} {s / 60:.1f}" for rule, s in sorted(rules.items(), key=lambda x: -x[1])[:3])
        lines.append(f"| {family} | {len(mine)} | {seconds / 60:.1f} | {mark}{100 * start_up / seconds:.0f}% "
                     f"({mark}{start_up / len(mine):.1f} s a job) | {evaluation} | "
                     f"{'' if cpu_said else '~'}{100 * cpu / thread_seconds:.0f}% | {largest} |")
    total = sum(job.seconds for job in jobs)
    lines.append(f"| all | {len(jobs)} | {total / 60:.1f} | | | | |")
    lines += [""] + (["~: not said by the jobs (a run of an older commit): start-up is the family's training step's "
                      "import timed here, per job; CPU is Snakemake's sampled figure, which misses up to 30 s a job.", ""]
                     if estimated else [])
    if wall and cores:
        lines.append(f"Wall {wall / 60:.1f} min on {cores} cores: scheduling efficiency {100 * total / (cores * wall):.0f}% "
                     f"(job-minutes / (cores x wall)); the floor at {cores} cores is {total / cores / 60:.1f} min.")
    lines += ["", *per_rule(jobs), ""]
    try:
        nodes, edges = dag(run, snakemake_args)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        lines.append(f"Critical path: not computed (snakemake --dag failed: {error}).")
        return "\n".join(lines) + "\n"
    length, chain = critical_path(jobs, nodes, edges)
    lines += [f"Critical path {length / 60:.1f} min, {len(chain)} jobs: "
              + " -> ".join(f"{job.rule}{'(' + ','.join(f'{v}' for v in job.wildcards.values()) + ')' if job.wildcards else ''}"
                            f" {job.seconds / 60:.1f}" for job in chain)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path, help="the finished run's folder (a clone the workflow ran in)")
    p.add_argument("--snakemake-args", default="", help="what the run added to snakemake, e.g. its --configfile")
    p.add_argument("--wall", type=float, help="the run's wall seconds (default: the newest Snakemake log's)")
    p.add_argument("--cores", type=int, help="the cores it ran on (default: the newest Snakemake log's)")
    p.add_argument("--out", type=Path, help="also write the report here")
    args = p.parse_args(argv)
    text = report(args.run, args.snakemake_args, args.wall, args.cores)
    print(text, end="")
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
