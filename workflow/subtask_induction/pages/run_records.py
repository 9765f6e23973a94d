"""Run records: what a finished run leaves for the pages, kept in git under docs/data/<run>/.

A run record is the run's summary tables as the pipeline wrote them (`results/<family>/summary/*.csv|md`, copied
unchanged to `<family>/...`) and `run.yaml`, which says what made them: the command and config files, the commit
and package version, the date, the machine, `make benchmark`'s plain step measured beside the run (so a reader
can scale its wall time to their machine), and the wall time. Pages read records, never results/ directly: a
results folder is rewritten by the next run, a record is a fixed statement.

    python -m subtask_induction.pages.run_records RUN_DIR NAME --title "..." --command "make reproduce" \\
        --configs config/config.yaml --plain-step-ms 16.9 --wall-s 1635
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from ..runtime import save_text
from ..upgrade import upgrade_record

DATA = Path(__file__).resolve().parents[3] / "docs" / "data"
# What run.yaml must state for a page to cite the run.
REQUIRED = ("title", "command", "configs", "commit", "version", "date", "machine", "plain_step_ms", "wall")


@dataclass(frozen=True)
class RunRecord:
    """One stored run: its folder, its provenance (run.yaml) and its tables."""

    name: str
    folder: Path
    provenance: dict = field(hash=False)

    def path(self, table: str) -> Path:
        path = self.folder / table
        if not path.exists():
            raise FileNotFoundError(f"run record {self.name}: no {table} in {self.folder}")
        return path

    def has(self, table: str) -> bool:
        return (self.folder / table).exists()

    def csv(self, table: str) -> pd.DataFrame:
        return upgrade_record(pd.read_csv(self.path(table)), "table", str(self.path(table)))

    def text(self, table: str) -> str:
        return upgrade_record(self.path(table).read_text(), "markdown", str(self.path(table)))


def load(name: str, data: Path = DATA) -> RunRecord:
    folder = Path(data) / name
    try:
        provenance = yaml.safe_load((folder / "run.yaml").read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"run record {name}: {folder / 'run.yaml'} is missing") from None
    missing = [key for key in REQUIRED if key not in (provenance or {})]
    if missing:
        raise ValueError(f"run record {name}: run.yaml lacks {missing}")
    return RunRecord(name, folder, provenance)


def load_all(data: Path = DATA) -> dict[str, RunRecord]:
    return {path.parent.name: load(path.parent.name, data) for path in sorted(Path(data).glob("*/run.yaml"))}


def markdown_tables(text: str) -> list[tuple[str, pd.DataFrame]]:
    """Every pipe table of a Markdown page the pipeline wrote, with the heading it sits under: the verdicts of
    chains.md and comparisons.md are written there (they need per-item correctness, which the CSVs do not keep)."""
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


def _machine() -> str:
    fields = {}
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    flags = fields.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    with open("/proc/meminfo") as handle:
        memory_gib = int(handle.readline().split()[1]) / 2**20
    cores = len(__import__("os").sched_getaffinity(0))
    return f"{cores} cores, {fields.get('model name', platform.machine())} ({isa}), {memory_gib:.0f} GiB"


def store(run_dir: Path, name: str, title: str, command: str, configs: list[str], plain_step_ms: float,
          wall: str, data: Path = DATA, note: str = "") -> Path:
    """Copy a finished run's summary tables into docs/data/<name>/ and write its run.yaml."""
    run_dir = Path(run_dir)
    folder = Path(data) / name
    tables = sorted(p for p in (run_dir / "results").glob("*/summary/*") if p.suffix in (".csv", ".md"))
    if not tables:
        raise FileNotFoundError(f"{run_dir}/results/*/summary/ holds no table: is the run finished?")
    if folder.exists():
        shutil.rmtree(folder)
    for path in tables:
        target = folder / path.parent.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    git = ["git", "-C", str(run_dir)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    version = subprocess.run([*git, "show", "HEAD:workflow/subtask_induction/__init__.py"], capture_output=True,
                             text=True, check=True).stdout.split('__version__ = "')[1].split('"')[0]
    provenance = {"title": title, "command": command, "configs": configs, "commit": commit, "version": version,
                  "date": datetime.date.today().isoformat(), "machine": _machine(), "plain_step_ms": plain_step_ms,
                  "wall": wall}
    if note:
        provenance["note"] = note
    save_text(yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True, width=100), folder / "run.yaml")
    return folder


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Store a finished run's summary tables as a run record.")
    parser.add_argument("run_dir", type=Path, help="the clone the run ran in (its results/ and git)")
    parser.add_argument("name", help="the record's folder under docs/data/")
    parser.add_argument("--title", required=True)
    parser.add_argument("--command", required=True, help="the command that made the run")
    parser.add_argument("--configs", nargs="+", required=True, help="its config files, in order")
    parser.add_argument("--plain-step-ms", type=float, required=True,
                        help="benchmarks/step_costs.py's plain step, measured beside the run")
    parser.add_argument("--wall", required=True, help="the run's wall time, and under what load")
    parser.add_argument("--note", default="")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    print(store(args.run_dir, args.name, args.title, args.command, args.configs, args.plain_step_ms, args.wall,
                args.data, args.note))


if __name__ == "__main__":
    main()
