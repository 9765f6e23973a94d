"""Chain validity (issue 79): a base that did not learn its task is named by the workflow when it finishes, and by the
pages with every verdict that differs without it."""

from pathlib import Path

import pandas as pd

from subtask_induction import validity

REPO = Path(__file__).resolve().parents[1]


def test_the_report_names_a_failed_base_with_its_accuracy(tmp_path):
    summary = tmp_path / "arithmetic" / "summary"
    summary.mkdir(parents=True)
    pd.DataFrame({"chain": [0, 1, 2], "base": "a+ab", "layers": 2, "eval_accuracy": [1.0, 0.414, 0.95],
                  "test_accuracy": [0.99, 0.406, 0.95], "best_epoch": 10}).to_csv(summary / "base.csv", index=False)
    vision = tmp_path / "vision" / "summary"
    vision.mkdir(parents=True)
    pd.DataFrame({"model": ["base", "base", "si"], "chain": [0, 1, 0],
                  "original_accuracy": [0.95, 0.7, 0.2]}).to_csv(vision / "chains.csv", index=False)
    lines = validity.report(tmp_path)
    assert len(lines) == 2
    assert lines[0].startswith("arithmetic chain 1:") and "base eval accuracy 41.4 %, under 90 %" in lines[0]
    assert lines[1].startswith("vision chain 1:") and "accuracy on the original test images 70.0 %, under 80 %" in lines[1]


def test_no_line_where_every_base_learned_or_nothing_ran(tmp_path):
    assert validity.report(tmp_path) == []
    summary = tmp_path / "arithmetic" / "summary"
    summary.mkdir(parents=True)
    pd.DataFrame({"chain": [0], "eval_accuracy": [0.9]}).to_csv(summary / "base.csv", index=False)
    assert validity.report(tmp_path) == []   # at the threshold counts


def test_the_workflow_reports_when_it_finishes():
    text = (REPO / "Snakefile").read_text()
    block = text.split("onsuccess:", 1)[1].split("\nrule ", 1)[0]
    assert "validity.report" in block and "failed base" in block


def test_the_pages_name_chain_24_with_its_accuracy_and_what_differs_without_it():
    results = (REPO / "docs" / "results.md").read_text()
    assert "- `decisive`, arithmetic chain 24: base eval accuracy 41.4 %; without it:" in results
    readme = (REPO / "README.md").read_text()
    assert "arithmetic chain 24 (base eval accuracy 41.4 %)" in readme
