"""How a claim reads: the verdict cell, the reasons beside it, the README's one-line reason and its key, the claims
table and its legend. The claims are gathered from the records' data in claims.py; this module only words them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..rounding import fixed, percent
from ..claims import (AT_FLOOR, HOLDS, INCOMPLETE, LEVEL, NO_EFFECT, NO_EVIDENCE, REVERSED,
                      RULE_VERSION, TOO_FEW, UNDECIDED, VERDICTS, Judgement, interval_text, smallest_effect)
from .. import claims as rule
from .curves import CURVE_BAND

if TYPE_CHECKING:
    from .claims import Claim
    from .run_records import RunRecord


def holds_text(judged: dict[str, Judgement]) -> str:
    """{where: its judgement} (claims.judge over one claim's sizes) -> the claims table's cell: the rule's verdict at
    each size, **holds** in bold, or `incomplete` with the runs that lack a number (never a verdict from fewer runs
    than planned)."""
    if not judged:
        return "**incomplete** (no run of it in the record)"
    incomplete = {where: j.tally for where, j in judged.items() if not j.complete}
    if incomplete:
        present = sum(j.tally.present for j in judged.values())
        named = sum(len(j.tally.runs) for j in judged.values())
        return (f"**incomplete** ({present} of {named} runs; "
                + "; ".join(f"{where + ': ' if where else ''}{t.gaps}" for where, t in incomplete.items()) + ")")
    parts = []
    for verdict in VERDICTS:
        groups: dict[str, list] = {}   # a holds by more than S and one that may be under S are named apart
        for where, j in judged.items():
            if j.verdict == verdict:
                groups.setdefault(j.said() if verdict in (HOLDS, REVERSED) else verdict, []).append(where)
        for wheres in groups.values():
            word = verdict_word(judged[wheres[0]], {len(judged[where].chains) for where in wheres})
            every = len(wheres) == len(judged)
            parts.append(word + ("" if every and len(wheres) == 1 and not wheres[0] else
                                 f" ({', '.join(wheres)})" if every else f" at {', '.join(wheres)}"))
    return "; ".join(parts)


def verdict_word(judgement: Judgement, chains: set[int]) -> str:
    """A verdict as a cell says it: **holds** in bold, S's value for "no effect larger than S", the chains for
    "undecided" (`chains`: the chain counts of the sizes it names)."""
    if judgement.verdict == HOLDS:
        return f"**{HOLDS}**" + judgement.said().removeprefix(HOLDS)
    if judgement.verdict == UNDECIDED and len(chains) > 1:
        return f"undecided at {'/'.join(map(str, sorted(chains)))} chains"
    return judgement.said()


def lean_counts(judged: dict[str, Judgement]) -> tuple:
    """(where, chains higher, chains lower, chains, the equivalence interval) per complete size: how many chains lean
    each way, and where the rule read the equivalence test (no effect larger than S, undecided) its corrected interval
    as (low, high, confidence), else None."""
    return tuple((where, sum(m > 0 for m in j.means), sum(m < 0 for m in j.means), len(j.means),
                  (*j.equivalence, j.equivalence_confidence) if j.read_interval() else None)
                 for where, j in judged.items() if j.complete)


def short_reason(claim: Claim) -> str:
    """A verdict's reason in a few words, for the README's lines: how the chains lean at each size (`n = 250: 8 of 8
    higher`), the 90% interval where it decided the verdict (no effect larger than S) or left it undecided, and,
    where the rule cannot decide, that there are only k of them."""
    if not claim.leans:
        return ""
    word = "backbones" if claim.family == "submasking" else "chains"   # submasking's unit: a chain's base
    parts = []
    for where, higher, lower, k, interval in claim.leans:
        lean = f"{higher} of {k} higher" + (f", {lower} lower" if lower and higher else "")
        if not higher:
            lean = f"{lower} of {k} lower" if lower else f"all {k} tied"
        if interval is not None:
            lean += ", " + interval_text(*interval)
        parts.append(f"{where}: {lean}" if where else lean)
    if all(verdict == TOO_FEW for _, verdict in claim.verdicts):
        sizes = sorted({lean[3] for lean in claim.leans})
        return f"only {'/'.join(map(str, sizes))} {word[:-1] if sizes == [1] else word}; " + "; ".join(parts)
    return f"{word}: " + "; ".join(parts)


def verdict_pairs(judged: dict[str, Judgement]) -> tuple:
    """(where, verdict) per size, as data for the README's verdict lines; "incomplete" where a planned run lacks a
    number."""
    return tuple((where, j.verdict if j.complete else INCOMPLETE) for where, j in judged.items())


DIFFERS = "differs between records"   # holds in one record where the other says reversed, at some size
NOT_REPLICATED = "not the same in both records"   # verdicts that differ without contradicting each other


def replicated(first: Claim, second: Claim | None, names: tuple[str, str]) -> Claim:
    """One claim of the default judged in two records of independent noise (`names`): "…, in both records" where the
    rule's verdicts agree at every size; "differs between records" only where one record says holds and the other
    reversed at the same size (a contradiction: one of them is a false verdict); otherwise "not the same in both
    records" (one decides where the other cannot, as 8 chains of a small effect often do), each record's verdict
    named. Never one record's verdict silently. A size incomplete in either record makes the claim incomplete."""
    if second is None:
        holds = f"{DIFFERS}: `{names[0]}`: {first.holds}; `{names[1]}`: not in the record"
        return replace(first, holds=holds, verdicts=(("", DIFFERS),))
    scale = f"{first.scale}; and `{names[1]}`: {second.scale}"
    numbers = f"{first.numbers}; `{names[1]}`: {second.reasons or second.numbers}"
    if first.verdicts and first.verdicts == second.verdicts:
        return replace(first, holds=f"{first.holds}, in both records", scale=scale, numbers=numbers,
                       second_leans=second.leans)
    both = f"`{names[0]}`: {first.holds}; `{names[1]}`: {second.holds}"
    if not first.verdicts and not second.verdicts:   # a yes / no against a threshold: two answers, one contradicts
        return replace(first, holds=f"{DIFFERS}: {both}", scale=scale, numbers=numbers, verdicts=(("", DIFFERS),))
    mine, theirs = dict(first.verdicts), dict(second.verdicts)
    if INCOMPLETE in {*mine.values(), *theirs.values()}:
        return replace(first, holds=f"**{INCOMPLETE}**: {both}", scale=scale, numbers=numbers,
                       verdicts=(("", INCOMPLETE),))
    contradicted = any({mine[where], theirs.get(where)} == {HOLDS, REVERSED} for where in mine)
    word = DIFFERS if contradicted else NOT_REPLICATED
    return replace(first, holds=f"{word}: {both}", scale=scale, numbers=numbers, verdicts=(("", word),))


def beside_smaller(decided: Claim, smaller: dict[str, Claim | None], exploratory: bool = False) -> Claim:
    """A claim of the decisive record (whole: the pages never read a part of it) with the smaller records of the
    default beside it as smaller replications: each one's verdict, then the share of the decisive record's own
    subsets of that many chains that reach its verdict (claims.subset_share, kept in docs/verdicts/): once per chain
    count, since it is the decisive record's, not the smaller one's; only for a decided verdict (holds, reversed, no
    effect larger than S). Its verdict stays the decisive one's. `exploratory`: the claim is the confirmatory record's
    and the records beside it were judged after they were read (each named so)."""
    from .verdicts import share   # the verdict files read this module's words

    judged = decided.evidence.judge() if decided.evidence else {}
    parts, counts = [], []
    for name, claim in smaller.items():
        if claim is None:
            parts.append(f"`{name}`: not in the record")
            continue
        parts.append(f"`{name}`{' (exploratory)' if exploratory else ''}: {claim.holds.replace('**', '')}")
        chains = max((lean[3] for lean in claim.leans), default=0)   # its chains, as its verdict counted them
        if chains and chains not in counts:
            counts.append(chains)
    for chains in counts:
        shares = share(judged, decided.evidence.smallest, decided.evidence.headroom, chains) if judged else {}
        said = "; ".join(f"{where + ': ' if where else ''}{percent(part, 0)}" for where, part in shares.items())
        if said:
            parts.append(f"the share of this record's {chains}-chain subsets that reach its verdict: {said}")
    beside = "beside it, " + "; ".join(parts) if parts else ""
    return replace(decided, beside=beside, numbers=f"{decided.numbers}; {beside}" if beside else decided.numbers)


def reasons(judged: dict[str, Judgement], unit: str = " points", word: str = "chains") -> str:
    """Why each size reads as it does, in a few words: the mean over chains with its interval and how many chains
    lean each way (`n = 250: +14.3 points [+6.1, +22.5], 7 of 8 chains higher`)."""
    out = []
    for where, j in judged.items():
        if not j.complete:
            continue
        higher = sum(m > 0 for m in j.means)
        lower = sum(m < 0 for m in j.means)
        lean = f"{higher} of {len(j.means)} {word} higher" + (f", {lower} lower" if lower and higher else "")
        if not higher:
            lean = f"{lower} of {len(j.means)} {word} lower" if lower else f"all {len(j.means)} {word} tied"
        within = (f", {interval_text(*j.equivalence, j.equivalence_confidence)} "
                  f"{'inside' if j.verdict == NO_EFFECT else 'past'} ±{j.smallest:g}" if j.read_interval() else "")
        out.append(f"{where + ': ' if where else ''}{j.summary(unit)}, {lean}{within}{caveats(j)}")
    return "; ".join(out)


def caveats(j: Judgement) -> str:
    """What a verdict rests on beyond its numbers: an arm at floor, the exact equivalence test's other verdict, the
    chains whose absence alone would change it (`, fragile: without chain 24, undecided`)."""
    out = ""
    if j.verdict == AT_FLOOR:
        out += f", an arm {fixed(j.headroom, 1, sign=True)} points from chance"
    if j.exact_verdict:
        out += f" (the exact sign-flip equivalence test: {j.exact_verdict})"
    if j.fragile:
        out += ", fragile: " + ", ".join(f"without chain {chain}, {verdict}" for chain, verdict in j.fragile)
    return out


def per_chain_text(judgement: Judgement) -> str:
    """`+43.5, +51.8, +45.7`: each chain's difference (points), for the reader."""
    return ", ".join(f"{fixed(m, 1, sign=True)}" for m in judgement.means) if judgement.complete else "—"


# How each verdict reads in the precedence table ("undecided" names its chains where a claim shows it)
VERDICT_WORDS = {INCOMPLETE: "incomplete", HOLDS: "holds", REVERSED: "reversed", TOO_FEW: "too few chains to decide",
                 AT_FLOOR: "at floor", NO_EFFECT: "no effect larger than S", UNDECIDED: "undecided at k chains",
                 NO_EVIDENCE: "no evidence either way"}


def precedence_table() -> str:
    """The verdict rule's precedence (claims.PRECEDENCE) as a table, with how large a holds is: the one rendering the
    README's key, the results page's legend, the glossary and docs/decisions.md show."""
    lines = ["| order | verdict | when (the first row that applies) |", "|---|---|---|"]
    lines += [f"| {i} | **{VERDICT_WORDS[row.verdict]}** | {row.condition} |"
              for i, row in enumerate(rule.PRECEDENCE, 1)]   # read when rendered: the table is the rule's
    (beyond, when), (under, otherwise) = rule.QUALIFIERS
    return "\n".join(lines) + (
        f"\n\nA holds or reversed also says how large: **{beyond}** when {when}; **{under}** {otherwise}. S, the "
        f"smallest effect that matters: {smallest_effect():g} points of accuracy, {smallest_effect('shape_bias'):g} "
        "of shape bias. A verdict that changes when any one chain is left out is marked **fragile**, naming the "
        f"chain (rule version {RULE_VERSION}).")


def multiplicity(claims: list) -> str:
    """How many of these claims' verdicts could be false if nothing had an effect, and how many are fragile: Holm holds
    each claim's family-wise error at LEVEL over its sizes, not the page's, so about LEVEL per claim."""
    judged = [claim.evidence.judge() for claim in claims if claim.evidence is not None and claim.verdicts]
    sizes = [j for judgement in judged for j in judgement.values() if j.complete]
    fragile = [j for j in sizes if j.fragile]
    return (f"{len(judged)} claims, {len(sizes)} verdicts: the [rule](docs/glossary.md#verdict-rule) corrects within "
            "a claim, not across claims, so if "
            f"nothing had any effect about {fixed(LEVEL * len(judged), 1)} would still read holds or reversed; "
            f"{len(fragile)} of the {len(sizes)} verdicts are fragile (one chain left out changes them).")


def readme_key() -> str:
    """The README's key to its verdicts: the rule's precedence table (the first screen defines the other words)."""
    return precedence_table().replace("| verdict |", "| verdict ([rule](docs/glossary.md#verdict-rule)) |", 1)


def legend(docs: str = "docs/") -> str:
    """The claims' key, for a reader who has not read the paper; `docs` is the docs folder's path from the page that
    shows it."""
    return ("*How to read it.* **SI**: Subtask Induction; the **base** is the trained network its subnetwork is found in. The **count-matched random mask** (`sampled`) freezes as many "
            "random weights per tensor as the subnetwork keeps; `full` fine-tunes the whole trained network; other "
            "words in `code` are [variants](docs/glossary.md#variant). **n**: the training rows that tell the new task "
            "apart from the subtask's; *2 / 12 layers*: the GPT-2's depth. **Pooled images** have their texture averaged "
            "away, shape kept; **shape bias**: the share of shape (not texture) decisions on images whose shape and "
            "texture disagree; the **world**: the generated images; a **linear probe** (`lp`) trains only a new last "
            "layer on a frozen network (its *backbone*) "
            "([glossary](docs/glossary.md#pooled-image)). A **run** is one independent repeat "
            "([chain](docs/glossary.md#chain), or chain × replicate). *Judged on*: **the chains** — the "
            "[verdict rule](docs/glossary.md#verdict-rule): each chain (one subnetwork) is one vote, its replicates "
            "averaged; the verdict is the first row of the table below that applies; the numbers give the mean difference over "
            "chains with its 95% interval, and each run's difference (`*`: beyond noise on the same test items, a "
            "[paired test](docs/glossary.md#paired-test)); "
            "**the mean** — the paper's text states a threshold on a mean; **a band** — our curve lies less than "
            f"{CURVE_BAND} from the authors' plotted curve at every n both ran. `last` / `eval`: the final epoch / the "
            "epoch best on labelled eval rows (the paper's choice; [protocols](docs/glossary.md#protocols)). Vision "
            "differences are percentage points.\n\n" + precedence_table()).replace("docs/", docs)


def markdown(claims: list[Claim], records: dict[str, RunRecord], link: str = "", commits: bool = True,
             key: bool = True) -> str:
    """The table (after its key, unless key=False); `link` is the results page's path from where the table is shown
    (its provenance anchors)."""
    lines = ([legend("docs/" if link else ""), ""] if key else []) + ["| family | claim | judged on | holds? | the numbers | scale | record |",
             "|---|---|---|---|---|---|---|"]
    for claim in claims:
        record = records[claim.record].provenance
        anchor = f"[{claim.record}]({link}#run-{claim.record.lower()})"
        lines.append(f"| {claim.family} | {claim.claim} | {claim.judged_on} | {claim.holds} | {claim.numbers} | "
                     f"{claim.scale} | "
                     f"{anchor}" + (f" ({record['commit']})" if commits else "") + " |")
    return "\n".join(lines)
