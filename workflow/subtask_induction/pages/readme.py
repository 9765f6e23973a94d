"""The README's generated blocks (`make docs`): the verdict lines (one group per claim, from its verdict at every
size), the headline claims table, the measured times and the `make beyond` line."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..rounding import fixed
from ..claims import AT_FLOOR, HOLDS, INCOMPLETE, NO_EFFECT, NO_EVIDENCE, REVERSED, TOO_FEW, UNDECIDED, smallest_effect
from . import wording
from .page import (BEYOND, CONFIRMATORY, DECISIVE, DECISIVE_CROSS_DOMAIN, DEFAULTS, GPU_CHECK, PAPER_DEPTHS, REPO, TIMING, VISION_AUTHORS,
                   VISION_CAUSES)
from .results import all_claims
from .claims import Claim, default_questions, first_by_id
from .run_records import RunRecord
from . import first_screen
from .sections import authors, causes, confirmatory, premises, validity
from .subnetworks import chain_table, kept_dial
from ..validity import base_accuracy

OWN_TRIAL = "own_data_trial"   # a timing record: the README's own-data trial on a small folder tree


# The README's groups of headline claims, in order; a claim's group comes from its verdicts at every size (n, task,
# training-set size), and a group other than a uniform one names the verdict at each size.
GROUPS = ("Holds", "Holds in part", "Holds in part, reversed in part", "Reversed", "Reversed in part",
          "No effect larger than S", "At floor", "Undecided at these chains", "No evidence either way",
          "Too few chains to decide",
          "Not the same in both records", "Differs between the two records", "Does not hold", "Incomplete")
BETWEEN = {wording.DIFFERS: "Differs between the two records", wording.NOT_REPLICATED: "Not the same in both records"}


def per_size(verdicts) -> str:
    """Every size's verdict, grouped by verdict: `holds at n = 250, n = 750; reversed at n = 0`."""
    parts = []
    for verdict in (HOLDS, REVERSED, NO_EFFECT, AT_FLOOR, UNDECIDED, NO_EVIDENCE, TOO_FEW):   # decided ones first
        wheres = [where or "the one size" for where, v in verdicts if v == verdict]
        if wheres:
            parts.append(f"{verdict} at {', '.join(wheres)}")
    return "; ".join(parts)


# The first screen's words for the paper's text claims: what was measured, in plain words (the claims table keeps the
# claims' own texts).
PLAIN = {
    "The paper's text: SI near-perfect": "SI reaches 0.99 test accuracy or more with n = 1,000",
    "The paper's text: the count-matched random mask needs about": "the count-matched random mask needs about 6 times "
                                                                  "SI's n to reach 0.99 test accuracy",
}
AUTHORS_CODE = "Their sampled curve is their code's control"
DIAL = "The bias's strength by kept fraction"   # the kept-% dial's claim (claims.sparsity_dial)


def short(claim) -> str:
    """A claim in a few words for the verdict lines: its plain words, or its text without the parentheses, and the
    GPT-2's depth where the same text stands at two scales."""
    text = next((plain for start, plain in PLAIN.items() if claim.claim.startswith(start)),
                re.sub(r"\s*\([^)]*\)", "", claim.claim))
    scale = re.search(r"paper scale, (\d+) layers", claim.scale)
    return text + (f" (the paper's scale, {scale.group(1)}-layer GPT-2)" if scale else "")


def dial_sentence(records: dict[str, RunRecord], dialled: Claim, kept: tuple[float, float]) -> str:
    """The kept-% dial's finding beside SI's verdict against `sampled`, from the `beyond` record: SI's gain over the
    count-matched random mask at each kept % (one discovery's top k %), at the n where the dial moves most, with the
    rule's word for it (`dialled`: the dial's claim); `kept` is the range the default's chains keep."""
    dial = kept_dial(records[BEYOND])
    if dial.empty:
        return ""
    n = dial.groupby("n")["gain"].agg(lambda g: g.max() - g.min()).idxmax()
    at_n = dial[dial["n"] == n].sort_values("kept %")
    words = {verdict for where, verdict in dialled.verdicts if where.endswith(f"(n = {n})")}
    gains = ", ".join(f"{fixed(row['gain'], 1, sign=True)} at {row['kept %']:g} %" for _, row in at_n.iterrows())
    best = at_n.loc[at_n["gain"].idxmax()]
    return (f" At a fixed kept %, in the kept-% dial (the record of `make beyond`, {int(at_n['chains'].max())} "
            f"chains, the figure's right panel; its subnetworks are the top k % of one discovery's mask scores, not "
            f"the discovered masks, so its gains are not the chains'), SI's gain over `sampled` at n = {n:,} is "
            f"{gains} (points, mean over chains): largest at {best['kept %']:g} % kept, where the chains' own "
            f"subnetworks keep {fixed(kept[0], 1)}–{fixed(kept[1], 1)} %; the verdict rule at each kept %: "
            + "; ".join(sorted(words)) + ".")


def verdict_group(claim) -> tuple[str, str]:
    """A headline claim's line of the README's answer and where it applies: from the rule's verdicts per size (data,
    not the rendered cell), or from a mean's or a band's yes / no. A claim whose sizes disagree names the verdict at
    every size, so no size's holds or reversed is left out and a reversal is never filed as no evidence."""
    words = [verdict for _, verdict in claim.verdicts]
    if not words:
        if claim.holds.startswith("**incomplete**"):
            return "Incomplete", ""
        return ("Holds", "") if claim.holds.startswith("**yes**") else ("Does not hold", "")
    if INCOMPLETE in words:
        return "Incomplete", ""
    for word, group in BETWEEN.items():
        if word in words:
            return group, ""
    uniform = {HOLDS: "Holds", REVERSED: "Reversed", NO_EFFECT: "No effect larger than S", AT_FLOOR: "At floor",
               UNDECIDED: "Undecided at these chains", NO_EVIDENCE: "No evidence either way",
               TOO_FEW: "Too few chains to decide"}
    if len(set(words)) == 1:
        return uniform[words[0]], ""
    if HOLDS in words and REVERSED in words:
        return "Holds in part, reversed in part", per_size(claim.verdicts)
    if HOLDS in words:
        return "Holds in part", per_size(claim.verdicts)
    if REVERSED in words:
        return "Reversed in part", per_size(claim.verdicts)
    # some size not decided: the claim is not, and each size's verdict is named
    decided_in_part = {UNDECIDED, NO_EFFECT, AT_FLOOR} & set(words)
    return ("Undecided at these chains" if decided_in_part else "No evidence either way"), per_size(claim.verdicts)


def readme_verdict(records: dict[str, RunRecord], found: list | None = None) -> str:
    """The README's answer, from the headline claims: one group per claim from its verdict at every n (or task),
    each naming where it holds and where it is reversed; the paper's text claims by their thresholds; where the
    authors' code differs from their text; and what a record cannot answer yet. `found`: the records' all_claims,
    where the caller has them already."""
    found = all_claims(records) if found is None else found
    answers = first_by_id(found)   # a claim of an id the confirmatory record decides is answered once, by it
    headline = [c for c in found if c.headline and (c.evidence is None or answers.get(c.id) is c)]
    dialled = next((c for c in found if c.record == BEYOND and c.claim.startswith(DIAL) and c.verdicts), None)
    defaults = default_questions()
    paper = [c for c in headline if (c.record in (*DEFAULTS, *PAPER_DEPTHS)
                                     or c.record in (DECISIVE, CONFIRMATORY) and c.id in defaults)
             and not c.claim.startswith(AUTHORS_CODE)]
    authors_code = [c for c in headline if c.claim.startswith(AUTHORS_CODE)]
    beyond = [c for c in headline if c not in paper and c not in authors_code]
    kept = [chain_table(records[name])["kept %"] for name in DEFAULTS if name in records]
    kept = (min(k.min() for k in kept), max(k.max() for k in kept)) if kept else None
    groups = {name: [] for name in GROUPS}
    for claim in paper:
        group, where = verdict_group(claim)
        if group in BETWEEN.values():
            reason = claim.holds.split(": ", 1)[1]
        elif not claim.verdicts:   # the paper's text: a threshold on the mean over runs, its numbers beside it
            reason = f"the mean over runs against the paper's threshold: {claim.numbers}"
        else:
            reason = wording.short_reason(claim)
        both = ", in both records" if claim.holds.endswith(", in both records") else ""
        if both and reason:
            second = wording.short_reason(replace(claim, leans=claim.second_leans))
            reason = f"`{DEFAULTS[0]}`: {reason}; `{DEFAULTS[1]}`: {second}"
        if claim.beside:   # a planned record's verdict, the smaller or exploratory records beside it
            reason = f"{reason}; {claim.beside}" if reason else claim.beside
        dial = (dial_sentence(records, dialled, kept) if kept and dialled and "(`sampled`)" in claim.claim
                and claim.evidence else "")
        item = short(claim) + (f" ({where})" if where else "") + both + (f" [{reason}]" if reason else "")
        groups[group].append(item + ("." + dial if dial else ""))
    why = {"Too few chains to decide": " (even every chain agreeing could not reach p < 0.05)",
           "No effect larger than S": f" (S, the smallest effect that matters: {smallest_effect():g} points of accuracy, "
                                      f"{smallest_effect('shape_bias'):g} of shape bias; the 90% interval over chains "
                                      "lies inside ±S)",
           "Undecided at these chains": " (neither holds nor reversed, and the 90% interval over chains reaches past "
                                        "±S: more chains could decide it)",
           "Not the same in both records": " (their verdicts differ at some size, as 8 chains of a small effect often "
                                           "do, but neither says holds where the other says reversed: each record's "
                                           "verdict named)",
           "Differs between the two records": " (holds in one record where the other says reversed: one of them is "
                                              "a false verdict)"}
    lines = [f"- **{name}**{why.get(name, '')}: " + "; ".join(items) + ("" if items[-1].endswith(".") else ".")
             for name, items in groups.items() if items]
    def still_to_run(name: str) -> str:
        gaps = records[name].provenance.get("known_gaps") or []
        chains = sorted({c for gap in gaps for c in (gap.get("chain") if isinstance(gap.get("chain"), list)
                                                      else [gap.get("chain")]) if c is not None})
        if not chains:
            return ""
        return (f"chain {chains[0]}" if len(chains) == 1 else f"chains {chains[0]}-{chains[-1]}") + " still to run"

    def in_part(name: str) -> bool:
        return name in records and not any(claim.record == name for claim in found)

    if in_part(DECISIVE) or in_part(DECISIVE_CROSS_DOMAIN):
        parts = ([f"the decisive record ([`{DECISIVE}`](docs/running.md#a-second-record-of-the-default), the chains "
                  f"fixed in docs/decisions.md before its first job; {still_to_run(DECISIVE)})"] if in_part(DECISIVE)
                 else [])
        parts += ([f"its cross-domain ViT ([`{DECISIVE_CROSS_DOMAIN}`](docs/results.md#run-decisive_cross_domain); "
                   f"{still_to_run(DECISIVE_CROSS_DOMAIN)})"] if in_part(DECISIVE_CROSS_DOMAIN) else [])
        whose = " and ".join(["the default's"] * in_part(DECISIVE) + ["`beyond`'s"] * in_part(DECISIVE_CROSS_DOMAIN))
        lines.append(f"- **Stored in part**: {' and '.join(parts).replace('; )', ')')}: verdicts come only from the "
                     f"whole plan, so none is shown yet; the answers above are {whose}.")
    if in_part(CONFIRMATORY):   # judged once, whole: a part of it decides nothing
        lines.append(f"- **Stored in part**: the confirmatory record ([`{CONFIRMATORY}`](docs/results.md#run-{CONFIRMATORY}), its "
                     "plan committed before its first job"
                     + (f"; {still_to_run(CONFIRMATORY)}" if still_to_run(CONFIRMATORY) else "")
                     + "): it is judged once, when every planned point is in, so none of its verdicts is shown yet.")
    for entry in validity.changed(records, found):
        differs = "; ".join(f"{short(claim)}{' at ' + where if where else ''}: {now}"
                            for claim, where, _, now in entry["differs"])
        lines.append(f"- **A chain whose base did not learn its task**: `{entry['record']}`'s {entry['family']} chain "
                     f"{entry['chain']} ({base_accuracy(entry['family'], entry['accuracy'])}), counted as its plan fixed; "
                     + (f"without it, {len(entry['differs'])} verdict{'s' * (len(entry['differs']) > 1)} "
                        f"differ{'s' * (len(entry['differs']) == 1)} ({differs}; "
                        "[chain validity](docs/results.md#chain-validity-bases-that-did-not-learn-their-task))."
                        if entry["differs"] else "no verdict differs without it."))
    for claim in authors_code:
        scale = re.search(r"paper scale, (\d+) layers", claim.scale)
        lines.append("- **The authors' code differs from their text**: their count-matched random mask froze the N−k "
                     "weights outside the subnetwork's count instead of k; run that way "
                     + (f"(the paper's scale, {scale.group(1)}-layer GPT-2) " if scale else "")
                     + "our count-matched random mask's curve lies within 0.05 of their Fig 6's "
                     + ("at every n both ran" if claim.holds.startswith("**yes**") else claim.holds.replace("**", ""))
                     + f" ({claim.numbers}).")
    if beyond:
        # the rivals beyond the paper need words of their own: counted here, each one on the results page
        counts = Counter(verdict_group(claim)[0].lower() for claim in beyond)
        lines.append(f"- **Beyond the paper** ({len(beyond)} other ways to get SI's gain, each tested against SI, "
                     "[results](docs/results.md#beyond-the-paper-the-rivals-a-reviewer-names-next-make-beyond)): "
                     + ", ".join(f"{k} {name}" for name, k in counts.items()) + ".")
    lines.append(f"- **How many could be false**: {wording.multiplicity(headline)}")
    return "\n".join(lines + ["", wording.readme_key()])


def record_wall(provenance: dict) -> str:
    """A record's time on the first screen: the last run its reports mark quiet at the record's own commit (a timing
    record of several fresh clones, some sharing the cores with other work), else its wall's leading figure."""
    quiet = [report["wall"] for report in provenance.get("reports") or []
             if report.get("quiet") and report.get("wall") and report.get("commit") == provenance["commit"]]
    text = quiet[-1] if quiet else str(provenance["wall"])
    wall = re.match(r"\d+ min \d+ s|\d+ s", text)
    return wall.group(0) if wall else text


def timings(records: dict) -> str:
    """The first screen's times: the default's `make reproduce`, `make test` and the own-data trial (each its wall
    time's leading figure, its record linked; the machine and plain step once where they share one), then the
    paper's scale on one GPU."""
    # make reproduce's time: time_to_figure's record (quiet fresh clones) where it timed the default record's commit,
    # or a later one whose run made the default record's tables exactly (its `same_tables_as`, checked when it was
    # stored), else the default record's own; a time of an older default (fewer chains) never stands for today's
    default_commit = records["default"].provenance.get("commit") if "default" in records else None
    timed = records[TIMING].provenance if TIMING in records else {}
    same = default_commit is not None and default_commit in (timed.get("commit"),
                                                             (timed.get("same_tables_as") or {}).get("default"))
    reproduce = TIMING if same or "default" not in records else "default"
    items = [(name, what) for name, what in ((reproduce, "`make reproduce`"), ("make_test", "`make test`"),
                                               (OWN_TRIAL, "the own-data trial")) if name in records]
    hosts = {records[name].provenance["machine"] for name, _ in items}
    steps = {records[name].provenance["plain_step_ms"] for name, _ in items}
    parts = []
    for name, what in items:
        p = records[name].provenance
        where = "" if len(steps) == 1 else f" (a step {p['plain_step_ms']} ms)"
        parts.append(f"{what} {record_wall(p)}{where} ([record](docs/results.md#run-{name.lower()}))")
    lines = []
    if parts:
        host = f"on {next(iter(hosts))}, " if len(hosts) == 1 else ""
        step = (f"where one training step of the small GPT-2 took {next(iter(steps))} ms" if len(steps) == 1 else
                "each beside the training step of the small GPT-2 its host took that day")
        lines.append(f"- {(host + step)[:1].upper() + (host + step)[1:]} ([`make benchmark`](docs/glossary.md#plain-step): "
                     "your times scale with yours): " + "; ".join(parts) + ".")
    lines.append(f"- The paper's scale on one GPU (used when present: `device: auto`): {paper_scale_time(records)}")
    return "\n".join(lines)


def make_beyond(makefile: Path) -> str:
    """The quick start's `make beyond` line, naming the config files the Makefile's target gives, in order."""
    text = makefile.read_text()
    questions = re.search(r"^BEYOND_QUESTIONS := (.+)$", text, re.M).group(1).split()
    recipe = re.search(r"^beyond: .*\n((?:\t.*\n)+)", text, re.M).group(1)
    recipe = recipe.replace("$(BEYOND_QUESTIONS:%=config/beyond/%.yaml)",
                            " ".join(f"config/beyond/{q}.yaml" for q in questions))
    runs = [[f for f in re.findall(r"config/[\w/.-]+\.yaml", line) if f != "config/config.yaml"]
            for line in recipe.splitlines() if "snakemake" in line]
    folders = [re.search(r"--directory (\S+)", line) for line in recipe.splitlines() if "snakemake" in line]
    parts = [", ".join(files) + (f" (in {folder.group(1)})" if folder else "") for files, folder in zip(runs, folders)]
    return "make beyond                        # the experiments beyond the paper: " + "; then ".join(parts)


PACK = 128   # the pack size the paper-scale GPU profile trains at once (the record's row "pack of 128")


def paper_scale_time(records: dict) -> str:
    """The paper's scale on one GPU, from the GPU check's record: the arithmetic transfer grid's training steps in the
    largest pack it timed that the pipeline uses (PACK), what those hours leave out and how much each is (the
    record's start-up per process times the packs the grid needs; its estimate for scoring; the bases and
    discoveries unmeasured), and "unmeasured" for the rest."""
    if GPU_CHECK not in records:
        return "unmeasured (no GPU record)."
    estimate = records[GPU_CHECK].csv("pack_estimate.csv")   # benchmarks/pack_throughput.py --estimate-csv
    row = estimate.set_index("run").loc[f"pack of {PACK}"]
    hours, start, points = row["device-hours"], float(row["start_up_s"]), int(row["points"])
    packs = -(-points // PACK)
    return (f"the paper's arithmetic sweep ({points:,} trainings on a²+ab, {PACK} trained together in "
            f"one process) takes about "
            f"{hours} GPU-hours of training steps on one {row['device']} "
            f"([record](docs/results.md#run-gpu_check)). Not in those hours: starting each of its {packs} processes, "
            f"{start:g} s each as measured, about {fixed(packs * start / 3600, 1)} GPU-hours; scoring each epoch, "
            "estimated at a few percent; the bases and discoveries before it, unmeasured. Vision and submasking at "
            "the paper's scale are unmeasured.")


# the rivals beyond the paper, by the second model of their ids, in the first screen's words
RIVAL_NAMES = {"magnitude": "`magnitude`", "scratch_blurpool": "blur-pooled scratch", "signs": "`signs`",
               "mimetic_inherit": "mimetic init", "vit_gpt2_sampled": "the subnetwork in a world ViT"}


# What a record is, said where the first screen first names it
RECORD_WORDS = {DECISIVE_CROSS_DOMAIN: " (its record of the arithmetic subnetwork in a world ViT, on the decisive chains)"}


def headlines(records: dict, found: list) -> str:
    """The first screen's table (first_screen.table) and, under it, one line each: the rivals and our added controls
    (named, counted by verdict, linked), a chain whose base failed, and how many verdicts could be false."""
    lines = [first_screen.table(found, records), ""]
    differ = [pair for pair in confirmatory.pairs(found) if pair.differs]
    if any(claim.record == CONFIRMATORY for claim in found):
        named = "; ".join(f"{short(pair.confirmed)}{' at ' + pair.where if pair.where else ''}: "
                          f"{confirmatory.both(pair)}" for pair in differ)
        lines.append("- **Where the exploratory record's verdict differs**"
                     + (f" (`confirmatory`, then the exploratory record): {named}" if differ else ": nowhere")
                     + f" ([every row]({confirmatory.ANCHOR})).")
    paper_ids = {i for i, *_ in first_screen.HEADLINES}
    others = [claim for claim in found if claim.headline and claim.verdicts and claim.id not in paper_ids
              and claim.evidence is not None]
    added = [claim for claim in found if claim.id.startswith("vision/si-mixture/") and claim.evidence is not None]
    if others or added:
        counts = Counter(verdict_group(claim)[0].lower() for claim in others)
        names = ", ".join(RIVAL_NAMES.get(claim.id.split("/")[1].split("-")[-1], claim.id) for claim in others)
        lines.append(f"- **Beyond the paper**: SI against {len(others)} other rivals ({names}): "
                     + ", ".join(f"{k} {name}" for name, k in counts.items())
                     + "; and the mixture with pooled images, our added control "
                       "([results](docs/results.md#summary)).")
    failed = validity.changed(records, found)
    # a plan with spares replaced its failed chains before any transfer: said first, of the records the table reads
    read = {claim.record for claim in found}
    spared = [entry for entry in validity.replaced(records) if entry["record"] in read and entry["by"] is not None]
    if failed or spared:
        parts = [f"`{e['record']}`'s {e['family']} chain {e['chain']} ({base_accuracy(e['family'], e['accuracy'])}), "
                 f"replaced by spare chain {e['by']} before any transfer, as its plan fixed" for e in spared]
        if failed:
            first = {}   # a chain two records share is named once, by the first record that has it
            for entry in failed:
                first.setdefault((entry["family"], entry["chain"], entry["accuracy"]), entry["record"])
            parts.append("; ".join(f"`{name}`'s {family} chain {chain} ({base_accuracy(family, accuracy)})"
                                   for (family, chain, accuracy), name in sorted(first.items()))
                         + ", counted as the plan fixed; without it, "
                         + ", ".join(f"{len(e['differs'])} of `{e['record']}`'s verdicts differ"
                                     + RECORD_WORDS.get(e["record"], "") for e in failed))
        lines.append("- **A chain whose [base](docs/glossary.md#base) did not learn its task**: " + "; ".join(parts)
                     + " ([chain validity](docs/results.md#chain-validity-bases-that-did-not-learn-their-task)).")
    lines.append(f"- **How many could be false**: {wording.multiplicity([c for c, _ in first_screen.headline_claims(found)])}")
    return "\n".join(wrapped(line) for line in lines)


def wrapped(line: str, width: int = 296) -> str:
    """A bullet longer than `width` split at its clauses (`; `, `, `) onto continuation lines: the first screen's lines
    stay under 300 characters and the bullet renders as one."""
    if len(line) <= width or not line.startswith("- "):
        return line
    out, current = [], ""
    for part in re.split(r"(?<=[;,]) ", line):
        if current and len(current) + len(part) + 1 > width:
            out.append(current)
            current = "  " + part
        else:
            current = f"{current} {part}" if current else part
    return "\n".join(out + [current])


def blocks(records: dict, found: list | None = None) -> dict[str, str]:
    found = all_claims(records) if found is None else found
    decisive = records.get(DECISIVE)
    why = (causes.sentence(records[VISION_CAUSES], found, brief=True)   # which cause of the lost shape keeps it (issue 82)
           if VISION_CAUSES in records else "")
    # issue 88: the like-for-like reading, of the record whose si_authors rows the table reads
    judged = next((c.record for c in found if c.id.startswith(f"vision/{authors.claims_module.SI_AUTHORS}-")), None)
    like = authors.sentence(records[judged], found, anchor=confirmatory.ANCHOR if judged == CONFIRMATORY else authors.ANCHOR
                            ) if judged in records else ""
    premise = (premises.sentence(decisive, why, like[:1].upper() + like[1:]) if decisive is not None
               and any(c.record == DECISIVE for c in found) else "")
    return {"finding": first_screen.finding(found, records, premise), "headlines": headlines(records, found),
            "timings": timings(records), "beyond": make_beyond(REPO / "Makefile"), "key": wording.readme_key()}
