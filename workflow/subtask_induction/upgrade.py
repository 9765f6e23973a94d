"""`python -m subtask_induction.upgrade FOLDER`: the migration of a finished run folder to this version's names.
(Old records are read as today's by legacy.py; this tool rewrites a user's folder and sits above the library.)

A finished run folder of 0.5.0's development (its point folders `.../seed{r}`, its vision λ wildcard `penalty`, a
transfer variant's and a submasking point's `method`) is upgraded in place by `python -m subtask_induction.upgrade
FOLDER` (`upgrade_run`): the folders move, and the records that name them or hold those settings (Snakemake's
metadata, the packs' point lists and manifests, the points' records, the tables and their `path` cells, the summary
pages' headers) are rewritten, so that nothing whose numbers cannot change runs again. The renames are STEPS, one
versioned Step each; a later rename is one more.

A finished run is days of computing, so the upgrade is a transaction (Alembic's and Snakemake's own habits):
- it refuses a folder a run uses or left half-written (.snakemake/locks, .snakemake/incomplete), records outside the
  support window or newer than the package, a target that exists, a second upgrade at once (a lock), too little
  space for its backup; each before changing anything;
- it plans first (plan_upgrade: every move and rewrite, unreadable Snakemake records skipped and named, as Snakemake
  skips them); `--dry-run` prints the plan and stops;
- it journals the plan under .snakemake/upgrade/ with every original and new byte, each file's mode and times, and
  marks each operation done (synced): run again after an interruption, it finishes the journal; `--rollback` puts
  every byte, mode and time back; every write is files.atomic_write's (atomic, synced, mode and group kept);
- it stamps the folder (stamp.json) and lists every change (log.txt); a run in a folder that still needs it stops
  before any job (pending(), read by the rule files).
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .files import fsync_folder, write_bytes, write_json, write_text
from .legacy import RENAMED_COLUMNS, SUPPORTED_FROM, renamed_headers, run_versions, version_key

# A rule's command names its wildcards, and Snakemake reruns a job whose recorded command text differs (its
# `code` trigger), so a renamed wildcard would retrain every finished job of the rule: (rule, old, new) text
# that `upgrade_run` rewrites in a finished run's records. Each entry says what was renamed, and when.
RENAMED_IN_COMMANDS = [
    ("vision_discover", "{wildcards.penalty}", "{wildcards.l0}"),   # 0.5.0: one λ wildcard, `l0`, in every family
]


# A point's folder says `replicate{r}`, as its record and the config do (0.5.0; it was `seed{r}`): (pattern, new)
# over any text holding a path, a folder's, a Snakemake record's or a pack's point list's.
RENAMED_PATHS = [
    (r"(arithmetic/chain\d+/transfer/[^\s\"',]+?/n\d+/)seed(\d+)(?=/|$)", r"\1replicate\2"),
    (r"(submasking/points/[^\s\"',]+?/fraction[^/\s\"',]+/)seed(\d+)(?=/|$)", r"\1replicate\2"),
]


# One word per concept (0.5.0): a transfer variant's `method` is its `kind`, a submasking point's `method` its
# `adaptation` (and the config's list of them `adaptations`); a mask's `method` keeps its name. (old key, new key,
# the values that tell the meaning apart): the settings and records that a finished run's JSON holds are rewritten.
# (A user's config file is read by workflow_config.upgrade_keys instead, which notes each key.) The values are those
# 0.5.0's development wrote under `method`, frozen here: a kind added later was never written under the old key.
TRANSFER_KINDS_0_5 = ("subnetwork", "sampled", "complement", "random", "full", "sampled_authors", "complement_authors",
                      "magnitude")
ADAPTATIONS_0_5 = ("lp", "fs", "fft", "ss_fs", "ss_fft")
RENAMED_RECORD_KEYS = [
    ("method", "kind", TRANSFER_KINDS_0_5),
    ("method", "adaptation", ADAPTATIONS_0_5),
    ("methods", "adaptations", ADAPTATIONS_0_5),
]
def renamed_keys(value, keys=RENAMED_RECORD_KEYS):
    """A JSON value with every renamed key (at any depth) under its new name; the meaning is told by the value (a
    list's every item), so a mask's `method` stays."""
    if isinstance(value, list):
        return [renamed_keys(item, keys) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        for old, new, values in keys:
            items = item if isinstance(item, list) else [item]
            if key == old and new not in value and items and all(isinstance(i, str) and i in values for i in items):
                key = new
                break
        out[key] = renamed_keys(item, keys)
    return out


# The JSON layouts the package writes (as_json's settings and point lists, files.write_json, save_json).
_JSON_LAYOUTS = ({"sort_keys": True}, {"indent": 1, "sort_keys": True}, {"indent": 2, "sort_keys": True})


def renamed_json(text: str, keys=RENAMED_RECORD_KEYS) -> str:
    """`text`, a JSON document in one of the package's layouts, with its keys renamed, in the same layout (so a
    setting reads exactly as the new version writes it); any other text unchanged."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    new = renamed_keys(value, keys)
    if new == value:
        return text
    for layout in _JSON_LAYOUTS:
        for end in ("", "\n"):
            if json.dumps(value, **layout) + end == text:
                return json.dumps(new, **layout) + end
    raise SystemExit(f"error: cannot rename the keys of a JSON text in no layout of this package: {text[:200]}")


def renamed_table(text: str, renamed_columns=RENAMED_COLUMNS) -> str:
    """A CSV table's text with its renamed column (its header line) under today's name."""
    header, newline, rest = text.partition("\n")
    columns = header.split(",")
    old, new = renamed_columns["backbone" if "backbone" in columns else None]
    if old not in columns or new in columns:
        return text
    return ",".join(new if column == old else column for column in columns) + newline + rest


def renamed_path(text: str, renames=RENAMED_PATHS) -> str:
    """`text` (a path, or a record holding paths) with every old point folder named as today's."""
    for pattern, new in renames:
        text = re.sub(pattern, new, text)
    return text


@dataclass(frozen=True)
class Step:
    """One versioned rename of the run folder's names: what the version renamed, and the tables that say how. A later
    rename is one more Step in STEPS (Alembic's revisions; this tool has no downgrade but the journal's rollback)."""

    version: str
    what: str
    paths: tuple = ()      # (pattern, new) over any text holding a path
    commands: tuple = ()   # (rule, old, new) in Snakemake's recorded command text
    keys: tuple = ()       # (old key, new key, the values that tell the meaning apart) in JSON
    columns: dict = field(default_factory=dict)   # a table's {family marker: (old, new)} column


STEPS = (
    Step("0.5.0", "one λ wildcard, `l0`, in every family (the vision discovery's was `penalty`)",
         commands=tuple(RENAMED_IN_COMMANDS)),
    Step("0.5.0", "a point's folder says `replicate{r}` (was `seed{r}`)", paths=tuple(RENAMED_PATHS)),
    Step("0.5.0", "a transfer variant's `method` is its `kind`, a submasking point's its `adaptation`",
         keys=tuple(RENAMED_RECORD_KEYS), columns=RENAMED_COLUMNS),
)
UPGRADE = Path(".snakemake") / "upgrade"   # the journal, the backup, the log, the lock and the stamp


def combined(steps) -> tuple:
    paths = [rule for step in steps for rule in step.paths]
    commands = [rule for step in steps for rule in step.commands]
    keys = [rule for step in steps for rule in step.keys]
    columns = {}
    for step in steps:
        columns.update(step.columns)
    return paths, commands, keys, columns or RENAMED_COLUMNS


class UpgradeRefused(SystemExit):
    """A run folder the upgrade must not touch (yet): the message says why and what to do."""

    def __init__(self, message: str):
        super().__init__(f"error: {message}")


@dataclass
class Plan:
    """Every change of an upgrade, read before any is made: folder moves, file rewrites (results/ and Snakemake's
    records), and the records skipped as unreadable. Each rewrite keeps its original bytes, mode and times."""

    folder: Path
    moves: list = field(default_factory=list)      # (old, new), relative to the folder
    rewrites: list = field(default_factory=list)   # dicts: path (after the moves), was (before), new bytes, ...
    records: list = field(default_factory=list)    # dicts: was (record path), path (new record path), new bytes
    skipped: list = field(default_factory=list)    # (record path, why)

    def counts(self) -> dict[str, int]:
        kinds = {"point folders moved": len(self.moves), "Snakemake records rewritten": len(self.records),
                 "unreadable Snakemake records skipped (as Snakemake skips them)": len(self.skipped)}
        by_suffix = {".json": "JSON files rewritten", ".csv": "tables rewritten", ".md": "summary pages rewritten"}
        for rewrite in self.rewrites:
            kind = by_suffix[Path(rewrite["path"]).suffix]
            kinds[kind] = kinds.get(kind, 0) + 1
        return kinds

    def empty(self) -> bool:
        return not (self.moves or self.rewrites or self.records)

    def lines(self) -> list[str]:
        out = [f"move {old} -> {new}" for old, new in self.moves]
        out += [f"rewrite {r['path']}" for r in self.rewrites]
        out += [f"record {r['output']}" + (" (renamed)" if r["was"] != r["path"] else "") for r in self.records]
        out += [f"skip {path}: {why}" for path, why in self.skipped]
        return out


def check_folder(folder: Path) -> None:
    """Refuse a folder a run is using or left half-written: Snakemake's locks and incomplete markers."""
    for name, what in (("locks", "a Snakemake run holds its lock (or a killed one left it: `snakemake --unlock`)"),
                       ("incomplete", "Snakemake marks outputs as incomplete (a killed run: finish it with the old "
                                      "version, or delete them)")):
        found = sorted(p.name for p in (folder / ".snakemake" / name).glob("*")) if (folder / ".snakemake" / name).is_dir() else []
        if found:
            raise UpgradeRefused(f"{folder}: {what}: .snakemake/{name}/ holds {len(found)} entries ({found[:3]}); "
                                 "nothing was changed")


def check_versions(folder: Path) -> None:
    from . import __version__

    versions = run_versions(folder)
    old = [v for v in versions if version_key(v) < version_key(SUPPORTED_FROM)]
    new = [v for v in versions if version_key(v) > version_key(__version__)]
    if old:
        raise UpgradeRefused(f"{folder}: its records were written by version {old}, older than the upgrade's support "
                             f"window ({SUPPORTED_FROM} and later): run it again with this version")
    if new:
        raise UpgradeRefused(f"{folder}: its records were written by version {new}, newer than this package "
                             f"({__version__}): upgrade the package, not the run")


def plan_upgrade(folder: Path, steps=STEPS) -> Plan:
    """Read everything an upgrade would touch and check every target; change nothing."""
    folder = Path(folder)
    metadata = folder / ".snakemake" / "metadata"
    if not metadata.is_dir():
        raise UpgradeRefused(f"{folder} holds no finished run (no .snakemake/metadata)")
    renames, commands, keys, columns = combined(steps)
    plan = Plan(folder)
    results = folder / "results"

    def renamed(path: Path) -> bool:
        name = str(path.relative_to(folder))
        return renamed_path(name, renames) != name

    for path in [p for p in sorted(results.rglob("*")) if p.is_dir() and renamed(p) and not renamed(p.parent)]:
        old = str(path.relative_to(folder))
        new = renamed_path(old, renames)
        if (folder / new).exists():
            raise UpgradeRefused(f"cannot move {old} to {new}: it exists (a run of the new version in the old folder? "
                                 "nothing was changed)")
        plan.moves.append((old, new))
    checksums = {}
    for path in sorted([*results.rglob("*.json"), *results.rglob("*.csv"), *results.glob("*/summary/*.md")]):
        old = str(path.relative_to(folder))
        text = path.read_text()
        if path.suffix == ".json":
            new_text = renamed_json(renamed_path(text, renames), keys)
        elif path.suffix == ".csv":
            new_text = renamed_table(renamed_path(text, renames), columns)
        else:
            new_text = renamed_headers(text, *columns["backbone" if "submasking/" in old else None])
        if new_text == text:
            continue
        after = renamed_path(old, renames)
        info = path.stat()
        plan.rewrites.append({"was": old, "path": after, "new": new_text.encode(), "old": text.encode(),
                              "mode": stat.S_IMODE(info.st_mode), "times": (info.st_atime_ns, info.st_mtime_ns)})
        checksums[after] = "sha256:" + hashlib.sha256(new_text.encode()).hexdigest()
    for path in sorted(p for p in metadata.rglob("*") if p.is_file() and not p.name.startswith(".")):
        relative = path.relative_to(metadata)
        try:
            output = _record_output(relative)
            raw = path.read_bytes()
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as error:
            plan.skipped.append((str(path.relative_to(folder)), f"unreadable ({type(error).__name__})"))
            continue
        new = _upgraded_record(record, renames, commands, keys, checksums)
        new_output = renamed_path(output, renames)
        if new == record and new_output == output:
            continue
        target = _record_path(metadata, new_output)
        info = path.stat()
        plan.records.append({"was": str(path.relative_to(folder)), "path": str(target.relative_to(folder)),
                             "output": new_output, "new": (json.dumps(new, indent=1, sort_keys=True) + "\n").encode(),
                             "old": raw, "mode": stat.S_IMODE(info.st_mode),
                             "times": (info.st_atime_ns, info.st_mtime_ns)})
    return plan


def _write(path: Path, data: bytes, mode: int, times) -> None:
    """A file's bytes with the mode and times it had (a rewritten record must not look newer than its outputs)."""
    write_bytes(path, data, mode)
    os.utime(path, ns=tuple(times))


class Journal:
    """An upgrade in progress under .snakemake/upgrade/: the plan (journal.json, every original's and every new
    content's bytes in backup/ and new/), the operations done (done: one index a line, each synced), and a lock."""

    def __init__(self, folder: Path):
        self.root = Path(folder) / UPGRADE
        self.file, self.done_file, self.lock = self.root / "journal.json", self.root / "done", self.root / "lock"

    def exists(self) -> bool:
        return self.file.exists()

    def acquire(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            raise UpgradeRefused(f"{self.lock} exists: another upgrade of this folder is running (if none is, a killed "
                                 "one left it: remove the file and run the upgrade again)") from None

    def release(self) -> None:
        self.lock.unlink(missing_ok=True)

    def write(self, plan: Plan, steps) -> list[dict]:
        """Store the plan's operations and every byte they need; returns them."""
        operations = []
        for old, new in plan.moves:
            operations.append({"op": "move", "was": old, "path": new})
        for index, item in enumerate(plan.rewrites + plan.records):
            kind = "rewrite" if index < len(plan.rewrites) else "record"
            write_bytes(self.root / "backup" / str(index), item["old"])
            write_bytes(self.root / "new" / str(index), item["new"])
            operations.append({"op": kind, "was": item["was"], "path": item["path"], "bytes": str(index),
                               "mode": item["mode"], "times": list(item["times"])})
        from . import __version__

        write_json(self.file, {"to_version": __version__, "steps": [f"{s.version}: {s.what}" for s in steps],
                               "operations": operations, "skipped": plan.skipped})
        self.done_file.unlink(missing_ok=True)
        return operations

    def finished(self) -> bool:
        return (self.root / "stamp.json").exists() and len(self.done()) >= len(self.operations())

    def operations(self) -> list[dict]:
        return json.loads(self.file.read_text())["operations"]

    def done(self) -> set[int]:
        if not self.done_file.exists():
            return set()
        return {int(line) for line in self.done_file.read_text().split() if line.isdigit()}

    def mark(self, index: int) -> None:
        with open(self.done_file, "a") as handle:
            handle.write(f"{index}\n")
            handle.flush()
            os.fsync(handle.fileno())

    def bytes(self, kind: str, name: str) -> bytes:
        return (self.root / kind / name).read_bytes()


def _apply(folder: Path, journal: Journal, operations: list[dict], fault=None) -> None:
    """Carry out the journal's operations not yet done, in order; each can be carried out again (a rerun after an
    interruption finishes the journal). `fault(index, operation)` is the tests' hook for an injected failure."""
    done = journal.done()
    for index, operation in enumerate(operations):
        if index in done:
            continue
        if fault:
            fault(index, operation)
        was, path = folder / operation["was"], folder / operation["path"]
        if operation["op"] == "move":
            if was.exists():
                if path.exists():
                    raise UpgradeRefused(f"cannot move {operation['was']} to {operation['path']}: it exists")
                path.parent.mkdir(parents=True, exist_ok=True)
                os.rename(was, path)
                fsync_folder(path.parent)
        else:
            _write(path, journal.bytes("new", operation["bytes"]), operation["mode"], operation["times"])
            if operation["op"] == "record" and was != path and was.exists():
                was.unlink()
                _prune(was.parent, folder / ".snakemake" / "metadata")
        journal.mark(index)


def _prune(folder: Path, stop: Path) -> None:
    """Snakemake's "@" folders of a long record name, left empty."""
    while folder != stop and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def rollback(folder: Path) -> int:
    """Undo an upgrade, finished or interrupted, from its journal: every file back to its original bytes, mode and
    times, every folder back to its old name; the journal, the backup and the stamp removed. Returns the operations
    undone."""
    folder = Path(folder)
    journal = Journal(folder)
    if not journal.exists():
        raise UpgradeRefused(f"{folder}: no upgrade journal ({journal.file}): nothing to roll back")
    journal.acquire()
    try:
        operations = journal.operations()
        done = journal.done()
        # the operations marked done, and the first one not marked (it may have finished before its mark was written)
        touched = done | ({min(set(range(len(operations))) - done)} if len(done) < len(operations) else set())
        undone = 0
        for index in sorted(touched, reverse=True):
            operation = operations[index]
            was, path = folder / operation["was"], folder / operation["path"]
            if operation["op"] == "move":
                if path.exists() and not was.exists():
                    os.rename(path, was)
                    fsync_folder(was.parent)
                    undone += 1
                continue
            new = journal.bytes("new", operation["bytes"])
            if not (path.exists() and path.read_bytes() == new):
                continue   # never written: nothing to undo
            if operation["op"] == "record" and was != path:
                path.unlink()
                _prune(path.parent, folder / ".snakemake" / "metadata")
            target = was if operation["op"] == "record" else path
            _write(target, journal.bytes("backup", operation["bytes"]), operation["mode"], operation["times"])
            undone += 1
    finally:
        journal.release()
    shutil.rmtree(journal.root)
    return undone


def upgrade_run(folder: Path, renames=None, commands=None, keys=None, columns=None, steps=STEPS, dry_run: bool = False,
                fault=None, log=print) -> list[str]:
    """Upgrade a finished run folder in place, transactionally: refuse a folder a run is using; plan every change
    (plan_upgrade); journal the plan with every original byte; apply it; stamp the folder. An interrupted upgrade is
    finished by running it again; `rollback` undoes it. Returns the outputs whose Snakemake record changed.
    `renames`, `commands`, `keys`, `columns` give one step of their own (the tests' reversed renames)."""
    folder = Path(folder)
    if any(x is not None for x in (renames, commands, keys, columns)):
        steps = (Step("test", "given renames", tuple(renames or ()), tuple(commands or ()), tuple(keys or ()),
                      columns or {}),)
    journal = Journal(folder)
    check_folder(folder)
    if journal.exists() and not journal.finished() and not dry_run:
        log(f"finishing the interrupted upgrade of {folder} ({journal.file})")
        journal.acquire()
        try:
            _apply(folder, journal, journal.operations(), fault)
        finally:
            journal.release()
        _stamp(folder, journal)
        return [op["path"] for op in journal.operations() if op["op"] == "record"]
    check_versions(folder)
    plan = plan_upgrade(folder, steps)
    summary = [f"{count} {kind}" for kind, count in plan.counts().items() if count]
    log(f"upgrade of {folder}: " + (", ".join(summary) if summary else "nothing to change"))
    if dry_run or plan.empty():
        for line in plan.lines()[:10]:
            log(f"  {line}")
        if dry_run and len(plan.lines()) > 10:
            log(f"  ... and {len(plan.lines()) - 10} more")
        return [item["output"] for item in plan.records]
    needed = sum(len(item["old"]) + len(item["new"]) for item in plan.rewrites + plan.records)
    free = shutil.disk_usage(folder).free
    if needed * 2 > free:
        raise UpgradeRefused(f"{folder}: the upgrade's backup needs {needed:,} bytes (kept twice that free), only "
                             f"{free:,} are free; nothing was changed")
    if journal.exists():   # an earlier, finished upgrade: its journal moves aside, still rolled back by hand
        journal.root.rename(journal.root.with_name(f"upgrade-{len(list(journal.root.parent.glob('upgrade-*'))) + 1}"))
    journal.acquire()
    try:
        operations = journal.write(plan, steps)
        write_text(journal.root / "log.txt", "\n".join(plan.lines()) + "\n")
        _apply(folder, journal, operations, fault)
    finally:
        journal.release()
    _stamp(folder, journal)
    log(f"every change is listed in {journal.root / 'log.txt'}; `python -m subtask_induction.upgrade --rollback "
        f"{folder}` undoes it (its backup: {journal.root}, {needed // 2:,} bytes; delete it to free the space)")
    return [item["output"] for item in plan.records]


def _stamp(folder: Path, journal: Journal) -> None:
    """The mark a later run reads: this folder holds this version's names."""
    from . import __version__

    record = json.loads(journal.file.read_text())
    write_json(journal.root / "stamp.json", {"version": __version__, "steps": record["steps"]})


def pending(folder: Path) -> str | None:
    """Why a run must not start in `folder` before an upgrade, or None: an interrupted upgrade, or point folders of
    the old layout (found by their shape, cheaply: no file is read)."""
    folder = Path(folder)
    journal = Journal(folder)
    if journal.exists() and not journal.finished():
        return (f"an upgrade of this folder was interrupted ({journal.file}): run `python -m subtask_induction.upgrade "
                f"{folder}` again to finish it, or with --rollback to undo it")
    old = [*folder.glob("results/arithmetic/chain*/transfer/*/*/*/layers*/*/n*/seed*"),
           *folder.glob("results/submasking/points/*/*/*/fraction*/seed*")]
    if old:
        return (f"{len(old)} point folders of an earlier version's layout (e.g. {old[0].relative_to(folder)}): a run "
                f"now would train them again; run `PYTHONPATH=workflow python -m subtask_induction.upgrade {folder}` "
                "first (`--dry-run` shows what it changes)")
    return None


def _upgraded_param(param: str, renames, keys) -> tuple[str, str | None, str | None]:
    """A recorded param (Snakemake keeps each as its repr) upgraded, with its old and new string values when a
    renamed key changed a JSON setting in it (the command names the same text, shell-quoted)."""
    param = renamed_path(param, renames)
    try:
        value = ast.literal_eval(param)
    except (ValueError, SyntaxError):
        return param, None, None
    new = renamed_json(value, keys) if isinstance(value, str) else value
    if new == value:
        return param, None, None
    return repr(new), value, new


def _upgraded_record(record: dict, renames, commands, keys, checksums: dict) -> dict:
    new = dict(record)
    for key in ("input", "log"):
        if isinstance(record.get(key), list):
            new[key] = [renamed_path(item, renames) for item in record[key]]
            if record[key] == sorted(record[key]):   # Snakemake compares a job's recorded inputs sorted
                new[key] = sorted(new[key])
    settings = []
    if isinstance(record.get("params"), list):
        params = [_upgraded_param(item, renames, keys) for item in record["params"]]
        settings = [(old, value) for _, old, value in params if old is not None]
        new["params"] = [param for param, _, _ in params]
        if settings:
            new["params"].sort()  # as Snakemake stores them
    if isinstance(record.get("shellcmd"), str):
        shellcmd = renamed_path(record["shellcmd"], renames)
        for old, value in settings:
            shellcmd = shellcmd.replace(shlex.quote(old), shlex.quote(value))
        new["shellcmd"] = shellcmd
    if isinstance(record.get("input_checksums"), dict):
        new["input_checksums"] = {renamed_path(name, renames): checksums.get(renamed_path(name, renames), value)
                                  for name, value in record["input_checksums"].items()}
    code = record.get("code") or ""
    for rule, old_text, new_text in commands:
        if record.get("rule") == rule:
            code = code.replace(old_text, new_text)
    if code != (record.get("code") or ""):
        new["code"] = code
    return new


def _record_output(relative: Path) -> str:
    """A record's output path: its name is the path, base64, split into "@" folders when long (Snakemake's
    persistence/file.py)."""
    return base64.urlsafe_b64decode("".join(part.lstrip("@") for part in relative.parts)).decode()


def _record_path(metadata: Path, output: str) -> Path:
    name_max = os.pathconf(metadata, "PC_NAME_MAX") or 255
    encoded = base64.urlsafe_b64encode(output.encode()).decode()
    chunks = [encoded[i:i + name_max - 1] for i in range(0, len(encoded), name_max - 1)]
    return metadata.joinpath(*["@" + chunk for chunk in chunks[:-1]], chunks[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Upgrade a finished run folder's records to this version's names "
                                                 "(run it in the folder you run Snakemake in, before the first run "
                                                 "of the new version; running it twice changes nothing).")
    parser.add_argument("folder", nargs="?", default=".", help="the run folder (holding .snakemake/)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--dry-run", action="store_true", help="print the plan (counts per kind, the first changes) "
                                                               "and change nothing")
    action.add_argument("--rollback", action="store_true", help="undo the last upgrade of the folder, byte for byte")
    args = parser.parse_args(argv)
    if args.rollback:
        print(f"rolled back {rollback(Path(args.folder))} change(s) of {args.folder}")
        return 0
    upgrade_run(Path(args.folder), dry_run=args.dry_run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
