"""The pages read a record's tables as data, never its Markdown (issue 80, item 7): the pipeline writes each quoted
page's tables beside it (page_tables.py), a record made before gets them once through the upgrade, with provenance."""

import ast
import shutil
import string
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import REPO
from subtask_induction.page_tables import PageTables, long_form, read_tables, tables_path
from subtask_induction.pages import run_records, table_upgrade

DATA = REPO / "docs" / "data"
PAGES_DIR = REPO / "workflow" / "subtask_induction" / "pages"


def test_no_page_parses_a_records_markdown():
    """markdown_tables is gone, and no page module but the upgrade calls the parser that reads pipe tables."""
    assert not hasattr(run_records, "markdown_tables")
    callers = []
    for path in sorted(PAGES_DIR.rglob("*.py")):
        if path.name == "table_upgrade.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "pipe_tables", "markdown_tables", "pack_estimate"):
                callers.append(f"{path.name}:{node.lineno}")
    assert callers == []


def stored_pages():
    return [(name, page) for name in run_records.record_names(DATA) for page in table_upgrade.PAGES
            if (DATA / name / page).exists()]


def test_every_stored_pages_tables_are_the_tables_its_markdown_shows():
    """Every page a record holds that the pages quote has its tables as data, and they are the very cells of the page
    (made by the pipeline or by the upgrade): a page quoting them shows what the record's page shows."""
    checked = 0
    for name, page in stored_pages():
        record = run_records.load(name, DATA)
        ours = record.tables(page)
        shown = table_upgrade.pipe_tables(record.text(page))
        assert [heading for heading, _ in ours] == [heading for heading, _ in shown], (name, page)
        for (_, frame), (_, expected) in zip(ours, shown):
            assert frame.columns.tolist() == expected.columns.tolist(), (name, page)
            assert frame.astype(str).values.tolist() == expected.astype(str).values.tolist(), (name, page)
        checked += 1
    assert checked >= 30


def test_the_upgrade_makes_the_stored_tables_again_names_them_and_then_does_nothing(tmp_path):
    data = tmp_path / "data"
    for name in ("default", "gpu_check"):
        shutil.copytree(DATA / name, data / name)
    stored = {path.relative_to(data): path.read_bytes() for name in ("default", "gpu_check")
              for path in (data / name).rglob("*.csv") if path.name.endswith((".tables.csv", "pack_estimate.csv"))}
    assert len(stored) == 5
    for path in stored:
        (data / path).unlink()
    for name in ("default", "gpu_check"):
        run_yaml = data / name / "run.yaml"
        provenance = yaml.safe_load(run_yaml.read_text())
        provenance.pop("upgrades")
        run_yaml.write_text(yaml.safe_dump(provenance, sort_keys=False))
    with pytest.raises(run_records.RecordError, match="no table1.tables.csv beside vision/table1.md.*table_upgrade"):
        run_records.load("default", data).tables("vision/table1.md")   # never its Markdown instead
    done = table_upgrade.upgrade(data, commit="abc1234")
    assert done == ["default: arithmetic/chains.tables.csv, arithmetic/paper_comparison.tables.csv, "
                    "vision/comparisons.tables.csv, vision/table1.tables.csv", "gpu_check: pack_estimate.csv"]
    assert {path: (data / path).read_bytes() for path in stored} == stored
    upgrades = yaml.safe_load((data / "default" / "run.yaml").read_text())["upgrades"]
    assert upgrades[-1]["made"] == sorted(str(p.relative_to("default")) for p in stored if p.parts[0] == "default")
    assert upgrades[-1]["commit"] == "abc1234" and upgrades[-1]["by"] == table_upgrade.BY
    assert table_upgrade.upgrade(data) == []
    estimate = run_records.load("gpu_check", data).csv("pack_estimate.csv")
    assert estimate.set_index("run").loc["pack of 128", "device-hours"] == 7 and estimate["points"].iloc[0] == 14790


def test_the_smoke_run_writes_each_quoted_pages_tables_beside_it(smoke_run):
    for page in table_upgrade.PAGES:
        family, name = page.split("/")
        path = smoke_run / "results" / family / "summary" / name
        tables = read_tables(tables_path(path))
        shown = table_upgrade.pipe_tables(path.read_text())
        assert len(tables) == len(shown) >= 1, page
        for (heading, frame), (expected_heading, expected) in zip(tables, shown):
            assert heading == expected_heading and frame.columns.tolist() == expected.columns.tolist(), page
            assert frame.values.tolist() == expected.astype(str).values.tolist(), page


CELL = st.text(alphabet=string.ascii_letters + string.digits + " .,±−+*%[]()→", max_size=12).map(str.strip)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=string.ascii_letters + " ", max_size=10).map(str.strip),
                          st.integers(1, 4), st.integers(0, 4), st.data()), min_size=1, max_size=3))
def test_a_page_of_tables_round_trips_through_its_csv(spec):
    """What a builder renders is what the CSV gives back: headings, column names, every cell (empty ones too)."""
    kept, lines = PageTables(), []
    for heading, columns, rows, data in spec:
        names = [f"c{i}" for i in range(columns)]
        frame = pd.DataFrame([[data.draw(CELL) for _ in names] for _ in range(rows)], columns=names)
        lines += [f"### {heading}", ""] + kept.render(heading, frame) + [""]
    with tempfile.TemporaryDirectory() as folder:
        path = tables_path(Path(folder) / "x.md")
        path.write_text(long_form(kept.tables).to_csv(index=False))
        back = read_tables(path)
    assert path.name == "x.tables.csv"
    assert [(h, f.columns.tolist(), f.values.tolist()) for h, f in back] == \
           [(h, f.columns.tolist(), f.values.tolist()) for h, f in kept.tables]
    assert [(h, f.values.tolist()) for h, f in table_upgrade.pipe_tables("\n".join(lines))] == \
           [(h, f.values.tolist()) for h, f in kept.tables]
