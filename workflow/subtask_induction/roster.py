"""The roster: the chains a family's tables hold when its plan names spare chains (docs/decisions.md, "Spare chains").

A plan fixes its chains, in order, and a spare list, before its first job. Every planned and every spare chain trains
its base; the roster then takes the planned chains in order and puts in place of each one whose base failed the
validity criterion (validity.py) the next spare whose base passed. A replaced chain runs none of its discoveries or
transfers; a spare no place needs runs nothing past its base. Where the spares run out, a failed chain keeps its
place and is counted, as a plan without spares counts it (the pages name it). The roster is a function of the bases'
accuracies alone, so it is the same on every rerun and on a cluster's nodes.

The workflow writes it once all those bases are in (the checkpoint `<family>_roster`, results/<family>/summary/
roster.csv) and builds the family's later jobs from it; a record keeps it, and its pages say which chain stood in for
which. Torch-free: the Snakefile imports it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .files import write_text
from .validity import BASE_VALID, COLUMN, did_not_learn

COLUMNS = ["chain", "role", "base_accuracy", "valid", "counts", "place"]


@dataclass(frozen=True)
class Roster:
    """`chains`: the chains that count, in the plan's order (a spare at the place of the chain it replaces);
    `table`: one row per planned and spare chain (COLUMNS): its role (planned or spare), its base's accuracy, whether
    that passes, whether the chain counts, and the planned chain whose place it holds (empty where it does not
    count)."""

    family: str
    chains: list[int]
    table: pd.DataFrame

    def replacements(self) -> list[tuple[int, float, int | None]]:
        """[(failed planned chain, its base's accuracy, the spare in its place or None where none was left)]."""
        rows = self.table.set_index("chain")
        out = []
        for chain, row in rows[(rows["role"] == "planned") & ~rows["valid"]].iterrows():
            by = rows.index[(rows["role"] == "spare") & rows["counts"] & (rows["place"] == chain)]
            out.append((int(chain), float(row["base_accuracy"]), int(by[0]) if len(by) else None))
        return out


def resolve(family: str, planned: list[int], spares: list[int], accuracy: dict[int, float]) -> Roster:
    """The roster of `planned` with `spares`, from each chain's base accuracy (0-1; every planned and spare chain)."""
    chains = [int(c) for c in planned]
    spares = [int(c) for c in spares]
    if len(set(chains + spares)) != len(chains) + len(spares):
        raise ValueError(f"{family}: the planned chains {chains} and the spares {spares} must be distinct")
    missing = [c for c in chains + spares if c not in accuracy]
    if missing:
        raise ValueError(f"{family}: no base accuracy for chains {missing}")
    threshold = BASE_VALID[family]
    valid = {c: float(accuracy[c]) >= threshold for c in chains + spares}
    place, left = {}, [c for c in spares if valid[c]]
    for chain in chains:
        if valid[chain]:
            place[chain] = chain
        elif left:
            place[left.pop(0)] = chain
        else:
            place[chain] = chain   # no spare left: the plan's chain keeps its place and counts
    roster = list(place)   # filled place by place, so in the plan's order
    table = pd.DataFrame({
        "chain": chains + spares,
        "role": ["planned"] * len(chains) + ["spare"] * len(spares),
        "base_accuracy": [float(accuracy[c]) for c in chains + spares],
        "valid": [valid[c] for c in chains + spares],
        "counts": [c in place for c in chains + spares],
        "place": pd.array([place.get(c) for c in chains + spares], dtype="Int64"),
    }, columns=COLUMNS)
    return Roster(family, roster, table)


def read(path: Path, family: str) -> Roster:
    """A roster.csv back (the workflow's, or a record's)."""
    table = pd.read_csv(path, dtype={"place": "Int64"})
    if list(table.columns) != COLUMNS:
        raise ValueError(f"{path}: columns {list(table.columns)}, expected {COLUMNS}")
    table["valid"] = table["valid"].astype(bool)
    table["counts"] = table["counts"].astype(bool)
    planned = list(table.loc[table["role"] == "planned", "chain"])
    counted = table[table["counts"]]
    by_place = sorted(zip(counted["place"], counted["chain"]), key=lambda pair: planned.index(pair[0]))
    return Roster(family, [int(chain) for _, chain in by_place], table)


def write(roster: Roster, path: Path) -> None:
    write_text(Path(path), roster.table.to_csv(index=False))


def base_accuracy(family: str, metrics: list[Path]) -> dict[int, float]:
    """Each chain's base accuracy from its bases' metrics.json (their identities name the chain): arithmetic the
    lowest eval accuracy over a chain's bases, vision the accuracy on the original test images (validity.READS)."""
    out: dict[int, float] = {}
    for path in metrics:
        record = json.loads(Path(path).read_text())
        chain, value = int(record["identity"]["chain"]), float(record["metrics"][COLUMN[family]])
        out[chain] = min(out.get(chain, value), value)
    return out


def lines(roster: Roster) -> list[str]:
    """What the workflow prints of a roster: one line per failed planned chain."""
    out = []
    for chain, accuracy, by in roster.replacements():
        why = f"{roster.family} chain {chain}: {did_not_learn(roster.family, accuracy)}"
        out.append(f"{why}; spare chain {by} runs in its place" if by is not None
                   else f"{why}; no spare left, so it keeps its place and counts")
    return out


def write_from_bases(family: str, planned: list[int], spares: list[int], metrics: list[str], out: str, log: str) -> None:
    """The checkpoint `<family>_roster`'s work (in Snakemake's own process: no torch): the roster from the bases'
    metrics.json, written atomically; its lines to the log and the console."""
    roster = resolve(family, planned, spares, base_accuracy(family, [Path(m) for m in metrics]))
    write(roster, Path(out))
    said = lines(roster)
    Path(log).write_text("".join(f"{text}\n" for text in said) or f"{family}: every planned base passed\n")
    for text in said:
        print(f"roster: {text}", file=sys.stderr)


def report(results: Path, families: list[str]) -> list[str]:
    """What the workflow prints when it finishes (the Snakefile's onsuccess): every replacement of the roster
    (results/<family>/summary/roster.csv) of each of `families`, those whose plan names spares now (a roster an earlier
    config left behind is not this run's)."""
    out = []
    for family in families:
        path = Path(results) / family / "summary" / "roster.csv"
        if path.is_file():
            out += lines(read(path, family))
    return out
