"""Our arithmetic curves from a run record beside the authors' Fig 6: the numbers the paper-scale sections, the
claims table and the Fig 6 small multiples share.

A curve of ours is one of the figure's five (matched by transfer plan: arithmetic/paper.py's paper_form), or one
of the authors'-code options beside it (arithmetic/paper.py's authors_code_option). "On the authors' curve" means
less than CURVE_BAND from their plotted value (both to 3 decimals) at that n: their figure is one run, so no seed spread of theirs exists to
judge by, and ours at one replicate has none either; 0.05 is about twice the largest spread of our five replicates
at n = 1,000 at depth 2 (0.023-0.054), so a difference beyond it is more than seed noise of ours."""

from __future__ import annotations

import pandas as pd

from ..rounding import fixed
from .planned import gap_rows

from ..arithmetic.paper import (AUTHORS_CURVES, MAIN_EXPERIMENT, NEAR_PERFECT, PAPER_TEXT, authors_code_option,
                                authors_curves, paper_form, smallest_n)

CURVE_BAND = 0.05
AUTHORS_PIPELINE = "authors_pipeline"   # config/paper_hypotheses/authors_pipeline.yaml's record: <slice>_authors_pipeline
PROTOCOLS = ("eval", "last")


def main_rows(transfer: pd.DataFrame) -> pd.DataFrame:
    base, subtask, target = MAIN_EXPERIMENT
    return transfer[(transfer["base"] == base) & (transfer["subtask"] == subtask) & (transfer["target"] == target)]


def curve_stats(rows: pd.DataFrame) -> pd.DataFrame:
    """n -> mean, std, runs of one curve under one protocol (each run: a chain and replicate)."""
    per_run = rows.groupby(["n", "chain", "replicate"])["test_accuracy"].mean().reset_index()
    return per_run.groupby("n")["test_accuracy"].agg(["mean", "std", "count"])


def curve_rows(transfer: pd.DataFrame) -> pd.DataFrame:
    """The main experiment's rows that stand for one of the figure's curves: `curve` (the curve), `label` ("" for
    the paper's form of it, else the variant and the authors'-code options it was trained with)."""
    rows = main_rows(transfer)
    plain = paper_form(rows).assign(curve=lambda f: f["kind"], label="")
    options = rows.apply(authors_code_option, axis=1) if len(rows) else pd.Series(dtype=object)
    chosen = rows[options.notna()]
    optional = chosen.assign(curve=options.dropna().map(lambda o: o[0]),
                             label=[f"{variant}: {o[1]}" for variant, o in zip(chosen["variant"], options.dropna())])
    return pd.concat([plain, optional], ignore_index=True)


def _stats(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frames = [curve_stats(group).reset_index().assign(**dict(zip(keys, values)))
              for values, group in rows.groupby(keys)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def our_curves(transfer: pd.DataFrame, unplanned: list[dict] = ()) -> pd.DataFrame:
    """Every curve of ours in the record: layers, curve (the figure's curve it stands beside), label (the plain
    curve, or the authors'-code option), protocol, n, mean, std, runs; over the planned runs only (`unplanned`: the
    record's run.yaml entries of that name, rows kept in its tables that no config planned, never averaged in)."""
    mine = [gap for gap in unplanned if gap.get("family") == "arithmetic"]
    if mine:
        transfer = transfer[~gap_rows(transfer, mine)]
    return _stats(curve_rows(transfer), ["layers", "curve", "label", "protocol"])


def pipeline_curves(transfer: pd.DataFrame) -> pd.DataFrame:
    """A whole-pipeline record's five curves (each trained with whatever options the pipeline sets, so one variant
    a curve): our_curves' columns, label ""."""
    rows = curve_rows(transfer)
    several = rows.groupby(["layers", "curve", "protocol"])["variant"].nunique()
    if (several > 1).any():
        raise ValueError(f"a whole-pipeline record has one variant per curve; these have several: "
                         f"{sorted(set(several[several > 1].index.get_level_values('curve')))}")
    return _stats(rows.assign(label=""), ["layers", "curve", "label", "protocol"])


def beside_authors(curves: pd.DataFrame) -> pd.DataFrame:
    """our_curves with the authors' value at the same depth, curve and n, where their figure has it."""
    theirs = authors_curves().rename(columns={"depth": "layers", "kind": "curve", "test_accuracy": "theirs"})
    out = curves.merge(theirs, on=["layers", "curve", "n"], how="left")
    difference = (out["mean"] - out["theirs"]).round(3)
    return out.assign(difference=difference, within=difference.abs() < CURVE_BAND)


def cell(mean, std, runs) -> str:
    return f"{fixed(mean, 3)}" + (f" ± {fixed(std, 3)}" if runs > 1 else "") + f" ({int(runs)})"


def on_their_curve(compared: pd.DataFrame, layers: int, curve: str, protocol: str, label: str = "") -> dict:
    """Where one curve of ours sits against the authors': the shared n within CURVE_BAND and those outside."""
    rows = compared[(compared["layers"] == layers) & (compared["curve"] == curve) & (compared["protocol"] == protocol)
                    & (compared["label"] == label) & compared["theirs"].notna()].sort_values("n")
    return {"within": rows[rows["within"]], "outside": rows[~rows["within"]]}


def text_claims(compared: pd.DataFrame, layers: int, protocol: str) -> dict:
    """The paper's text at this depth, read from our curves and from the authors' figure."""
    theirs = authors_curves()
    theirs = theirs[theirs["depth"] == layers]

    def ours(curve, n):
        row = compared[(compared["layers"] == layers) & (compared["curve"] == curve) & (compared["label"] == "")
                       & (compared["protocol"] == protocol) & (compared["n"] == n)]
        return row.iloc[0] if len(row) else None

    def figure(curve, n):
        row = theirs[(theirs["kind"] == curve) & (theirs["n"] == n)]
        return float(row["test_accuracy"].iloc[0]) if len(row) else None

    def first(curve, source):
        if source == "authors":
            series = theirs[theirs["kind"] == curve].set_index("n")["test_accuracy"]
        else:
            series = compared[(compared["layers"] == layers) & (compared["curve"] == curve)
                              & (compared["label"] == "") & (compared["protocol"] == protocol)].set_index("n")["mean"]
        return (smallest_n(series), int(series.index.max())) if len(series) else (None, None)

    return {"si": ours("subnetwork", PAPER_TEXT["si_near_perfect_n"]),
            "si_figure": figure("subnetwork", PAPER_TEXT["si_near_perfect_n"]),
            "random": ours("random", PAPER_TEXT["random_at_n"]),
            "random_figure": figure("random", PAPER_TEXT["random_at_n"]),
            "first": {(curve, source): first(curve, source) for curve in ("subnetwork", "sampled")
                      for source in ("ours", "authors")}}


__all__ = ["AUTHORS_CURVES", "AUTHORS_PIPELINE", "CURVE_BAND", "HYPOTHESIS_RECORDS", "NEAR_PERFECT", "PAPER_TEXT",
           "PROTOCOLS", "beside_authors", "cell", "curve_rows", "curve_stats", "main_rows", "on_their_curve",
           "our_curves", "pipeline_curves", "rival_beside_si", "text_claims"]


# What the authors' code does differently from the paper's text and ours, the curves each can move, and how a
# record of ours runs it: a transfer kind (its rows carry the kind), a transfer setting (its rows carry the
# column), a run record of its own (a hypothesis overlay's run, stored as `<slice>_<name>`: the depth-2 slice's
# `paper_depth2_coverage_rows`), or nothing yet (not built).
AUTHORS_CODE_DIFFERENCES = [
    ("their sampled control freezes N−k of the base's weights (ours: k)", ("sampled",), ("kind", "sampled_authors")),
    ("their complement control freezes N−k, the k drawn outside the subnetwork", ("complement",),
     ("kind", "complement_authors")),
    ("fresh masked weights N(0, 0.02) for every matrix (ours: HF's init)", ("subnetwork", "sampled"),
     ("setting", "masked_init_std")),
    ("their discovery's AdamW weight decay 0.01 on the mask logits (ours: 0)", ("subnetwork", "kept"),
     ("record", "discovery_weight_decay")),
    ("coverage disambiguation rows for n ≤ 1,000 (each number on a row)", tuple(AUTHORS_CURVES),
     ("record", "coverage_rows")),
    ("the HF-Trainer base schedule (lr linearly to 0, clipping 1.0, the lowest eval-loss epoch kept)",
     ("full", "subnetwork", "sampled", "kept"), ("record", "base_schedule_hf")),
    ("all of them at once (their whole pipeline)", (*AUTHORS_CURVES, "kept"), ("record", AUTHORS_PIPELINE)),
]
# the records (`<slice>_<name>`) of a base, data or discovery of their own: never mixed into the slice's curves
HYPOTHESIS_RECORDS = {how[1] for _, _, how in AUTHORS_CODE_DIFFERENCES if how and how[0] == "record"}


def moved(value: float, without: float, theirs: float) -> str:
    """How an option moved our value relative to the authors' (CURVE_BAND; 0.01: closer or farther by more than
    rounding)."""
    # to 3 decimals, as beside_authors judges "within" (0.975 - 0.925 is 0.04999... in floating point)
    before, after = round(abs(without - theirs), 3), round(abs(value - theirs), 3)
    return ("onto theirs" if after < CURVE_BAND <= before else "on theirs, as without it" if after < CURVE_BAND
            else "toward theirs" if after < before - 0.01 else "away from theirs" if after > before + 0.01
            else "no closer")


def effect_text(effect: dict) -> str:
    return (f"n = {int(effect['n']):,}: {fixed(effect['value'], 3)} against {fixed(effect['without'], 3)} without it, theirs "
            f"{fixed(effect['theirs'], 3)} ({effect['moved']})")


def option_effect(compared: pd.DataFrame, curve: str, label_prefix: str, layers: int) -> list[dict]:
    """What one option of theirs did to one curve of ours, at every n it ran beside the authors' figure: n, its
    value, ours without it, theirs, and how it moved."""
    rows = compared[(compared["layers"] == layers) & (compared["curve"] == curve) & (compared["protocol"] == "eval")]
    option = rows[rows["label"].str.startswith(label_prefix)]
    plain = rows[rows["label"] == ""].set_index("n")
    out = []
    for row in option.sort_values("n").itertuples():
        ours = plain["mean"].get(row.n)
        if pd.isna(row.theirs) or ours is None:
            continue
        out.append({"n": row.n, "value": row.mean, "without": ours, "theirs": row.theirs,
                    "moved": moved(row.mean, ours, row.theirs)})
    return out


PAIR_KEYS = ["layers", "chain", "replicate", "n"]


def rival_beside_si(records: dict, name: str, rival: str, layers: int) -> pd.DataFrame | str:
    """A rival's points (record `<slice>_<rival>`, on the slice's base and discovery) beside the slice's SI and
    sampled points of the same depth, chain, replicate and n, under `eval`: layers, chain, n, replicate, rival, si,
    sampled, overlap, chance. Pairs only where each side has one row per key and the rival's subnetwork is the
    slice's (its kept fraction per chain, the fingerprint both records' tables carry, equal to 12 digits); otherwise
    the reason it cannot pair them (a string), never a pairing of other runs."""
    record = records.get(f"{name}_{rival}")
    if record is None or name not in records:
        return pd.DataFrame()
    mine, slice_rows = record.csv("arithmetic/transfer.csv"), records[name].csv("arithmetic/transfer.csv")
    mine = mine[(mine["kind"] == rival) & (mine["protocol"] == "eval") & (mine["layers"] == layers)]
    plain = paper_form(main_rows(slice_rows))
    plain = plain[(plain["protocol"] == "eval") & (plain["layers"] == layers)]
    for side, rows in ((f"{name}_{rival}", mine), (name, plain)):
        twice = rows[rows.duplicated(PAIR_KEYS + ["kind"], keep=False)]
        if len(twice):
            first = twice.iloc[0]
            return (f"{side} has more than one {first['kind']} row at chain {first['chain']}, replicate "
                    f"{first['replicate']}, n = {first['n']}")
    kept = lambda rows: rows.groupby("chain")["mask_fraction"].agg(lambda v: sorted(set(v.round(12))))  # noqa: E731
    theirs, ours = kept(mine), kept(plain[plain["kind"] == "subnetwork"])
    for chain, fractions in theirs.items():
        if chain not in ours.index:
            return f"the slice {name} has no SI run of chain {chain}"
        if fractions != ours[chain] or len(fractions) != 1:
            return (f"the subnetworks differ at chain {chain}: {name}_{rival} keeps {fractions}, the slice {name} keeps "
                    f"{ours[chain]} (another base or discovery)")
    by_kind = {kind: plain[plain["kind"] == kind].set_index(PAIR_KEYS)["test_accuracy"] for kind in ("subnetwork", "sampled")}
    out = []
    for row in mine.sort_values(["n", "chain", "replicate"]).itertuples():
        key = (row.layers, row.chain, row.replicate, row.n)
        out.append({"layers": row.layers, "chain": row.chain, "n": row.n, "replicate": row.replicate,
                    rival: row.test_accuracy, "si": by_kind["subnetwork"].get(key), "sampled": by_kind["sampled"].get(key),
                    "overlap": getattr(row, "overlap_jaccard", float("nan")),
                    "chance": getattr(row, "overlap_chance", float("nan"))})
    return pd.DataFrame(out)
