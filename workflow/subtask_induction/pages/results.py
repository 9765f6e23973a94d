"""docs/results.md: the current answer, rendered from the run records in docs/data/ (summary first, one section
per family and scale, provenance last). Tables the pipeline wrote are shown as the record holds them; tables
that set our curves beside the authors' figure are computed here from the record's transfer.csv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..rounding import percent
from . import claims as claims_module
from . import subnetworks, wording
from .page import (BEYOND, CONFIRMATORY, DECISIVE, DECISIVE_CROSS_DOMAIN, DEFAULTS, FIGURES, GPU_CHECK, GROUPNORM, PAPER_DEPTHS, SIGNS,
                   VISION_AUTHORS, VISION_CAUSES)
from .sections.arithmetic_default import arithmetic_default
from .sections.beyond import beyond_section, decisive_cross_domain_section, signs_section
from .sections.gpu import gpu_section
from .sections.groupnorm import groupnorm_section
from .sections.paper_scale import paper_scale, same_labels
from .sections import authors, causes, confirmatory, post_hoc, premises, protocol, record_effect, validity
from .sections.confirmatory import exploratory
from .sections.provenance import provenance
from .sections.submasking_default import submasking_default
from .sections.vision_default import vision_default
from ..claims import INCOMPLETE
from ..labels import SUBMASKING, label
from .curves import AUTHORS_PIPELINE, our_curves, pipeline_curves
from .run_records import RunRecord

# the vision figure's metrics: the table's column, its name and what it measures (docs/glossary.md's words)
VISION_METRICS = {
    "pooled_accuracy": ("pooled accuracy", "accuracy on pooled images (segments filled with their mean colour: "
                                           "texture removed, shape kept)"),
    "original_accuracy": ("original accuracy", "accuracy on the unaltered test images"),
    "shape_bias": ("shape bias", "on cue-conflict images (one class's shape, another's texture): shape decisions / "
                                 "(shape + texture decisions)"),
    "cue_shape_accuracy": ("cue-conflict shape accuracy", "the share of cue-conflict images classified by shape"),
}


FAMILIES = {"arithmetic": ("arithmetic",), "vision": ("vision", "submasking")}   # default_claims' families


def default_claims(records: dict[str, RunRecord], family: str, decided: list | None = None) -> list:
    """The default's claims of `family`, each judged in both records of the default where the replication is stored
    (wording.replicated: agreement, or each record's verdict). Where the whole decisive record is stored (`decided`:
    decisive_claims), a claim it judges is read from it, the default's two records beside it as smaller replications
    (wording.beside_smaller); a default claim it does not judge stays as the default's records say it. Claims are
    paired across records by their id (claims.claim_id), never by their words."""
    made = {"arithmetic": lambda r: claims_module.arithmetic_default(r),
            "vision": lambda r: claims_module.vision_default(r) + claims_module.submasking_default(r)}[family]
    own = {name: made(records[name]) for name in DEFAULTS if name in records}
    first, second = DEFAULTS
    theirs = {claim.id: claim for claim in own.get(second, [])}
    mine = [claim if second not in records else wording.replicated(claim, theirs.get(claim.id), DEFAULTS)
            for claim in own.get(first, [])]
    if decided is None:
        return mine
    ids = {claim.id for claim in decided if claim.family in FAMILIES[family]} & claims_module.default_questions()
    smaller = {name: {claim.id: claim for claim in claims} for name, claims in own.items()}
    judged = [wording.beside_smaller(claim, {name: table.get(claim.id) for name, table in smaller.items()})
              for claim in decided if claim.id in ids]
    return judged + [claim for claim in mine if claim.id not in ids]


def decisive_claims(records: dict[str, RunRecord], name: str = DECISIVE) -> list | None:
    """A planned record's claims once every one of them is complete (`name`: the decisive record, its cross-domain
    ViT, which runs apart, or the confirmatory record); None while batches or chains remain (its configs plan the whole record, so a part of it
    reads "incomplete") or where none is stored: its verdicts come only from the pre-registered total, and until then
    the pages keep the smaller records' answer."""
    if name not in records:
        return None
    found = {DECISIVE: claims_module.decisive, DECISIVE_CROSS_DOMAIN: claims_module.decisive_cross_domain,
             CONFIRMATORY: claims_module.confirmatory}[name](records[name])
    if not found or any(claim.holds.startswith("**incomplete**") or INCOMPLETE in dict(claim.verdicts).values()
                        for claim in found):
        return None
    return found


def all_claims(records: dict[str, RunRecord]) -> list:
    decided = decisive_claims(records)
    found = default_claims(records, "arithmetic", decided)
    for name, layers in PAPER_DEPTHS.items():
        if name in records:
            found += claims_module.paper_scale(records[name], layers) + claims_module.magnitude_rival(records, name, layers)
    found += default_claims(records, "vision", decided)
    rivals = []
    if BEYOND in records:
        rivals += claims_module.beyond(records[BEYOND])
    if GROUPNORM in records:
        rivals += claims_module.groupnorm(records[GROUPNORM])
    if SIGNS in records:
        rivals += claims_module.signs(records[SIGNS])
    if VISION_CAUSES in records:
        rivals += claims_module.vision_causes(records[VISION_CAUSES])
    if VISION_AUTHORS in records:
        rivals += claims_module.vision_authors(records[VISION_AUTHORS])
    mine = {claim.id: claim for claim in [*(decided or []), *(decisive_claims(records, DECISIVE_CROSS_DOMAIN) or [])]}
    if mine:   # a rival a decisive record judged is read from it, its smaller record beside it (paired by id)
        rivals = [wording.beside_smaller(mine[claim.id], {claim.record: claim}) if claim.id in mine else claim
                  for claim in rivals]
    return confirmed(records, found + rivals)


def confirmed(records: dict[str, RunRecord], found: list) -> list:
    """`found` with the confirmatory record's claims first, once it is whole (decisive_claims), each with the claim
    the pages answered with before it (the exploratory one: `decisive`'s, or `vision_authors`' for si_authors) beside
    it (wording.beside_smaller, its chance over the confirmatory record's subsets of that many chains); the
    exploratory claims stay in `found`, after it, for their own sections."""
    made = decisive_claims(records, CONFIRMATORY)
    if not made:
        return found
    before = claims_module.first_by_id(found)
    return [wording.beside_smaller(claim, {before[claim.id].record: before[claim.id]}, exploratory=True)
            if claim.id in before else claim for claim in made] + found


def render(records: dict[str, RunRecord], found: list | None = None, verdict_lines: str = "", short=None) -> str:
    """docs/results.md from the records; `found`: their all_claims, where the caller has them already;
    `verdict_lines`: the claims' verdicts in words with the smaller records beside them (readme.readme_verdict);
    `short`: a claim in a few words (the README's), for the confirmatory record's table."""
    found = all_claims(records) if found is None else found
    earlier = exploratory(found)   # the other records' sections read what they read before the confirmatory record
    lines = ["# Results", "",
             "<!-- Rendered by `make docs` from the run records in docs/data/; edit the records or "
             "workflow/subtask_induction/pages/, not this page (a test renders it again and compares). -->", "",
             "The current answer of every experiment, each number read from a stored run record (its commit, "
             "machine and plain step under [Provenance](#provenance-the-records)). A comparison is judged over its "
             "chains, each chain (one subnetwork) one vote, by the [verdict rule](glossary.md#verdict-rule) "
             "(an exact sign-flip test, Holm over the values of n a claim is judged at, p < 0.05); the paper-scale rows compare our curves with the paper's text and the authors' own "
             "Fig 6. Words: [glossary](glossary.md). Earlier versions, and the claims that fell: "
             "[history](history/README.md).", "", "## Summary", "",
             wording.markdown(found, records, commits=False), "",
             f"![Fig 6 as small multiples: ours beside the authors' curve, per depth and curve]({FIGURES}/fig6.png)", ""]
    if verdict_lines:   # written for the README: its links made relative to docs/
        lines += ["## Every headline's verdict, with the smaller records beside it", "",
                  verdict_lines.replace("(docs/results.md#", "(#").replace("(docs/", "("), ""]
    lines += validity.lines(validity.changed(records, found), lambda claim: claim.claim)
    lines += validity.roster_lines(validity.replaced(records))
    if any(claim.record == CONFIRMATORY for claim in found):   # the record whose verdicts the README reads
        lines += confirmatory.section(records[CONFIRMATORY], found, short or (lambda claim: claim.claim))
    lines += post_hoc.section(found)
    if any(claim.record == DECISIVE for claim in found):
        lines += protocol.lines(records[DECISIVE], earlier)
        lines += ["## Vision against the paper's premises", ""] + premises.table(records[DECISIVE])
        lines += record_effect.lines(records)
    if VISION_CAUSES in records:
        lines += causes.section(records[VISION_CAUSES], records.get(DECISIVE), earlier)
    if VISION_AUTHORS in records:
        lines += authors.section(records[VISION_AUTHORS], records.get(DECISIVE), earlier)
    if "default" in records:
        lines += arithmetic_default(records["default"])
    if any(name in records for name in PAPER_DEPTHS):
        lines += ["## Arithmetic at the paper's scale, beside the authors' Fig 6", "",
                  "Chain 0, `config/paper.yaml` over the authors' grid of n (a slice of it; the records say which). "
                  "Every run trained on the paper's rows (every a=b row and all n). The authors' curves are their "
                  "Fig 6 as plotted (one run per depth).", ""]
        for name, layers in PAPER_DEPTHS.items():
            if name in records:
                lines += paper_scale(records, name, layers)
        if "paper_depth2_same_labels" in records:
            lines += same_labels(records["paper_depth2_same_labels"])
    if "default" in records:
        lines += vision_default(records["default"]) + submasking_default(records["default"])
    if BEYOND in records:
        lines += beyond_section(records[BEYOND])
    if GROUPNORM in records:
        lines += groupnorm_section(records[GROUPNORM])
    if SIGNS in records:
        lines += signs_section(records[SIGNS])
    if any(claim.record == DECISIVE_CROSS_DOMAIN for claim in found):   # whole: a part's tables carry a part's verdicts
        lines += decisive_cross_domain_section(records[DECISIVE_CROSS_DOMAIN])
    if GPU_CHECK in records:
        lines += gpu_section(records[GPU_CHECK])
    lines += provenance(records)
    return "\n".join(lines).rstrip() + "\n"


def figures(records: dict[str, RunRecord], docs: Path) -> list[Path]:
    from . import figures as draw

    out = []
    curves = {layers: our_curves(records[name].csv("arithmetic/transfer.csv"),
                                 records[name].provenance.get("unplanned") or [])
              for name, layers in PAPER_DEPTHS.items() if name in records}
    if curves:
        not_run = {layers: f"not in the plan of\nthe {name} record\n(a slice: its run.yaml)"
                   for name, layers in PAPER_DEPTHS.items() if name in records}
        out.append(draw.fig6_small_multiples(curves, docs / FIGURES / "fig6.png", not_run=not_run))
    for name, layers in PAPER_DEPTHS.items():
        if f"{name}_{AUTHORS_PIPELINE}" in records and layers in curves:
            pipeline = pipeline_curves(records[f"{name}_{AUTHORS_PIPELINE}"].csv("arithmetic/transfer.csv"))
            out.append(draw.fig6_small_multiples({layers: curves[layers]},
                                                 docs / FIGURES / f"fig6_{name}_{AUTHORS_PIPELINE}.png",
                                                 pipeline={layers: pipeline}, not_run=not_run))
    if "default" in records:
        default = records["default"]
        dial = subnetworks.kept_dial(records[BEYOND]) if BEYOND in records else pd.DataFrame()
        chains = {name: subnetworks.chain_table(records[name]) for name in DEFAULTS if name in records}
        items = default.csv("arithmetic/transfer.csv")["test_items"].unique()
        out.append(draw.gain_by_kept({k: v for k, v in chains.items() if not v.empty}, dial,
                                     docs / FIGURES / "subnetworks.png", test_items=int(items[0]) if len(items) == 1 else None,
                                     dial_chains=int(dial["chains"].max()) if not dial.empty else None))
        out.append(vision_figure(records, docs / FIGURES / "vision_table1.png"))
        out.append(submasking_figure(default, docs / FIGURES / "submasking.png"))
    return out


def vision_figure(records: dict[str, RunRecord], path: Path) -> Path:
    """The default's vision models on its data, a run (a chain) followed across bars; blur-pooled scratch beside
    them from the beyond record where that record's SI runs are the default's own (same chains, same numbers), so
    the pairing holds; chance 1 in the class count for accuracies, 50% for shape bias."""
    from . import figures as draw

    default = records["default"]
    table, per_run = default.csv("vision/table1.csv"), default.csv("vision/chains.csv")
    extra = "scratch_blurpool"
    if BEYOND in records and records[BEYOND].has("vision/chains.csv"):
        beyond = records[BEYOND].csv("vision/chains.csv")
        ours = per_run[per_run["model"] == "si"].sort_values("chain").reset_index(drop=True)
        theirs = beyond[beyond["model"] == "si"].sort_values("chain").reset_index(drop=True)
        if extra in set(beyond["model"]) and ours[list(ours.columns)].equals(theirs[list(ours.columns)]):
            per_run = pd.concat([per_run, beyond[beyond["model"] == extra][per_run.columns]], ignore_index=True)
            table = pd.concat([table, records[BEYOND].csv("vision/table1.csv").query("model == @extra")],
                              ignore_index=True)
    metrics = {k: v for k, v in VISION_METRICS.items() if k in table}
    classes = default.csv("vision/per_class.csv")["category"].nunique()
    chance = {k: (0.5 if k == "shape_bias" else 1 / classes) for k in metrics}
    data = label("data", "world")   # the default config's vision data (config/config.yaml: vision.data.source)
    title = (f"Vision, the default record: {data.word} ({classes} classes)"
             + (f"; blur-pooled scratch from the {BEYOND} record (the same chains)" if extra in set(table["model"])
                else ""))
    return draw.paired_panels(path, table, per_run, "model", "chain", metrics, list(table["model"]), "vision",
                              title=title, highlight="si", chance=chance, run_name="chain",
                              chance_label=f"chance (1 in {classes}; shape bias 50%)", notes=[data.key()])


def submasking_figure(record: RunRecord, path: Path) -> Path:
    """The submasking adaptations on each task at the record's largest label fraction, with the backbone as the unit
    (a backbone is one vision chain's base, as the verdict rule counts them): a dot per backbone, its training seeds
    averaged inside it, followed across bars; a bar the mean over backbones; an adaptation run on fewer backbones than
    the others says so under the figure. Chance 1 in the task's class count."""
    from . import figures as draw

    points = record.csv("submasking/points.csv")
    points = points[points["fraction"] == points["fraction"].max()]
    tasks = sorted(points["task"].unique())
    per_backbone = points.pivot_table(index=["adaptation", "backbone"], columns="task", values="test_accuracy",
                                      aggfunc="mean").reset_index()
    means = per_backbone.groupby("adaptation")[tasks].mean().reset_index()
    metrics = {task: (label("data", task).word, label("data", task).meaning) for task in tasks}
    chance = {task: 1 / label("data", task).classes for task in tasks if label("data", task).classes}
    order = [m for m in SUBMASKING if m in set(points["adaptation"])]
    order += sorted(set(points["adaptation"]) - set(order))
    backbones = per_backbone.groupby("adaptation")["backbone"].nunique()
    most = int(backbones.max())
    fewer = [f"{label('submasking', a).word}: {int(k)} backbone{'s' * (k != 1)} ({', '.join(sorted(per_backbone[per_backbone['adaptation'] == a]['backbone']))})"
             for a, k in backbones.items() if k < most]
    fraction = points["fraction"].max()
    title = (f"Submasking over {most} frozen backbones (the vision chains' bases), a dot per backbone"
             + ("; every training label" if fraction == 1 else f"; {percent(fraction, 0)} of the training labels"))
    notes = (["run on fewer backbones than the others: " + "; ".join(fewer)] if fewer else [])
    return draw.paired_panels(path, means, per_backbone, "adaptation", "backbone", metrics, order, "submasking",
                              title=title, highlight="fs", chance=chance, run_name="backbone",
                              chance_label="chance (1 in the task's classes)", ylabel="test accuracy (%)", notes=notes)
