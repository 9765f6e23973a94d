"""Records written by earlier versions, read as today's: the one place that knows an old record's shape.

Support window: records of version 0.4.0 and later. A finished run of 0.4.0 trains its points again once at 0.5.0
(CHANGELOG), so what is still read from 0.4.0 are stored tables (the run records of docs/data/, whose transfer
tables call a replicate `seed`); a record older than 0.4.0 is refused by name, with what to run again, rather than
read with a guessed meaning. Torch-free.
"""

from __future__ import annotations

SUPPORTED_FROM = "0.4.0"


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
