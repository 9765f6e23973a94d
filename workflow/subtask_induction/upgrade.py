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
- it journals the plan under .snakemake/upgrade/ with every original and new byte, each file's mode and times
  (written in a staging folder and renamed into place whole; an earlier upgrade's journal is first set aside whole,
  as .snakemake/upgrade-<k>), and marks each operation done (synced): run again after an interruption, it finishes
  the journal; `--rollback` puts every byte, mode and time back; every write is files.atomic_write's (atomic, synced,
  mode and group kept); the lock (.snakemake/upgrade.lock) sits beside the journal, never in it;
- it stamps the folder (stamp.json) and lists every change (log.txt); a run in a folder that still needs it, or whose
  rollback began and did not end, stops before any job (pending(), read by the rule files).
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

from .files import (FolderLock, fsync_folder, make_folder, remove_temporaries, remove_tree, write_bytes, write_json,
                    write_text)
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
UPGRADE = Path(".snakemake") / "upgrade"   # the journal, the backup, the log and the stamp
# The upgrade's and the rollback's lock, beside the journal and never in it: the journal folder is renamed whole (aside
# for a second upgrade, away at a rollback's end) while the lock is held, and a lock must never move under its holder.
UPGRADE_LOCK = Path(".snakemake") / "upgrade.lock"
# Written into the journal before a rollback undoes anything: while it is there the folder is half rolled back (or
# holds files the rollback could not restore), so no run may start in it and no upgrade may finish it.
ROLLING_BACK = "rollback-started"


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
    content's bytes in backup/ and new/), the operations done (done: one index a line, each synced); its lock beside
    it (UPGRADE_LOCK)."""

    def __init__(self, folder: Path):
        self.root = Path(folder) / UPGRADE
        self.file, self.done_file, self.lock = self.root / "journal.json", self.root / "done", Path(folder) / UPGRADE_LOCK
        self.rolling_back = self.root / ROLLING_BACK

    def exists(self) -> bool:
        return self.file.exists()

    def locked(self) -> FolderLock:
        """The lock of the upgrade and the rollback: a killed holder's lock is free again (flock), a live one's
        refuses."""
        return FolderLock(self.lock, "another upgrade or rollback of this folder is running", UpgradeRefused)

    def clean(self, folder: Path) -> list[Path]:
        """Remove what a killed upgrade or rollback left half-written: atomic_write's temporaries in the folders they
        write (results/, Snakemake's records, the journal). Call it holding the lock, with Snakemake's checked."""
        return remove_temporaries(folder / "results", folder / ".snakemake" / "metadata", self.root)

    def write(self, plan: Plan, steps, log: list[str]) -> list[dict]:
        """Store the plan's operations, every byte they need and the log in a staging folder beside the journal, then
        make it the journal in one rename: a kill while it is written leaves only the staging folder, never applied
        and removed by the next upgrade, and never a journal folder half of one plan. Returns the operations."""
        staging = self.root.with_name(f"{self.root.name}.new")
        remove_tree(staging)
        make_folder(staging)
        operations = []
        for old, new in plan.moves:
            operations.append({"op": "move", "was": old, "path": new})
        for index, item in enumerate(plan.rewrites + plan.records):
            kind = "rewrite" if index < len(plan.rewrites) else "record"
            write_bytes(staging / "backup" / str(index), item["old"])
            write_bytes(staging / "new" / str(index), item["new"])
            operations.append({"op": kind, "was": item["was"], "path": item["path"], "bytes": str(index),
                               "mode": item["mode"], "times": list(item["times"])})
        from . import __version__

        write_text(staging / "log.txt", "\n".join(log) + "\n")
        write_json(staging / self.file.name, {"to_version": __version__,
                                              "steps": [f"{s.version}: {s.what}" for s in steps],
                                              "operations": operations, "skipped": plan.skipped})
        os.rename(staging, self.root)
        fsync_folder(self.root.parent)
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
                make_folder(path.parent)
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


def rollback(folder: Path, overwrite: bool = False) -> "Rollback":
    """Undo an upgrade, finished or interrupted, from its journal: every file back to its original bytes, mode and
    times, every folder back to its old name; then the journal, the backup and the stamp are removed. Run again
    after a kill, it goes on where it stopped. A file that holds neither the upgrade's bytes nor the original (a later
    run rewrote it) is left as it is and named, and the journal (its original's only copy) is kept; `overwrite`
    writes the originals over such files, keeping their current bytes in OVERWRITTEN."""
    folder = Path(folder)
    journal = Journal(folder)
    finished = folder / ROLLED_BACK
    if not journal.exists():
        if finished.exists():   # a rollback killed while it removed its journal: every change was undone already
            with journal.locked():   # and the lock a kill before its release left goes with it
                remove_tree(finished)
            return Rollback(0, [], finished)
        raise UpgradeRefused(f"{folder}: no upgrade journal ({journal.file}): nothing to roll back")
    check_folder(folder)
    with journal.locked():
        journal.clean(folder)
        operations = journal.operations()
        write_text(journal.rolling_back, "a rollback began; run `python -m subtask_induction.upgrade --rollback` "
                                         "again to finish it\n")
        undone, skipped = 0, []
        for index in sorted(range(len(operations)), reverse=True):
            outcome = _undo(folder, journal, operations[index], overwrite)
            if outcome is True:
                undone += 1
            elif outcome:
                skipped.append(outcome)
        if skipped:
            write_text(journal.root / "rollback-skipped.txt", "\n".join(skipped) + "\n")
            return Rollback(undone, skipped, journal.root)
        remove_tree(finished)
        os.rename(journal.root, finished)   # one step marks the rollback done; removing the journal may then be cut
        fsync_folder(finished.parent)
    remove_tree(finished)
    return Rollback(undone, [], journal.root)


@dataclass
class Rollback:
    """What a rollback did: the changes undone, and the files it left as they are (each `path: why`), whose originals
    the journal still holds."""

    undone: int
    skipped: list
    journal: Path

    def lines(self, folder: Path) -> list[str]:
        if not self.skipped:
            return [f"rolled back {self.undone} change(s) of {folder}; the journal is removed"]
        return ([f"rolled back {self.undone} change(s) of {folder}, and left {len(self.skipped)} file(s) as they are:"]
                + [f"  {line}" for line in self.skipped]
                + [f"their originals stay in {self.journal} (the list: {self.journal / 'rollback-skipped.txt'}); "
                   f"`python -m subtask_induction.upgrade --rollback --overwrite {folder}` writes the originals over "
                   f"them (their current bytes kept in {folder / OVERWRITTEN}), or `--rollback --discard {folder}` "
                   "removes the journal and keeps them as they are"])


OVERWRITTEN = Path(".snakemake") / "upgrade-overwritten"
ROLLED_BACK = Path(".snakemake") / "upgrade-rolled-back"   # a finished rollback's journal, on its way out   # a forced rollback's copy of what it wrote over


def _undo(folder: Path, journal: Journal, operation: dict, overwrite: bool = False):
    """Undo one operation, whatever state a killed upgrade or rollback left it in: True when it changed something,
    None when there is nothing to undo (never done, or already undone: mode and times are set again, in case a kill
    came between a write and its times), or `path: why` when the file holds neither the upgrade's bytes nor the
    original (changed since: left as it is unless `overwrite`)."""
    was, path = folder / operation["was"], folder / operation["path"]
    if operation["op"] == "move":
        if path.exists() and not was.exists():
            os.rename(path, was)
            fsync_folder(was.parent)
            return True
        if path.exists() and was.exists():
            return f"{operation['path']}: both it and {operation['was']} exist (a run of the new version?)"
        return None
    original, new = journal.bytes("backup", operation["bytes"]), journal.bytes("new", operation["bytes"])
    target = was if operation["op"] == "record" else path   # where the original belongs
    renamed = operation["op"] == "record" and was != path
    current = path.read_bytes() if path.exists() else None
    if current == new or (renamed and current is not None and target.exists() and target.read_bytes() == original):
        # the original first, then the renamed record goes: a kill between the two leaves both, never neither
        _write(target, original, operation["mode"], operation["times"])
        if renamed:
            path.unlink()
            fsync_folder(path.parent)
            _prune(path.parent, folder / ".snakemake" / "metadata")
        return True
    if target.exists() and target.read_bytes() == original:
        _restore_times(target, operation)
        return None
    if current is None and operation["op"] == "rewrite" and was.exists() and was.read_bytes() == original:
        return None   # its folder's move was never done (or is undone later): the original is still where it was
    if current is None and not target.exists():
        return f"{operation['path']}: gone (neither the upgrade's bytes nor the original are there)"
    if not overwrite:
        return f"{operation['path']}: changed since the upgrade (neither its bytes nor the original)"
    keep = folder / OVERWRITTEN / operation["path"]
    write_bytes(keep, current if current is not None else target.read_bytes())
    _write(target, original, operation["mode"], operation["times"])
    if renamed and path.exists():
        path.unlink()
        fsync_folder(path.parent)
    return True


def _restore_times(path: Path, operation: dict) -> None:
    info = path.stat()
    if stat.S_IMODE(info.st_mode) != operation["mode"]:
        os.chmod(path, operation["mode"])
    if info.st_mtime_ns != operation["times"][1] or info.st_atime_ns != operation["times"][0]:
        os.utime(path, ns=tuple(operation["times"]))


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
    if journal.rolling_back.exists():
        raise UpgradeRefused(rollback_under_way(folder))
    if journal.root.exists() and not dry_run:   # what a killed upgrade or rollback left: its lock, its temporaries
        with journal.locked():
            journal.clean(folder)
    if journal.exists() and not journal.finished() and not dry_run:
        log(f"finishing the interrupted upgrade of {folder} ({journal.file})")
        with journal.locked():
            journal.clean(folder)
            _apply(folder, journal, journal.operations(), fault)
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
    with journal.locked():
        journal.clean(folder)
        if journal.root.exists():   # an earlier upgrade's journal: aside whole, in one rename, still rolled back by
            set_aside(journal)      # hand; no journal is ever written into another's folder
        operations = journal.write(plan, steps, plan.lines())
        _apply(folder, journal, operations, fault)
        _stamp(folder, journal)
    log(f"every change is listed in {journal.root / 'log.txt'}; `python -m subtask_induction.upgrade --rollback "
        f"{folder}` undoes it (its backup: {journal.root}, {needed // 2:,} bytes; delete it to free the space)")
    return [item["output"] for item in plan.records]


def set_aside(journal: Journal) -> Path:
    """Move the journal folder to the first free `.snakemake/upgrade-<k>` in one rename (a kill before it leaves the
    folder where it was, after it leaves it aside whole)."""
    k = 1
    while journal.root.with_name(f"upgrade-{k}").exists():
        k += 1
    aside = journal.root.with_name(f"upgrade-{k}")
    os.rename(journal.root, aside)
    fsync_folder(aside.parent)
    return aside


def _stamp(folder: Path, journal: Journal) -> None:
    """The mark a later run reads: this folder holds this version's names."""
    from . import __version__

    record = json.loads(journal.file.read_text())
    write_json(journal.root / "stamp.json", {"version": __version__, "steps": record["steps"]})


def rollback_under_way(folder: Path) -> str:
    """Why nothing may run in a folder whose rollback began and did not end: what to run next."""
    journal = Journal(folder)
    skipped = journal.root / "rollback-skipped.txt"
    if skipped.exists():
        count = len(skipped.read_text().splitlines())
        return (f"a rollback of this folder left {count} file(s) it could not restore ({skipped}); run `python -m "
                f"subtask_induction.upgrade --rollback --overwrite {folder}` to write the originals over them, or "
                f"`--rollback --discard {folder}` to keep them as they are, before any run")
    return (f"a rollback of this folder was interrupted ({journal.rolling_back}): run `python -m "
            f"subtask_induction.upgrade --rollback {folder}` again to finish it before any run")


PROBE = 64   # records read by pending()'s probe, at most, of each kind: a Snakefile start stays cheap


def pending(folder: Path, steps=STEPS) -> str | None:
    """Why a run must not start in `folder` before an upgrade, or None: an interrupted upgrade, or a step of `steps`
    that still applies. Cheaply: a stamp that names every step says none does; otherwise the point folders' shape
    (no file read), then a bounded probe of the records (the first PROBE JSON records under results/ and Snakemake
    records), each as the upgrade would rewrite it. The three renames of 0.5.0 landed at different commits, so a
    folder can need any of them alone."""
    folder = Path(folder)
    journal = Journal(folder)
    if journal.rolling_back.exists():
        return rollback_under_way(folder)
    if journal.exists() and not journal.finished():
        return (f"an upgrade of this folder was interrupted ({journal.file}): run `python -m subtask_induction.upgrade "
                f"{folder}` again to finish it, or with --rollback to undo it")
    results = folder / "results"
    if not results.is_dir():
        return None
    stamp = journal.root / "stamp.json"
    if stamp.exists():
        try:
            stamped = set(json.loads(stamp.read_text()).get("steps", []))
        except ValueError:
            stamped = set()
        if {f"{step.version}: {step.what}" for step in steps} <= stamped:
            return None
    command = (f"run `PYTHONPATH=workflow python -m subtask_induction.upgrade {folder}` first (`--dry-run` shows what "
               "it changes)")
    old = [*folder.glob("results/arithmetic/chain*/transfer/*/*/*/layers*/*/n*/seed*"),
           *folder.glob("results/submasking/points/*/*/*/fraction*/seed*")]
    if old:
        return (f"{len(old)} point folders of an earlier version's layout (e.g. {old[0].relative_to(folder)}): a run "
                f"now would train them again; {command}")
    found = _probe(folder, steps)
    if found:
        return f"{found} holds an earlier version's names: a run now would train its jobs again; {command}"
    return None


def _first_files(root: Path, keep, limit: int):
    """Up to `limit` files under `root` for which keep(path) holds, walking in name order and stopping early."""
    count = 0
    for directory, folders, files in os.walk(root):
        folders.sort()
        for name in sorted(files):
            path = Path(directory) / name
            if keep(path):
                yield path
                count += 1
                if count >= limit:
                    return


def _probe(folder: Path, steps) -> str | None:
    """The first record (of at most PROBE JSON files under results/ and PROBE Snakemake records) that an upgrade by
    `steps` would rewrite, or None."""
    renames, commands, keys, _ = combined(steps)
    for path in _first_files(folder / "results", lambda p: p.suffix == ".json", PROBE):
        text = path.read_text(errors="replace")
        try:
            if renamed_json(renamed_path(text, renames), keys) != text:
                return str(path.relative_to(folder))
        except SystemExit:   # a JSON text in no layout of this package: not one of its records
            continue
    metadata = folder / ".snakemake" / "metadata"
    for path in _first_files(metadata, lambda p: not p.name.startswith("."), PROBE):
        try:
            record = json.loads(path.read_bytes())
            output = _record_output(path.relative_to(metadata))
        except (ValueError, UnicodeDecodeError):
            continue
        if (_upgraded_record(record, renames, commands, keys, {}) != record
                or renamed_path(output, renames) != output):
            return f".snakemake/metadata record of {output}"
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
    parser.add_argument("--overwrite", action="store_true", help="with --rollback: write the originals over files "
                                                                 "changed since the upgrade (their bytes kept aside)")
    parser.add_argument("--discard", action="store_true", help="with --rollback: undo what can be undone, then remove "
                                                               "the journal, keeping changed files as they are")
    args = parser.parse_args(argv)
    if (args.overwrite or args.discard) and not args.rollback:
        parser.error("--overwrite and --discard go with --rollback")
    if args.rollback:
        folder = Path(args.folder)
        done = rollback(folder, overwrite=args.overwrite)
        for line in done.lines(folder):
            print(line)
        if done.skipped and args.discard:
            remove_tree(done.journal)
            print(f"removed the journal {done.journal}: the {len(done.skipped)} file(s) above keep their bytes")
            return 0
        return 1 if done.skipped else 0
    upgrade_run(Path(args.folder), dry_run=args.dry_run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
