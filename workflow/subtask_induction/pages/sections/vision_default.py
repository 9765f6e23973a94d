"""## Vision: the default (generated shape/texture world): Table 1, every chain's difference and verdict, the
subnetworks (the record's pages as the pipeline wrote them)."""

from __future__ import annotations

from ..page import FIGURES, embed, provenance_line
from ..run_records import RunRecord


def vision_default(record: RunRecord) -> list[str]:
    lines = ["## Vision: the default (generated shape/texture world)", "", provenance_line(record), "",
             f"![Table 1 per metric: every model's mean over chains (SI in blue, its level dashed), each chain a dot]"
             f"({FIGURES}/vision_table1.png)", "",
             "### Table 1 (the record's `table1.md`)", ""]
    lines += embed(record.text("vision/table1.md"), 4)
    lines += ["### Every chain's difference and the verdict (the record's `comparisons.md`)", ""]
    lines += embed(record.text("vision/comparisons.md"), 4)
    lines += ["### The subnetworks (the record's `table2.md`)", ""]
    return lines + embed(record.text("vision/table2.md"), 4)
