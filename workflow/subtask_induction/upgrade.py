"""Records written by earlier versions, read as today's: the one place that knows an old record's shape.

Support window: records of version 0.4.0 and later. A finished run of 0.4.0 trains its points again once at 0.5.0
(CHANGELOG), so what is still read from 0.4.0 are stored tables (the run records of docs/data/, whose transfer
tables call a replicate `seed`); a record older than 0.4.0 is refused by name, with what to run again, rather than
read with a guessed meaning. Torch-free.

A finished run folder of 0.5.0's development (its point folders `.../seed{r}`, its vision λ wildcard `penalty`, a
transfer variant's and a submasking point's `method`) is upgraded in place by `python -m subtask_induction.upgrade
FOLDER` (`upgrade_run`): the folders move, and the records that name them or hold those settings (Snakemake's
metadata, the packs' point lists and manifests, the points' records, the tables) are rewritten, so that nothing
whose numbers cannot change runs again.
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
from pathlib import Path

from .listing import write_json_atomic, write_text_atomic

SUPPORTED_FROM = "0.4.0"
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
# A table's column of the same two meanings, told apart by the table's family (a submasking table has a backbone).
RENAMED_COLUMNS = {"backbone": ("method", "adaptation"), None: ("method", "kind")}


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


# The JSON layouts the package writes (as_json's settings and point lists, write_json_atomic, save_json).
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


class OutsideSupport(ValueError):
    """A record older than SUPPORTED_FROM."""


def refuse(where: str, what: str, again: str) -> OutsideSupport:
    return OutsideSupport(f"{where}: {what}, so it was written before version {SUPPORTED_FROM}; records of "
                          f"{SUPPORTED_FROM} and later are read (upgrade.py): {again}")


def upgrade_record(record, what: str, where: str = "record"):
    """`record` of `what` in today's words:
    - "table": a summary table (DataFrame) a run wrote: 0.4.0 called a transfer's replicate `seed`, and before
      0.5.0 called a transfer's kind and a submasking point's adaptation `method`;
    - "markdown": a summary page's text (its `where`, the path, names its family): the same columns, in its tables;
    - "masks": a subnetwork file's masks: bit-packed ({shape, bits}) since 0.3.0;
    - "arithmetic subnetwork": an arithmetic subnetwork file's dict: the rows it read (`train_rows`) since 0.3.0;
    - "base": an arithmetic base's model file's dict: its seeds recorded (since 0.3.0).
    Raises OutsideSupport for a record older than SUPPORTED_FROM."""
    if what == "table":
        if "seed" in record and "replicate" not in record:
            record = record.rename(columns={"seed": "replicate"})
        old, new = RENAMED_COLUMNS["backbone" if "backbone" in record else None]
        if old in record and new not in record:
            record = record.rename(columns={old: new})
        return record
    if what == "markdown":  # a summary page's pipe tables: their header rows, as the tables' columns
        old, new = RENAMED_COLUMNS["backbone" if "submasking/" in where else None]
        lines = record.split("\n")
        for index, line in enumerate(lines[:-1]):
            if line.startswith("|") and lines[index + 1].startswith("|---"):
                lines[index] = line.replace(f"| {old} |", f"| {new} |")
        return "\n".join(lines)
    if what == "masks":
        plain = sorted(name for name, mask in record.items() if not isinstance(mask, dict))
        if plain:
            raise refuse(where, f"its masks {plain[:3]} are not bit-packed", "run its discovery again")
        return record
    if what == "arithmetic subnetwork":
        if "train_rows" not in record:
            raise refuse(where, "it records no `train_rows` (the discovery's rows)", "run its discovery again")
        return record
    if what == "base":
        if "seeds" not in record:
            raise refuse(where, "it records no seeds", "train the base again")
        return record
    raise ValueError(f"upgrade_record: unknown record {what!r}")


def upgrade_run(folder: Path, renames=RENAMED_PATHS, commands=RENAMED_IN_COMMANDS, keys=RENAMED_RECORD_KEYS,
                columns=RENAMED_COLUMNS) -> list[str]:
    """Upgrade a finished run folder in place: move the point folders `renames` names anew, rewrite the files
    under results/ that name them or hold renamed `keys` (the packs' point lists and manifests, the points' records,
    the tables' columns; their times kept, so that no output looks older than its input), then Snakemake's records
    (.snakemake/metadata: each record's name is its output's path; its inputs, logs, params, command and input
    checksums), and `commands` in the recorded command text. Every write is atomic, and a second run changes
    nothing. Returns the outputs whose record changed."""
    folder = Path(folder)
    metadata = folder / ".snakemake" / "metadata"
    if not metadata.is_dir():
        raise SystemExit(f"error: {folder} holds no finished run (no .snakemake/metadata)")
    _move_folders(folder / "results", folder, renames)
    checksums = _rewrite_files(folder / "results", renames, keys, columns)
    changed = []
    for path in sorted(p for p in metadata.rglob("*") if p.is_file() and not p.name.startswith(".")):
        output = _record_output(path.relative_to(metadata))
        record = json.loads(path.read_text())
        new = _upgraded_record(record, renames, commands, keys, checksums)
        new_output = renamed_path(output, renames)
        if new == record and new_output == output:
            continue
        write_json_atomic(_record_path(metadata, new_output), new)
        if new_output != output:
            path.unlink()
            for parent in path.relative_to(metadata).parents:   # Snakemake's "@" folders of a long name
                if parent != Path(".") and not any((metadata / parent).iterdir()):
                    (metadata / parent).rmdir()
        changed.append(new_output)
    return changed


def _move_folders(results: Path, folder: Path, renames) -> None:
    """Each old point folder to its new name (the outermost renamed folder: its files move with it)."""
    def renamed(path: Path) -> bool:
        name = str(path.relative_to(folder))
        return renamed_path(name, renames) != name

    for path in [p for p in sorted(results.rglob("*")) if p.is_dir() and renamed(p) and not renamed(p.parent)]:
        target = folder / renamed_path(str(path.relative_to(folder)), renames)
        if target.exists():
            raise SystemExit(f"error: cannot move {path} to {target}: it exists (a run of both versions?)")
        os.rename(path, target)


def _rewrite_files(results: Path, renames, keys, columns) -> dict[str, str]:
    """The JSON files under results/ whose text names an old folder or holds a renamed key, and the tables with a
    renamed column, rewritten (times kept); returns their new sha256 checksums by path relative to the run folder,
    as Snakemake records an input's."""
    checksums = {}
    for path in sorted([*results.rglob("*.json"), *results.rglob("*.csv")]):
        text = path.read_text()
        new = renamed_json(renamed_path(text, renames), keys) if path.suffix == ".json" else renamed_table(text, columns)
        if new == text:
            continue
        times = path.stat()
        write_text_atomic(path, new)
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
        checksums[str(path.relative_to(results.parent))] = "sha256:" + hashlib.sha256(new.encode()).hexdigest()
    return checksums


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
    args = parser.parse_args(argv)
    changed = upgrade_run(Path(args.folder))
    print(f"upgraded the records of {len(changed)} output(s)" + "".join(f"\n  {path}" for path in changed[:20]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
