"""Records written by earlier versions, read as today's: the one place that knows an old record's shape.

Support window: records of version 0.4.0 and later. A finished run of 0.4.0 trains its points again once at 0.5.0
(CHANGELOG), so what is still read from 0.4.0 are stored tables (the run records of docs/data/, whose transfer
tables call a replicate `seed`); a record older than 0.4.0 is refused by name, with what to run again, rather than
read with a guessed meaning. Torch-free.
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

from .listing import write_json_atomic

SUPPORTED_FROM = "0.4.0"
# A rule's command names its wildcards, and Snakemake reruns a job whose recorded command text differs (its
# `code` trigger), so a renamed wildcard would retrain every finished job of the rule: (rule, old, new) text
# that `upgrade_run` rewrites in a finished run's records. Each entry says what was renamed, and when.
RENAMED_IN_COMMANDS = [
    ("vision_discover", "{wildcards.penalty}", "{wildcards.l0}"),   # 0.5.0: one λ wildcard, `l0`, in every family
]


class OutsideSupport(ValueError):
    """A record older than SUPPORTED_FROM."""


def refuse(where: str, what: str, again: str) -> OutsideSupport:
    return OutsideSupport(f"{where}: {what}, so it was written before version {SUPPORTED_FROM}; records of "
                          f"{SUPPORTED_FROM} and later are read (upgrade.py): {again}")


def upgrade_record(record, kind: str, where: str = "record"):
    """`record` of `kind` in today's words:
    - "table": a summary table (DataFrame) a run wrote: 0.4.0 called a transfer's replicate `seed`;
    - "masks": a subnetwork file's masks: bit-packed ({shape, bits}) since 0.3.0;
    - "arithmetic subnetwork": an arithmetic subnetwork file's dict: the rows it read (`train_rows`) since 0.3.0;
    - "base": an arithmetic base's model file's dict: its seeds recorded (since 0.3.0).
    Raises OutsideSupport for a record older than SUPPORTED_FROM."""
    if kind == "table":
        if "seed" in record and "replicate" not in record:
            return record.rename(columns={"seed": "replicate"})
        return record
    if kind == "masks":
        plain = sorted(name for name, mask in record.items() if not isinstance(mask, dict))
        if plain:
            raise refuse(where, f"its masks {plain[:3]} are not bit-packed", "run its discovery again")
        return record
    if kind == "arithmetic subnetwork":
        if "train_rows" not in record:
            raise refuse(where, "it records no `train_rows` (the discovery's rows)", "run its discovery again")
        return record
    if kind == "base":
        if "seeds" not in record:
            raise refuse(where, "it records no seeds", "train the base again")
        return record
    raise ValueError(f"upgrade_record: unknown kind {kind!r}")


def upgrade_run(folder: Path) -> list[str]:
    """Rewrite a finished run's Snakemake records (.snakemake/metadata) for RENAMED_IN_COMMANDS, atomically, so
    that a renamed wildcard reruns nothing whose numbers cannot change. Returns the outputs whose record changed."""
    metadata = Path(folder) / ".snakemake" / "metadata"
    changed = []
    if not metadata.is_dir():
        raise SystemExit(f"error: {folder} holds no finished run (no .snakemake/metadata)")
    for path in sorted(p for p in metadata.rglob("*") if p.is_file() and not p.name.startswith(".")):
        record = json.loads(path.read_text())
        code = record.get("code") or ""
        new = code
        for rule, old_text, new_text in RENAMED_IN_COMMANDS:
            if record.get("rule") == rule:
                new = new.replace(old_text, new_text)
        if new != code:
            record["code"] = new
            write_json_atomic(path, record)
            # the record's name is its output's path, base64 (Snakemake splits a long one into "@" folders)
            encoded = "".join(part.lstrip("@") for part in path.relative_to(metadata).parts)
            changed.append(base64.urlsafe_b64decode(encoded).decode())
    return changed


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
