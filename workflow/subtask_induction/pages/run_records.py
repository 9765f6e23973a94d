"""Run records: what a finished run leaves for the pages, kept in git under docs/data/<run>/.

A run record is the run's summary tables as the pipeline wrote them (`results/<family>/summary/*.csv|md`, copied
unchanged to `<family>/...`) and `run.yaml`, which says what made them: the command and config files, the commit
and package version, the date, the machine, `make benchmark`'s plain step measured beside the run (so a reader
can scale its wall time to their machine), and the wall time. Pages read records, never results/ directly: a
results folder is rewritten by the next run, a record is a fixed statement.

A record is checked when it is stored and whenever it is loaded: every CSV against its schema
(record_schemas.py: columns, no NaN where a number is read, one row per key), and every point its configs planned
(`planned/<family>.csv`, planned.py) present in its family's table, less the planned points run.yaml's
`known_gaps` names (each with why); a point in a table that no config planned must be named by `unplanned`.
Storing refuses a run whose code or configs differ from the commit it would record, and is a small transaction: it
holds the data folder's lock (a killed store's lock is free again), removes what a killed store left (temporaries,
staging folders), writes the new record durably in a staging folder of its own, checks it, and swaps it in under
an intent file (`.NAME.swap`) that the next store finishes or undoes after a kill; a failed store leaves the previous
record as it was (`--plan`, which rewrites a stored record's planned points, is the same transaction). Loading
reads only record folders (a dot-folder is a store's own) and refuses a data folder whose swap was interrupted,
naming the command that finishes it. Records that are not runs (`configs: []`: the `make test` timing, a GPU
check) need only their run.yaml.

    python -m subtask_induction.pages.run_records RUN_DIR NAME --title "..." --command "make reproduce" \\
        --configs config/config.yaml --plain-step-ms 16.9 --wall "27 min 15 s, quiet"
"""

from __future__ import annotations

import argparse
import datetime
import functools
import hashlib
import json
import os
import platform
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from ..rounding import fixed
from ..files import (FolderLock, copy_file, current_umask, fsync_folder, make_folder, remove_temporaries, remove_tree,
                     write_json, write_text)
from ..legacy import run_versions, upgrade_record
from ..page_tables import read_tables, tables_path
from ..workflow_config import later_batches
from . import planned as planning
from .record_schemas import TABLES, RecordError, check_table

DATA = Path(__file__).resolve().parents[3] / "docs" / "data"
# What run.yaml must state for a page to cite the run.
REQUIRED = ("title", "command", "configs", "commit", "version", "date", "machine", "plain_step_ms", "wall")


@dataclass(frozen=True)
class RunRecord:
    """One stored run: its folder, its provenance (run.yaml) and its tables."""

    name: str
    folder: Path
    provenance: dict = field(hash=False)
    digest: str | None = field(default=None, compare=False, hash=False)   # record_digest of the bytes load checked

    def path(self, table: str) -> Path:
        path = self.folder / table
        if not path.exists():
            raise FileNotFoundError(f"run record {self.name}: no {table} in {self.folder}")
        return path

    def has(self, table: str) -> bool:
        return (self.folder / table).exists()

    def csv(self, table: str) -> pd.DataFrame:
        return upgrade_record(pd.read_csv(self.path(table)), "table", str(self.path(table)))

    def tables(self, page: str) -> list[tuple[str, pd.DataFrame]]:
        """The tables of one of the record's pages (`arithmetic/chains.md`), as the pipeline kept them beside it
        (page_tables.py: `chains.tables.csv`; a record made before has it from the upgrade, named in run.yaml's
        `upgrades`): (the heading above each, its cells as written)."""
        path = tables_path(self.path(page))
        if not path.exists():
            raise RecordError(f"run record {self.name}: no {path.name} beside {page} (made before the pipeline kept "
                              "its tables as data): run `python -m subtask_induction.pages.table_upgrade` to add it")
        return read_tables(path)

    def text(self, table: str) -> str:
        return upgrade_record(self.path(table).read_text(), "markdown", str(self.path(table)))

    @functools.cached_property
    def planned(self) -> dict[str, pd.DataFrame]:
        """The points its configs planned, by family (planned/<family>.csv), read once."""
        return planning.read_planned(self.folder)


def load(name: str, data: Path = DATA, check: bool = True) -> RunRecord:
    """A stored record, checked (check_record) unless check=False. Its run.yaml is parsed from the bytes that the
    record's digest covers (one read of the folder), so the checks' verdict is remembered for exactly those bytes."""
    folder = Path(data) / name
    if check:
        digest, text = _digest(folder)
    else:
        digest, text = None, (folder / "run.yaml").read_bytes() if (folder / "run.yaml").is_file() else None
    if text is None:
        raise FileNotFoundError(f"run record {name}: {folder / 'run.yaml'} is missing")
    provenance = yaml.safe_load(text)
    missing = [key for key in REQUIRED if key not in (provenance or {})]
    if missing:
        raise ValueError(f"run record {name}: run.yaml lacks {missing}")
    record = RunRecord(name, folder, provenance, digest)
    if check:
        check_record(record, digest)
    return record


# The contents (record_digest) of the record folders check_record passed in this process. Its verdict depends only
# on those bytes and the code, so the same bytes are not checked twice: a process that loads the same records many
# times (the page tests, each on its own copy of them) pays the schema checks once per distinct record.
_PASSED: set[str] = set()


def record_digest(folder: Path) -> str:
    """sha256 over every file of a record folder: its relative path and its bytes, in path order."""
    return _digest(folder)[0]


def _digest(folder: Path) -> tuple[str, bytes | None]:
    """record_digest of `folder`, and the bytes of its run.yaml that went into it (None where it has none)."""
    digest, run_yaml = hashlib.sha256(), None
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        relative, contents = str(path.relative_to(folder)), path.read_bytes()
        if relative == "run.yaml":
            run_yaml = contents
        digest.update(relative.encode() + b"\0" + contents + b"\0")
    return digest.hexdigest(), run_yaml


def check_record(record: RunRecord, digest: str | None = None) -> None:
    """Refuse a record a page must not read: a table that breaks its schema, a planned point missing from its
    family's table (unless run.yaml's known_gaps names it), a point no config planned (unless `unplanned` names
    it). Records that are not runs (no configs) have no tables to check. `digest`: the record_digest of the folder
    as read when record.provenance was parsed from its run.yaml (load's one read). Bytes that passed once pass again
    unread; a folder that changed between that read and the end of the checks is not remembered, nor is a record
    checked without its digest (whose provenance may come from other bytes than the folder's)."""
    if not record.provenance["configs"]:
        return
    if digest is not None and digest in _PASSED:
        return
    _check_tables(record)
    if digest is not None and record_digest(record.folder) == digest:
        _PASSED.add(digest)


def _check_tables(record: RunRecord) -> None:
    for path in sorted(record.folder.glob("*/*.csv")):
        table = str(path.relative_to(record.folder))
        if not table.startswith("planned/"):
            check_table(record.name, table, record.csv(table))
    planned = record.planned
    if not planned:
        raise RecordError(f"run record {record.name}: no planned/ points (the points its configs planned; "
                          "`python -m subtask_induction.pages.run_records --plan` writes them)")
    expected = planning.expected_points(planned, record.provenance.get("known_gaps") or [])
    for family, points in expected.items():
        table, rename = planning.POINT_TABLES[family]
        if points.empty:
            continue
        if not record.has(table):
            raise RecordError(f"run record {record.name}: {table} is missing; its configs plan {len(points)} "
                              f"{family} points")
        rows = planning.point_rows(record.csv(table).rename(columns={v: k for k, v in rename.items()}), family)
        keys = list(points.columns)
        have = rows[keys].drop_duplicates().astype(str)
        gone = points.astype(str).merge(have, how="left", indicator=True).query("_merge == 'left_only'")
        if len(gone):
            listed = "\n".join("  " + ", ".join(f"{k} {v}" for k, v in row.items())
                               for row in gone[keys].head(8).to_dict("records"))
            raise RecordError(f"run record {record.name}: {table} lacks {len(gone)} point(s) its configs planned "
                              f"(and run.yaml's known_gaps does not name):\n{listed}"
                              + (f"\n  ... and {len(gone) - 8} more" if len(gone) > 8 else ""))
        extra = have.merge(planned[family].astype(str), how="left", indicator=True).query("_merge == 'left_only'")
        named = planning.gap_rows(extra, [u for u in record.provenance.get("unplanned") or []
                                          if u.get("family") == family])
        extra = extra[~named]
        if len(extra):
            listed = "\n".join("  " + ", ".join(f"{k} {v}" for k, v in row.items())
                               for row in extra[keys].head(8).to_dict("records"))
            raise RecordError(f"run record {record.name}: {table} holds {len(extra)} point(s) no config of the record "
                              f"planned (a stale table? run.yaml's `unplanned` names those kept on purpose):\n{listed}")


SWAP_WAITS = 20   # load_all's looks at a data folder a store is swapping (0.1 s apart) before it says it was cut


def swaps(data: Path) -> list[str]:
    """The swaps under way in `data` (a store's intent files), or cut short by a kill."""
    return sorted(p.name for p in Path(data).glob(".*.swap"))


def record_names(data: Path) -> list[str]:
    """The record folders of `data`: those with a run.yaml, never a dot-folder (a store's staging folder or an old
    record it moves aside)."""
    return sorted(path.parent.name for path in Path(data).glob("*/run.yaml") if not path.parent.name.startswith("."))


def load_all(data: Path = DATA) -> dict[str, RunRecord]:
    """Every record of `data`. A store swapping a record in while the records are read would hide that record for a
    moment: the folder is read again until no swap is under way and the same records were there before and after
    (a few seconds at most); a swap a killed store left half done is refused, with the command that finishes it."""
    for _ in range(SWAP_WAITS):
        names = record_names(data)
        if swaps(data):
            time.sleep(0.1)
            continue
        records, bad = {}, []
        for name in names:
            try:
                records[name] = load(name, data)
            except (RecordError, ValueError, FileNotFoundError, KeyError) as error:
                bad.append(bad_record_line(name, error))
        if swaps(data) or record_names(data) != names:
            time.sleep(0.1)   # a store swapped a record in meanwhile: read them all again
            continue
        if bad:
            raise RecordError("\n".join(bad))
        return records
    cut = ", ".join(swaps(data)) or "its records kept changing"
    raise RecordError(f"{data}: a store of run records was interrupted ({cut}): run "
                      "`python -m subtask_induction.pages.run_records --recover` to finish it")


def bad_record_line(name: str, error: Exception) -> str:
    """One line for a record a page cannot read: the record, what is wrong (the table and line where the check
    names them), and the fix."""
    lines = str(error).removeprefix("error: ").splitlines() or [type(error).__name__]
    message = lines[0].rstrip(":") + (f" (first: {lines[1].strip()})" if len(lines) > 1 else "")
    if not message.startswith(f"run record {name}"):
        message = f"run record {name}: {message}"
    return (f"{message} -- fix: correct docs/data/{name}/ (or name the exception in its run.yaml's known_gaps / "
            "unplanned), or store the run again (python -m subtask_induction.pages.run_records)")


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
    return f"{cores} cores, {fields.get('model name', platform.machine())} ({isa}), {fixed(memory_gib, 0)} GiB"


def _git(run_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(run_dir), *args], capture_output=True, text=True, check=True).stdout


# What makes a run's numbers: a change here that is not committed is not what the recorded commit says.
RUN_CODE = ("Snakefile", "workflow", "config")


# A table column that is a measurement of the run, not a result of it: left out when two runs' tables are compared
TIMING_COLUMNS = ("seconds",)


# A page's cells as data (page_tables.PageTables): the run's numbers as the pages' rule words them ("+4.1*", "holds"),
# made from the numeric tables beside them; a rule version words the same numbers otherwise
RENDERED = ".tables.csv"


def different_tables(results: Path, record: RunRecord) -> list[str]:
    """The summary CSVs of a finished run (`results`: its folder, holding results/<family>/summary/) that differ from
    the stored `record`'s, each named with what differs; the columns of TIMING_COLUMNS (each training's wall time)
    are left out, and so are the pages' cells (RENDERED): two runs are the same tables when their numbers are, under
    any rule version. Empty: the run made the record's numbers exactly."""
    differ = []
    for path in sorted(record.folder.glob("*/*.csv")):
        table = str(path.relative_to(record.folder))
        if table.startswith("planned/") or table.endswith(RENDERED):
            continue
        ours = Path(results) / "results" / path.parent.name / "summary" / path.name
        if not ours.is_file():
            differ.append(f"{table}: not made by the run")
            continue
        theirs, mine = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in (path, ours))
        theirs, mine = (t.drop(columns=[c for c in TIMING_COLUMNS if c in t]) for t in (theirs, mine))
        if not theirs.equals(mine):
            differ.append(f"{table}: {len(mine)} rows against {len(theirs)}" if len(mine) != len(theirs)
                          else f"{table}: columns {sorted(c for c in theirs if c not in mine or not theirs[c].equals(mine[c]))}")
    return differ


def same_tables_as(results: Path, names: list[str], data: Path = DATA) -> dict[str, str]:
    """`same_tables_as` of a record, computed: for each stored record named, its commit, where the run at `results`
    made its tables exactly (different_tables); a difference refuses, naming the tables."""
    found = {}
    for name in names:
        record = load(name, data)
        differ = different_tables(results, record)
        if differ:
            raise RecordError(f"{results}: the run did not make the tables of run record {name} "
                              f"(commit {record.provenance['commit']}): " + "; ".join(differ))
        found[name] = record.provenance["commit"]
    return found


# The files a plan is written in, beside its configs: the plan's digest covers them as at the plan's commit.
PLAN_FILES = ("docs/decisions.md",)


def plan_of(run_dir: Path, results: Path, commit: str, configs: list[str]) -> dict:
    """A planned record's `plan` (issue 93): the plan's commit, the digest of its configs and PLAN_FILES as at that
    commit, and how many of the run's jobs name it. Every job's metrics.json under `results`/results must name that
    commit as the code it ran, with no file of the package changed from it (records.code_commit): a job run from
    another commit, from a changed checkout or outside one is refused, named."""
    try:
        full = _git(run_dir, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    except subprocess.CalledProcessError:
        raise RecordError(f"{run_dir}: the plan's commit {commit} is not a commit of its history") from None
    jobs = sorted((Path(results) / "results").rglob("metrics.json"))
    if not jobs:
        raise RecordError(f"{results}: no job's metrics.json under results/, so no job names the plan's commit")
    wrong = []
    for path in jobs:
        code = (json.loads(path.read_text()).get("provenance") or {}).get("code")
        if not code or not full.startswith(str(code.get("commit"))) or code.get("modified"):
            wrong.append(f"{path.relative_to(results)}: {code or 'no commit'}")
    if wrong:
        raise RecordError(f"{len(wrong)} of {len(jobs)} jobs did not run the plan's commit {commit} unchanged: "
                          + "; ".join(wrong[:5]) + (" ..." if len(wrong) > 5 else ""))
    digest = hashlib.sha256()
    for name in [*configs, *PLAN_FILES]:
        digest.update(f"{name}\0{_git(run_dir, 'show', f'{full}:{name}')}\0".encode())
    return {"commit": full[:7], "digest": digest.hexdigest()[:12], "jobs": len(jobs),
            "files": [*configs, *PLAN_FILES]}


def store(run_dir: Path, name: str, title: str, command: str, configs: list[str], plain_step_ms: float,
          wall: str, data: Path = DATA, note: str = "", run_folder: str = ".", decisive_batches: int | None = None,
          same_as: list[str] = (), plan_commit: str | None = None) -> Path:
    """Copy a finished run's summary tables of the families its configs run into docs/data/<name>/, with the points
    its configs planned and its run.yaml; the record is checked before it replaces the old one (which a failure
    leaves as it was). `run_dir` is the clone the run ran in; `run_folder` the run's folder within it (Snakemake's
    --directory). `decisive_batches` k: the run made the first k batches of its configs' decisive plan
    (`make decisive BATCHES=k`), and the record names the later batches' chains as its known gaps. `plan_commit`: the
    commit of the record's plan, fixed before its first job (plan_of: every job must have run it)."""
    with store_lock(data):
        return _store(Path(run_dir), name, title, command, configs, plain_step_ms, wall, Path(data), note, run_folder,
                      decisive_batches, list(same_as), plan_commit)


def _store(run_dir: Path, name: str, title: str, command: str, configs: list[str], plain_step_ms: float, wall: str,
           data: Path, note: str, run_folder: str, decisive_batches: int | None, same_as: list[str],
           plan_commit: str | None = None) -> Path:
    results = run_dir / run_folder
    dirty = _git(run_dir, "status", "--porcelain", "--", *RUN_CODE).strip()
    if dirty:
        raise RecordError(f"{run_dir}: the run's code or configs differ from its commit, so no commit says what made "
                          f"its numbers; commit or restore them first:\n{dirty}")
    commit = _git(run_dir, "rev-parse", "--short", "HEAD").strip()
    version = _git(run_dir, "show", "HEAD:workflow/subtask_induction/__init__.py").split('__version__ = "')[1].split('"')[0]
    config = planning.effective_config(configs, None, run_dir)
    rostered = planning.rosters(results / "results", config)
    points = planning.planned_points(config, rostered)
    # a roster an earlier config with spares left behind is not this run's: kept only for a plan with spares now
    tables = sorted(p for family in points for p in (results / "results" / family / "summary").glob("*")
                    if p.suffix in (".csv", ".md") and (p.name != "roster.csv" or family in rostered))
    if not tables:
        raise FileNotFoundError(f"{results}/results/<family>/summary/ holds no table of {sorted(points)}: is the run "
                                "finished?")
    unknown = [str(p.relative_to(results)) for p in tables
               if p.suffix == ".csv" and f"{p.parent.parent.name}/{p.name}" not in TABLES]
    if unknown:
        raise RecordError(f"{results}: tables no schema describes (pages/record_schemas.py TABLES): {unknown}")
    trained = run_versions(results)
    provenance = {"title": title, "command": command, "configs": configs, "commit": commit,
                  "version": ", ".join(trained) if trained else version,
                  "date": datetime.date.today().isoformat(), "machine": _machine(), "plain_step_ms": plain_step_ms,
                  "wall": wall}
    if trained and trained != [version]:
        provenance["note"] = (f"Its points were trained by version {', '.join(trained)}; the tables were made at "
                              f"{commit} ({version}). " + note).strip()
    elif note:
        provenance["note"] = note
    if same_as:   # computed from the run's tables, never typed: a record whose tables differ is refused here
        provenance["same_tables_as"] = same_tables_as(results, same_as, data)
    if plan_commit:
        provenance["plan"] = plan_of(run_dir, results, plan_commit, configs)
    if decisive_batches:
        gaps = later_batches(config, decisive_batches)
        if gaps:
            provenance["known_gaps"] = gaps

    def fill(staged: Path) -> None:
        for path in tables:
            copy_file(path, staged / path.parent.parent.name / path.name)
        planning.write_planned(points, staged)
        write_text(staged / "run.yaml", yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True, width=100))
    return _stage_and_swap(data, name, fill)


def _stage_and_swap(data: Path, name: str, fill) -> Path:
    """The record `name` of `data` replaced as one small transaction (call it holding the store lock): what a killed
    store left is recovered, fill(staged) writes the new record into a staging folder of its own, durably, which is
    checked as a page loads it before the old record is touched, then swapped in (swap). A failure removes the
    staging folder and leaves the old record as it was."""
    recover(data)
    staged = Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=data))
    try:
        os.chmod(staged, 0o777 & ~current_umask())   # a record folder gets a plain mkdir's mode, not mkdtemp's 0700
        fill(staged)
        for sub in [*staged.iterdir(), staged]:
            if sub.is_dir():
                fsync_folder(sub)
        load(staged.name, staged.parent)   # every check a page's load makes, before the old record is touched
    except BaseException:
        remove_tree(staged)
        raise
    folder = data / name
    swap(staged, folder)
    return folder


def store_lock(data: Path) -> FolderLock:
    """The data folder's lock: one store (or recovery) at a time; a killed store's is free again."""
    make_folder(data)
    return FolderLock(Path(data) / STORE_LOCK, "another store of run records is running", RecordError)


STORE_LOCK = ".store.lock"


def swap(staged: Path, folder: Path) -> None:
    """Put `staged` where `folder` is, under an intent file that says so (`.<name>.swap`): the old record moves aside
    to `.<name>.old`, the new one in, then the intent and the old record go. A kill at any point is finished by
    recover() (the next store's first step): forward where the new record is whole (it was checked before the intent
    was written), never losing both."""
    intent = folder.with_name(f".{folder.name}.swap")
    write_json(intent, {"record": folder.name, "staged": staged.name})
    _finish_swap(intent)


def _finish_swap(intent: Path) -> None:
    """Carry a swap from whatever state a kill left to its end; each step can be done again."""
    data = intent.parent
    name = json.loads(intent.read_text())["record"]
    staged, folder, old = data / json.loads(intent.read_text())["staged"], data / name, data / f".{name}.old"
    if staged.exists():
        if folder.exists():
            remove_tree(old)
            os.replace(folder, old)
            fsync_folder(data)
        os.replace(staged, folder)
        fsync_folder(data)
    intent.unlink()
    fsync_folder(data)
    remove_tree(old)


def recover(data: Path) -> list[str]:
    """Finish the swaps a killed store began and remove what it left (atomic_write's temporaries, staging folders and
    old records no swap names). Call it holding the store lock. Returns what it did, a line each."""
    data = Path(data)
    done = []
    for intent in sorted(data.glob(".*.swap")):
        _finish_swap(intent)
        done.append(f"finished the interrupted swap of {intent.name[1:-5]}")
    for leftover in sorted([*data.glob(".*.new-*"), *data.glob(".*.old")]):
        remove_tree(leftover)
        done.append(f"removed {leftover.name}")
    done += [f"removed {path}" for path in remove_temporaries(data)]
    return done


def plan(name: str, data: Path = DATA, repo: Path = planning.REPO) -> Path:
    """Write an existing record's planned points, from its configs at its commit (or at run.yaml's `planned_at`,
    where its configs were completed later than its tables were made). The record is rewritten as a store rewrites
    one (a copy staged, checked and swapped in): a plan its checks refuse leaves the record as it was."""
    data = Path(data)
    with store_lock(data):   # it replaces a record: never beside a store's swap or recovery
        record = load(name, data, check=False)
        p = record.provenance
        config = planning.effective_config(p["configs"], str(p.get("planned_at", p["commit"])), repo)
        points = planning.planned_points(config, planning.rosters(record.folder, config))

        def fill(staged: Path) -> None:
            for path in sorted(q for q in record.folder.rglob("*") if q.is_file()):
                copy_file(path, staged / path.relative_to(record.folder))
            planning.write_planned(points, staged)
        folder = _stage_and_swap(data, name, fill)
    return folder / "planned"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Store a finished run's summary tables as a run record (or, with "
                                                 "--plan NAME, write a stored record's planned points).")
    parser.add_argument("run_dir", type=Path, nargs="?", help="the clone the run ran in (its results/ and git)")
    parser.add_argument("name", nargs="?", help="the record's folder under docs/data/")
    parser.add_argument("--plan", metavar="NAME", help="write the planned points of the stored record NAME")
    parser.add_argument("--recover", action="store_true", help="finish a store that was interrupted, and remove "
                                                               "what it left")
    parser.add_argument("--title")
    parser.add_argument("--command", help="the command that made the run")
    parser.add_argument("--configs", nargs="+", help="its config files, in order")
    parser.add_argument("--plain-step-ms", type=float, help="benchmarks/step_costs.py's plain step, measured beside the run")
    parser.add_argument("--wall", help="the run's wall time, and under what load")
    parser.add_argument("--run-folder", default=".", help="the run's folder in the clone (Snakemake's --directory)")
    parser.add_argument("--note", default="")
    parser.add_argument("--same-tables-as", nargs="+", default=[], metavar="RECORD",
                        help="stored records whose tables the run made exactly (checked, `seconds` left out): "
                             "run.yaml's same_tables_as, with their commits")
    parser.add_argument("--decisive-batches", type=int, metavar="K",
                        help="the run made the first K batches of the decisive plan (make decisive BATCHES=K): the "
                             "later batches' chains are the record's known gaps")
    parser.add_argument("--plan-commit", metavar="COMMIT",
                        help="the commit of the record's plan: every job's metrics must name it (run.yaml's `plan`, "
                             "with the digest of its configs and docs/decisions.md at that commit)")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    if args.recover:
        with store_lock(args.data):
            print("\n".join(recover(args.data)) or "nothing to recover")
        return
    if args.plan:
        print(plan(args.plan, args.data))
        return
    needed = ("run_dir", "name", "title", "command", "configs", "plain_step_ms", "wall")
    missing = [f"--{key.replace('_', '-')}" if key not in ("run_dir", "name") else key for key in needed
               if getattr(args, key) is None]
    if missing:
        parser.error(f"storing a run needs {', '.join(missing)}")
    print(store(args.run_dir, args.name, args.title, args.command, args.configs, args.plain_step_ms, args.wall,
                args.data, args.note, args.run_folder, args.decisive_batches, args.same_tables_as, args.plan_commit))


if __name__ == "__main__":
    main()
