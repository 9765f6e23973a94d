"""What each rule's jobs used against what they asked for: results/resources.{md,csv}.

Reads the Snakemake benchmark records (`benchmark:` of every rule that a cluster runs as a job, written
as JSON lines; with `--benchmark-extended`, which the profiles set, each record also holds the job's
requested resources). Per rule: jobs, wall time (median and largest), largest max RSS, and the requested
runtime and memory, with the share of the request the worst job used. A share above 100% means a job
outlived or outgrew its request (it was retried with a longer limit, or the limit is not enforced here);
one far below means the config asks for more than it needs.
"""

import argparse
import json
import statistics
from pathlib import Path

import pandas as pd

from ..files import write_text  # not runtime.save_text: runtime imports torch, which this report never uses
from ..timing import run_step


def read_records(benchmarks: dict[str, str]) -> pd.DataFrame:
    """One row per job: benchmark record path -> the rule that wrote it (packs share one rule name here).
    A record that does not exist (a job run before records were kept) is left out."""
    rows = []
    for path, rule in benchmarks.items():
        if not Path(path).is_file():
            continue
        for line in Path(path).read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            resources = record.get("resources")
            if not isinstance(resources, dict):  # not an extended record: nothing requested is known
                resources = None
            rows.append({"rule": rule, "benchmark": path,
                         "seconds": _number(record.get("s")), "max_rss_mb": _number(record.get("max_rss")),
                         "threads": record.get("threads"),
                         "runtime_min": _number((resources or {}).get("runtime")),
                         "mem_mb": _number((resources or {}).get("mem_mb"))})
    return pd.DataFrame(rows)


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def summary(records: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for rule, group in records.groupby("rule", sort=True):
        seconds = group["seconds"].dropna()
        rss = group["max_rss_mb"].dropna()
        runtime = group["runtime_min"].dropna()
        memory = group["mem_mb"].dropna()
        rows.append({
            "rule": rule, "jobs": len(group),
            "median_s": statistics.median(seconds) if len(seconds) else None,
            "max_s": seconds.max() if len(seconds) else None,
            "max_rss_mb": rss.max() if len(rss) else None,
            "requested_runtime_min": runtime.max() if len(runtime) else None,
            "requested_mem_mb": memory.max() if len(memory) else None,
            "runtime_used": (group["seconds"] / (60 * group["runtime_min"])).max() if len(runtime) else None,
            "memory_used": (group["max_rss_mb"] / group["mem_mb"]).max() if len(memory) else None,
        })
    return pd.DataFrame(rows)


def _cell(value, fmt: str) -> str:
    return "—" if value is None or pd.isna(value) else format(value, fmt)


def markdown(table: pd.DataFrame) -> str:
    lines = ["# Resources used against resources requested", "",
             "Per rule, over the jobs this run's benchmark records hold (results/benchmarks/). Requested values "
             "come from `--benchmark-extended` records (the profiles set it); '—' where nothing was requested "
             "(a rule without an entry in the config's resources.rules asks the profile's defaults). Set "
             "`resources.rules` (and `resources.transfer_pack` / `submasking_pack`) from the largest job with some "
             "headroom, and note that a job whose runtime share is above 100% ran past its first limit.", "",
             "| rule | jobs | median wall | largest wall | largest max RSS | requested runtime | requested memory "
             "| runtime used (worst job) | memory used (worst job) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        lines.append(f"| {row.rule} | {row.jobs} | {_cell(row.median_s, '.1f')} s | {_cell(row.max_s, '.1f')} s | "
                     f"{_cell(row.max_rss_mb, ',.0f')} MB | {_cell(row.requested_runtime_min, ',.0f')} min | "
                     f"{_cell(row.requested_mem_mb, ',.0f')} MB | {_cell(row.runtime_used, '.1%')} | "
                     f"{_cell(row.memory_used, '.1%')} |")
    return "\n".join(lines) + "\n"


def write(benchmarks: dict[str, str], csv: str, markdown_path: str) -> str:
    """The report from benchmark record path -> rule; returns its Markdown."""
    records = read_records(benchmarks)
    table = summary(records) if not records.empty else pd.DataFrame(columns=["rule", "jobs"])
    write_text(csv, table.to_csv(index=False))
    text = markdown(table)
    write_text(markdown_path, text)
    return text


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--benchmarks", nargs="*", default=[], metavar="RULE=PATH",
                   help="the benchmark records (JSON lines) of the run's jobs, each with its rule")
    p.add_argument("--csv", required=True)
    p.add_argument("--markdown", required=True)
    args = p.parse_args(argv)
    benchmarks = dict(reversed(item.split("=", 1)) for item in args.benchmarks)
    print(write(benchmarks, args.csv, args.markdown))


if __name__ == "__main__":
    run_step(main)
