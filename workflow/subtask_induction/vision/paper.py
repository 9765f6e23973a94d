"""The paper's vision numbers (Tables 1-2 and the text, arXiv 2310.10899), shipped as data: vision/data/paper_numbers.csv
with the source of each. The pages set them beside ours; nothing types them twice."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

NUMBERS = Path(__file__).parent / "data" / "paper_numbers.csv"
CITATION = "Zhang, Lepori, Pavlick, arXiv 2310.10899"


@functools.lru_cache(maxsize=1)
def numbers() -> pd.DataFrame:
    return pd.read_csv(NUMBERS)


def value(model: str, metric: str, quantity: str | None = None) -> float | None:
    """The paper's number for `model` and `metric` (percent, or as its unit says), or None where it gives none."""
    table = numbers()
    rows = table[(table["model"] == model) & (table["metric"] == metric)]
    if quantity is not None:
        rows = rows[rows["quantity"] == quantity]
    return float(rows["value"].iloc[0]) if len(rows) else None
