"""Refactoring keeps every number: the smoke run against the record of the same run made before a change
(tests/record.py says how to make a new record when a change is meant to change numbers).

The kernel pins (AVX2) give the same numbers on AMD's AVX2 and AVX-512 machines, not on Intel's: an Intel Xeon
(AVX-512) computes 29 train losses that differ in the 7th digit and one k-NN accuracy of the submasking faces task
(one test item). So the record is kept per CPU vendor (`smoke_record.json`: AMD, as made; `smoke_record_<vendor>.json`
otherwise), each checked to the last digit, and a test states how far the two are apart."""

import json
import math

import pytest

from conftest import REPO
from legacy_record import legacy_differences
from record import differences, rule_version, run_record

RECORDS = {"AuthenticAMD": "smoke_record.json", "GenuineIntel": "smoke_record_GenuineIntel.json"}


def cpu_vendor() -> str:
    with open("/proc/cpuinfo") as handle:
        return next((line.split(":")[1].strip() for line in handle if line.startswith("vendor_id")), "unknown")


def test_the_smoke_run_gives_the_stored_records_numbers(smoke_run):
    if cpu_vendor() not in RECORDS:
        pytest.skip(f"no smoke record for CPU vendor {cpu_vendor()!r}: make one (tests/record.py) and add it")
    expected = json.loads((REPO / "tests/data" / RECORDS[cpu_vendor()]).read_text())
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


def _leaves(value, where=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{where}[{index}]")
    else:
        yield where, value


def test_the_two_vendors_records_differ_only_in_float_noise_and_one_knn_item():
    """What the per-vendor records say about the pins: every table cell and number equal, but train losses within
    1e-6 relative and the k-NN accuracy of one submasking point (and the k-NN table and page that average it)."""
    amd, intel = (json.loads((REPO / "tests/data" / name).read_text()) for name in RECORDS.values())
    assert set(amd) == set(intel)
    moved = []
    for name in amd:
        if name.endswith(".md") and rule_version(amd[name]) != rule_version(intel[name]):
            continue   # a verdict page of another rule version: its words, not its numbers, differ
        for (where, a), (_, b) in zip(_leaves(amd[name]), _leaves(intel[name]), strict=True):
            if a == b:
                continue
            try:
                close = math.isclose(float(a), float(b), rel_tol=1e-6)
            except (TypeError, ValueError):
                close = False
            if not (close and "train_loss" in where):
                moved.append(f"{name}{where}")
    assert moved and all("submasking" in m and ("knn" in m or "tables.md" in m) for m in moved), moved
