"""## The BatchNorm question: a GroupNorm ResNet (vision)."""

from __future__ import annotations

from ..page import embed, provenance_line
from ..run_records import RunRecord


def groupnorm_section(record: RunRecord) -> list[str]:
    """The BatchNorm question: the default's vision family on a ResNet whose normalisation stores no statistics."""
    return (["## The BatchNorm question: a GroupNorm ResNet (vision)", "", provenance_line(record), "",
             record.provenance["title"] + ". The default's subnetwork's pooled gain sits largely in the base's stored "
             "BatchNorm statistics, which SI's retraining re-estimates on original images; GroupNorm stores none.", "",
             "### Table 1 (the record's `table1.md`)", ""] + embed(record.text("vision/table1.md"), 4)
            + ["### Every chain's difference and the verdict (the record's `comparisons.md`)", ""]
            + embed(record.text("vision/comparisons.md"), 4)
            + ["### The subnetworks (the record's `table2.md`)", ""] + embed(record.text("vision/table2.md"), 4)
            + ["### Where the pooled gain sits (the record's `diagnostics.md`)", ""]
            + embed(record.text("vision/diagnostics.md"), 4))
