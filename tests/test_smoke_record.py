"""Refactoring keeps every number: the smoke run against the record of the same run made before a change
(tests/record.py says how to make a new record when a change is meant to change numbers)."""

import json

from conftest import REPO
from legacy_record import legacy_differences
from record import differences, run_record


def test_the_smoke_run_gives_the_stored_records_numbers(smoke_run):
    expected = json.loads((REPO / "tests/data/smoke_record.json").read_text())
    actual = run_record(smoke_run)
    assert len(expected) > 80  # every table and every point's metrics, not an empty record
    assert differences(expected, actual) == []


def test_the_record_sees_a_changed_number(smoke_run):
    record = run_record(smoke_run)
    name = next(name for name in record if name.endswith("metrics.json") and "/transfer/" in name)
    changed = json.loads(json.dumps(record))
    changed[name]["metrics"]["eval"]["test_accuracy"] += 0.5 ** 20
    assert [line.split(":")[0] for line in differences(record, changed)] == ["differs"]


def test_the_stored_record_holds_the_numbers_of_the_record_made_before_the_vocabulary_redesign():
    """Issue 40 renamed (a transfer seed is a replicate) and added each point's identity; in 0.4.0's words
    (tests/legacy_record.py) today's stored record says exactly what the 0.4.0 record said, every number."""
    before = json.loads((REPO / "tests/data/smoke_record_0.4.0.json").read_text())
    now = json.loads((REPO / "tests/data/smoke_record.json").read_text())
    assert legacy_differences(before, now) == []
    # and the comparison sees a number that moved
    name = next(name for name in now if name.endswith("transfer.csv"))
    moved = json.loads(json.dumps(now))
    moved[name][0]["test_accuracy"] = str(float(moved[name][0]["test_accuracy"]) + 0.001)
    assert [line.split(":")[0] for line in legacy_differences(before, moved)] == ["differs"]
