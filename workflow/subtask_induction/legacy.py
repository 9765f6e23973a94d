"""Records written by earlier versions, read as today's: the one place that knows an old record's shape. The
method library and the pages read through it; it rewrites nothing (the migration of a finished run folder is
upgrade.py's, a tool above the library). Torch-free.

Support window: records of version 0.4.0 and later. A finished run of 0.4.0 trains its points again once at 0.5.0
(CHANGELOG), so what is still read from 0.4.0 are stored tables (the run records of docs/data/, whose transfer
tables call a replicate `seed`); a record older than 0.4.0 is refused by name, with what to run again, rather than
read with a guessed meaning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

SUPPORTED_FROM = "0.4.0"

# A table's column of the same two meanings, told apart by the table's family (a submasking table has a backbone).
RENAMED_COLUMNS = {"backbone": ("method", "adaptation"), None: ("method", "kind")}


def renamed_headers(text: str, old: str, new: str) -> str:
    """A Markdown page's pipe tables with the column `old` of their header rows (the row above `|---`) called `new`."""
    lines = text.split("\n")
    for index, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[index + 1].startswith("|---"):
            lines[index] = line.replace(f"| {old} |", f"| {new} |")
    return "\n".join(lines)


class OutsideSupport(ValueError):
    """A record older than SUPPORTED_FROM."""


def refuse(where: str, what: str, again: str) -> OutsideSupport:
    return OutsideSupport(f"{where}: {what}, so it was written before version {SUPPORTED_FROM}; records of "
                          f"{SUPPORTED_FROM} and later are read (legacy.py): {again}")


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
        return renamed_headers(record, *RENAMED_COLUMNS["backbone" if "submasking/" in where else None])
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


def run_versions(folder: Path) -> list[str]:
    """The package versions a run folder's records carry (every metrics.json's provenance), oldest first: what the
    support window and a run record's `version` are read from."""
    found = set()
    for path in (Path(folder) / "results").rglob("metrics.json"):
        try:
            version = json.loads(path.read_text()).get("provenance", {}).get("package_version")
        except (ValueError, AttributeError, OSError):
            continue
        if version:
            found.add(version)
    return sorted(found, key=version_key)


def version_key(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+-]", version)[:3])
