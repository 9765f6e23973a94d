"""Chain validity on the pages (docs/decisions.md, "The rule's precedence, as data"): each stored record's chains whose base did not
learn its task, with the base's accuracy and every verdict of the record that differs without that chain."""

from __future__ import annotations

import re

from ...claims import Evidence, chain_of, judge
from ...roster import read as read_roster
from ...validity import BASE_VALID, READS, base_accuracy, did_not_learn, failed_bases
from ..run_records import RunRecord


def base_family(claim) -> str:
    """Which family's bases a claim's chains stand on: the cross-domain ViT carries the arithmetic GPT-2's subnetwork;
    submasking's backbones are the vision chains' bases."""
    return "arithmetic" if claim.id.startswith(("arithmetic/", "cross-domain/")) else "vision"


def chain_number(run) -> str:
    """`24/0` -> `24`; a submasking backbone `world_base16/4` -> `16` (the vision chain whose base it is)."""
    found = re.search(r"(\d+)$", chain_of(run))
    return found.group(1) if found else chain_of(run)


def failed(record: RunRecord) -> list[tuple]:
    """[(family, chain, accuracy)] of the record's failed bases."""
    base = record.csv("arithmetic/base.csv") if record.has("arithmetic/base.csv") else None
    chains = record.csv("vision/chains.csv") if record.has("vision/chains.csv") else None
    return failed_bases(base, chains)


def without(evidence: Evidence, chains: set[str]) -> dict:
    """The claim judged again without the runs of `chains` (every size)."""
    keep = {where: [run for run in evidence.runs.get(where, list(d.index)) if chain_number(run) not in chains]
            for where, d in evidence.differences.items()}
    differences = {where: d[[chain_number(run) not in chains for run in d.index]]
                   for where, d in evidence.differences.items()}
    return judge(differences, keep, smallest=evidence.smallest, headroom=evidence.headroom, beside=False)


def changed(records: dict[str, RunRecord], found: list) -> list[dict]:
    """One entry per failed base of a record that judges claims: its family, chain, accuracy, and the verdicts of the
    record's claims on that family's chains that differ without it ([(claim, where, with, without)])."""
    out = []
    for name, record in records.items():
        claims = [claim for claim in found if claim.record == name and claim.evidence is not None]
        if not claims:
            continue
        for family, chain, accuracy in failed(record):
            differs = []
            for claim in claims:
                if base_family(claim) != family:
                    continue
                judged, again = claim.evidence.judge(), without(claim.evidence, {str(chain)})
                for where, j in judged.items():
                    if where in again and (again[where].verdict, again[where].beyond) != (j.verdict, j.beyond):
                        differs.append((claim, where, j.said(), again[where].said()))
            out.append({"record": name, "family": family, "chain": chain, "accuracy": accuracy, "differs": differs})
    return out


def lines(entries: list[dict], short) -> list[str]:
    """The results page's section (`short`: a claim's few words)."""
    if not entries:
        return []
    out = ["## Chain validity: bases that did not learn their task", "",
           f"A chain counts where its base learned its own task: {READS['arithmetic']} at least "
           f"{100 * BASE_VALID['arithmetic']:g} % (arithmetic) or {READS['vision']} at least "
           f"{100 * BASE_VALID['vision']:g} % (vision) "
           "([decisions](decisions.md)). A record keeps the chains its plan fixed before its first job, so its "
           "verdicts count a failed chain; each is named here with every verdict that differs without it.", ""]
    for entry in entries:
        head = (f"- `{entry['record']}`, {entry['family']} chain {entry['chain']}: "
                f"{base_accuracy(entry['family'], entry['accuracy'])}")
        if not entry["differs"]:
            out.append(head + "; no verdict differs without it.")
            continue
        out.append(head + "; without it:")
        out += [f"  - {short(claim)}{' (' + where + ')' if where else ''}: {was} → {now}"
                for claim, where, was, now in entry["differs"]]
    return out + [""]


def replaced(records: dict[str, RunRecord]) -> list[dict]:
    """One entry per planned chain a record's roster (roster.py, its plan's spare chains) found failed: the record, the
    family, the chain, its base's accuracy and the spare in its place (None: no spare was left, and it counts)."""
    out = []
    for name, record in records.items():
        for family in ("arithmetic", "vision"):
            if record.has(f"{family}/roster.csv"):
                roster = read_roster(record.path(f"{family}/roster.csv"), family)
                out += [{"record": name, "family": family, "chain": chain, "accuracy": accuracy, "by": by}
                        for chain, accuracy, by in roster.replacements()]
    return out


def roster_lines(entries: list[dict]) -> list[str]:
    """The results page's section on spare chains: each planned chain whose base failed and what took its place."""
    if not entries:
        return []
    out = ["## Spare chains: planned chains replaced before any transfer", "",
           "A plan with spare chains trains every planned and spare base first; a planned chain whose base fails the "
           "validity criterion above runs none of its discoveries or transfers, and the next spare whose base passes "
           "takes its place (its tables hold the spare's runs; `roster.csv` of the record lists every chain).", ""]
    for entry in entries:
        head = (f"- `{entry['record']}`, {entry['family']} chain {entry['chain']}: "
                f"{did_not_learn(entry['family'], entry['accuracy'])}")
        out.append(head + (f"; spare chain {entry['by']} runs in its place." if entry["by"] is not None
                           else "; no spare was left, so it keeps its place and counts."))
    return out + [""]
