"""The README's first screen (issue 83): the main finding in a few plain sentences, one table row per headline of the
paper (the paper's number beside ours, as a mean difference in points with its interval and chains, and the rule's
verdict), and the figure of the chains those verdicts rest on. Every number is read from the records (through the
claims and their evidence) or from the paper's numbers the package ships; nothing is typed.

The headlines are the paper's: arithmetic's three comparisons (SI against the count-matched random mask, random
initialisation and fine-tuning the whole base), vision's Table 1 claims, and submasking's one; the rivals and our
added controls are named in one line with a link."""

from __future__ import annotations

import re
from pathlib import Path


from ..rounding import fixed
from ..arithmetic.paper import authors_curves
from ..claims import AT_FLOOR, HOLDS, NO_EFFECT, REVERSED, TOO_FEW, UNDECIDED
from ..vision import paper as vision_paper
from .claims import ARITHMETIC_CLAIMS, SUBMASKING_CLAIMS, VISION_CLAIMS, claim_id, first_by_id
from .sections import authors, confirmatory

# The headlines, in the order the first screen shows them: (claim id, the claim in plain words, what SI is set against)
ARITHMETIC = [(claim_id("arithmetic", first, second), words, against) for first, second, words, against in (
    ("si", "sampled", "SI beats as many random weights frozen (the count-matched random mask, `sampled`)",
     "the count-matched random mask"),
    ("si", "random", "SI beats a fresh network (random initialisation)", "random initialisation"),
    ("si", "full", "SI beats fine-tuning the whole trained network (`full`)", "fine-tuning the whole trained network"))]
VISION = [(claim_id("vision", *comparison.split(" vs "), metric), words, against)
          for comparison, metric, words, against in (
    ("si vs base", "pooled_accuracy", "SI beats the trained network with a new classifier, on pooled images",
     "the trained network with a new classifier on pooled images"),
    ("si vs finetune", "pooled_accuracy", "SI beats the mixture as the authors' code ran it, on pooled images",
     "the mixture as the authors' code ran it on pooled images"),
    ("si vs scratch", "original_accuracy", "SI beats training from scratch, on the original images",
     "training from scratch on the original images"),
    ("si vs finetune", "cue_shape_accuracy", "SI beats that mixture on cue-conflict shape accuracy",
     "that mixture on cue-conflict shape accuracy"),
    ("si vs finetune", "cue_robustness", "SI beats that mixture on cue-conflict robustness",
     "that mixture on cue-conflict robustness"))]
SUBMASKING = [(claim_id("submasking", "fs", "lp"), "A mask over the frozen network beats a linear probe (submasking)",
               "a linear probe")]
HEADLINES = ARITHMETIC + VISION + SUBMASKING
# the paper's Fig 6 curve of each arithmetic rival (authors_curves' kinds); depth 2, as the default's GPT-2
AUTHORS_RIVAL = {"arithmetic/si-sampled": "sampled", "arithmetic/si-random": "random", "arithmetic/si-full": "full"}
AUTHORS_DEPTH = 2
assert {i for i, *_ in ARITHMETIC} <= {claim_id("arithmetic", f, s) for f, s, _ in ARITHMETIC_CLAIMS}
assert {i for i, *_ in VISION} <= {claim_id("vision", *q[0].split(" vs "), q[1]) for q in VISION_CLAIMS}
assert {i for i, *_ in SUBMASKING} <= {claim_id("submasking", "fs", r) for r, _ in SUBMASKING_CLAIMS}


def headline_claims(found: list, against: bool = False) -> list:
    """[(claim, plain words)] of the headlines, each as the pages judge it (the decisive record's where it is whole);
    with `against`, [(claim, what SI is set against)]."""
    by_id = first_by_id(found)
    return [(by_id[i], rival if against else words) for i, words, rival in HEADLINES if i in by_id]


def paper_difference(claim, where: str) -> tuple[str, float | None]:
    """(what the paper's number is, SI's difference in points) where the paper gives one, else ("—", None)."""
    if claim.id in AUTHORS_RIVAL:
        curves = authors_curves()
        n = int(where.removeprefix("n = "))
        at = curves[(curves["depth"] == AUTHORS_DEPTH) & (curves["n"] == n)]
        si, rival = (at[at["kind"] == kind]["test_accuracy"] for kind in ("subnetwork", AUTHORS_RIVAL[claim.id]))
        if si.empty or rival.empty:
            return "—", None
        what = "the authors' Fig 6" + ("; their control froze all but k weights (N−k), ours k" if AUTHORS_RIVAL[claim.id] == "sampled" else "")
        return what, 100 * (float(si.iloc[0]) - float(rival.iloc[0]))
    if claim.family == "vision":
        first, second, metric = claim.id.split("/")[1].split("-") + [claim.id.split("/")[2]]
        names = {"base": "linear", "finetune": "mixture"}
        ours, theirs = (vision_paper.value(names.get(m, m), metric) for m in (first, second))
        if ours is None or theirs is None:
            return "—", None
        return "Table 1", ours - theirs
    return "—", None


def said(judgement) -> str:
    """The rule's words, short: `holds, by more than 3 points`, `undecided`, `at floor`."""
    if judgement.verdict == UNDECIDED:
        return "undecided"
    return judgement.said()


def rows(found: list, records: dict) -> list[dict]:
    """One entry per headline and size: the claim (its first size only), the paper's number, ours, the verdict; a
    vision row also carries the same comparison for SI as the authors' code ran it (`like`: its claim, or None where
    the record `vision_authors` is not stored) and the plan's reading of the row (authors.reading)."""
    like = {row.si.id: row for row in authors.rows(found)}
    out = []
    for claim, words in headline_claims(found):
        judged = claim.evidence.judge()
        for i, (where, j) in enumerate(judged.items()):
            what, theirs = paper_difference(claim, where)
            unit = "backbones" if claim.family == "submasking" else "chains"
            row = like.get(claim.id)
            out.append({"claim": claim, "words": words if i == 0 else "", "where": where, "paper": what,
                        "theirs": theirs, "mean": j.mean, "low": j.low, "high": j.high, "chains": len(j.chains),
                        "unit": unit, "verdict": said(j), "judgement": j,
                        "like": row.authors if row is not None else None,
                        "reading": row.reading if row is not None and row.authors is not None else None})
    return out


def table(found: list, records: dict) -> str:
    """The first screen's table: a row per headline and size, every cell under 300 characters; where the record of SI
    as the authors' code ran it is stored, a column gives it on each vision row (like for like); where the
    confirmatory record decides the rows, a last column marks whether the exploratory record's verdict of each is the
    same (exploratory_cell)."""
    table_rows = rows(found, records)
    like = any(row["like"] is not None for row in table_rows)
    earlier = first_by_id(confirmatory.exploratory(found))
    planned = any(row["claim"].record == confirmatory.CONFIRMATORY for row in table_rows)
    lines = ["| the paper's claim | size | the paper: SI's difference | ours: SI's difference, points (95% interval; "
             "chains) | [verdict](docs/glossary.md#verdict-rule) |"
             + (" vision: SI as the authors' code ran it (`si_authors`), the same |" if like else "")
             + (" [exploratory](docs/glossary.md#confirmatory) verdict: = same, ≠ not |" if planned else ""),
             "|---|---|---|---|---|" + ("---|" if like else "") + ("---|" if planned else "")]
    for row in table_rows:
        theirs = f"{fixed(row['theirs'], 1, sign=True)} ({row['paper']})" if row["theirs"] is not None else "—"
        ours = f"{row['judgement'].summary()}; {row['chains']} {row['unit']}"
        # the generated world's caveat stands once, for every vision row, in the finding
        cells = f"| {row['words']} | {row['where'] or '—'} | {theirs} | {ours} | {verdict_cell(row['judgement'], row['theirs'])} |"
        if like:   # the SI that produced the paper's number, judged on the same comparison
            cells += f" {like_cell(row)} |"
        if planned:
            cells += f" {exploratory_cell(row, earlier)} |"
        lines.append(cells)
    return "\n".join(lines)


def exploratory_cell(row: dict, earlier: dict) -> str:
    """Whether the exploratory record's verdict of the row is the confirmatory record's: `=` the same, `**≠**` it
    differs (named with both numbers under the table), — none; a vision row gives SI, then SI as the authors' code ran
    it (`= / =`). The numbers stand in the line under the table and on the results page: the row keeps under 300
    characters."""
    if row["claim"].record != confirmatory.CONFIRMATORY:
        return "— (its own record)"
    marks = []
    for claim in (row["claim"], row["like"]):
        if claim is None:
            continue
        pair = confirmatory.Pair(claim, earlier.get(claim.id), row["where"])
        marks.append("—" if pair.judged()[1] is None else "**≠**" if pair.differs else "=")
    return " / ".join(marks) or "—"


def _points(values: list[tuple[str, float]]) -> str:
    return " and ".join(f"{where} ({fixed(mean, 1, sign=True)} points)" if where else f"({fixed(mean, 1, sign=True)} points)" for where, mean in values)


VERBS = {HOLDS: "holds", REVERSED: "is reversed", NO_EFFECT: "shows no effect larger than S", UNDECIDED: "is undecided",
         AT_FLOOR: "is at floor", TOO_FEW: "has too few chains"}


def phrase(claim, against: str) -> str:
    """A claim's verdicts in a few words, its sizes in the table's order (neighbouring sizes of one verdict together):
    `against X, SI is undecided at n = 0 (-0.4 points), holds at n = 250 (+12.5 points) and n = 750 (+7.0 points)`."""
    judged = claim.evidence.judge()
    runs: list[tuple[str, list]] = []
    for where, j in judged.items():
        if runs and runs[-1][0] == j.verdict:
            runs[-1][1].append((where, j.mean))
        else:
            runs.append((j.verdict, [(where, j.mean)]))
    if len(runs) == 1 and len(judged) > 1:
        verdict, at = runs[0]
        return (f"against {against}, SI {VERBS.get(verdict, verdict)} at every size ("
                + ", ".join(fixed(mean, 1, sign=True) for _, mean in at) + " points)")
    parts = [f"{VERBS.get(verdict, verdict)} {'at ' if at[0][0] else ''}{_points(at)}" for verdict, at in runs]
    return f"against {against}, SI " + ", ".join(parts)


def finding(found: list, records: dict, premise_sentence: str = "") -> str:
    """The main finding in plain sentences, a line per claim (each under 300 characters), one paragraph a family."""
    headlines = headline_claims(found, against=True)
    lines = []
    if any(claim.record == confirmatory.CONFIRMATORY for claim, _ in headlines):
        lines += bullet(pack([confirmatory.WHAT, f"([the record]({confirmatory.ANCHOR}))."]))
    for family in ("arithmetic", "vision"):
        claims = [(c, a) for c, a in headlines if c.family == family]
        if not claims:
            continue
        chains = max(len(j.chains) for c, _ in claims for j in c.evidence.judge().values())
        record = claims[0][0].record
        lead = (f"**Arithmetic** ({chains} independent chains, the `{record}` record): "
                if family == "arithmetic" else f"**Vision** ({chains} chains"
                + (f", the `{record}` record" if record == confirmatory.CONFIRMATORY else "")
                + "; every vision row is of a generated shape/texture world, whose pooled "
                  "images keep only each region's mean colour: shape without texture): ")
        phrases = [(lead if i == 0 else "") + phrase(claim, against) + ("." if i == len(claims) - 1 else ";")
                   for i, (claim, against) in enumerate(claims)]
        if family == "vision" and premise_sentence:   # its sentences' clauses packed with the rest, under the width
            phrases += [clause for line in premise_sentence.splitlines() for clause in re.split(r"(?<=[:;]) ", line)]
        block = pack(phrases)
        lines += bullet(block)
    found_rows = [like_for_like(row) for row in rows(found, records) if row["theirs"] is not None]
    if found_rows:
        like = any(row["like"] is not None for row in found_rows)
        words = [agreement(row["judgement"], row["theirs"]) for row in found_rows]
        points = sum((row["theirs"] > 0) == (row["mean"] > 0) for row in found_rows)
        inside = sum(row["low"] <= row["theirs"] <= row["high"] for row in found_rows)
        lines += bullet(pack([f"**Against the paper** (its {len(found_rows)} numbers"
                              + ("; vision's judged like for like, SI as the authors' code ran it" if like else "")
                              + f"): SI's difference points its way in {points};",
                              f"our verdict agrees with {words.count(AGREES)}, is against {words.count(AGAINST)},",
                              f"decides nothing at {words.count(OPEN)};",
                              f"{inside} of its numbers lie inside our 95% intervals (each row of the table says "
                              "which)."]))
    return "\n".join(lines).strip()


AGREES, AGAINST, OPEN = "agrees with the paper", "against the paper", "undecided"


def agreement(judgement, theirs: float | None) -> str | None:
    """Whether our verdict agrees with the paper's number at that size, read with S: a holds (reversed) agrees with a
    positive (negative) number of at least S, or of less than S where ours "may be under S"; no effect larger than S
    agrees with a number within ±S; any other decided verdict is against it; undecided, too few chains or at floor
    decide nothing. None where the paper gives no number."""
    if theirs is None:
        return None
    smallest = judgement.smallest
    if judgement.verdict in (HOLDS, REVERSED):
        sign = 1 if judgement.verdict == HOLDS else -1
        return AGREES if sign * theirs > 0 and (abs(theirs) >= smallest or not judgement.beyond) else AGAINST
    if judgement.verdict == NO_EFFECT:
        return AGREES if abs(theirs) < smallest else AGAINST
    return OPEN


def verdict_cell(judgement, theirs: float | None) -> str:
    """`**reversed, may be under 3 points**; agrees with the paper` (what the verdict says of the paper's number)."""
    said_of = agreement(judgement, theirs)
    return f"**{said(judgement)}**" + (f"; {said_of}" if said_of in (AGREES, AGAINST) else "")


def like_cell(row: dict) -> str:
    """`-8.9 [-13.1, -4.8]; **reversed, by more than 3 points** (our `si`'s disagreement: the world's)`, or — where the
    row has no like-for-like claim."""
    if row["like"] is None:
        return "—"
    j = row["like"].evidence.judge()[""]
    reading = "" if row["reading"] in (None, authors.NONE) else f" (`si`'s disagreement: {row['reading']})"
    return f"{j.summary()}; {verdict_cell(j, row['theirs'])}{reading}"


def like_for_like(row: dict) -> dict:
    """A row as the paper's number is compared like for like: a vision row by SI as the authors' code ran it, where its
    record is stored (its claim is the row's `like`); any other row as it is."""
    if row["like"] is None:
        return row
    j = row["like"].evidence.judge()[""]
    return {**row, "mean": j.mean, "low": j.low, "high": j.high, "chains": len(j.chains), "verdict": said(j),
            "judgement": j}


def bullet(lines: list[str]) -> list[str]:
    """Lines as one Markdown list item: a family's sentences stay a block of their own without a blank line."""
    return [("- " if i == 0 else "  ") + line for i, line in enumerate(lines)]


def pack(items: list[str], width: int = 285) -> list[str]:
    """Phrases joined into as few lines as keep each under `width` characters (one Markdown paragraph)."""
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) + 1 > width:
            lines.append(line)
            line = ""
        line = f"{line} {item}".strip()
    return lines + ([line] if line else [])


def _lower(words: str) -> str:
    return words[:1].lower() + words[1:] if not words.startswith("SI") else words


RIVAL_TICKS = {"base": "new head", "finetune": "mixture\nas run", "scratch": "scratch"}
METRIC_TICKS = {"pooled_accuracy": "pooled", "original_accuracy": "original", "cue_shape_accuracy": "cue shape",
                "cue_robustness": "robust."}


def draw(found: list, path: Path | None = None, records: dict | None = None):
    """The chains the headline verdicts rest on: a panel per arithmetic headline (its sizes across) and one for vision's
    Table 1 claims; a dot per chain, the mean with its 95% interval, the paper's difference as a cross where it gives
    one. Each size's dots are a collection whose gid names the claim and size, drawn left to right in its chains' order,
and the paper's cross one whose gid adds `|paper` (the tests read them back, chain by chain)."""
    import matplotlib.pyplot as plt

    from .figures import _save   # matplotlib on Agg, PNG written atomically
    from .sections import validity
    from .sections.validity import base_family, chain_number

    records = records or {}

    headlines = [(c, w) for c, w in headline_claims(found) if c.family in ("arithmetic", "vision")]
    failed: dict[str, set] = {}   # family -> the chains whose base failed, in the records drawn (orange dots)
    for record in {c.record: records.get(c.record) for c, _ in headlines}.values():
        for family, chain, _ in validity.failed(record) if record is not None else []:
            failed.setdefault(family, set()).add(str(chain))
    panels = [[(c, w)] for c, w in headlines if c.family == "arithmetic"] + [[(c, w) for c, w in headlines
                                                                              if c.family == "vision"]]
    panels = [panel for panel in panels if panel]
    fig, axes = plt.subplots(1, len(panels), figsize=(9.0, 3.4), squeeze=False,
                             gridspec_kw={"width_ratios": [len(p[0][0].evidence.differences) if len(p) == 1 else
                                                           len(p) for p in panels]})
    for ax, panel in zip(axes[0], panels):
        ticks = []
        for claim, words in panel:
            for where, j in claim.evidence.judge().items():
                x = len(ticks)
                rival = claim.id.split("/")[1].split("-")[1]
                ticks.append(where.replace("n = ", "n=") if claim.family == "arithmetic"
                             else RIVAL_TICKS.get(rival, rival) + "\n" + METRIC_TICKS[claim.id.split("/")[2]])
                spread = [x - 0.18 + 0.36 * i / max(1, len(j.means) - 1) for i in range(len(j.means))]
                bad = failed.get(base_family(claim), set())
                colours = ["tab:orange" if chain_number(chain) in bad else "tab:blue" for chain in j.chains]
                dots = ax.scatter(spread, j.means, s=9, c=colours, alpha=0.7, linewidths=0)
                dots.set_gid(f"{claim.id}|{where}")
                ax.errorbar([x + 0.3], [j.mean], yerr=[[j.mean - j.low], [j.high - j.mean]], fmt="s", color="black",
                            markersize=4, capsize=3)
                _, theirs = paper_difference(claim, where)
                if theirs is not None:
                    cross = ax.scatter([x + 0.3], [theirs], marker="x", s=40, color="tab:red", zorder=5)
                    cross.set_gid(f"{claim.id}|{where}|paper")
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(ticks)), ticks, fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        title = ("SI − " + panel[0][0].id.split("/")[1].split("-")[1] if panel[0][0].family == "arithmetic"
                 else "vision: SI − each rival")
        ax.set_title(f"{title} ({len(panel[0][0].evidence.judge()[next(iter(panel[0][0].evidence.differences))].chains)}"
                     " chains)", fontsize=8)
    axes[0][0].set_ylabel("SI's difference (points)", fontsize=8)
    fig.text(0.01, 0.01, "dots: one chain each (orange: its base did not learn its task); black: mean with 95% "
                         "interval; red ×: the paper's difference (arithmetic: the authors' Fig 6 at 2 layers; vision: "
                         "Table 1)", fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig if path is None else _save(fig, path)
