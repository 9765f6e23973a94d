"""Give a record made before the pipeline kept its pages' tables as data (page_tables.py) those tables, once: each
page the pages quote (PAGES) gets its `<page>.tables.csv`, and a GPU check its `pack_estimate.csv`, read from the
Markdown the run wrote, and run.yaml's `upgrades` says which files were made, from which, by what and at which
commit. The record is rewritten as a store rewrites one (staged, checked, swapped under the data folder's lock), so a
kill leaves the old record or the new, never half of one. After that the pages read only the CSVs: this is the one
place that still reads a record's pipe tables, and only to make them.

    python -m subtask_induction.pages.table_upgrade [--data docs/data]   (prints what it made; nothing when done)
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
from pathlib import Path

import pandas as pd
import yaml

from ..files import copy_file, write_text
from ..legacy import upgrade_record
from ..page_tables import long_form, tables_path
from . import run_records

# The pages whose tables the pages quote (each written with its .tables.csv since page_tables.py)
PAGES = ("arithmetic/chains.md", "arithmetic/paper_comparison.md", "vision/table1.md", "vision/comparisons.md")
GPU_PAGE, GPU_ESTIMATE = "pack_throughput.md", "pack_estimate.csv"
BY = "python -m subtask_induction.pages.table_upgrade"


def pipe_tables(text: str) -> list[tuple[str, pd.DataFrame]]:
    """Every pipe table of a Markdown page a run wrote, with the heading it sits under (the run's own rendering:
    a header row, the `|---|` row, one row per line)."""
    tables, heading, rows = [], "", []

    def close():
        if len(rows) >= 2:
            header = rows[0]
            body = [row + [""] * (len(header) - len(row)) for row in rows[2:]]
            tables.append((heading, pd.DataFrame([row[:len(header)] for row in body], columns=header)))
        rows.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
            continue
        close()
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    close()
    return tables


def pack_estimate(text: str) -> pd.DataFrame:
    """benchmarks/pack_throughput.py's estimate of the paper grid (its last table, with the grid's points, the device
    and one process's start-up), as that script now writes it (pack_estimate.csv)."""
    estimate = text.split("estimated paper arithmetic transfer grid")[1]
    points = re.search(r"\((\d+) points\) on ([^,]+),", estimate)
    start = re.search(r"start-up ([\d.]+) s", text)
    table = pipe_tables(estimate)[0][1]
    return table.assign(points=int(points.group(1)), device=points.group(2), start_up_s=float(start.group(1)))


def missing(record: run_records.RunRecord) -> dict[str, str]:
    """The files the record lacks, each with the page it is made from."""
    made = {str(tables_path(page)): page for page in PAGES
            if record.has(page) and not (record.folder / tables_path(page)).exists()}
    if record.has(GPU_PAGE) and not record.has(GPU_ESTIMATE):
        made[GPU_ESTIMATE] = GPU_PAGE
    return made


def upgrade(data: Path = run_records.DATA, commit: str | None = None) -> list[str]:
    """Every record of `data` given the files it lacks (missing); one line per record upgraded."""
    commit = commit or subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip() or "unknown"
    done = []
    with run_records.store_lock(data):
        for name in run_records.record_names(data):
            record = run_records.load(name, data, check=False)
            made = missing(record)
            if not made:
                continue

            def fill(staged: Path, record=record, made=made) -> None:
                for path in sorted(p for p in record.folder.rglob("*") if p.is_file()):
                    if path.name != "run.yaml":
                        copy_file(path, staged / path.relative_to(record.folder))
                for file, page in made.items():
                    text = upgrade_record(record.path(page).read_text(), "markdown", str(record.path(page)))
                    frame = pack_estimate(text) if file == GPU_ESTIMATE else long_form(pipe_tables(text))
                    write_text(staged / file, frame.to_csv(index=False))
                provenance = dict(record.provenance)
                provenance["upgrades"] = [*(provenance.get("upgrades") or []),
                                          {"made": sorted(made), "from": sorted(set(made.values())), "by": BY,
                                           "commit": commit, "date": datetime.date.today().isoformat()}]
                write_text(staged / "run.yaml", yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True,
                                                               width=100))

            run_records._stage_and_swap(data, name, fill)
            done.append(f"{name}: {', '.join(sorted(made))}")
    return done


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=run_records.DATA)
    args = parser.parse_args(argv)
    print("\n".join(upgrade(args.data)) or "every record has its tables as data")


if __name__ == "__main__":
    main()
