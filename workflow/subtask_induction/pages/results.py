"""docs/results.md: the current answer, rendered from the run records in docs/data/ (summary first, one section
per family and scale, provenance last). Tables the pipeline wrote are shown as the record holds them; tables
that set our curves beside the authors' figure are computed here from the record's transfer.csv."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd

from . import claims as claims_module
from . import subnetworks
from ..claims import HOLDS, INCOMPLETE, NO_EVIDENCE, REVERSED, TOO_FEW
from ..arithmetic.paper import TABLE3_KEPT_PERCENT, authors_code_option, authors_curves
from .curves import (AUTHORS_CODE_DIFFERENCES, AUTHORS_CURVES, AUTHORS_PIPELINE, CURVE_BAND, HYPOTHESIS_RECORDS,
                     NEAR_PERFECT, PAPER_TEXT, beside_authors, cell, curve_rows, effect_text, moved,
                     on_their_curve, option_effect, our_curves, pipeline_curves, rival_beside_si, text_claims)
from ..labels import SUBMASKING, TRANSFER, label
from .run_records import RunRecord, markdown_tables

PAPER_DEPTHS = {"paper_depth2": 2, "paper_depth12": 12}
BEYOND = "beyond"   # `make beyond`'s record: the default with config/beyond.yaml
GROUPNORM = "groupnorm"   # the BatchNorm question: config/groupnorm.yaml in a folder of its own
SIGNS = "beyond_signs"    # `make beyond-signs`: config/beyond/signs.yaml on the default
# The default and its replication (the same config and commit, chains of disjoint seeds: config/replication.yaml)
DEFAULTS = ("default", "default_replication")
GPU_CHECK = "gpu_check"   # benchmarks/gpu_check.sh on a lent GPU: its summary and pack throughput
TIMING = "time_to_figure"   # benchmarks/time_to_figure.py on fresh-clone runs of make reproduce and make beyond
FIGURES = "figures"   # relative to docs/
# the vision figure's metrics: the table's column, its name and what it measures (docs/glossary.md's words)
VISION_METRICS = {
    "pooled_accuracy": ("pooled accuracy", "accuracy on pooled images (segments filled with their mean colour: "
                                           "texture removed, shape kept)"),
    "original_accuracy": ("original accuracy", "accuracy on the unaltered test images"),
    "shape_bias": ("shape bias", "on cue-conflict images (one class's shape, another's texture): shape decisions / "
                                 "(shape + texture decisions)"),
    "cue_shape_accuracy": ("cue-conflict shape accuracy", "the share of cue-conflict images classified by shape"),
}


def embed(text: str, level: int) -> list[str]:
    """A page the pipeline wrote, its headings moved down to sit under a heading of `level`."""
    lines = []
    for line in text.strip().splitlines():
        if line.startswith("#"):
            depth = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, level + depth - 1) + line[depth:]
        lines.append(line)
    return lines + [""]


def provenance_line(record: RunRecord) -> str:
    """Which record a section reads; its commit, machine and wall time stand in the provenance at the end."""
    return f"*From the record [`{record.name}`](#run-{record.name.lower()}).*"


def default_claims(records: dict[str, RunRecord], family: str) -> list:
    """The default's claims of `family`, each judged in both records of the default where the replication is stored
    (claims.replicated: agreement, or each record's verdict)."""
    made = {"arithmetic": lambda r: claims_module.arithmetic_default(r),
            "vision": lambda r: claims_module.vision_default(r) + claims_module.submasking_default(r)}[family]
    first, second = DEFAULTS
    mine = made(records[first]) if first in records else []
    if second not in records:
        return mine
    theirs = {claim.claim: claim for claim in made(records[second])}
    return [claims_module.replicated(claim, theirs.get(claim.claim), DEFAULTS) for claim in mine]


def all_claims(records: dict[str, RunRecord]) -> list:
    found = default_claims(records, "arithmetic")
    for name, layers in PAPER_DEPTHS.items():
        if name in records:
            found += claims_module.paper_scale(records[name], layers) + claims_module.magnitude_rival(records, name, layers)
    found += default_claims(records, "vision")
    if BEYOND in records:
        found += claims_module.beyond(records[BEYOND])
    if GROUPNORM in records:
        found += claims_module.groupnorm(records[GROUPNORM])
    if SIGNS in records:
        found += claims_module.signs(records[SIGNS])
    return found


def _means_table(transfer: pd.DataFrame, layers: int) -> list[str]:
    """variant x n, mean ± std over runs under `last` / `eval`, at one depth of the main experiment."""
    lines = []
    last, evaluated = (claims_module.run_means(transfer, layers, p) for p in ("last", "eval"))
    sizes = sorted(last.index.get_level_values("n").unique())
    runs = int(last["count"].max())
    lines += [f"{layers} layers, {runs} runs (chain × replicate) where every variant ran; test accuracy on a²+ab, "
              "mean ± std over runs, `last` / `eval`:", "",
              "| variant | " + " | ".join(f"n = {n:,}" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for variant in sorted(last.index.get_level_values("variant").unique()):
        row = []
        for n in sizes:
            if (variant, n) not in last.index:
                row.append("")
                continue
            a, b = last.loc[(variant, n)], evaluated.loc[(variant, n)]
            runs_here = int(a["count"])
            spread = (lambda s: f" ± {s:.3f}" if runs_here > 1 else "")
            row.append(f"{a['mean']:.3f}{spread(a['std'])} / {b['mean']:.3f}{spread(b['std'])}"
                       + (f" ({runs_here})" if runs_here != runs else ""))
        lines.append(f"| {variant} | " + " | ".join(row) + " |")
    return lines + [""]


def arithmetic_default(record: RunRecord) -> list[str]:
    transfer = record.csv("arithmetic/transfer.csv")
    main = transfer[(transfer["base"] == "a+ab") & (transfer["subtask"] == "ab") & (transfer["target"] == "a2+ab")]
    lines = ["## Arithmetic: the default (`config/config.yaml`)", "", provenance_line(record), "",
             "The base (a+ab), its ab subnetwork and SI's transfer to a²+ab on 200 numbers, every chain. Base and "
             "subnetwork (the record's `table3.md`):", ""]
    lines += embed(record.text("arithmetic/table3.md"), 4)
    lines += ["### Transfer to a²+ab", ""]
    for layers in sorted(main["layers"].unique()):
        lines += _means_table(main, int(layers))
    verdicts = [(heading, table) for heading, table in markdown_tables(record.text("arithmetic/chains.md"))
                if "verdict" in table.columns and "protocol `last`" in heading]
    lines += ["Every run's difference and the verdict (the record's `chains.md`, `last`; `*`: McNemar p < 0.05 on the "
              "same test pairs, without `*` a tie):", ""]
    for _, table in verdicts:
        lines += ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in table.astype(str).values.tolist()]
        lines.append("")
    lines += which_subnetworks(record)
    return lines


def which_subnetworks(record: RunRecord, dial_record: RunRecord | None = None) -> list[str]:
    """The per-chain table and figure: which subnetworks transfer, beside the size dial."""
    table = subnetworks.chain_table(record)
    if table.empty:
        return []
    lines = ["### Which subnetworks transfer", "",
             "Per chain (one subnetwork each; replicates averaged): the kept fraction, SI's gain in accuracy points over "
             "the count-matched random mask and over random initialisation at each n (`last`), and the mean Jaccard of "
             "its kept weights with the other chains' (and that over chance, for masks of the same per-tensor "
             "densities; — where the record's overlap table does not compare chains). Each chain trains a base of its "
             "own from another seed, so a weight's position means nothing across chains: a Jaccard at chance (× chance "
             "near 1) says each chain's subnetwork is its own. The figure puts the gain beside "
             "the size dial (`make beyond`: one discovery's top k % of scores, so the kept fraction moves alone): a "
             "verdict over chains can then be read at a fixed size.", ""]
    lines += subnetworks.markdown(table) + ["", f"![SI's gain per chain against the kept fraction, beside the size dial]"
                                                f"({FIGURES}/subnetworks.png)", ""]
    return lines


def _curves_table(compared: pd.DataFrame) -> list[str]:
    sizes = sorted(compared["n"].unique())
    lines = ["| curve | source | " + " | ".join(f"n = {n:,}" for n in sizes) + " |", "|---|---|" + "---|" * len(sizes)]
    for curve in AUTHORS_CURVES:
        name = TRANSFER[curve].markdown()
        ours = compared[compared["curve"] == curve]
        if ours.empty:
            continue
        theirs = ours.dropna(subset=["theirs"]).drop_duplicates("n").set_index("n")["theirs"]
        lines.append(f"| {name} | authors' figure | " + " | ".join(f"{theirs[n]:.3f}" if n in theirs.index else ""
                                                                 for n in sizes) + " |")
        for (label, protocol), rows in ours.groupby(["label", "protocol"], sort=False):
            rows = rows.set_index("n")
            cells = []
            for n in sizes:
                if n not in rows.index:
                    cells.append("")
                    continue
                r = rows.loc[n]
                mark = "" if pd.isna(r["theirs"]) or r["within"] else " †"
                cells.append(cell(r["mean"], r["std"], r["count"]) + mark)
            source = f"ours `{protocol}`" + (f" ({label})" if label else "")
            lines.append(f"| {name} | {source} | " + " | ".join(cells) + " |")
    return lines + ["", f"Ours: mean ± std over runs (runs in parentheses). †: {CURVE_BAND} or more from the authors' "
                    "value at that n (curves.py says why that band).", ""]


def _text_claims_table(compared: pd.DataFrame, layers: int) -> list[str]:
    lines = ["| the paper's text | text | authors' figure | ours `eval` | ours `last` |", "|---|---|---|---|---|"]
    found = {protocol: text_claims(compared, layers, protocol) for protocol in ("eval", "last")}

    def ours(key, protocol):
        row = found[protocol][key]
        return cell(row["mean"], row["std"], row["count"]) if row is not None else "not run"

    def factor(protocol_or_authors):
        source = "authors" if protocol_or_authors == "authors" else "ours"
        claims = found["eval" if source == "authors" else protocol_or_authors]["first"]
        (si, _), (sampled, most) = claims[("subnetwork", source)], claims[("sampled", source)]
        if si is None or most is None:
            return "—"
        return f"{sampled / si:.1f}× ({sampled:,} / {si:,})" if sampled else f"sampled not by {most:,}"

    figure = found["eval"]
    lines.append(f"| SI near-perfect with {PAPER_TEXT['si_near_perfect_n']:,} rows | ≥ {NEAR_PERFECT} | "
                 f"{figure['si_figure']:.3f} | {ours('si', 'eval')} | {ours('si', 'last')} |")
    lines.append(f"| random init on the same data ({PAPER_TEXT['random_at_n']:,} rows) | {PAPER_TEXT['random']:.3f} | "
                 f"{figure['random_figure']:.3f} | {ours('random', 'eval')} | {ours('random', 'last')} |")
    lines.append(f"| sampled needs about {PAPER_TEXT['sampled_factor']}× SI's rows to reach {NEAR_PERFECT} | "
                 f"{PAPER_TEXT['sampled_factor']}× | {factor('authors')} | {factor('eval')} | {factor('last')} |")
    return lines + ["", "Smallest n: the first size of each grid (theirs: their figure's; ours: the sizes we ran) whose "
                    "mean reaches the threshold.", ""]


def depth_transfer(records: dict[str, RunRecord], name: str) -> pd.DataFrame:
    """A depth's transfer rows: its slice's record, and the authors'-code option rows of the records run beside it
    (named `<slice>_<option>`, on the slice's base and subnetwork). Rows of plain variants from such a record, and
    every row of a hypothesis's record (HYPOTHESIS_RECORDS), are left out: they come from another discovery, base or
    data and are not the slice's curves."""
    frames = [records[name].csv("arithmetic/transfer.csv")]
    for other, record in records.items():
        if (other.startswith(f"{name}_") and other.removeprefix(f"{name}_") not in HYPOTHESIS_RECORDS
                and record.has("arithmetic/transfer.csv")):
            rows = record.csv("arithmetic/transfer.csv")
            frames.append(rows[rows.apply(authors_code_option, axis=1).notna()] if len(rows) else rows)
    return pd.concat(frames, ignore_index=True)


def kept_percent(record: RunRecord) -> str:
    for table in (t for _, t in markdown_tables(record.text("arithmetic/paper_comparison.md"))
                  if list(t.columns)[:2] == ["", "paper"]):
        row = table[table[""].str.startswith("kept %")]
        if len(row):
            return row.iloc[0, 2]
    return "—"


def _effect(records, name, compared, transfer, curve, layers, how) -> list[str]:
    by, key = how
    if by == "kind":
        return option_effect(compared, curve, f"{key}:", layers)
    if by == "setting":   # variants named by what they set (`masked_init_std` → "N(0, 0.02)" in their label)
        labels = [label for label in compared[compared["curve"] == curve]["label"].unique() if "N(0, " in label]
        return [line for label in labels for line in option_effect(compared, curve, label, layers)]
    return record_effect(records, f"{name}_{key}", transfer, curve, layers)


def record_effect(records: dict[str, RunRecord], name: str, transfer: pd.DataFrame, curve: str,
                  layers: int) -> list[dict]:
    """A hypothesis record's curve (its own data, base or discovery; the paper's form of the curve, or, in a
    whole-pipeline record, the curve as its options train it) against the slice's on the same n and replicates,
    under `eval`, where the authors' figure has that n."""
    if name not in records or not records[name].has("arithmetic/transfer.csv"):
        return []
    theirs = authors_curves()
    theirs = theirs[(theirs["depth"] == layers) & (theirs["kind"] == curve)].set_index("n")["test_accuracy"]
    pick = lambda rows: rows[(rows["curve"] == curve) & (rows["protocol"] == "eval") & (rows["layers"] == layers)]  # noqa: E731
    mine = pick(curve_rows(records[name].csv("arithmetic/transfer.csv")))
    slice_rows = pick(curve_rows(transfer).query("label == ''"))
    out = []
    for n, rows in mine.groupby("n"):
        paired = slice_rows[(slice_rows["n"] == n) & slice_rows["replicate"].isin(set(rows["replicate"]))]
        if paired.empty or n not in theirs.index:
            continue
        value, without = rows["test_accuracy"].mean(), paired["test_accuracy"].mean()
        out.append({"n": n, "value": value, "without": without, "theirs": theirs[n],
                    "moved": moved(value, without, theirs[n])})
    return out


def curve_verdicts(records: dict[str, RunRecord], name: str, layers: int, transfer: pd.DataFrame,
                   compared: pd.DataFrame) -> list[str]:
    """Each of the figure's curves at this depth: on the authors' curve; or its distance attributed to an option of
    their code that put it on theirs at every n where ours is off; or unexplained, with what was tried and what was
    not run. Then the kept fraction against Table 3."""
    lines = [f"**Each {layers}-layer curve against the authors'** (`eval`, the paper's selection, as their figure; "
             f"on their curve = less than {CURVE_BAND} away at every n both ran):", "",
             "| curve | on the authors' curve? | verdict | what of their code we ran, and what it did | not run yet |",
             "|---|---|---|---|---|"]
    for curve in AUTHORS_CURVES:
        curve_name = TRANSFER[curve].markdown()
        where = on_their_curve(compared, layers, curve, "eval")
        if where["within"].empty and where["outside"].empty:
            continue
        off = set(where["outside"]["n"])
        on = ("**yes**" if not off else f"no: off at n = {', '.join(f'{n:,}' for n in sorted(off))}")
        tried, untried, explains = [], [], {}
        for what, curves, how in AUTHORS_CODE_DIFFERENCES:
            if curve not in curves:
                continue
            effects = _effect(records, name, compared, transfer, curve, layers, how) if how else []
            if effects:
                tried.append(f"{what}: " + "; ".join(effect_text(e) for e in effects))
                landed = {e["n"] for e in effects if e["moved"] in ("onto theirs", "on theirs, as without it")}
                if landed & off:
                    explains[what.split(" (")[0]] = sorted(landed & off)
            else:
                untried.append(what)
        explained = set().union(*explains.values()) if explains else set()
        if not off:
            verdict = "on their curve"
        elif explained >= off:
            verdict = "attributed: " + "; ".join(f"{what} (n = {', '.join(f'{n:,}' for n in ns)})"
                                                  for what, ns in explains.items())
        else:
            rest = sorted(off - explained)
            verdict = (f"unexplained at n = {', '.join(f'{n:,}' for n in rest)}"
                       + (f"; attributed at {', '.join(f'{n:,}' for n in sorted(explained))}" if explained else ""))
        lines.append(f"| {curve_name} | {on} | {verdict} | {'<br>'.join(tried) or '—'} | {'; '.join(untried) or '—'} |")
    kept = [f"ours {kept_percent(records[name])}"]
    untried = []
    for what, curves, how in AUTHORS_CODE_DIFFERENCES:
        if "kept" not in curves:
            continue
        if how and how[0] == "record" and f"{name}_{how[1]}" in records:
            kept.append(f"with {what.split(' (')[0]}: {kept_percent(records[f'{name}_{how[1]}'])}")
        else:
            untried.append(what)
    lines += ["", f"Kept % of the masked weights against Table 3's {TABLE3_KEPT_PERCENT.get(layers)}: "
              + "; ".join(kept) + (f". Not run yet: {'; '.join(untried)}." if untried else "."), ""]
    return lines + engine_equality(records, layers)


ENGINE = "engine_equality"   # benchmarks/engine_equality.py's record


def engine_equality(records: dict[str, RunRecord], layers: int) -> list[str]:
    """Why our kept fraction is the authors' discovery's, not another method's: our engine against theirs, shown
    beside the kept fraction of the depth it was measured at."""
    if ENGINE not in records:
        return []
    import json

    figures = json.loads(records[ENGINE].path("figures.json").read_text())
    if figures["layers"] != layers:
        return []
    last = figures["last_epoch"]
    worst = max(epoch["max_score_difference"] for epoch in figures["per_epoch"])
    return [f"*The discovery is the authors' engine's*: on the default's chain-0 {figures['layers']}-layer base, the "
            f"same rows, settings and batches through ours and through NeuroSurgeon 0.1.0 (their engine), all "
            f"{figures['epochs']} epochs ({figures['steps']} steps): {last['hard_mask_entries_differing']} of "
            f"{figures['masked_entries']:,} hard-mask entries differ at the end, kept {100 * last['kept_ours']:.3f}% "
            f"(ours) and {100 * last['kept_theirs']:.3f}% (theirs), the subtask's test accuracy "
            f"{figures['ours_selected']['test_accuracy']:.3f} and {last['test_accuracy_theirs']:.3f}; the scores differ "
            f"by at most {worst:.1e} (the same steps summed in another float32 order, which β = 100 amplifies) (record [`{ENGINE}`](#run-{ENGINE}), "
            "`benchmarks/engine_equality.py`). `tests/test_neurosurgeon_oracle.py` checks the same on a tiny GPT-2 in "
            "every `make test`. So a kept fraction unlike Table 3's does not come from how we train the mask.", ""]


def magnitude_section(records: dict[str, RunRecord], name: str, layers: int) -> list[str]:
    table = rival_beside_si(records, name, "magnitude", layers)
    if isinstance(table, str):
        return [f"**Is the discovery needed?** The record [`{name}_magnitude`](#run-{name}_magnitude) cannot be paired "
                f"with the slice: {table}.", ""]
    if table.empty:
        return []
    lines = [f"**Is the discovery needed?** The base's largest-|w| weights, count-matched per tensor (`magnitude`, "
             f"record [`{name}_magnitude`](#run-{name}_magnitude)), beside the slice's SI and sampled points of the same "
             "replicate, `eval`; the overlap of its frozen set with the discovered one against per-tensor chance:", "",
             "| n | replicate | magnitude | SI | sampled | Jaccard with the subnetwork | chance |", "|---|---|---|---|---|---|---|"]
    fmt = lambda v: "—" if v is None or pd.isna(v) else f"{v:.3f}"  # noqa: E731
    for row in table.itertuples():
        lines.append(f"| {int(row.n):,} | {row.replicate} | {fmt(row.magnitude)} | {fmt(row.si)} | {fmt(row.sampled)} | "
                     f"{fmt(row.overlap)} | {fmt(row.chance)} |")
    return lines + [""]


def authors_pipeline(records: dict[str, RunRecord], name: str, compared: pd.DataFrame, layers: int) -> list[str]:
    """The authors' whole pipeline (every option of their code at once; its own base and discovery): its five
    curves beside their figure and the slice's, under `eval`."""
    record = records.get(f"{name}_{AUTHORS_PIPELINE}")
    if record is None:
        return []
    pipeline = beside_authors(pipeline_curves(record.csv("arithmetic/transfer.csv")))
    pipeline = pipeline[(pipeline["layers"] == layers) & (pipeline["protocol"] == "eval")]
    sizes = sorted(pipeline["n"].unique())
    lines = [f"**Their whole pipeline** (record [`{name}_{AUTHORS_PIPELINE}`](#run-{name}_{AUTHORS_PIPELINE}): "
             "every option of the table above at once, on its own HF-schedule base and weight-decayed discovery, kept "
             f"{kept_percent(record)}), `eval`, beside their figure and the slice:", "",
             f"![Fig 6 at depth {layers}: the authors' curve, ours and ours with their whole pipeline]({FIGURES}/"
             f"fig6_{name}_{AUTHORS_PIPELINE}.png)", "",
             "| curve | source | " + " | ".join(f"n = {n:,}" for n in sizes) + " | on their curve at n = |",
             "|---|---|" + "---|" * len(sizes) + "---|"]
    plain = compared[(compared["label"] == "") & (compared["protocol"] == "eval")]
    for curve in AUTHORS_CURVES:
        curve_name = TRANSFER[curve].markdown()
        mine = pipeline[pipeline["curve"] == curve].set_index("n")
        if mine.empty:
            continue
        slice_curve = plain[plain["curve"] == curve].set_index("n")
        theirs = mine["theirs"].dropna()

        def row(source, frame):
            frame = frame[frame.index.isin(sizes)]   # the sizes the pipeline ran, the table's columns
            cells = [(cell(frame.loc[n, "mean"], frame.loc[n, "std"], frame.loc[n, "count"])
                      + ("" if pd.isna(frame.loc[n, "theirs"]) or frame.loc[n, "within"] else " †"))
                     if n in frame.index else "" for n in sizes]
            on = frame[frame["theirs"].notna() & frame["within"]].index
            return (f"| {curve_name} | {source} | " + " | ".join(cells) + " | "
                    + (", ".join(f"{n:,}" for n in on) or "none") + f" ({len(on)} of {int(frame['theirs'].notna().sum())}) |")
        lines.append(f"| {curve_name} | authors' figure | "
                     + " | ".join(f"{theirs[n]:.3f}" if n in theirs.index else "" for n in sizes) + " | |")
        lines.append(row("ours, the paper's text", slice_curve))
        lines.append(row("ours, their whole pipeline", mine))
    return lines + ["", f"†: {CURVE_BAND} or more from the authors' value at that n.", ""]


def paper_scale(records: dict[str, RunRecord], name: str, layers: int) -> list[str]:
    record = records[name]
    transfer = depth_transfer(records, name)   # the slice's rows and its options', read once for the section
    compared = beside_authors(our_curves(transfer, record.provenance.get("unplanned") or []))
    compared = compared[compared["layers"] == layers]
    header = [table for _, table in markdown_tables(record.text("arithmetic/paper_comparison.md"))
              if list(table.columns)[:2] == ["", "paper"]]
    lines = [f"### {layers} layers", "", provenance_line(record), "", record.provenance["title"] + ".", ""]
    for table in header[:1]:
        lines += ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in table.astype(str).values.tolist()] + [""]
    beside = [f"[`{other}`](#run-{other.lower()})" for other in records if other.startswith(f"{name}_")]
    if beside:
        lines += [f"Beside it, on its base and subnetwork or a hypothesis of their own: {', '.join(beside)}.", ""]
    return (lines + _curves_table(compared) + _text_claims_table(compared, layers)
            + curve_verdicts(records, name, layers, transfer, compared) + authors_pipeline(records, name, compared, layers)
            + magnitude_section(records, name, layers))


def vision_default(record: RunRecord) -> list[str]:
    lines = ["## Vision: the default (generated shape/texture world)", "", provenance_line(record), "",
             f"![Table 1 per metric: every model's mean over chains (SI in blue, its level dashed), each chain a dot]"
             f"({FIGURES}/vision_table1.png)", "",
             "### Table 1 (the record's `table1.md`)", ""]
    lines += embed(record.text("vision/table1.md"), 4)
    lines += ["### Every chain's difference and the verdict (the record's `comparisons.md`)", ""]
    lines += embed(record.text("vision/comparisons.md"), 4)
    lines += ["### The subnetworks (the record's `table2.md`)", ""]
    return lines + embed(record.text("vision/table2.md"), 4)


def table_rows(text: str, keep) -> list[str]:
    """The rows of a page's pipe tables for which keep(row) holds, each table under its heading (a table with no
    such row left out)."""
    lines = []
    for heading, frame in markdown_tables(text):
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
    lines += table_rows(record.text("arithmetic/chains.md"), lambda row: "magnitude" in str(row.get("comparison")))
    lines += ["### An architectural route to shape bias (vision)", "",
              "`scratch_blurpool` is `scratch` with anti-aliased downsampling (Zhang 2019: a blur before every "
              "stride), the same weights and training. Table 1's rows and the paired comparisons:", ""]
    lines += table_rows(record.text("vision/table1.md"),
                        lambda row: str(row.iloc[0]) in ("si", "scratch", "texture_swap", "scratch_blurpool"))
    lines += table_rows(record.text("vision/comparisons.md"), names("scratch_blurpool"))
    lines += ["### Arithmetic -> vision: the GPT-2's ab subnetwork frozen in a world ViT", "",
              "A ViT with the 2-layer GPT-2 base's blocks (width 128, 4 heads, MLP 512); `vit_gpt2_si_N`: the ab "
              "subnetwork's weights in its qkv / proj / fc1 / fc2, frozen; `vit_gpt2_sampled_N`: a count-matched "
              "random draw of the GPT-2's weights frozen; `vit_fresh_frozen_N`: as many fresh weights frozen; "
              "`vit_scratch_N`: nothing frozen; N training images per class. Table 1's rows and the comparisons:", ""]
    lines += table_rows(record.text("vision/table1.md"), names("vit_"))
    lines += table_rows(record.text("vision/comparisons.md"), names("vit_"))
    return lines + older_questions(record)


def older_questions(record: RunRecord) -> list[str]:
    """The questions answered beyond the paper before issue 48, from the same record (config/beyond.yaml): each
    table the pipeline made for them, as the record holds it."""
    def names(*words):
        return lambda row: any(word in str(row.iloc[0]) for word in words)

    lines = ["### Rewinding: fresh unkept weights or the base's own initial values? (arithmetic)", "",
             "`si_rewind` is SI whose unkept weights start at the base's own initialisation (the lottery-ticket "
             "rewind) instead of a fresh network's. The record's `chains.md`, its rows with `si_rewind`:", ""]
    lines += table_rows(record.text("arithmetic/chains.md"), lambda row: "si_rewind" in str(row.get("comparison")))
    if record.has("arithmetic/same_labels.md"):
        lines += ["### The same labels given as data (arithmetic)", "",
                  "The subtask rows the discovery read, given to the new model as data instead (multi-task `mixture`, "
                  "marked with a task token; `distill` from the subnetwork's answers), from a fresh start or the base's "
                  "unmasked tensors (`_inherit`). The record's `same_labels.md`:", ""]
        lines += embed(record.text("arithmetic/same_labels.md"), 4)
        lines += ["Paired, run by run (the record's `chains.md`):", ""]
        lines += table_rows(record.text("arithmetic/chains.md"),
                            lambda row: any(w in str(row.get("comparison")) for w in ("mixture", "distill")))
    for page, heading, prose in (
            ("arithmetic/sparsity_dial.md", "The bias's strength by kept fraction: the size dial (arithmetic)",
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
    lines += table_rows(record.text("vision/comparisons.md"), names("label_free"))
    lines += ["### Shape bias by augmentation: the texture swap (vision)", "",
              "`texture_swap` trains from scratch on the world's shapes drawn with textures no class and no cue-conflict "
              "stimulus uses (Stylized-ImageNet's idea without a style network); `texture_swap_finetune` fine-tunes "
              "the base on them. Table 1's rows and the paired comparisons:", ""]
    lines += table_rows(record.text("vision/table1.md"), names("texture_swap", "si", "scratch"))
    lines += table_rows(record.text("vision/comparisons.md"), names("texture_swap"))
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
            + table_rows(record.text("arithmetic/chains.md"),
                         lambda row: any(f" {name}" in f" {row.get('comparison')}".replace(" vs ", "  ")
                                         for name in ("signs", "mimetic", "mimetic_inherit")))
            + ["Test accuracy per chain (the record's `chains.md`):", ""]
            + table_rows(record.text("arithmetic/chains.md"), lambda row: str(row.get("variant")) in names))


def groupnorm_section(record: RunRecord) -> list[str]:
    """The BatchNorm question: the default's vision family on a ResNet whose normalisation stores no statistics."""
    return (["## The BatchNorm question: a GroupNorm ResNet (vision)", "", provenance_line(record), "",
             record.provenance["title"] + ". The default's subnetwork's pooled gain sits largely in the base's stored "
             "BatchNorm statistics, which SI's retraining re-estimates on original images; GroupNorm stores none.", "",
             "### Table 1 (the record's `table1.md`)", ""] + embed(record.text("vision/table1.md"), 4)
            + ["### Every chain's difference and the verdict (the record's `comparisons.md`)", ""]
            + embed(record.text("vision/comparisons.md"), 4)
            + ["### The subnetworks (the record's `table2.md`)", ""] + embed(record.text("vision/table2.md"), 4)
            + ["### Where the pooled gain sits (the record's `diagnostics.md`)", ""]
            + embed(record.text("vision/diagnostics.md"), 4))


def gpu_section(record: RunRecord) -> list[str]:
    """What the GPU check measured: the CUDA tests' gaps to the CPU and to points alone, then its throughput page
    (with the paper grid's GPU-hours) as the benchmark wrote it."""
    summary = record.text("summary.txt").splitlines()
    outcome = summary[0].removeprefix("gpu_check: ").split("; figures in")[0]
    throughput = []
    for line in embed(record.text("pack_throughput.md"), 3):  # a table opens a block of its own in Markdown
        if line.startswith("|") and throughput and throughput[-1] and not throughput[-1].startswith("|"):
            throughput.append("")
        throughput.append(line)
    measured = [line.removeprefix("[gpu-check] ") for line in summary if line.startswith("[gpu-check] ")]
    return (["## On a GPU: the check and the paper grid's GPU-hours", "", provenance_line(record), "",
             f"{record.provenance['title']}. Outcome: {outcome}; "
             f"{summary[-1].strip()}. What the CUDA tests measured (`tests/test_cuda.py`; each test bounds its gap):", ""]
            + [f"- {line}" for line in measured] + [""] + throughput)


def submasking_default(record: RunRecord) -> list[str]:
    text = record.text("submasking/tables.md")
    first = text.split("\n## ")[0]   # the test accuracy part; the rest (sparsity, k-NN, bytes) follows it
    rest = text[len(first):]
    return (["## Submasking: the default (the vision base, adapted to the configured tasks)", "", provenance_line(record), "",
             f"![Test accuracy per task: every adaptation's mean over replicates (the mask, fs, in blue, its level dashed), "
             f"each replicate a dot]({FIGURES}/submasking.png)",
             "", "### The record's `tables.md`", ""] + embed(first, 3) + embed(rest, 3))


def same_labels(record: RunRecord) -> list[str]:
    return (["### The same labels given as data, at the paper's scale (depth 2)", "", provenance_line(record), "",
             record.provenance["title"] + ".", ""] + embed(record.text("arithmetic/same_labels.md"), 2))


def exception_text(entry: dict) -> str:
    """A known gap or an unplanned set of points, as run.yaml states it: its points, then why."""
    where = ", ".join(f"{key} {value}" for key, value in entry.items() if key not in ("family", "why"))
    return f"{entry.get('family')} points{' with ' + where if where else ''}: {entry.get('why', '')}"


def provenance(records: dict[str, RunRecord]) -> list[str]:
    lines = ["## Provenance: the records", "",
             "Each record is a folder of `docs/data/` (the run's summary tables as the pipeline wrote them, and "
             "`run.yaml`); `python -m subtask_induction.pages.run_records` stores a finished run's. The plain step is "
             "`benchmarks/step_costs.py`'s (`make benchmark`) measured beside the run: scale a wall time by the "
             "ratio of yours to it. *Planned at*: the commit whose configs planned the record's points, where it is "
             "not the record's; *known gaps*: planned points the record lacks, and why; *unplanned*: points its "
             "tables hold that no config of the record planned, and why.", ""]
    if TIMING in records:
        lines += time_to_figure(records[TIMING])
    for name, record in records.items():
        p = record.provenance
        lines += [f"### run {name}", "", "| | |", "|---|---|"]
        for key in ("title", "command", "configs", "commit", "planned_at", "version", "date", "machine",
                    "plain_step_ms", "wall", "note", "known_gaps", "unplanned"):
            if key in p:
                value = ", ".join(f"`{v}`" for v in p[key]) if key == "configs" else (
                    f"`{p[key]}`" if key == "command" else "<br>".join(map(exception_text, p[key]))
                    if key in ("known_gaps", "unplanned") else p[key])
                lines.append(f"| {key.replace('_', ' ')} | {value} |")
        lines.append("")
    return lines


def time_to_figure(record: RunRecord) -> list[str]:
    """Where the reproduction's minutes go: benchmarks/time_to_figure.py's reports as the record stores them (each
    file a run: `make reproduce`, `make beyond`, before and after a change), under the record's own provenance."""
    lines = ["### Where the time goes", "", f"{provenance_line(record)} {record.provenance['title']}.", ""]
    for report in record.provenance.get("reports", []):
        lines += [f"**{report['run']}**", ""] + embed(record.text(report["file"]), 5)
    return lines


def render(records: dict[str, RunRecord]) -> str:
    found = all_claims(records)
    lines = ["# Results", "",
             "<!-- Rendered by `make docs` from the run records in docs/data/; edit the records or "
             "workflow/subtask_induction/pages/, not this page (a test renders it again and compares). -->", "",
             "The current answer of every experiment, each number read from a stored run record (its commit, "
             "machine and plain step under [Provenance](#provenance-the-records)). A comparison is judged over its "
             "chains, each chain (one subnetwork) one vote, by the [verdict rule](glossary.md#verdict-rule) "
             "(an exact sign-flip test, Holm over a claim's sizes, p < 0.05); the paper-scale rows compare our curves with the paper's text and the authors' own "
             "Fig 6. Words: [glossary](glossary.md). Earlier versions, and the claims that fell: "
             "[history](history/README.md).", "", "## Summary", "",
             claims_module.markdown(found, records, commits=False), "",
             f"![Fig 6 as small multiples: ours beside the authors' curve, per depth and curve]({FIGURES}/fig6.png)", ""]
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
    if GPU_CHECK in records:
        lines += gpu_section(records[GPU_CHECK])
    lines += provenance(records)
    return "\n".join(lines).rstrip() + "\n"


def _short(claim) -> str:
    """A claim in a few words for the verdict lines: its text without the parentheses, and where it was measured when
    the same text stands at two scales."""
    text = re.sub(r"\s*\([^)]*\)", "", claim.claim).removeprefix("The paper's text: ")
    scale = re.search(r"paper scale, (\d+ layers)", claim.scale)
    return text + (f" ({scale.group(1)})" if scale and claim.claim.startswith("The paper's text") else "")


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
    if claims_module.DIFFERS in words:
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
        reason = claims_module.short_reason(claim) if group != "Differs between the two records" else claim.holds.split(
            ": ", 1)[1]
        both = ", in both records" if claim.holds.endswith(", in both records") else ""
        if both and reason:
            second = claims_module.short_reason(replace(claim, leans=claim.second_leans))
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
    return "\n".join(lines + ["", claims_module.readme_key()])


def readme_claims(records: dict[str, RunRecord]) -> str:
    """The README's headline table: the claims marked headline, linked to the results page's provenance."""
    return claims_module.markdown([c for c in all_claims(records) if c.headline], records, link="docs/results.md",
                                  commits=False, key=False)


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
        dial = subnetworks.size_dial(records[BEYOND]) if BEYOND in records else pd.DataFrame()
        chains = {name: subnetworks.chain_table(records[name]) for name in DEFAULTS if name in records}
        items = default.csv("arithmetic/transfer.csv")["test_items"].unique()
        out.append(draw.gain_by_kept({k: v for k, v in chains.items() if not v.empty}, dial,
                                     docs / FIGURES / "subnetworks.png", test_items=int(items[0]) if len(items) == 1 else None,
                                     dial_runs=int(dial["runs"].max()) if not dial.empty else None))
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
    """The submasking adaptations on each task at the record's largest label fraction, a run (a training seed of the
    one backbone) followed across bars; chance 1 in the task's class count."""
    from . import figures as draw

    points = record.csv("submasking/points.csv")
    points = points[points["fraction"] == points["fraction"].max()]
    means = points.groupby(["task", "adaptation"])["test_accuracy"].mean().unstack("task").reset_index()
    tasks = sorted(points["task"].unique())
    metrics = {task: (label("data", task).word, label("data", task).meaning) for task in tasks}
    chance = {task: 1 / label("data", task).classes for task in tasks if label("data", task).classes}
    per_run = points.pivot_table(index=["adaptation", "replicate"], columns="task", values="test_accuracy").reset_index()
    order = [m for m in SUBMASKING if m in set(points["adaptation"])]
    order += sorted(set(points["adaptation"]) - set(order))
    backbones = sorted(points["backbone"].unique())
    fraction = points["fraction"].max()
    title = ("Submasking over one frozen backbone, " + ", ".join(label("data", b).key() for b in backbones)
             + ("; every training label" if fraction == 1 else f"; {fraction:.0%} of the training labels"))
    return draw.paired_panels(path, means, per_run, "adaptation", "replicate", metrics, order, "submasking",
                              title=title, highlight="fs", chance=chance, run_name="training seed",
                              chance_label="chance (1 in the task's classes)", ylabel="test accuracy (%)")
