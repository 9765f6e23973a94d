"""The paper's arithmetic results (arXiv 2310.10899 §4, Table 3, Fig 6) and ours beside them.

Two references, kept apart because they do not always agree:
- the paper's **text**: SI near-perfect with 1,000 disambiguation rows at every depth, random initialisation
  "trained on the same data" at 50.6%, the count-matched sampled mask needing about 6x SI's data, every base
  at >= 0.999, every subnetwork (near) perfect on ab, Table 3's kept fractions;
- the authors' own **figure**: their Fig 6 per depth as plotted (data/authors_fig6.csv; its README says how
  it was read), five curves per depth.
summary/paper_comparison.md sets our curves beside both at every n we share with the figure, under the
paper's selection protocol (`eval`) and the leak-free one (`last`), and says which rows the runs trained on.
A curve is matched to the figure by its transfer plan (kind, frozen, inherited tensors), not by its name.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from ..rounding import fixed
from ..page_tables import PageTables

from ..labels import TRANSFER
from ..method.kinds import KINDS

from .tables import rows_statement

MAIN_EXPERIMENT = ("a+ab", "ab", "a2+ab")
TABLE3_KEPT_PERCENT = {2: 7.68, 4: 7.00, 6: 4.70, 8: 3.55, 10: 3.56, 12: 3.20}
NEAR_PERFECT = 0.99
THRESHOLDS = (0.95, NEAR_PERFECT)
# What the text states (§4): "near-perfect" with 1,000 rows; random init "trained on the same data" 50.6%.
PAPER_TEXT = {"si_near_perfect_n": 1000, "near_perfect": NEAR_PERFECT, "random_at_n": 1000, "random": 0.506,
              "sampled_factor": 6}
PROTOCOLS = ("eval", "last")
AUTHORS_FIG6 = Path(__file__).parent / "data" / "authors_fig6.csv"
# The figure's five curves, by the transfer kind of the variant that trains as the authors' code does, with the
# authors' panel titles: used to read their figure's data; our pages and figures call them by labels.TRANSFER.
AUTHORS_CURVES = {"subnetwork": "Subtask Induction", "full": "Full Model Transfer", "sampled": "Sampled Subnetwork",
                  "complement": "Sampled from Complement", "random": "Random Initialization"}
# Options that train as the authors' code does where the paper's text is silent or our code differs, each
# compared with the figure's curve it would reproduce (item by item: docs/results.md). A kind:
# (kind -> the figure's curve it is compared with, and what it does)
def authors_code_options() -> dict[str, tuple[str, str]]:
    """Each transfer kind that is an authors'-code option (its record's `option`): kind -> (its curve, its label)."""
    return {name: (kind.curve, kind.option) for name, kind in KINDS.items() if kind.option}
# and settings of a variant (transfer.csv column -> what it does, given its value)
AUTHORS_CODE_SETTINGS = {"masked_init_std": lambda std: f"fresh masked weights N(0, {std:g})"}


def authors_code_option(row) -> tuple[str, str] | None:
    """(the figure's curve, what it does) for a transfer row trained with an authors'-code option (a kind of
    authors_code_options, a setting of AUTHORS_CODE_SETTINGS, or both), else None."""
    curve, labels, options = row["kind"], [], authors_code_options()
    if row["kind"] in options:
        curve, label = options[row["kind"]]
        labels.append(label)
    labels += [describe(row[column]) for column, describe in AUTHORS_CODE_SETTINGS.items()
               if column in row and pd.notna(row[column])]
    return (curve, "; ".join(labels) + ", as the authors' code") if labels else None
# The paper's encoding of the five curves (its Fig 3 and Fig 6), so ours can be laid over theirs.
PAPER_STYLE = {"subnetwork": {"color": "tab:blue", "marker": "o"}, "full": {"color": "tab:green", "marker": "D"},
               "sampled": {"color": "tab:orange", "marker": "^"}, "complement": {"color": "tab:red", "marker": "x"},
               "random": {"color": "tab:purple", "marker": "s"}}


@functools.cache
def authors_curves() -> pd.DataFrame:
    """The authors' Fig 6 as plotted: depth, kind (our name of the curve's transfer), n, test_accuracy. Read
    once per process (every figure panel asks); callers filter it, never change it."""
    table = pd.read_csv(AUTHORS_FIG6)
    by_name = {name: kind for kind, name in AUTHORS_CURVES.items()}
    unknown = sorted(set(table["variant"]) - set(by_name))
    if unknown:
        raise ValueError(f"{AUTHORS_FIG6}: curves {unknown} are not among {sorted(by_name)}")
    return table.assign(kind=table["variant"].map(by_name))[["depth", "kind", "n", "test_accuracy"]]


def paper_form(transfer: pd.DataFrame) -> pd.DataFrame:
    """The rows of variants trained as the figure's curves were: the discovered subnetwork as found (no size
    dial, no label budget, no extra rows, a fresh network), frozen, with the base's unmasked tensors (the
    authors' code keeps them), and random init as a fresh model; full fine-tunes the base."""
    keep = transfer["kind"].isin(list(AUTHORS_CURVES))
    masked = transfer["kind"].isin(["subnetwork", "sampled", "complement"])
    keep &= ~masked | ((transfer["lr_scale"] == 0) & transfer["inherit_unmasked"].astype(bool))
    for column in ("top_k", "discovery_rows", "subtask_rows", *AUTHORS_CODE_SETTINGS):
        if column in transfer:
            keep &= transfer[column].isna()
    if "init" in transfer:
        keep &= transfer["init"].fillna("fresh") == "fresh"
    return transfer[keep]


def smallest_n(curve: pd.Series, threshold: float = NEAR_PERFECT):
    """The smallest n whose mean accuracy reaches `threshold`, or None (curve: n -> mean accuracy)."""
    reached = [n for n, value in sorted(curve.items()) if value >= threshold]
    return reached[0] if reached else None


def _first(curve: pd.Series, threshold: float) -> str:
    first = smallest_n(curve, threshold)
    return f"{first:,}" if first is not None else f"not by {max(curve.index):,}"


def _ours(rows: pd.DataFrame) -> pd.DataFrame:
    """n -> mean, std, runs of one curve (the mean over runs: chain x replicate)."""
    per_run = rows.groupby(["n", "chain", "replicate"])["test_accuracy"].mean().reset_index()
    return per_run.groupby("n")["test_accuracy"].agg(["mean", "std", "count"])


def _cell(stat) -> str:
    return f"{fixed(stat['mean'], 3)}" + (f" ± {fixed(stat['std'], 3)}" if stat["count"] > 1 else "") + f" ({int(stat['count'])})"


def paper_comparison_markdown(base: pd.DataFrame, kept: pd.DataFrame, transfer: pd.DataFrame,
                              tables: PageTables | None = None) -> str:
    """Per depth of the main experiment: base and subnetwork beside the paper; each of the figure's curves, the
    authors' values beside ours under both protocols at every n the figure has, with the smallest n reaching
    0.95 and 0.99; and the text's three claims against the authors' figure and ours."""
    base_name, subtask, target = MAIN_EXPERIMENT
    rows = transfer[(transfer["base"] == base_name) & (transfer["subtask"] == subtask) & (transfer["target"] == target)
                    & transfer["protocol"].isin(PROTOCOLS)]
    rows_all, rows = rows, paper_form(rows)
    if rows.empty:
        return f"The paper's main experiment ({subtask} of {base_name} -> {target}) was not run.\n"
    authors = authors_curves()
    lines = [f"## {subtask} of {base_name} -> {target}: ours beside the paper's text (§4, Table 3) and the authors' "
             "Fig 6", "", rows_statement(rows), "",
             "The authors' curves are their Fig 6 as plotted (one run per depth, 1,000 numbers, 100 epochs, selected on "
             "their eval rows). Ours: mean ± std over runs (chains x replicates) (runs in parentheses).", ""]
    tables = PageTables() if tables is None else tables
    for layers, at_depth in rows.groupby("layers"):
        theirs = authors[authors["depth"] == layers]
        lines += _depth_header(base, kept, layers, tables)
        sizes = sorted(set(at_depth["n"]) & set(theirs["n"])) if not theirs.empty else sorted(at_depth["n"].unique())
        if theirs.empty:
            lines += [f"The authors' figure has no {layers}-layer panel: ours alone.", ""]
        curves = []
        firsts = {}
        at_layers = rows_all[rows_all["layers"] == layers]
        options = at_layers.apply(authors_code_option, axis=1) if len(at_layers) else pd.Series(dtype=object)
        authors_code = at_layers[options.notna()].assign(curve=options.dropna().map(lambda o: o[0]),
                                                         option=options.dropna().map(lambda o: o[1]))
        for kind in AUTHORS_CURVES:
            ours = at_depth[at_depth["kind"] == kind]
            if ours.empty:
                continue
            theirs_curve = theirs[theirs["kind"] == kind].set_index("n")["test_accuracy"]
            if len(theirs_curve):
                firsts[(kind, "authors")] = smallest_n(theirs_curve)
                curves.append([TRANSFER[kind].markdown(), "authors' figure"]
                              + [f"{fixed(theirs_curve[n], 3)}" if n in theirs_curve.index else "" for n in sizes]
                              + [_first(theirs_curve, t) for t in THRESHOLDS])
            for protocol in PROTOCOLS:
                stats = _ours(ours[ours["protocol"] == protocol])
                firsts[(kind, protocol)] = smallest_n(stats["mean"])
                curves.append(_our_row(kind, f"ours `{protocol}` ({', '.join(sorted(ours['variant'].unique()))})",
                                       stats, sizes))
            option = authors_code[authors_code["curve"] == kind] if len(authors_code) else authors_code
            for (variant, label, protocol), of_variant in option.groupby(["variant", "option", "protocol"]):
                curves.append(_our_row(kind, f"ours `{protocol}` ({variant}: {label})", _ours(of_variant), sizes))
        lines += tables.render(f"{layers} layers", pd.DataFrame(
            curves, columns=["curve", "source", *(f"n={n:,}" for n in sizes), "smallest n ≥ 0.95", "smallest n ≥ 0.99"]))
        lines += ["", f"Columns: the n both ran. Smallest n: the authors' on their figure's {theirs['n'].nunique()} "
                  f"sizes, ours on our {at_depth['n'].nunique()}; each is the first size of its own grid at or above "
                  "the threshold.", ""] if not theirs.empty else [""]
        lines += _claims(at_depth, theirs, firsts, layers, tables)
    return "\n".join(lines)


def _our_row(kind: str, source: str, stats: pd.DataFrame, sizes: list) -> list[str]:
    return ([TRANSFER[kind].markdown(), source] + [_cell(stats.loc[n]) if n in stats.index else "" for n in sizes]
            + [_first(stats["mean"], t) for t in THRESHOLDS])


def _depth_header(base: pd.DataFrame, kept: pd.DataFrame, layers, tables: PageTables) -> list[str]:
    """The depth's base and subnetwork beside the paper: the table the pages quote (kept as data in `tables`)."""
    base_name, subtask, _ = MAIN_EXPERIMENT
    bases = base[(base["base"] == base_name) & (base["layers"] == layers)]
    subnetworks = kept[(kept["base"] == base_name) & (kept["subtask"] == subtask) & (kept["layers"] == layers)]
    paper_kept = TABLE3_KEPT_PERCENT.get(int(layers))
    rows = [[f"base test accuracy on {base_name}", "≥ 0.999",
             ", ".join(f"{fixed(value, 4)}" for value in bases["test_accuracy"])],
            ["kept % of the masked weights (Table 3)", paper_kept if paper_kept is not None else "—",
             ", ".join(f"{fixed(value, 2)} (λ {l0:g})" for value, l0 in zip(subnetworks["kept_percent"],
                                                                     subnetworks["l0_weight"]))],
            [f"subnetwork test accuracy on {subtask}", "~1.0",
             ", ".join(f"{fixed(value, 4)}" for value in subnetworks["test_accuracy"])]]
    heading = f"{layers} layers"
    return ([f"### {heading}", ""] + tables.render(heading, pd.DataFrame(rows, columns=["", "paper", "ours (per chain)"]))
            + [""])


def _claims(at_depth: pd.DataFrame, theirs: pd.DataFrame, firsts: dict, layers, tables: PageTables) -> list[str]:
    """The text's three claims at this depth: the text, the authors' figure, ours under each protocol."""
    n_si, n_random = PAPER_TEXT["si_near_perfect_n"], PAPER_TEXT["random_at_n"]
    figure = theirs.set_index(["kind", "n"])["test_accuracy"] if not theirs.empty else pd.Series(dtype=float)
    claims = []

    def ours_at(kind, n):
        cells = []
        for protocol in PROTOCOLS:
            stats = _ours(at_depth[(at_depth["kind"] == kind) & (at_depth["protocol"] == protocol)])
            cells.append(_cell(stats.loc[n]) if n in stats.index else "not run")
        return cells

    def figure_at(kind, n):
        return f"{fixed(figure[(kind, n)], 3)}" if (kind, n) in figure.index else "—"

    claims.append([f"SI near-perfect with {n_si:,} rows", f"≥ {NEAR_PERFECT}", figure_at("subnetwork", n_si),
                   *ours_at("subnetwork", n_si)])
    claims.append([f"random init trained on the same data ({n_random:,} rows)", f"{fixed(PAPER_TEXT['random'], 3)}",
                   figure_at("random", n_random), *ours_at("random", n_random)])

    def factor(source):
        si, sampled = firsts.get(("subnetwork", source)), firsts.get(("sampled", source))
        if si is None or ("sampled", source) not in firsts:
            return "—"
        return f"{fixed(sampled / si, 1)}x ({sampled:,} / {si:,})" if sampled is not None else f"sampled never ({si:,} for SI)"

    claims.append([f"sampled needs about {PAPER_TEXT['sampled_factor']}x SI's data to reach {NEAR_PERFECT}",
                   f"{PAPER_TEXT['sampled_factor']}x", factor("authors") if not theirs.empty else "—",
                   *(factor(p) for p in PROTOCOLS)])
    columns = ["the text's claim", "text", "authors' figure", *(f"ours `{p}`" for p in PROTOCOLS)]
    return tables.render(f"{layers} layers", pd.DataFrame(claims, columns=columns)) + [""]
