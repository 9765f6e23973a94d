"""## Submasking: the default (the vision base, adapted to the configured tasks)."""

from __future__ import annotations

from ..page import FIGURES, embed, provenance_line
from ..run_records import RunRecord


def submasking_default(record: RunRecord) -> list[str]:
    text = record.text("submasking/tables.md")
    first = text.split("\n## ")[0]   # the test accuracy part; the rest (sparsity, k-NN, bytes) follows it
    rest = text[len(first):]
    return (["## Submasking: the default (the vision base, adapted to the configured tasks)", "", provenance_line(record), "",
             f"![Test accuracy per task: every adaptation's mean over replicates (the mask, fs, in blue, its level dashed), "
             f"each replicate a dot]({FIGURES}/submasking.png)",
             "", "### The record's `tables.md`", ""] + embed(first, 3) + embed(rest, 3))
