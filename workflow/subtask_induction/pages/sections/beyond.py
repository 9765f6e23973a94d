"""## Beyond the paper: the rivals a reviewer names next (`make beyond`), the questions answered before them, and
the signs alone with a data-free initialisation (`make beyond-signs`)."""

from __future__ import annotations

from .. import claims as claims_module
from ..page import embed, provenance_line
from ..run_records import RunRecord


def table_rows(tables: list, keep) -> list[str]:
    """The rows of a page's tables (RunRecord.tables) for which keep(row) holds, each table under its heading (a table
    with no such row left out)."""
    lines = []
    for heading, frame in tables:
        frame = frame[frame.apply(keep, axis=1)]
        if frame.empty:
            continue
        lines += ([f"*{heading}*", ""] if heading else []) + ["| " + " | ".join(frame.columns) + " |",
                                                                "|" + "---|" * len(frame.columns)]
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in frame.itertuples(index=False)] + [""]
    return lines


def beyond_section(record: RunRecord) -> list[str]:
    """`make beyond`'s three questions (issue 48), each with the rows of the record's tables that answer it."""
    def names(*words):
        return lambda row: any(word in str(row.iloc[0]) for word in words)

    lines = ["## Beyond the paper: the rivals a reviewer names next (`make beyond`)", "", provenance_line(record), "",
             record.provenance["title"] + ".", "",
             "### Is the discovery needed? SI against the base's largest weights (arithmetic)", "",
             "`magnitude` freezes, in each tensor, the base's largest-|w| weights, as many as the subnetwork keeps "
             "there (PAC-Net's rival), inherited as SI inherits; every 2-layer run of the default. The record's "
             "`chains.md`, its rows with `magnitude`:", ""]
    lines += table_rows(record.tables("arithmetic/chains.md"), lambda row: "magnitude" in str(row.get("comparison")))
    lines += ["### An architectural route to shape bias (vision)", "",
              "`scratch_blurpool` is `scratch` with anti-aliased downsampling (Zhang 2019: a blur before every "
              "stride), the same weights and training. Table 1's rows and the paired comparisons:", ""]
    lines += table_rows(record.tables("vision/table1.md"),
                        lambda row: str(row.iloc[0]) in ("si", "scratch", "texture_swap", "scratch_blurpool"))
    lines += table_rows(record.tables("vision/comparisons.md"), names("scratch_blurpool"))
    lines += ["### Arithmetic -> vision: the GPT-2's ab subnetwork frozen in a world ViT", "",
              "A ViT with the 2-layer GPT-2 base's blocks (width 128, 4 heads, MLP 512); `vit_gpt2_si_N`: the ab "
              "subnetwork's weights in its qkv / proj / fc1 / fc2, frozen; `vit_gpt2_sampled_N`: a count-matched "
              "random draw of the GPT-2's weights frozen; `vit_fresh_frozen_N`: as many fresh weights frozen; "
              "`vit_scratch_N`: nothing frozen; N training images per class. Table 1's rows and the comparisons:", ""]
    lines += cross_domain_rows(record)
    return lines + older_questions(record)


def cross_domain_rows(record: RunRecord) -> list[str]:
    """The cross-domain ViTs' rows of a record's Table 1 and paired comparisons."""
    def names(row):
        return "vit_" in str(row.iloc[0])

    return (table_rows(record.tables("vision/table1.md"), names)
            + table_rows(record.tables("vision/comparisons.md"), names))


def decisive_cross_domain_section(record: RunRecord) -> list[str]:
    """The decisive record's cross-domain ViT (config/decisive_cross_domain.yaml): the same question as `make
    beyond`'s on the decisive vision chains (its cap in docs/decisions.md, "The decisive record")."""
    return ["## Arithmetic -> vision on the decisive chains (`make decisive-cross-domain`)", "",
            provenance_line(record), "", record.provenance["title"] + ".", "",
            "The models of `make beyond`'s question (above), on chains of their own. Table 1's rows and the "
            "comparisons:", ""] + cross_domain_rows(record)


def older_questions(record: RunRecord) -> list[str]:
    """The questions answered beyond the paper before issue 48, from the same record (config/beyond.yaml): each
    table the pipeline made for them, as the record holds it."""
    def names(*words):
        return lambda row: any(word in str(row.iloc[0]) for word in words)

    lines = ["### Rewinding: fresh unkept weights or the base's own initial values? (arithmetic)", "",
             "`si_rewind` is SI whose unkept weights start at the base's own initialisation (the lottery-ticket "
             "rewind) instead of a fresh network's. The record's `chains.md`, its rows with `si_rewind`:", ""]
    lines += table_rows(record.tables("arithmetic/chains.md"), lambda row: "si_rewind" in str(row.get("comparison")))
    if record.has("arithmetic/same_labels.md"):
        lines += ["### The same labels given as data (arithmetic)", "",
                  "The subtask rows the discovery read, given to the new model as data instead (multi-task `mixture`, "
                  "marked with a task token; `distill` from the subnetwork's answers), from a fresh start or the base's "
                  "unmasked tensors (`_inherit`). The record's `same_labels.md`:", ""]
        lines += embed(record.text("arithmetic/same_labels.md"), 4)
        lines += ["Paired, run by run (the record's `chains.md`):", ""]
        lines += table_rows(record.tables("arithmetic/chains.md"),
                            lambda row: any(w in str(row.get("comparison")) for w in ("mixture", "distill")))
    for page, heading, prose in (
            ("arithmetic/sparsity_dial.md", "The bias's strength by kept fraction: the kept-% dial (arithmetic)",
             "SI from the top k % of the discovery's scores (`si_topK`) against the random mask of its own per-tensor "
             "counts (`sampled_topK`)."),
            ("arithmetic/budget.md", "How many labels a discovery needs: the label budget (arithmetic)",
             "Each discovery from the first r subtask rows trains the same number of optimiser steps as the every-row "
             "one (the `steps` column), so a smaller budget is not also a shorter training.")):
        if record.has(page):
            lines += [f"### {heading}", "", f"{prose} The record's `{page.split('/')[1]}`:", ""] + embed(record.text(page), 4)
    lines += ["### Discovery without labels (vision)", "",
              "The record's `table2.md` (every discovery) and the paired comparisons of the label-free subnetwork and "
              "its SI:", ""]
    lines += embed(record.text("vision/table2.md"), 4)
    lines += table_rows(record.tables("vision/comparisons.md"), names("label_free"))
    lines += ["### Shape bias by augmentation: the texture swap (vision)", "",
              "`texture_swap` trains from scratch on the world's shapes drawn with textures no class and no cue-conflict "
              "stimulus uses (Stylized-ImageNet's idea without a style network); `texture_swap_finetune` fine-tunes "
              "the base on them. Table 1's rows and the paired comparisons:", ""]
    lines += table_rows(record.tables("vision/table1.md"), names("texture_swap", "si", "scratch"))
    lines += table_rows(record.tables("vision/comparisons.md"), names("texture_swap"))
    return lines


def signs_section(record: RunRecord) -> list[str]:
    """Issue 59's two rivals: what carries SI's bias, the sign pattern or a good initialisation?"""
    names = {first for first, _, _ in claims_module.SIGNS_CLAIMS} | {second for _, second, _ in claims_module.SIGNS_CLAIMS}
    return (["## Beyond the paper: the signs alone, and a data-free initialisation (`make beyond-signs`)", "",
             provenance_line(record), "", record.provenance["title"] + ".", "",
             "`signs` freezes the subnetwork's positions with the base's signs and the fresh network's magnitudes (AWS, "
             "ICLR 2025), inherited as SI inherits; `mimetic` sets every head's attention so that Q·Kᵀ and V·O look "
             "trained (Trockman & Kolter, ICML 2023; no data, no teacher), trained as `random` is; `mimetic_inherit` "
             "takes the base's unmasked tensors as SI does. The record's `chains.md`, the rows that compare them:", ""]
            + table_rows(record.tables("arithmetic/chains.md"),
                         lambda row: any(f" {name}" in f" {row.get('comparison')}".replace(" vs ", "  ")
                                         for name in ("signs", "mimetic", "mimetic_inherit")))
            + ["Test accuracy per chain (the record's `chains.md`):", ""]
            + table_rows(record.tables("arithmetic/chains.md"), lambda row: str(row.get("variant")) in names))
