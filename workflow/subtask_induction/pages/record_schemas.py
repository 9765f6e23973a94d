"""What each table of a run record must hold (pandera schemas): its key columns (never empty, one row per key),
the numbers a page or claim reads (never NaN), and the columns that may be empty by design (a random init has no
mask fraction; one chain has no spread). Checked when a record is stored and whenever the pages load one, on the
table as the pages read it (old words upgraded), so a hole in a record is an error naming the table and the row,
never a blank cell or a verdict computed from fewer runs than it names."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pandera.pandas as pa


@dataclass(frozen=True)
class TableSpec:
    keys: tuple          # identify a row: present, never empty, unique together
    numbers: tuple       # read by the pages: present, numeric, never NaN
    optional: tuple = ()  # present; may be NaN by design

    def schema(self, name: str) -> pa.DataFrameSchema:
        columns = {key: pa.Column(nullable=False) for key in self.keys}
        columns |= {column: pa.Column(float, nullable=False, coerce=True) for column in self.numbers}
        columns |= {column: pa.Column(nullable=True) for column in self.optional}
        return pa.DataFrameSchema(columns, unique=list(self.keys) or None, name=name, strict=False)


_POINT = ("base", "subtask", "target", "layers", "chain", "variant", "n", "replicate")
_SUBMASKING = ("backbone", "task", "adaptation", "fraction")
_OVERLAP = ("jaccard", "chance", "ratio")
TABLES = {
    "arithmetic/transfer.csv": TableSpec(_POINT + ("protocol",), ("test_accuracy", "eval_accuracy", "epoch"),
                                         ("mask_fraction", "top_k", "discovery_rows", "subtask_rows")),
    "arithmetic/chains.csv": TableSpec(("base", "subtask", "target", "layers", "variant", "n", "chain"),
                                       ("test_accuracy",)),
    "arithmetic/base.csv": TableSpec(("chain", "base", "layers"), ("test_accuracy", "eval_accuracy")),
    # with spare chains (roster.py): every planned and spare chain, its base's accuracy, whether it counts and where
    "arithmetic/roster.csv": TableSpec(("chain",), ("base_accuracy",), ("role", "valid", "counts", "place")),
    "vision/roster.csv": TableSpec(("chain",), ("base_accuracy",), ("role", "valid", "counts", "place")),
    "arithmetic/table3.csv": TableSpec(("base", "subtask", "layers", "chain"), ("kept_percent", "test_accuracy")),
    "arithmetic/discovery.csv": TableSpec(("chain", "base", "subtask", "layers", "l0_weight"),
                                          ("kept_fraction", "test_accuracy", "eval_accuracy")),
    "arithmetic/discovery_curves.csv": TableSpec(("chain", "base", "subtask", "layers", "l0_weight", "epoch"),
                                                 ("eval_accuracy", "kept_fraction")),
    "arithmetic/overlap.csv": TableSpec(("base", "subtask", "layers", "run", "other"), _OVERLAP),
    "arithmetic/budget.csv": TableSpec(("chain", "base", "subtask", "layers", "rows", "variant"),
                                       ("kept", "test_accuracy", "jaccard_vs_every_row", "chance_vs_every_row"),
                                       ("si_test_accuracy", "sampled_test_accuracy")),
    "vision/chains.csv": TableSpec(("model", "chain"), ("original_accuracy", "pooled_accuracy", "shape_bias",
                                                        "cue_shape_accuracy", "cue_robustness")),
    "vision/table1.csv": TableSpec(("model",), ("original_accuracy", "pooled_accuracy", "shape_bias",
                                                "cue_shape_accuracy", "pooled_accuracy_count"),
                                   ("original_accuracy_std", "pooled_accuracy_std", "shape_bias_std")),
    "vision/table2.csv": TableSpec(("init",), ("kept_percent", "subnetwork_pooled_accuracy"), ("kept_percent_std",)),
    "vision/per_class.csv": TableSpec(("model", "chain", "category"), ("original_accuracy", "pooled_accuracy")),
    "vision/curves.csv": TableSpec(("model", "chain", "epoch"), ("eval_accuracy",)),
    "vision/discovery_curves.csv": TableSpec(("chain", "init", "l0_weight", "epoch"),
                                             ("eval_pooled_accuracy", "kept_fraction")),
    "vision/diagnostics.csv": TableSpec(("check", "model"), ("pooled_accuracy",), ("original_accuracy",)),
    # a page's tables as data (page_tables.py): one row per cell
    **{f"{page}.tables.csv": TableSpec(("table", "row", "column"), (), ("heading", "name", "cell"))
       for page in ("arithmetic/chains", "arithmetic/paper_comparison", "vision/table1", "vision/comparisons")},
    "submasking/points.csv": TableSpec(_SUBMASKING + ("replicate",), ("test_accuracy",), ("off_fraction",)),
    "submasking/accuracy.csv": TableSpec(_SUBMASKING, ("mean", "replicates"), ("std",)),
    "submasking/knn.csv": TableSpec(_SUBMASKING, ("mean", "replicates"), ("std",)),
    "submasking/sparsity.csv": TableSpec(_SUBMASKING, ("mean", "replicates"), ("std",)),
    "submasking/sparsity_per_layer.csv": TableSpec(_SUBMASKING + ("tensor",), ("off_fraction",)),
    "submasking/mask_similarity.csv": TableSpec(_SUBMASKING + ("replicate", "other"), _OVERLAP),
    "submasking/mask_stability.csv": TableSpec(_SUBMASKING + ("replicate", "other_replicate"), _OVERLAP),
}


class RecordError(ValueError):
    """A run record that a page must not read: what is wrong, naming the record, the table and the rows."""


def check_table(record: str, table: str, frame: pd.DataFrame) -> None:
    """Refuse a table that breaks its schema; the message names the record, the table and each failing row."""
    spec = TABLES.get(table)
    if spec is None:
        raise RecordError(f"run record {record}: {table} has no schema (pages/record_schemas.py TABLES)")
    try:
        spec.schema(table).validate(frame.reset_index(drop=True), lazy=True)
    except pa.errors.SchemaErrors as errors:
        raise RecordError(f"run record {record}: {table} breaks its schema:\n" + _problems(errors.failure_cases, spec)) \
            from None


def _problems(cases: pd.DataFrame, spec: TableSpec, most: int = 12) -> str:
    """pandera's failure cases as lines a reader acts on: a missing column, a column's empty rows, repeated keys
    (CSV line numbers: the header is line 1)."""
    lines = []
    for case in cases[cases["check"].astype(str) == "column_in_dataframe"].itertuples():
        lines.append(f"  the column {case.failure_case} is missing")
    for column, rows in cases[cases["check"].astype(str) == "not_nullable"].groupby("column", sort=False):
        lines.append(f"  {column} is empty (NaN) at line {_lines(rows['index'], most)}")
    repeated = cases[cases["check"].astype(str).str.contains("uniqueness")]
    if len(repeated):
        lines.append(f"  lines {_lines(repeated['index'], most)} repeat a key ({', '.join(spec.keys)})")
    other = cases[~cases["check"].astype(str).isin(["column_in_dataframe", "not_nullable"])
                  & ~cases["check"].astype(str).str.contains("uniqueness")]
    for case in other.head(most).itertuples():
        lines.append(f"  {case.column}: {case.check} fails on {case.failure_case!r}"
                     + ("" if pd.isna(case.index) else f" at line {int(case.index) + 2}"))
    return "\n".join(lines)


def _lines(index: pd.Series, most: int) -> str:
    rows = sorted({int(i) + 2 for i in index.dropna()})
    return ", ".join(map(str, rows[:most])) + (f" and {len(rows) - most} more" if len(rows) > most else "")
