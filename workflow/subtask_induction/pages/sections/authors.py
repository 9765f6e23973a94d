"""## SI as the authors' code ran it (issue 88; the record `vision_authors`, its plan in docs/decisions.md, "SI as the
authors' code ran it"): Table 1 judged like for like. Its equality check against the decisive record, `si_authors`'
verdict beside our paper-text SI's on each Table 1 row with the plan's reading of each disagreement (the protocol's or
the world's), its share of the subnetwork's pooled accuracy, and the README's sentence, all read from the records."""

from __future__ import annotations

from dataclasses import dataclass

from ...rounding import fixed, percent
from .. import claims as claims_module
from ..page import provenance_line
from ..run_records import RunRecord
from .causes import equality
from .premises import kept_share, theirs

# The rows the record reruns of the decisive record's: its bases, subnetworks and every Table 1 transfer
RERUN = ("base", "subnetwork", "si", "scratch", "finetune", "mixture")
ANCHOR = "docs/results.md#si-as-the-authors-code-ran-it-make-vision-authors"

# The plan's reading of a Table 1 row (docs/decisions.md)
PROTOCOL, WORLD, OPEN, NONE = "the protocol's", "the world's", "not decided by these runs", "no disagreement"


def pointing(claim, paper: float | None) -> str | None:
    """What a one-size claim's verdict makes of the paper's number (first_screen.agreement: on Table 1's differences,
    all positive and larger than S, a holds points the paper's way, a reversed or no effect against it)."""
    from ..first_screen import agreement   # the first screen reads this module

    return agreement(claim.evidence.judge()[""], paper) if claim is not None else None


def reading(si: str | None, authors: str | None) -> str:
    """The plan's reading of one Table 1 row: a disagreement (SI against the paper) is the protocol's where
    `si_authors` agrees with the paper, the world's where it is against the paper too."""
    from ..first_screen import AGAINST, AGREES

    if si != AGAINST:
        return NONE
    return {AGREES: PROTOCOL, AGAINST: WORLD}.get(authors, OPEN)


def authors_id(si_id: str) -> str:
    """The like-for-like claim of a Table 1 claim of SI: the same comparison with si_authors in SI's place."""
    family, comparison, *rest = si_id.split("/")
    first, second = comparison.split("-", 1)
    return "/".join([family, claims_module.claim_id(family, claims_module.SI_AUTHORS, second).split("/")[1], *rest])


@dataclass(frozen=True)
class Row:
    si: object          # our paper-text SI's claim (the decisive record's)
    authors: object     # si_authors' claim of the same comparison, or None where its record is not stored
    words: str          # the Table 1 row in the README's words
    paper: float | None

    @property
    def reading(self) -> str:
        return reading(pointing(self.si, self.paper), pointing(self.authors, self.paper))


def rows(found: list) -> list[Row]:
    """Each Table 1 headline (first_screen.VISION, in its order) with our SI's and si_authors' claims."""
    from ..first_screen import VISION, paper_difference   # the first screen reads this module

    by_id = claims_module.first_by_id(found)
    out = []
    for claim_id, _, against in VISION:
        if claim_id in by_id:
            si = by_id[claim_id]
            out.append(Row(si, by_id.get(authors_id(claim_id)), against, paper_difference(si, "")[1]))
    return out


def share(record: RunRecord) -> tuple[float, float]:
    """si_authors' and SI's share of the subnetwork's pooled accuracy (means over the record's chains)."""
    mean = record.csv("vision/chains.csv").groupby("model")["pooled_accuracy"].mean()
    return mean[claims_module.SI_AUTHORS] / mean["subnetwork"], mean["si"] / mean["subnetwork"]


def _said(claim) -> str:
    if claim is None:
        return "—"
    judged = claim.evidence.judge()[""]
    return f"{judged.summary()}: {claim.holds.replace('**', '')}"


def section(record: RunRecord, decisive: RunRecord | None, found: list) -> list[str]:
    ours, si_share = share(record)
    lines = ["## SI as the authors' code ran it (`make vision-authors`)", "", provenance_line(record), "",
             record.provenance["title"] + ".", "",
             "`si_authors` starts as the authors' code starts its ResNet transfer: the base loaded whole, its BatchNorm "
             "(evaluation mode) and classifier head kept and frozen, the subnetwork's weights at the base's values and "
             "the only weights that train, the weights under the mask's zeros drawn again uniform in ±1/√fan_in and "
             "frozen; data, optimizer, epochs and selection are our `si`'s (config/si_authors.yaml). The plan, fixed "
             "before the first job: docs/decisions.md, \"SI as the authors' code ran it\".", ""]
    if decisive is not None:
        lines += [f"**The same chains as `{decisive.name}`**: the rows both records ran,", ""]
        lines += [f"- {line}" for line in equality(record, decisive, RERUN)] + [""]
    lines += ["Each Table 1 row: SI's difference in points (95% interval) and the rule's verdict, for our SI as the "
              "paper's text describes it (`si`, the decisive record) and for SI as the authors' code ran it "
              "(`si_authors`, this record); a disagreement with the paper is the protocol's where `si_authors` points "
              "the paper's way, the world's where it points against the paper too.", "",
              "| SI against | the paper | `si` (the paper's text) | `si_authors` (the authors' code) | the disagreement |",
              "|---|---|---|---|---|"]
    for row in rows(found):
        paper = "—" if row.paper is None else f"{fixed(row.paper, 1, sign=True)}"
        lines.append(f"| {row.words} | {paper} | {_said(row.si)} | {_said(row.authors)} | {row.reading} |")
    said = sentence(record, found, link=False)
    versus = next((c for c in found if c.id == claims_module.claim_id("vision", claims_module.SI_AUTHORS, "si",
                                                                        "pooled_accuracy")), None)
    lines += ["", f"`si_authors` against `si` on pooled images: {_said(versus)}. `si_authors` keeps {percent(ours, 0)} of the "
              f"subnetwork's pooled accuracy, `si` {percent(si_share, 0)}, the paper's SI {percent(kept_share(theirs()), 0)} (means "
              "over chains; not judged).", "", said[:1].upper() + said[1:], ""]
    return lines


def sentence(record: RunRecord, found: list, link: bool = True, anchor: str = ANCHOR) -> str:
    """The README's sentence, by the plan's reading: which of our SI's disagreements with the paper are the protocol's
    and which the world's."""
    table = rows(found)
    ours, _ = share(record)
    chains = record.csv("vision/chains.csv")["chain"].nunique()
    where = f" ([like for like]({anchor}))" if link else ""
    by = {}
    for row in table:
        if row.reading != NONE:
            by.setdefault(row.reading, []).append(row.words)
    lead = (f"judged like for like, SI as the authors' code ran it (`si_authors`, {chains} chains; it keeps "
            f"{percent(ours, 0)} of the subnetwork's pooled accuracy)")
    if not by:
        return f"{lead} leaves no disagreement to read{where}."
    parts = [f"{kind} against {' and '.join(words)}" for kind, words in
             ((kind, by[kind]) for kind in (PROTOCOL, WORLD, OPEN) if kind in by)]
    return f"{lead}: the disagreements are " + "; ".join(parts) + f"{where}."
