"""## Provenance: the records: each record's command, commit, machine, plain step and wall time, and where the time
of `make reproduce` goes."""

from __future__ import annotations

from ..page import TIMING, embed, provenance_line
from ..run_records import RunRecord


def exception_text(entry: dict) -> str:
    """A known gap or an unplanned set of points, as run.yaml states it: its points, then why."""
    where = ", ".join(f"{key} {value}" for key, value in entry.items() if key not in ("family", "why"))
    return f"{entry.get('family')} points{' with ' + where if where else ''}: {entry.get('why', '')}"


def plan_text(plan: dict) -> str:
    """run.yaml's `plan` (run_records.plan_of) in words."""
    return (f"commit {plan['commit']}, fixed before the record's first job: all {plan['jobs']} jobs' metrics name it; "
            f"digest {plan['digest']} of " + ", ".join(f"`{name}`" for name in plan["files"]) + " at that commit")


def provenance(records: dict[str, RunRecord]) -> list[str]:
    lines = ["## Provenance: the records", "",
             "Each record is a folder of `docs/data/` (the run's summary tables as the pipeline wrote them, and "
             "`run.yaml`); `python -m subtask_induction.pages.run_records` stores a finished run's. The plain step is "
             "`benchmarks/step_costs.py`'s (`make benchmark`) measured beside the run: scale a wall time by the "
             "ratio of yours to it. *Planned at*: the commit whose configs planned the record's points, where it is "
             "not the record's; *known gaps*: planned points the record lacks, and why; *unplanned*: points its "
             "tables hold that no config of the record planned, and why.", ""]
    if TIMING in records:
        lines += time_to_figure(records[TIMING])
    for name, record in records.items():
        p = record.provenance
        lines += [f"### run {name}", "", "| | |", "|---|---|"]
        for key in ("title", "command", "configs", "commit", "plan", "planned_at", "version", "date", "machine",
                    "plain_step_ms", "wall", "note", "known_gaps", "unplanned"):
            if key in p:
                value = ", ".join(f"`{v}`" for v in p[key]) if key == "configs" else (
                    f"`{p[key]}`" if key == "command" else "<br>".join(map(exception_text, p[key]))
                    if key in ("known_gaps", "unplanned") else plan_text(p[key]) if key == "plan" else p[key])
                lines.append(f"| {key.replace('_', ' ')} | {value} |")
        lines.append("")
    return lines


def time_to_figure(record: RunRecord) -> list[str]:
    """Where the reproduction's minutes go: benchmarks/time_to_figure.py's reports as the record stores them (each
    file a run: `make reproduce`, `make beyond`, before and after a change), under the record's own provenance."""
    lines = ["### Where the time goes", "", f"{provenance_line(record)} {record.provenance['title']}.", ""]
    for report in record.provenance.get("reports", []):
        lines += [f"**{report['run']}**", ""] + embed(record.text(report["file"]), 5)
    return lines
