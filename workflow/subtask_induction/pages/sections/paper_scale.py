"""## Arithmetic at the paper's scale, beside the authors' Fig 6: per depth, our curves against theirs, the paper's
text's claims, the options that move a curve (the authors' code, their pipeline), the engines' equality, and the
base's largest weights as a rival."""

from __future__ import annotations

import pandas as pd

from ...rounding import fixed
from ...arithmetic.paper import TABLE3_KEPT_PERCENT, authors_code_option, authors_curves
from ...labels import TRANSFER
from ..curves import (AUTHORS_CODE_DIFFERENCES, AUTHORS_CURVES, AUTHORS_PIPELINE, CURVE_BAND, HYPOTHESIS_RECORDS,
                      NEAR_PERFECT, PAPER_TEXT, beside_authors, cell, curve_rows, effect_text, moved,
                      on_their_curve, option_effect, our_curves, pipeline_curves, rival_beside_si, text_claims)
from ..page import FIGURES, embed, provenance_line
from ..run_records import RunRecord


def _curves_table(compared: pd.DataFrame) -> list[str]:
    sizes = sorted(compared["n"].unique())
    lines = ["| curve | source | " + " | ".join(f"n = {n:,}" for n in sizes) + " |", "|---|---|" + "---|" * len(sizes)]
    for curve in AUTHORS_CURVES:
        name = TRANSFER[curve].markdown()
        ours = compared[compared["curve"] == curve]
        if ours.empty:
            continue
        theirs = ours.dropna(subset=["theirs"]).drop_duplicates("n").set_index("n")["theirs"]
        lines.append(f"| {name} | authors' figure | " + " | ".join(f"{fixed(theirs[n], 3)}" if n in theirs.index else ""
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
        return f"{fixed(sampled / si, 1)}× ({sampled:,} / {si:,})" if sampled else f"sampled not by {most:,}"

    figure = found["eval"]
    lines.append(f"| SI near-perfect with {PAPER_TEXT['si_near_perfect_n']:,} rows | ≥ {NEAR_PERFECT} | "
                 f"{fixed(figure['si_figure'], 3)} | {ours('si', 'eval')} | {ours('si', 'last')} |")
    lines.append(f"| random init on the same data ({PAPER_TEXT['random_at_n']:,} rows) | {fixed(PAPER_TEXT['random'], 3)} | "
                 f"{fixed(figure['random_figure'], 3)} | {ours('random', 'eval')} | {ours('random', 'last')} |")
    lines.append(f"| sampled needs about {PAPER_TEXT['sampled_factor']}× SI's rows to reach {NEAR_PERFECT} | "
                 f"{PAPER_TEXT['sampled_factor']}× | {factor('authors')} | {factor('eval')} | {factor('last')} |")
    return lines + ["", "Smallest n: the first n of each grid (theirs: their figure's; ours: the n we ran) whose "
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
    for table in (t for _, t in record.tables("arithmetic/paper_comparison.md")
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
            f"{figures['masked_entries']:,} hard-mask entries differ at the end, kept {fixed(100 * last['kept_ours'], 3)}% "
            f"(ours) and {fixed(100 * last['kept_theirs'], 3)}% (theirs), the subtask's test accuracy "
            f"{fixed(figures['ours_selected']['test_accuracy'], 3)} and {fixed(last['test_accuracy_theirs'], 3)}; the scores differ "
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
    fmt = lambda v: "—" if v is None or pd.isna(v) else f"{fixed(v, 3)}"  # noqa: E731
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
                     + " | ".join(f"{fixed(theirs[n], 3)}" if n in theirs.index else "" for n in sizes) + " | |")
        lines.append(row("ours, the paper's text", slice_curve))
        lines.append(row("ours, their whole pipeline", mine))
    return lines + ["", f"†: {CURVE_BAND} or more from the authors' value at that n.", ""]


def paper_scale(records: dict[str, RunRecord], name: str, layers: int) -> list[str]:
    record = records[name]
    transfer = depth_transfer(records, name)   # the slice's rows and its options', read once for the section
    compared = beside_authors(our_curves(transfer, record.provenance.get("unplanned") or []))
    compared = compared[compared["layers"] == layers]
    header = [table for _, table in record.tables("arithmetic/paper_comparison.md")
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


def same_labels(record: RunRecord) -> list[str]:
    return (["### The same labels given as data, at the paper's scale (depth 2)", "", provenance_line(record), "",
             record.provenance["title"] + ".", ""] + embed(record.text("arithmetic/same_labels.md"), 2))
