"""The claims table (docs/results.md's summary, the README's headline): one row per claim, whether it holds in
every run, and the numbers, every cell read from a run record.

A claim of the default run holds only where the pipeline's paired test finds it in every run (chains.md,
comparisons.md: a run's difference counts only beyond noise on the same test items). A claim at the paper's
scale compares our curve with the paper's text or the authors' figure at a stated n (curves.py's band)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pandas as pd

from .curves import (CURVE_BAND, NEAR_PERFECT, PAPER_TEXT, beside_authors, on_their_curve, our_curves,
                     rival_beside_si, text_claims)
from .run_records import RunRecord, markdown_tables

# The default run's arithmetic questions: (first, second) as chains.md names them, and how the claim reads.
ARITHMETIC_CLAIMS = [("si", "sampled", "SI beats the count-matched random mask (`sampled`)"),
                     ("si", "random", "SI beats random initialisation"),
                     ("si", "full", "SI beats fine-tuning the whole base (`full`)")]
# The default run's vision questions: (comparison, metric) as comparisons.md names them, how the claim reads,
# and whether the README shows it.
VISION_CLAIMS = [("subnetwork vs base", "pooled_accuracy", "The subnetwork beats the base on pooled images", True),
                 ("subnetwork vs base", "shape_bias", "The subnetwork has more shape bias than the base", False),
                 ("si vs scratch", "pooled_accuracy", "SI beats training from scratch on pooled images", True),
                 ("si vs scratch", "shape_bias", "SI has more shape bias than training from scratch", True),
                 ("si vs mixture", "pooled_accuracy", "SI beats the data mixture (pooled images as data) on pooled images",
                  True),
                 ("si vs finetune", "cue_shape_accuracy", "SI beats fine-tuning on cue-conflict shape accuracy", False)]
# Beyond the paper (config/beyond.yaml, issue 48): the rivals a reviewer names next, answered by the same paired
# tests on the default's chains. Is the discovery needed (the base's largest weights instead)?
BEYOND_ARITHMETIC = [("si", "magnitude", "SI beats the base's largest weights, count-matched per tensor (`magnitude`)")]
# An architectural route to shape bias (anti-aliased downsampling, trained as scratch) beside SI
BEYOND_VISION = [
    ("si vs scratch_blurpool", "shape_bias",
     "SI has more shape bias than an architectural route (scratch with blur-pooled downsampling)", True),
    ("si vs scratch_blurpool", "pooled_accuracy", "SI beats blur-pooled scratch on pooled images", False),
    ("si vs scratch_blurpool", "cue_shape_accuracy", "SI beats blur-pooled scratch on cue-conflict shape accuracy",
     False),
    ("scratch_blurpool vs scratch", "shape_bias", "Blur-pooled downsampling gives scratch more shape bias", False),
    ("scratch_blurpool vs texture_swap", "shape_bias",
     "Blur-pooled scratch has more shape bias than the texture-swap augmentation", False),
]
# Arithmetic -> vision: the GPT-2's ab subnetwork frozen in a world ViT (vit_gpt2_si_<images per class>) against
# each control of the same size, on the world's own test images (the sample-efficiency question; pooled images
# in the numbers): (rival's stem, how the claim reads, in the README)
CROSS_DOMAIN = [
    ("vit_gpt2_sampled", "The arithmetic subnetwork, frozen in a world ViT, beats a count-matched random draw of the "
                         "GPT-2's weights on the world's test images", True),
    ("vit_fresh_frozen", "The arithmetic subnetwork, frozen in a world ViT, beats as many fresh weights frozen on "
                         "the world's test images", False),
    ("vit_scratch", "The arithmetic subnetwork, frozen in a world ViT, beats the ViT from scratch on the world's test "
                    "images", False),
]
CURVE_NAMES = {"subnetwork": "SI", "full": "full", "sampled": "sampled", "complement": "complement",
               "random": "random init"}


@dataclass(frozen=True)
class Claim:
    family: str
    scale: str
    claim: str
    holds: str
    numbers: str
    record: str
    headline: bool = True   # in the README's table too


def verdict_word(verdict: str, first: str, second: str) -> str:
    """chains.md / comparisons.md verdict -> `yes` (first higher in every run), `reversed`, `tied`, `k of N`."""
    if verdict.startswith(f"{first} higher in every"):
        return "yes"
    if verdict.startswith(f"{second} higher in every"):
        return "reversed"
    if verdict.startswith("tied in every"):
        return "tied"
    mixed = re.match(rf"mixed: {re.escape(first)} higher in (\d+), .* of (\d+)", verdict)
    if mixed:
        return f"{mixed.group(1)} of {mixed.group(2)}"
    return verdict


def holds_text(words: dict) -> str:
    """{where: verdict word} -> the claims table's cell: `yes`, `no`, or where it holds and where not."""
    if all(word == "yes" for word in words.values()):
        return f"**yes** ({', '.join(words)})"
    if not any(word == "yes" for word in words.values()):
        return "no (" + "; ".join(f"{where}: {word}" for where, word in words.items()) + ")"
    return ("**at " + ", ".join(where for where, word in words.items() if word == "yes") + "**; not at "
            + "; ".join(f"{where} ({word})" for where, word in words.items() if word != "yes"))


def verdict_rows(record: RunRecord, page: str, header_column: str, protocol: str | None = None) -> pd.DataFrame:
    frames = [table for heading, table in markdown_tables(record.text(page))
              if header_column in table.columns and "verdict" in table.columns
              and (protocol is None or f"protocol `{protocol}`" in heading)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_means(transfer: pd.DataFrame, layers: int, protocol: str) -> pd.DataFrame:
    rows = transfer[(transfer["layers"] == layers) & (transfer["protocol"] == protocol)]
    per_run = rows.groupby(["variant", "n", "chain", "replicate"])["test_accuracy"].mean().reset_index()
    return per_run.groupby(["variant", "n"])["test_accuracy"].agg(["mean", "std", "count"])


def arithmetic_default(record: RunRecord, layers: int = 2, protocol: str = "last",
                       questions=ARITHMETIC_CLAIMS) -> list[Claim]:
    verdicts = verdict_rows(record, "arithmetic/chains.md", "layers", protocol)
    verdicts = verdicts[verdicts["layers"] == str(layers)]
    means = run_means(record.csv("arithmetic/transfer.csv"), layers, protocol)
    if means.empty:
        return []
    runs = int(means["count"].max())
    claims = []
    for first, second, text in questions:
        rows = verdicts[verdicts["comparison"] == f"{first} vs {second}"]
        if rows.empty:
            continue
        words = {f"n = {n}": verdict_word(v, first, second) for n, v in zip(rows["n"], rows["verdict"])}
        numbers = "; ".join(f"n = {n}: {means.loc[(first, int(n)), 'mean']:.3f} vs {means.loc[(second, int(n)), 'mean']:.3f}"
                            for n in rows["n"])
        claims.append(Claim("arithmetic", f"default, {layers} layers, {runs} runs, `{protocol}`", text,
                            holds_text(words), numbers, record.name))
    return claims


def vision_default(record: RunRecord, questions=VISION_CLAIMS) -> list[Claim]:
    verdicts = verdict_rows(record, "vision/comparisons.md", "metric")
    table = record.csv("vision/table1.csv").set_index("model")
    chains = int(table["pooled_accuracy_count"].max())
    claims = []
    for comparison, metric, text, headline in questions:
        row = verdicts[(verdicts["comparison"] == comparison) & (verdicts["metric"] == metric)]
        if row.empty:
            continue
        first, second = comparison.split(" vs ")
        word = verdict_word(row["verdict"].iloc[0], first, second)
        holds = "**yes**" if word == "yes" else f"no ({word})"
        numbers = (f"{100 * table.loc[first, metric]:.1f} vs {100 * table.loc[second, metric]:.1f} % "
                   f"(per chain: {row['difference per chain (points)'].iloc[0]} points)")
        claims.append(Claim("vision", f"default (generated world), {chains} chains", text, holds, numbers,
                            record.name, headline))
    return claims


def cross_domain(record: RunRecord) -> list[Claim]:
    """Per training-set size, the transferred ViT against each control on the world's test images (paired, chain by
    chain): the sample-efficiency curve; the numbers give pooled accuracy too."""
    verdicts = verdict_rows(record, "vision/comparisons.md", "metric")
    if verdicts.empty:
        return []
    table = record.csv("vision/table1.csv").set_index("model")
    sizes = sorted(int(name.rsplit("_", 1)[1]) for name in table.index if re.fullmatch(r"vit_gpt2_si_\d+", name))
    claims = []
    for rival, text, headline in CROSS_DOMAIN:
        words, numbers = {}, []
        for size in sizes:
            first, second = f"vit_gpt2_si_{size}", f"{rival}_{size}"
            row = verdicts[(verdicts["comparison"] == f"{first} vs {second}")
                           & (verdicts["metric"] == "original_accuracy")]
            if row.empty or second not in table.index:
                continue
            words[f"{size}/class"] = verdict_word(row["verdict"].iloc[0], first, second)
            numbers.append(f"{size}/class: {100 * table.loc[first, 'original_accuracy']:.1f} vs "
                           f"{100 * table.loc[second, 'original_accuracy']:.1f} % (pooled "
                           f"{100 * table.loc[first, 'pooled_accuracy']:.1f} vs "
                           f"{100 * table.loc[second, 'pooled_accuracy']:.1f})")
        if words:
            chains = int(table.loc[f"vit_gpt2_si_{sizes[0]}", "pooled_accuracy_count"])
            claims.append(Claim("vision", f"beyond: generated world, ViT of the 2-layer GPT-2's blocks, {chains} chains",
                                text, holds_text(words), "; ".join(numbers), record.name, headline))
    return claims


def beyond(record: RunRecord) -> list[Claim]:
    """The record of `make beyond` (the default with config/beyond.yaml): only the questions it adds."""
    default_shaped = arithmetic_default(record, questions=BEYOND_ARITHMETIC) + vision_default(record, BEYOND_VISION)
    return [replace(claim, scale=claim.scale.replace("default", "beyond", 1)) for claim in default_shaped] \
        + cross_domain(record)


def submasking_default(record: RunRecord) -> list[Claim]:
    """A mask over the frozen backbone against the linear probe and fine-tuning, per task, at full labels: each
    replicate's test accuracy (no per-item test is kept for submasking, so a claim needs every replicate)."""
    points = record.csv("submasking/points.csv")
    points = points[points["fraction"] == points["fraction"].max()]
    claims = []
    for rival, text in (("lp", "A mask over the frozen backbone (`fs`) beats a linear probe (`lp`)"),
                        ("fft", "A mask over the frozen backbone (`fs`) beats fine-tuning (`fft`)")):
        words, numbers = {}, []
        for task, rows in points.groupby("task"):
            by = rows.pivot_table(index="replicate", columns="adaptation", values="test_accuracy")
            if "fs" not in by or rival not in by:
                continue
            difference = by["fs"] - by[rival]
            words[task] = ("yes" if (difference > 0).all() else "reversed" if (difference < 0).all()
                           else f"{int((difference > 0).sum())} of {len(difference)}")
            numbers.append(f"{task}: {100 * by['fs'].mean():.1f} vs {100 * by[rival].mean():.1f} %")
        if words:
            claims.append(Claim("submasking", f"default, {points['replicate'].nunique()} replicates, every label",
                                text, holds_text(words), "; ".join(numbers), record.name, headline=rival == "lp"))
    return claims


def paper_scale(record: RunRecord, layers: int) -> list[Claim]:
    compared = beside_authors(our_curves(record.csv("arithmetic/transfer.csv")))
    compared = compared[compared["layers"] == layers]
    if compared.empty:
        return []
    scale = f"paper scale, {layers} layers"
    claims = []
    for protocol in ("eval", "last"):
        text = text_claims(compared, layers, protocol)
        si = text["si"]
        if si is not None:
            claims.append(Claim("arithmetic", f"{scale}, `{protocol}`",
                                f"The paper's text: SI near-perfect (≥ {NEAR_PERFECT}) with {PAPER_TEXT['si_near_perfect_n']:,} rows",
                                "**yes**" if si["mean"] >= NEAR_PERFECT else "no",
                                f"ours {si['mean']:.3f}" + (f" ± {si['std']:.3f} ({int(si['count'])} runs)" if si["count"] > 1 else "")
                                + f"; the authors' figure {text['si_figure']:.3f}", record.name,
                                headline=protocol == "eval"))
    ours = text_claims(compared, layers, "eval")
    (si_first, si_max), (sampled_first, sampled_max) = ours["first"][("subnetwork", "ours")], ours["first"][("sampled", "ours")]
    (their_si, _), (their_sampled, _) = ours["first"][("subnetwork", "authors")], ours["first"][("sampled", "authors")]
    if si_first is not None:
        factor = f"{sampled_first / si_first:.1f}×" if sampled_first else f"sampled not by {sampled_max:,}"
        theirs = f"{their_sampled / their_si:.1f}×" if their_si and their_sampled else "—"
        holds = "no" if not sampled_first or sampled_first / si_first < PAPER_TEXT["sampled_factor"] / 2 else "**yes**"
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            f"The paper's text: the count-matched random mask needs about {PAPER_TEXT['sampled_factor']}× SI's rows to reach {NEAR_PERFECT}",
                            holds, f"ours {factor} (on our grid of n); the authors' figure {theirs}", record.name))
    for curve, name in CURVE_NAMES.items():
        where = on_their_curve(compared, layers, curve, "eval")
        within, outside = where["within"], where["outside"]
        if within.empty and outside.empty:
            continue
        if outside.empty:
            holds, numbers = "**yes**", f"at n = {', '.join(f'{n:,}' for n in within['n'])}"
        else:
            worst = outside.loc[outside["difference"].abs().idxmax()]
            holds = "no" if within.empty else f"at {len(within)} of {len(within) + len(outside)} n"
            numbers = (f"off at n = {', '.join(f'{n:,}' for n in outside['n'])}; most {worst['mean']:.3f} against "
                       f"{worst['theirs']:.3f} at {int(worst['n']):,}")
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            f"Our {name} curve lies on the authors' Fig 6 (less than {CURVE_BAND} away at every n both ran)",
                            holds, numbers, record.name, headline=False))
    option = compared[(compared["curve"] == "sampled") & compared["label"].str.contains("N−k", regex=False)
                      & (compared["protocol"] == "eval") & compared["theirs"].notna() & (compared["label"].str.startswith("sampled_authors:"))]
    if len(option):
        within = option["within"]
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            "Their sampled curve is their code's control (N−k of the base's weights frozen), not the text's (k)",
                            "**yes**" if within.all() else ("no" if not within.any() else
                                                            f"at n = {', '.join(f'{n:,}' for n in option[within]['n'])} only"),
                            "; ".join(f"n = {int(r.n):,}: {r.mean:.3f} vs theirs {r.theirs:.3f}" for r in option.itertuples()),
                            record.name, headline=layers == 12))
    return claims


def magnitude_rival(records: dict[str, RunRecord], name: str, layers: int) -> list[Claim]:
    """SI against the base's largest weights (count-matched per tensor), run by run on the same replicates."""
    table = rival_beside_si(records, name, "magnitude", layers)
    if table.empty or table["si"].isna().all():
        return []
    words, numbers = {}, []
    for n, rows in table.groupby("n"):
        # no per-item record of the rival's run is stored: a run counts only beyond 0.01 (10 of 1,000 test pairs)
        difference = rows["si"] - rows["magnitude"]
        higher, lower = int((difference > 0.01).sum()), int((difference < -0.01).sum())
        words[f"n = {int(n):,}"] = ("yes" if higher == len(rows) else "reversed" if lower == len(rows) else
                                    "tied" if higher == lower == 0 else f"{higher} of {len(rows)}")
        numbers.append(f"n = {int(n):,}: SI {rows['si'].mean():.3f} vs magnitude {rows['magnitude'].mean():.3f}")
    overlap = f"; Jaccard with the subnetwork {table['overlap'].mean():.3f} against chance {table['chance'].mean():.3f}"
    return [Claim("arithmetic", f"paper scale, {layers} layers, {table['replicate'].nunique()} runs, `eval` (no paired test)",
                  "SI beats the base's largest weights, count-matched per tensor (`magnitude`), by more than 0.01 in every run",
                  holds_text(words),
                  "; ".join(numbers) + overlap, f"{name}_magnitude", headline=False)]


def markdown(claims: list[Claim], records: dict[str, RunRecord], link: str = "", commits: bool = True) -> str:
    """The table; `link` is the results page's path from where the table is shown (its provenance anchors)."""
    lines = ["| family | claim | holds in every run? | the numbers | scale | record |", "|---|---|---|---|---|---|"]
    for claim in claims:
        record = records[claim.record].provenance
        anchor = f"[{claim.record}]({link}#run-{claim.record.lower()})"
        lines.append(f"| {claim.family} | {claim.claim} | {claim.holds} | {claim.numbers} | {claim.scale} | "
                     f"{anchor}" + (f" ({record['commit']})" if commits else "") + " |")
    return "\n".join(lines)
