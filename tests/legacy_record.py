"""The smoke record in 0.4.0's words: what a record (tests/record.py) says once the names issue 40 changed are
put back, so that the redesign can be shown to change no number (tests/test_smoke_record.py).

0.5.0 adds an `identity` block to every metrics.json (each point's, each base's and discovery's), drops a
point's top-level `seed` / `variant` and the `config` keys that repeated its identity, calls the vision settings'
chain `chain` (0.4.0: `seed`), calls a transfer seed a replicate (columns `replicate`, `replicates`, `other_replicate`,
`si_replicates`; arithmetic's replicate is the configured seed, no longer 100 chain + seed) and rewords the
Markdown tables. Since issue 58 an arithmetic transfer's curve holds what selection reads, not the test metrics of
every epoch (they are scored at the selected epochs only): the old curves lose them too. In the old words, the Markdown tables are compared by the numbers they print, in order.

    python tests/legacy_record.py tests/data/smoke_record_0.4.0.json tests/data/smoke_record.json
"""

from __future__ import annotations

import json
import re
import sys

from record import differences
from subtask_induction.upgrade import renamed_keys, renamed_path

GONE_TOP = {"seed", "variant"}  # now in `identity`
GONE_CONFIG = {"variant_name", "n_disambiguation", "seed", "chain", "method", "adaptation", "fraction"}  # repeated the identity
RENAMED_COLUMNS = {"seed": "replicate", "seeds": "replicates", "other_seed": "other_replicate",
                   "si_seeds": "si_replicates"}


# Issue 64 judged each comparison by the verdict rule: its pages gained a "mean over chains" cell and another verdict
# text, and list a comparison's sizes together. Their comparisons are compared by the per-run differences alone.
RULED_PAGES = {"arithmetic/summary/chains.md", "vision/summary/comparisons.md"}


def ruled_rows(lines: list[str], side: str) -> list[str]:
    """A comparisons page's table rows (its prose and verdicts out; the new side's "mean over chains" cell out), the
    comparison rows sorted, so only the per-run differences and the per-chain accuracies are compared."""
    kept, compared = [], []
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = line.strip("|").split("|")
        if " vs " in line and "verdict" not in line:
            cells = cells[:-1] if side == "old" else cells[:-2]
            compared.append("|".join(cells))
        elif "verdict" not in line and not set(line) <= set("|-"):
            kept.append(line)
    return kept + sorted(compared)


def in_old_words(name: str, value, side: str):
    """One record entry with the names that changed between 0.4.0 (side "old") and today (side "new") aligned."""
    if name.endswith("metrics.json"):
        value = {key: item for key, item in value.items() if key != "identity"}
        if side == "new" and name.startswith("vision/") and isinstance(value.get("config"), dict):
            value["config"] = {("seed" if key == "chain" else key): item for key, item in value["config"].items()}
    if side == "old" and name.startswith("arithmetic/") and name.endswith("metrics.json") and "/transfer/" in name:
        value = {**value, "curve": [{key: item for key, item in epoch.items() if not key.startswith("test_")}
                                    for epoch in value.get("curve", [])]}
    if name.endswith("metrics.json") and ("/transfer/" in name or name.startswith("submasking/points")):
        value = {key: item for key, item in value.items() if key not in GONE_TOP}
        if isinstance(value.get("config"), dict):
            value["config"] = {key: item for key, item in value["config"].items() if key not in GONE_CONFIG}
    if isinstance(value, list) and value and isinstance(value[0], dict):  # a CSV
        rows = []
        for row in value:
            if side == "old":
                row = {RENAMED_COLUMNS.get(key, key): item for key, item in row.items()}
                if "replicate" in row and name.startswith("arithmetic"):
                    row["replicate"] = str(int(row["replicate"]) % 100)
            rows.append(row)
        value = rows
    if name in RULED_PAGES and isinstance(value, list):
        value = ruled_rows(value, side)
    if name.startswith("arithmetic/summary/overlap.") and side == "new":   # issue 64 added every chain's subnetwork
        value = [row for row in value if "chain " not in str(row)]
    if isinstance(value, list) and value and isinstance(value[0], str):  # Markdown: the numbers, in order
        text = "\n".join(value)
        if side == "old":  # a run label chain/seed, 1/100, is chain/replicate, 1/0, now
            text = re.sub(r"\b(\d+)/(\d{3,})\b", lambda match: f"{match[1]}/{int(match[2]) % 100}", text)
        value = re.findall(r"-?\d+(?:\.\d+)?", text)
    return value



def half_rounded(old: str, new: str) -> bool:
    """Whether two printed numbers are one value's decimal half, rounded by 0.4.0 and by today: the package now prints
    through rounding.fixed (an exact decimal half away from zero), 0.4.0's format spec rounded the binary float, so a
    half printed one unit of its last digit nearer zero then (6.25: 6.2, now 6.3)."""
    if old == new or "." not in old or len(old.split(".")[1]) != len(new.split(".")[1] if "." in new else ""):
        return old == new
    unit = 10 ** -len(old.split(".")[1])
    return abs(abs(float(new)) - abs(float(old)) - unit) < unit / 100 and (float(new) >= 0) == (float(old) >= 0)


def legacy_differences(old: dict, new: dict, limit: int = 40) -> list[str]:
    """0.5.0 also names a point's folder `replicate{r}` (upgrade.RENAMED_PATHS) and a transfer's `method` its
    kind, a submasking point's its adaptation (upgrade.RENAMED_RECORD_KEYS): the old record's paths and keys, renamed.
    A Markdown page's number that is a half rounded by today's rule (half_rounded) counts as the same number."""
    before = {renamed_path(k): in_old_words(k, renamed_keys(json.loads(renamed_path(json.dumps(v)))), "old")
              for k, v in old.items()}
    after = {k: in_old_words(k, v, "new") for k, v in new.items()}
    for name, numbers in before.items():
        printed = after.get(name)
        if (name.endswith(".md") and isinstance(numbers, list) and isinstance(printed, list)
                and len(numbers) == len(printed) and all(isinstance(x, str) for x in numbers + printed)):
            before[name] = [b if half_rounded(a, b) else a for a, b in zip(numbers, printed)]
    return differences(before, after, limit)


if __name__ == "__main__":
    found = legacy_differences(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
    print(f"differences in 0.4.0's words: {len(found)}")
    print("\n".join(found))
