"""What every section of docs/results.md shares: the records' names and how a section embeds a page the pipeline
wrote or names the record it reads."""

from __future__ import annotations

from pathlib import Path

from .run_records import RunRecord

REPO = Path(__file__).resolve().parents[3]
PAPER_DEPTHS = {"paper_depth2": 2, "paper_depth12": 12}
BEYOND = "beyond"   # `make beyond`'s record: the default with config/beyond.yaml
GROUPNORM = "groupnorm"   # the BatchNorm question: config/groupnorm.yaml in a folder of its own
SIGNS = "beyond_signs"    # `make beyond-signs`: config/beyond/signs.yaml on the default
# The default and its replication (the same config and commit, chains of disjoint seeds: config/replication.yaml)
DEFAULTS = ("default", "default_replication")
# `make decisive` (config/decisive.yaml): the chains fixed in docs/decisions.md before its first job; once whole, it
# decides the headlines and the two records of the default stand beside it
DECISIVE = "decisive"
# `make confirmatory` (config/confirmatory.yaml over config/si_authors.yaml): the headlines decided once, on chains no
# record had used, by the rule, claims and chain counts committed before its first job (docs/decisions.md, "The
# confirmatory record: the plan"); once whole it decides the headline rows and `decisive` stands beside it,
# exploratory
CONFIRMATORY = "confirmatory"
# `make decisive-cross-domain` (config/decisive_cross_domain.yaml): the cross-domain ViT on the decisive record's first
# six chains, a record of its own (it runs apart); once whole, it decides the cross-domain claims and `beyond` stands
# beside it
DECISIVE_CROSS_DOMAIN = "decisive_cross_domain"
# `make vision-causes` (config/causes/ over config/vision_causes.yaml): the causes of SI's lost shape, each a variant of
# SI, on the decisive record's vision chains, SI, finetune and mixture rerun beside them
VISION_CAUSES = "vision_causes"
# `make vision-authors` (config/si_authors.yaml over config/vision_authors.yaml): SI as the authors' code ran it beside
# every Table 1 arm, on the decisive record's vision chains
VISION_AUTHORS = "vision_authors"
GPU_CHECK = "gpu_check"   # benchmarks/gpu_check.sh on a lent GPU: its summary and pack throughput
TIMING = "time_to_figure"   # benchmarks/time_to_figure.py on fresh-clone runs of make reproduce and make beyond
FIGURES = "figures"   # relative to docs/


def embed(text: str, level: int) -> list[str]:
    """A page the pipeline wrote, its headings moved down to sit under a heading of `level`."""
    lines = []
    for line in text.strip().splitlines():
        if line.startswith("#"):
            depth = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, level + depth - 1) + line[depth:]
        lines.append(line)
    return lines + [""]


def provenance_line(record: RunRecord) -> str:
    """Which record a section reads; its commit, machine and wall time stand in the provenance at the end."""
    return f"*From the record [`{record.name}`](#run-{record.name.lower()}).*"
