"""A summary page's tables as data. The pipeline writes each page whose tables the pages quote (chains.md's verdicts,
comparisons.md, Table 1, paper_comparison.md) from cells it keeps: `PageTables` collects every table a builder
renders (the heading it sits under, its columns, its rows as written), the step writes the Markdown and, beside it,
`<page>.tables.csv`, and the pages read that CSV (`RunRecord.tables`), never the Markdown. One renderer
(`pipe_table`) draws a table on both sides, so a page quoting a record's rows shows what the record's page shows.
Torch-free."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

# The long form of a page's tables: one row per cell (its table's position on the page, the heading above it, its row,
# its column's position and name, the cell as written)
COLUMNS = ["table", "heading", "row", "column", "name", "cell"]


def pipe_table(frame: pd.DataFrame) -> list[str]:
    """A table's Markdown lines: the header, the separator, one line per row (each cell as written)."""
    # a header cell without a name is drawn "| |", as the pipeline's pages always drew it
    header = "|" + "|".join(f" {name} " if str(name) else " " for name in frame.columns) + "|"
    return ([header, "|" + "---|" * len(frame.columns)]
            + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in frame.itertuples(index=False)])


class PageTables:
    """The tables of one page as a builder renders them: `render(heading, frame)` returns the table's Markdown lines
    and keeps its cells under `heading` (the page's heading above it)."""

    def __init__(self):
        self.tables: list[tuple[str, pd.DataFrame]] = []

    def render(self, heading: str, frame: pd.DataFrame) -> list[str]:
        frame = frame.astype(str).reset_index(drop=True)
        self.tables.append((heading, frame))
        return pipe_table(frame)

    def long(self) -> pd.DataFrame:
        return long_form(self.tables)


def long_form(tables: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """(heading, frame) tables as one frame of cells (COLUMNS)."""
    cells = []
    for index, (heading, frame) in enumerate(tables):
        # row -1 names the columns, so a table without rows keeps its header
        cells += [(index, heading, -1, column, name, "") for column, name in enumerate(frame.columns)]
        cells += [(index, heading, row, column, name, str(cell))
                  for row, values in enumerate(frame.itertuples(index=False))
                  for column, (name, cell) in enumerate(zip(frame.columns, values))]
    return pd.DataFrame(cells, columns=COLUMNS)


def from_long(cells: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The (heading, frame) tables of a page's cells, in page order, each cell a string as written."""
    tables = []
    for _, table in cells.groupby("table", sort=True):
        names = table[table["row"] == -1].sort_values("column")["name"].tolist()
        rows = table[table["row"] >= 0].pivot(index="row", columns="column", values="cell").sort_index()
        frame = pd.DataFrame(rows.to_numpy(), columns=names) if len(rows) else pd.DataFrame(columns=names)
        tables.append((str(table["heading"].iloc[0]), frame))
    return tables


def tables_path(page: str | Path) -> Path:
    """Where a page's tables are written beside it: chains.md -> chains.tables.csv."""
    page = Path(page)
    return page.with_name(f"{page.stem}.tables.csv")


def read_tables(path: str | Path) -> list[tuple[str, pd.DataFrame]]:
    """A page's tables from its .tables.csv (every cell a string, an empty one ""), in page order."""
    return from_long(pd.read_csv(path, dtype=str, keep_default_na=False).astype({"table": int, "row": int,
                                                                                    "column": int}))
