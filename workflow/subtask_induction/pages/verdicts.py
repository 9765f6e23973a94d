"""docs/verdicts/: every rule-judged claim's verdict at every size, per record, as data (`make docs` writes them).

A record's CSVs never change; what the rule makes of them does when the rule changes. Each verdict file carries the
digest of the rule that wrote it (claims.rule_digest: its constants and its verdicts on a fixed set of claims), one
row per (claim id, size): the verdict and its words, the mean
over chains with its 95% interval, the direction's p before and after Holm, the equivalence test's Holm p and its
90% interval, the verdict the exact sign-flip equivalence would give where it differs, how large a holds is against
S, the floor's headroom, the chains whose absence changes the verdict (fragile), and the share of the record's
8-chain subsets that reach the same verdict (a decided verdict only). The share is costly (up to 2,500 judgements of
a claim), so it is computed once per claim's evidence and rule and read back from these files by that digest: no render
pays it twice, and no rule's share is served under another.

`python -m subtask_induction.pages.verdicts --changes OLD_FOLDER` lists the verdicts that differ between the files of
an older rule version (OLD_FOLDER, e.g. one `git show` wrote) and today's, keyed by claim id and size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path

import pandas as pd

from ..claims import SHARED_VERDICTS, Judgement, rule_digest, subset_share
from .page import REPO

FOLDER = REPO / "docs" / "verdicts"
SMALLER = 8   # the chains of the default's records: the subsets a share is read over
COLUMNS = ["claim_id", "where", "verdict", "said", "chains", "mean", "low", "high", "p", "holm_p", "equivalence_holm_p",
           "equivalence_low", "equivalence_high", "exact_equivalence_verdict", "beyond_s", "headroom", "fragile",
           f"share_{SMALLER}", "evidence", "rule", "claim"]

NO_SIZE = "-"   # a claim judged at one size only: its row's `where`
_SHARES: dict[str, dict] = {}   # evidence digest -> {where: share}, from the files and from this process
_LOADED: set[str] = set()       # the folders whose files _SHARES holds


def digest(judged: dict[str, Judgement], smallest, headroom, chains: int = SMALLER) -> str:
    """What a share depends on: the chain means at every size, S, the headroom, the subset size and the rule (its
    digest)."""
    body = {"rule": rule_digest(), "chains": chains, "smallest": smallest,
            "headroom": {str(k): v for k, v in (headroom or {}).items()},
            "sizes": {str(where): [list(map(str, j.chains)), [round(m, 12) for m in j.means]]
                      for where, j in judged.items() if j.complete}}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _load(folder: Path = FOLDER) -> None:
    if str(folder) in _LOADED:
        return
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        table = pd.read_csv(path, dtype={"where": str}, keep_default_na=False)
        if "rule" not in table or f"share_{SMALLER}" not in table:
            continue   # a file of a rule without a digest: its shares are made again
        for row in table.itertuples(index=False):
            if str(row.rule) == rule_digest() and str(getattr(row, f"share_{SMALLER}")) != "":
                where = "" if row.where == NO_SIZE else row.where
                _SHARES.setdefault(row.evidence, {})[where] = float(getattr(row, f"share_{SMALLER}"))
    _LOADED.add(str(folder))


def share(judged: dict[str, Judgement], smallest, headroom, chains: int = SMALLER, key: str | None = None) -> dict:
    """{where: the share of `chains`-chain subsets that reach the same verdict} (claims.subset_share), read from the
    verdict files where this evidence was judged before, else computed once in this process (`key`: its digest,
    where the caller has it)."""
    _load()
    key = key or digest(judged, smallest, headroom, chains)
    if key not in _SHARES:
        _SHARES[key] = subset_share(judged, chains, smallest, headroom)
    return dict(_SHARES[key])


def _number(value: float) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.6g}"


def rows(claim) -> list[dict]:
    """One row per size of a rule-judged claim (none for a mean's or a band's)."""
    if claim.evidence is None:
        return []
    judged = claim.evidence.judge()
    key = digest(judged, claim.evidence.smallest, claim.evidence.headroom)
    shares = share(judged, claim.evidence.smallest, claim.evidence.headroom, key=key)
    out = []
    for where, j in judged.items():
        out.append({"claim_id": claim.id, "where": where or NO_SIZE, "verdict": j.verdict if j.complete else "incomplete",
                    "said": j.said() if j.complete else "incomplete", "chains": len(j.chains),
                    "mean": _number(j.mean), "low": _number(j.low), "high": _number(j.high), "p": _number(j.p),
                    "holm_p": _number(j.adjusted), "equivalence_holm_p": _number(j.equivalence_adjusted),
                    "equivalence_low": _number(j.equivalence[0]), "equivalence_high": _number(j.equivalence[1]),
                    "exact_equivalence_verdict": j.exact_verdict,
                    "beyond_s": "" if j.beyond is None else str(j.beyond).lower(), "headroom": _number(j.headroom),
                    "fragile": "; ".join(f"without chain {chain}: {verdict}" for chain, verdict in j.fragile),
                    f"share_{SMALLER}": _number(shares.get(where) if j.verdict in SHARED_VERDICTS else None),
                    "evidence": key, "rule": rule_digest(),
                    "claim": claim.claim})
    return out


def files(found: list, folder: Path = FOLDER) -> dict[Path, str]:
    """{docs/verdicts/<record>.csv: its text} for every record with a rule-judged claim among `found` (the pages'
    claims, each once: a claim read beside a smaller record is the larger record's)."""
    by_record: dict[str, list] = {}
    for claim in found:
        by_record.setdefault(claim.record, []).extend(rows(claim))
    out = {}
    for record, table in sorted(by_record.items()):
        if table:
            frame = pd.DataFrame(table, columns=COLUMNS).drop_duplicates(["claim_id", "where"])
            out[folder / f"{record}.csv"] = frame.to_csv(index=False, lineterminator="\n")
    return out


def changes(old: Path, new: Path = FOLDER) -> list[str]:
    """The verdicts that differ between two folders of verdict files, keyed by record, claim id and size: one line
    each, `record · claim id · size: old -> new`, where the row of the table differs (a row in only one folder is
    named as added or gone); then one line counting the verdicts whose row stayed and whose words changed (a holds
    that now says how large)."""
    def read(folder: Path) -> pd.DataFrame:
        frames = [pd.read_csv(path, dtype=str, keep_default_na=False).assign(record=path.stem)
                  for path in sorted(folder.glob("*.csv"))]
        return (pd.concat(frames, ignore_index=True) if frames else
                pd.DataFrame(columns=["record", "claim_id", "where", "verdict", "said", "claim"]))

    before, after = read(old), read(new)
    merged = before.merge(after, on=["record", "claim_id", "where"], how="outer", suffixes=("_old", "_new"),
                          indicator=True)
    lines, worded = [], 0
    for _, row in merged.sort_values(["record", "claim_id", "where"]).iterrows():
        name = f"`{row['record']}` · {row['claim_id']} · {row['where']}"
        if row["_merge"] == "left_only":
            lines.append(f"{name}: {row['said_old']} -> gone")
        elif row["_merge"] == "right_only":
            lines.append(f"{name}: added, {row['said_new']}")
        elif row["verdict_old"] != row["verdict_new"]:
            lines.append(f"{name}: {row['said_old']} -> {row['said_new']}")
        elif row["said_old"] != row["said_new"]:
            worded += 1
    if worded:
        lines.append(f"{worded} other verdicts kept their row and changed their words (a holds or reversed now says "
                     "by more than S or may be under S)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=Path, required=True, help="a folder of an older rule version's files")
    args = parser.parse_args(argv)
    for line in changes(args.changes):
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
