"""The README's generated blocks (`make docs`): the verdict lines (one group per claim, from its verdict at every
size), the headline claims table, the measured times and the `make beyond` line."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..claims import HOLDS, INCOMPLETE, NO_EVIDENCE, REVERSED, TOO_FEW
from . import wording
from .page import DEFAULTS, GPU_CHECK, PAPER_DEPTHS, REPO, TIMING
from .results import all_claims
from .run_records import RunRecord, markdown_tables

OWN_TRIAL = "own_data_trial"   # a timing record: the README's own-data trial on a small folder tree


# The README's groups of headline claims, in order; a claim's group comes from its verdicts at every size (n, task,
# training-set size), and a group other than a uniform one names the verdict at each size.
GROUPS = ("Holds", "Holds in part", "Holds in part, reversed in part", "Reversed", "Reversed in part",
          "No evidence either way", "Too few chains to decide", "Differs between the two records", "Does not hold",
          "Incomplete")


def per_size(verdicts) -> str:
    """Every size's verdict, grouped by verdict: `holds at n = 250, n = 750; reversed at n = 0`."""
    parts = []
    for verdict in (HOLDS, REVERSED, NO_EVIDENCE, TOO_FEW):
        wheres = [where or "the one size" for where, v in verdicts if v == verdict]
        if wheres:
            parts.append(f"{verdict} at {', '.join(wheres)}")
    return "; ".join(parts)


def _short(claim) -> str:
    """A claim in a few words for the verdict lines: its text without the parentheses, and where it was measured when
    the same text stands at two scales."""
    text = re.sub(r"\s*\([^)]*\)", "", claim.claim).removeprefix("The paper's text: ")
    scale = re.search(r"paper scale, (\d+ layers)", claim.scale)
    return text + (f" ({scale.group(1)})" if scale and claim.claim.startswith("The paper's text") else "")


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
    if wording.DIFFERS in words:
        return "Differs between the two records", ""
    uniform = {HOLDS: "Holds", REVERSED: "Reversed", NO_EVIDENCE: "No evidence either way",
               TOO_FEW: "Too few chains to decide"}
    if len(set(words)) == 1:
        return uniform[words[0]], ""
    if HOLDS in words and REVERSED in words:
        return "Holds in part, reversed in part", per_size(claim.verdicts)
    if HOLDS in words:
        return "Holds in part", per_size(claim.verdicts)
    if REVERSED in words:
        return "Reversed in part", per_size(claim.verdicts)
    return "No evidence either way", per_size(claim.verdicts)


def readme_verdict(records: dict[str, RunRecord]) -> str:
    """The README's answer, from the headline claims: what holds (under the verdict rule, or a mean's or a band's
    threshold), what holds only at some sizes (where), what is reversed, where the chains give no evidence either way,
    where there are too few chains to decide, and what a record cannot answer yet."""
    headline = [c for c in all_claims(records) if c.headline]
    paper = [c for c in headline if c.record in (*DEFAULTS, *PAPER_DEPTHS)]
    beyond = [c for c in headline if c not in paper]
    groups = {name: [] for name in GROUPS}
    for claim in paper:
        group, where = verdict_group(claim)
        reason = wording.short_reason(claim) if group != "Differs between the two records" else claim.holds.split(
            ": ", 1)[1]
        both = ", in both records" if claim.holds.endswith(", in both records") else ""
        if both and reason:
            second = wording.short_reason(replace(claim, leans=claim.second_leans))
            reason = f"`{DEFAULTS[0]}`: {reason}; `{DEFAULTS[1]}`: {second}"
        groups[group].append(_short(claim) + (f" ({where})" if where else "") + both
                             + (f" [{reason}]" if reason else ""))
    why = {"Too few chains to decide": " (even every chain agreeing could not reach p < 0.05)"}
    lines = [f"- **{name}**{why.get(name, '')}: " + "; ".join(items) + "." for name, items in groups.items() if items]
    if beyond:
        # the rivals beyond the paper need words of their own: counted here, each one on the results page
        counts = Counter(verdict_group(claim)[0].lower() for claim in beyond)
        lines.append(f"- **Beyond the paper** ({len(beyond)} rivals a reviewer names next, "
                     "[results](docs/results.md#beyond-the-paper-the-rivals-a-reviewer-names-next-make-beyond)): "
                     + ", ".join(f"{k} {name}" for name, k in counts.items()) + ".")
    return "\n".join(lines + ["", wording.readme_key()])


def readme_claims(records: dict[str, RunRecord]) -> str:
    """The README's headline table: the claims marked headline, linked to the results page's provenance."""
    return wording.markdown([c for c in all_claims(records) if c.headline], records, link="docs/results.md",
                                  commits=False, key=False)


def timings(records: dict) -> str:
    """The first screen's times: the default's `make reproduce`, `make test` and the own-data trial (each its wall
    time's leading figure, its record linked; the machine and plain step once where they share one), then the
    paper's scale on one GPU."""
    # the newest fresh-clone timing of make reproduce (time_to_figure's record) before the default record's own
    reproduce = next((name for name in (TIMING, "default") if name in records), None)
    items = [(name, what) for name, what in ((reproduce, "`make reproduce`"), ("make_test", "`make test`"),
                                               (OWN_TRIAL, "the own-data trial")) if name in records]
    machines = {(records[name].provenance["machine"], records[name].provenance["plain_step_ms"]) for name, _ in items}
    parts = []
    for name, what in items:
        p = records[name].provenance
        wall = re.match(r"\d+ min \d+ s|\d+ s", str(p["wall"]))
        where = ("" if len(machines) == 1 else
                 f" on {p['machine']}, [plain step](docs/glossary.md#plain-step) {p['plain_step_ms']} ms")
        parts.append(f"{what} {wall.group(0) if wall else p['wall']}{where} "
                     f"([record](docs/results.md#run-{name.lower()}))")
    lines = []
    if parts:
        machine = (f"on {next(iter(machines))[0]}, [plain step](docs/glossary.md#plain-step) "
                   f"{next(iter(machines))[1]} ms (yours scales with it): " if len(machines) == 1 else "")
        lines.append(f"- {machine[:1].upper() + machine[1:] if machine else ''}" + "; ".join(parts) + ".")
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


def paper_scale_time(records: dict) -> str:
    """The paper's scale on one GPU, from the GPU check's record: the arithmetic transfer grid's training steps in the
    largest pack it timed that the pipeline uses (128), and "unmeasured" for the rest."""
    if GPU_CHECK not in records:
        return "unmeasured (no GPU record)."
    record = records[GPU_CHECK]
    text = record.text("pack_throughput.md")
    estimate = text.split("estimated paper arithmetic transfer grid")[1]
    points = re.search(r"\((\d+) points\) on ([^,]+),", estimate)
    table = markdown_tables(estimate)[0][1].set_index("run")
    hours = table.loc["pack of 128", "device-hours"]
    return (f"the arithmetic transfer grid ({int(points.group(1)):,} transfers) trains in about {hours} GPU-hours on "
            f"one {points.group(2)}, 128 transfers at once, training steps only "
            "([record](docs/results.md#run-gpu_check)); vision and submasking at the paper's scale are unmeasured.")


def blocks(records: dict) -> dict[str, str]:
    return {"verdict": readme_verdict(records), "claims": readme_claims(records),
            "timings": timings(records), "beyond": make_beyond(REPO / "Makefile")}
