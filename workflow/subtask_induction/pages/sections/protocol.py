"""Where the paper's `eval` protocol reads another verdict than the `last` the README reads (issue 79): the same
record's arithmetic claims judged on each protocol's epochs, side by side."""

from __future__ import annotations

from ...claims import NO_EFFECT
from .. import claims as claims_module
from ..run_records import RunRecord

WHY_LAST = ("The README reads `last` (the final epoch): `eval` picks each run's epoch by its accuracy on labelled "
            "a≠b rows of the target task, labels beyond the n it rations, so under `eval` a run of n = 0 has "
            "seen the target's labels through its selection ([protocols](glossary.md#protocols)).")


def differing(record: RunRecord, found: list) -> list[tuple]:
    """[(claim, where, verdict under last, verdict under eval, eval's deciding p)] of the record's arithmetic claims
    (the default's and the rivals', as `found` holds them under `last`), where the two protocols' verdicts differ."""
    questions = (claims_module.ARITHMETIC_CLAIMS + claims_module.BEYOND_ARITHMETIC + claims_module.SIGNS_CLAIMS)
    out = []
    last = [claim for claim in found if claim.record == record.name and claim.family == "arithmetic"]
    chosen = {claim.id.removesuffix("/2 layers/eval"): claim
              for claim in claims_module.arithmetic_default(record, protocol="eval", questions=questions)}
    for claim in last:
        other = chosen.get(claim.id)
        if other is None or claim.evidence is None or other.evidence is None:
            continue
        mine, theirs = claim.evidence.judge(), other.evidence.judge()
        for where, j in mine.items():
            if where in theirs and (j.verdict, j.beyond) != (theirs[where].verdict, theirs[where].beyond):
                other_j = theirs[where]   # the p that decided it: the equivalence test's for no effect
                out.append((claim, where, j.said(), other_j.said(),
                            other_j.equivalence_adjusted if other_j.verdict == NO_EFFECT else other_j.adjusted))
    return out


def lines(record: RunRecord, claims: list) -> list[str]:
    found = differing(record, claims)
    out = [f"## The protocol: `last` against the paper's `eval` (`{record.name}`)", "", WHY_LAST, ""]
    if not found:
        return out + ["Every arithmetic verdict of the record reads the same under both protocols.", ""]
    out += ["Where they differ:", "", "| claim | n | `last` (the README) | `eval` (the paper's) | `eval`'s deciding p (Holm) |",
            "|---|---|---|---|---|"]
    out += [f"| {claim.claim} | {where.removeprefix('n = ')} | {was} | {now} | {p:.3g} |"
            for claim, where, was, now, p in found]
    return out + [""]
