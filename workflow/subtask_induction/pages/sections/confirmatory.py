"""## The confirmatory record (issue 93; its plan: docs/decisions.md, "The confirmatory record: the plan"): each
headline claim it decides beside the claim the pages answered with before it (the exploratory one: `decisive`'s, or
`vision_authors`' for SI as the authors' code ran it), size by size, with every row where the two verdicts differ
named with both numbers. The README's first screen reads the same pairs (first_screen)."""

from __future__ import annotations

from dataclasses import dataclass

from ..claims import first_by_id
from ..page import CONFIRMATORY, provenance_line
from ..run_records import RunRecord
from .provenance import plan_text

# The first screen's one line on what the record is
WHAT = ("*Confirmatory*: rule, claims and chain counts fixed before its first job, on new chains, judged once; "
        "`decisive` and `vision_authors`, judged after being read, are *exploratory*")


ANCHOR = "docs/results.md#the-confirmatory-record-the-headlines-decided-once-make-confirmatory"


def exploratory(found: list) -> list:
    """`found` without the confirmatory record's claims: what the other records' sections read, as before it."""
    return [claim for claim in found if claim.record != CONFIRMATORY]


@dataclass(frozen=True)
class Pair:
    confirmed: object     # the confirmatory record's claim
    earlier: object       # the exploratory claim of the same id (None where no other record judges it)
    where: str            # the size ("" for a one-size claim)

    def judged(self) -> tuple:
        """(the confirmatory judgement, the exploratory one or None) at this size."""
        mine = self.confirmed.evidence.judge()[self.where]
        if self.earlier is None or self.earlier.evidence is None:
            return mine, None
        return mine, self.earlier.evidence.judge().get(self.where)

    @property
    def differs(self) -> bool:
        mine, theirs = self.judged()
        return theirs is not None and mine.verdict != theirs.verdict


def pairs(found: list) -> list[Pair]:
    """Every size of every confirmatory claim among `found`, in its order, with the exploratory claim of its id."""
    earlier = first_by_id(exploratory(found))
    return [Pair(claim, earlier.get(claim.id), where) for claim in found
            if claim.record == CONFIRMATORY and claim.evidence is not None for where in claim.evidence.differences]


def both(pair: Pair) -> str:
    """`+2.1 [+0.9, +3.3] (holds, may be under 3 points), `decisive` -0.4 [-3.4, +2.7] (undecided at 24 chains)`:
    the confirmatory judgement, then the exploratory one (the README's line under its table names the order)."""
    mine, theirs = pair.judged()
    return f"{mine.summary()} ({mine.said()}), `{pair.earlier.record}` {theirs.summary()} ({theirs.said()})"


def section(record: RunRecord, found: list, short) -> list[str]:
    """`short(claim)`: a claim in a few words (the README's)."""
    rows = pairs(found)
    plan = record.provenance.get("plan")
    lines = ["## The confirmatory record: the headlines decided once (`make confirmatory`)", "", provenance_line(record),
             "", WHAT + ".", "",
             "Its plan: " + (plan_text(plan) if plan else "**none stored**: the record reads as exploratory") + ". "
             "The plan (docs/decisions.md, \"The confirmatory record: the plan\") fixed the rule (version 2), the 13 "
             "claims, the chains and their spares, their number from a power analysis (`benchmarks/power.py`) and the "
             "cost before the first job.", ""]
    if record.provenance.get("note"):
        lines += [f"What it cost, beside the plan's estimate: {record.provenance['note']}", ""]
    lines += ["Each size of each claim: SI's difference in points (95% interval) and the rule's verdict, on this "
              "record and on the exploratory record the pages read before it.", "",
              "| claim | size | `confirmatory` | the exploratory record | the same verdict? |", "|---|---|---|---|---|"]
    for pair in rows:
        mine, theirs = pair.judged()
        before = "—" if theirs is None else f"`{pair.earlier.record}`: {theirs.summary()}; {theirs.said()}"
        same = "—" if theirs is None else ("**differs**" if pair.differs else "the same")
        lines.append(f"| {short(pair.confirmed)} | {pair.where or '—'} | {mine.summary()}; {mine.said()} "
                     f"({len(mine.chains)} chains) | {before} | {same} |")
    differ = [pair for pair in rows if pair.differs]
    lines += ["", (f"{len(differ)} of {len(rows)} verdicts differ from the exploratory record's." if differ else
                   f"Every one of the {len(rows)} verdicts is the exploratory record's."), ""]
    return lines
