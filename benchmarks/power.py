"""Benchmark (not a test): how many chains a confirmatory record needs (issue 93's power analysis).

For each size of the headline claims that the decisive record left undecided or fragile, the chance that the verdict rule
(claims.verdicts_batch, the rule itself) reaches a decided verdict (holds, reversed, or no effect larger than S) at k
chains, under the planned effects: the true mean difference at S (the direction test must find it) and at 0 (the
equivalence test must bound it). Chains are drawn normal with the planning standard deviations (the decisive record's,
given to the issue), the claim's sizes independent, each mean rounded to the grid a test set imposes (0.2 points, 500
test items), every size of a claim at the same truth. Prints, per size, the power at each k and the smallest k with
both powers at least 0.8.

Then, with --cost, what a plan would cost: each packed step's job-minutes per point and start-up per job, read from a
time_to_figure report of a run (the per-rule table benchmarks/time_to_figure.py prints) and the points and packs of the
config that run used, applied to the plan's points and packs (its config, as workflow_config.normalise forms them: with
spare chains a pack holds one chain's points past the bases, so a plan pays more start-ups than the run measured);
the jobs that are not per point (data, pooling, tables) counted once, as in that run. Prints job-minutes per family,
per chain, and the total in hours of 2 cores at that run's scheduling efficiency.

    python benchmarks/power.py [--claims 400] [--chains 12 24 36 48 64 80 96]
    python benchmarks/power.py --cost docs/data/time_to_figure/1_after_99017ab.md --plan config/config.yaml
        config/si_authors.yaml config/confirmatory.yaml [--measured config/config.yaml] [--claims 0]
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.claims import HOLDS, NO_EFFECT, REVERSED, smallest_effect, verdicts_batch  # noqa: E402
from subtask_induction.runtime import derive_seed  # noqa: E402

S = smallest_effect()
GRID = 0.2
POWER = 0.8
# claim -> (sizes judged together, planning SD per size, the sizes to plan for: undecided or fragile in `decisive`)
PLANNING = {
    "SI - sampled (arithmetic)": (("n = 0", "n = 250", "n = 750"), (7.1, 6.6, 5.2), ("n = 0",)),
    "SI - full (arithmetic)": (("n = 0", "n = 250", "n = 750"), (5.9, 7.2, 3.4), ("n = 0", "n = 250", "n = 750")),
    "vision robustness, SI - the mixture as the authors' code ran it": (("",), (6.2,), ("",)),
    "vision pooled, SI - base": (("",), (4.6,), ("",)),
}


def decided_share(sds: tuple, truth: float, chains: int, claims: int, seed: int) -> np.ndarray:
    """Per size, the share of simulated claims whose verdict is decided (holds, reversed, no effect larger than S)."""
    rng = np.random.default_rng(seed)
    values = [np.round(rng.normal(truth, sd, (claims, chains)) / GRID) * GRID for sd in sds]
    verdict = verdicts_batch(values, smallest=S)["verdict"]
    return np.isin(verdict, [HOLDS, REVERSED, NO_EFFECT]).mean(0)


# The rules of a time_to_figure report that run a packed step, by the step whose points they count (the arithmetic
# transfers by ArithmeticJobs.points, the others by their PackedStep's points).
PACKED_RULES = {"arithmetic_transfer_pack": "arithmetic_transfer", "arithmetic_base_pack": "arithmetic_base",
                "arithmetic_discover_pack": "arithmetic_discover", "vision_base_pack": "vision_base",
                "vision_discover_pack": "vision_discover", "vision_transfer_pack": "vision_transfer",
                "vision_cue_conflict_pack": "vision_cue_conflict"}
ROW = re.compile(r"^\| (?P<family>\w+) \| (?P<rule>[^|]+?) \| (?P<jobs>\d+) \| (?P<minutes>[\d.]+) \| (?P<start>[\d.]+) \|"
                 r" [\d.]+ \| [\d.]+ \|$")
EFFICIENCY = re.compile(r"scheduling efficiency (\d+)%")


def merged(files: list[str]) -> dict:
    """The config Snakemake runs for `--configfile FILES` (each merged over the last, as Snakemake merges them)."""
    import yaml
    from snakemake.utils import update_config

    config = {}
    for name in files:
        update_config(config, yaml.safe_load(Path(name).read_text()))
    return config


def _chain(point) -> int:
    return int(point["chain"] if isinstance(point, dict) else point.chain)


def points_and_jobs(config: dict) -> dict:
    """{step: (points, jobs)} of every packed step a config runs, in its families: every candidate chain's bases (the
    spares' train up front), the planned chains' points past them (a spare runs past its base only in a failed
    chain's place)."""
    from subtask_induction.workflow_config import normalise

    sweep = normalise(copy.deepcopy(config))
    found = {}
    for family in set(config["families"]) & {"arithmetic", "vision"}:
        jobs = getattr(sweep, family)
        planned = set(map(int, config[family]["chains"]))
        steps = [(step, packed.points, packed.packs) for step, packed in jobs.packed.items()]
        if family == "arithmetic":
            steps.append(("arithmetic_transfer", jobs.points, jobs.packs))
        for step, points, packs in steps:
            if not step.endswith("_base"):
                points = [point for point in points if _chain(point) in planned]
                packs = [pack for pack in packs if all(_chain(point) in planned for point in pack[1])]
            found[step] = (len(points), len(packs))
    return found


def cost(report: Path, measured: list[str], plan: list[str]) -> list[str]:
    """The plan's estimated job-minutes (a Markdown table and its totals), from the report's measured run."""
    text = report.read_text()
    rows = [m.groupdict() for m in map(ROW.match, text.splitlines()) if m]
    if not rows:
        raise SystemExit(f"{report}: no per-rule table of benchmarks/time_to_figure.py")
    efficiency = float(EFFICIENCY.search(text).group(1)) / 100
    measured_config, plan_config = merged(measured), merged(plan)
    was, will = points_and_jobs(measured_config), points_and_jobs(plan_config)
    families = set(plan_config["families"])
    estimate, lines = {}, ["| family | rule | measured points / jobs | job-min a point (training) | start-up a job (min) "
                           "| plan points / jobs | plan job-min |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        family, rule, jobs, minutes, start = (row["family"], row["rule"], int(row["jobs"]), float(row["minutes"]),
                                              float(row["start"]))
        if family not in families:
            continue
        step = PACKED_RULES.get(rule)
        if step is None:
            # once a run, unless it is the overlap analysis (its discoveries and its table) and the plan runs none
            overlap = "overlap" in rule and not plan_config.get("arithmetic", {}).get("overlap", {}).get("runs")
            planned = 0.0 if overlap else minutes
            lines.append(f"| {family} | {rule} | {jobs} jobs | | | once | {planned:.2f} |")
        else:
            points, packs = was[step]
            per_point, per_job = (minutes - start) / points, start / jobs
            plan_points, plan_packs = will.get(step, (0, 0))
            planned = plan_points * per_point + plan_packs * per_job
            lines.append(f"| {family} | {rule} | {points} / {jobs} | {per_point:.3f} | {per_job:.3f} | "
                         f"{plan_points} / {plan_packs} | {planned:.1f} |")
        estimate[family] = estimate.get(family, 0.0) + planned
    total = sum(estimate.values())
    lines.append("")
    for family, minutes in sorted(estimate.items()):
        chains = len(plan_config[family]["chains"])
        lines.append(f"{family}: {minutes:.0f} job-min for {chains} chains ({minutes / chains:.2f} a chain, spares' "
                     f"bases included)")
    lines.append(f"total: {total:.0f} job-min = {total / 60:.1f} job-hours; on 2 cores at the measured run's "
                 f"scheduling efficiency ({efficiency:.0%}): {total / (2 * efficiency) / 60:.1f} hours, at the plain "
                 f"step of the host that ran {report.name}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=400, help="simulated claims per cell")
    parser.add_argument("--chains", type=int, nargs="+", default=[12, 24, 36, 48, 64, 80, 96])
    parser.add_argument("--cost", type=Path, help="a time_to_figure report of a finished run: the plan's cost from it")
    parser.add_argument("--measured", nargs="+", default=["config/config.yaml"],
                        help="the --configfile list of the run that report measured")
    parser.add_argument("--plan", nargs="+", help="the plan's --configfile list")
    args = parser.parse_args(argv)
    if args.cost:
        if not args.plan:
            parser.error("--cost needs --plan (the plan's config files)")
        print("\n".join(cost(args.cost, args.measured, args.plan)))
    if args.claims <= 0:
        return 0
    print(f"S = {S:g} points, grid {GRID:g} points, {args.claims} claims a cell; power = P(decided verdict) with the "
          f"true difference at S / at 0")
    print("| claim | size | planning SD | " + " | ".join(f"{k} chains" for k in args.chains) + f" | chains for {POWER:g} |")
    print("|---|---|---|" + "---|" * len(args.chains) + "---|")
    for claim, (sizes, sds, planned) in PLANNING.items():
        shares = {}
        for k in args.chains:
            at_s = decided_share(sds, S, k, args.claims, derive_seed("power", claim, "S", k))
            at_0 = decided_share(sds, 0.0, k, args.claims, derive_seed("power", claim, "0", k))
            shares[k] = (at_s, at_0)
        for j, size in enumerate(sizes):
            if size not in planned:
                continue
            cells = [f"{shares[k][0][j]:.2f} / {shares[k][1][j]:.2f}" for k in args.chains]
            enough = next((k for k in args.chains if min(shares[k][0][j], shares[k][1][j]) >= POWER), None)
            print(f"| {claim} | {size or '—'} | {sds[j]:g} | " + " | ".join(cells)
                  + f" | {enough if enough is not None else f'over {max(args.chains)}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
