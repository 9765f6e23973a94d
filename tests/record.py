"""The numbers of a finished run, as a record to compare runs by: every summary table (CSV and Markdown) and
every metrics.json, without what may differ between two runs of the same code and config on any machine
(wall-clock times, fingerprints of code and inputs, the machine's provenance).

tests/data/smoke_record.json is this record of the smoke run (tests/smoke_config.yaml, its kernels pinned to
AVX2 so that AMD's AVX2 and AVX-512 machines compute the same numbers) made on an AMD CPU;
smoke_record_GenuineIntel.json the same run on an Intel CPU, where the pins do not give AMD's last digits
(tests/test_smoke_record.py). A change meant to change numbers makes new ones from a finished smoke run on each
vendor, and says why in its commit:

    python tests/record.py RUN_DIR > tests/data/smoke_record.json   # or smoke_record_GenuineIntel.json
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path

# Keys (at any depth of a metrics.json) and CSV columns that differ between two runs of the same code.
VOLATILE = re.compile(r"seconds|fingerprint|provenance|^time$|wall")


def _stable(value):
    if isinstance(value, dict):
        return {key: _stable(item) for key, item in sorted(value.items()) if not VOLATILE.search(key)}
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value


def _csv(text: str) -> list[dict]:
    return [{key: value for key, value in row.items() if not VOLATILE.search(key or "")}
            for row in csv.DictReader(io.StringIO(text))]


def run_record(run: Path) -> dict[str, object]:
    """{path relative to results/: its stable content} for the run's summary tables and metrics.json files."""
    results = Path(run) / "results"
    record = {}
    for path in sorted(results.rglob("*")):
        name = str(path.relative_to(results))
        if name.startswith("benchmarks/") or name.startswith("resources"):
            continue
        if path.name == "metrics.json":
            record[name] = _stable(json.loads(path.read_text()))
        elif path.name.endswith(".tables.csv"):
            continue   # its page's cells, as data: the page beside it is compared (test_page_tables checks they agree)
        elif "/summary/" in f"/{name}" and path.suffix == ".csv":
            record[name] = _csv(path.read_text())
        elif "/summary/" in f"/{name}" and path.suffix == ".md":
            record[name] = path.read_text().splitlines()  # no summary table states a wall time
    return record


RULE_VERSION = re.compile(r"rule version (\d+)")


def rule_version(page) -> int:
    """The verdict rule's version a summary page was written under (1: before pages carried it)."""
    found = RULE_VERSION.search("\n".join(page) if isinstance(page, list) else str(page))
    return int(found.group(1)) if found else 1


def differences(expected: dict, actual: dict, limit: int = 20) -> list[str]:
    """Human-readable differences between two records (at most `limit`). A summary page whose verdicts an older rule
    version wrote is not compared with today's (its words changed with the rule, docs/decisions.md, "The rule's
    precedence, as data"); its numbers are, in the CSVs and metrics.json beside it."""
    out = [f"missing: {name}" for name in sorted(set(expected) - set(actual))]
    out += [f"not in the record: {name}" for name in sorted(set(actual) - set(expected))]
    for name in sorted(set(expected) & set(actual)):
        if name.endswith(".md") and rule_version(expected[name]) != rule_version(actual[name]):
            continue
        if expected[name] != actual[name]:
            out.append(f"differs: {name}: {_first_difference(expected[name], actual[name])}")
    return out[:limit]


def _first_difference(a, b, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return _first_difference(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items, now {len(b)}"
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{index}]")
    return f"{where}: {str(a)[:200]!r} -> {str(b)[:200]!r}"


if __name__ == "__main__":
    json.dump(run_record(Path(sys.argv[1])), sys.stdout, sort_keys=True, separators=(",", ":"))
    sys.stdout.write("\n")
