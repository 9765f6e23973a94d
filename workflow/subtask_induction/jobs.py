"""What every family's jobs share, as the rule files wire them (arithmetic/jobs.py, vision/jobs.py,
submasking/jobs.py build on it): a step's settings as one deterministic JSON string, paths expanded over a
grid, where benchmark records go, a family's summary tables and figures. Torch-free: the Snakefile imports it.

A job's settings string is its rule's `params`: Snakemake reruns a job whose params change, so every builder
here and in the families' modules returns exactly the string a finished job was given, and leaves out what
changes no number of that job (a sweep list, a pack size, another segmenter's settings).
"""

from __future__ import annotations

import json
from itertools import product

# Benchmark records (JSON lines) of the jobs a cluster would run, which results/resources.md compares with
# what the jobs asked for (workflow/rules/resources.smk).
BENCH_DIR = "results/benchmarks"


def as_json(settings) -> str:
    """Settings for a step, as a deterministic JSON string (params changes trigger reruns)."""
    return json.dumps(settings, sort_keys=True)


def expand(pattern: str, **grid) -> list[str]:
    """`pattern` formatted over the product of the grid's lists, the first keyword varying slowest (Snakemake's
    expand, for patterns whose every field the grid names)."""
    names = list(grid)
    return [pattern.format(**dict(zip(names, values))) for values in product(*(grid[name] for name in names))]


class FamilyJobs:
    """What every family's jobs class has: its summary tables and figures, under its results folder."""

    DIR = ""
    TABLES: list[str] = []
    FIGURES: list[str] = []  # each as a PNG and a PDF

    @classmethod
    def tables(cls) -> list[str]:
        return expand(f"{cls.DIR}/summary/{{table}}", table=cls.TABLES)

    @classmethod
    def figures(cls) -> list[str]:
        return expand(f"{cls.DIR}/figures/{{figure}}.{{ext}}", figure=cls.FIGURES, ext=["png", "pdf"])
