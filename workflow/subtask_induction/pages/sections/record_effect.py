"""Do the default's records disagree beyond their chains' noise? (issue 80.) The three records of the default's
headlines on one host type (`decisive`, `default`, `default_replication`: the same code and config, disjoint chain
seeds) as groups of independent chains: per claim and size, a Kruskal-Wallis test of SI's per-chain differences
across the records (Holm over the cells), beside the pooled verdict; and the same test of what a chain is before any
transfer (its base's eval accuracy, its subnetwork's kept %), which says whether the seed ranges differ in anything
but noise."""

from __future__ import annotations

import pandas as pd

from ...rounding import fixed
from ...claims import holm, judge
from .. import claims as claims_module
from ..page import DECISIVE, DEFAULTS
from ..subnetworks import chain_table

GROUPS = (DECISIVE, *DEFAULTS)


def _test(groups: list) -> tuple[float, float]:
    from scipy import stats

    groups = [list(g) for g in groups if len(g)]
    if len(groups) < 2:
        return float("nan"), float("nan")
    result = stats.kruskal(*groups)
    return float(result.statistic), float(result.pvalue)


def cells(records: dict) -> pd.DataFrame:
    """One row per headline claim and size: each record's mean of SI's per-chain differences, H, p, Holm's p, and the
    pooled verdict (every record's chains as one claim under the rule)."""
    if not all(name in records for name in GROUPS):
        return pd.DataFrame()
    made = {name: {claim.id: claim for claim in claims_module.arithmetic_default(records[name])} for name in GROUPS}
    rows = []
    for first, second, text in claims_module.ARITHMETIC_CLAIMS:
        key = claims_module.claim_id("arithmetic", first, second)
        claims = [made[name].get(key) for name in GROUPS]
        if any(claim is None or claim.evidence is None for claim in claims):
            continue
        judged = [claim.evidence.judge() for claim in claims]
        pooled = judge({where: pd.concat([claim.evidence.differences[where].rename(lambda run, n=name: f"{n}:{run}")
                                          for claim, name in zip(claims, GROUPS)])
                        for where in claims[0].evidence.differences},
                       smallest=claims[0].evidence.smallest, beside=False)
        for where in claims[0].evidence.differences:
            means = [j[where].means for j in judged]
            h, p = _test(means)
            rows.append({"claim": text, "where": where, **{name: sum(m) / len(m) for name, m in zip(GROUPS, means)},
                         "H": h, "p": p, "pooled": pooled[where].said()})
    table = pd.DataFrame(rows)
    if not table.empty:
        table["holm"] = holm(list(table["p"]))
    return table


def before_transfer(records: dict) -> pd.DataFrame:
    """What a chain is before any transfer, per record: the base's eval accuracy and the subnetwork's kept %, each
    record's mean and the Kruskal-Wallis test across the records."""
    if not all(name in records for name in GROUPS):
        return pd.DataFrame()
    bases = [records[name].csv("arithmetic/base.csv") for name in GROUPS]
    bases = [b[(b["base"] == "a+ab") & (b["layers"] == 2)]["eval_accuracy"] * 100 for b in bases]
    kept = [chain_table(records[name])["kept %"] for name in GROUPS]
    rows = []
    for what, groups in (("base eval accuracy (%)", bases), ("subnetwork kept %", kept)):
        h, p = _test(groups)
        rows.append({"what": what, **{name: float(g.mean()) for name, g in zip(GROUPS, groups)}, "H": h, "p": p})
    return pd.DataFrame(rows)


def lines(records: dict) -> list[str]:
    table, before = cells(records), before_transfer(records)
    if table.empty:
        return []
    heads = " | ".join(f"`{name}` mean" for name in GROUPS)
    out = ["## Do the records disagree? A record effect per cell", "",
           "The three records of the default's headlines on one host type, the same code and config on disjoint chain "
           "seeds, as groups of independent chains: a Kruskal-Wallis test of SI's per-chain difference across the "
           "records at each claim and n (Holm over the cells), beside the verdict of every chain pooled. A record "
           "effect would say the records' chains differ in something beyond chain-to-chain noise.", "",
           f"| claim | n | {heads} | H | p | Holm p | pooled verdict |", "|---|---|" + "---|" * len(GROUPS) + "---|---|---|---|"]
    for row in table.itertuples(index=False):
        means = " | ".join(f"{fixed(getattr(row, name), 1, sign=True)}" for name in GROUPS)
        out.append(f"| {row.claim} | {row.where.removeprefix('n = ')} | {means} | {fixed(row.H, 2)} | {fixed(row.p, 3)} | "
                   f"{fixed(row.holm, 3)} | {row.pooled} |")
    out += ["", "Before any transfer (the chains' seed ranges):", "", f"| what | {heads} | H | p |",
            "|---|" + "---|" * len(GROUPS) + "---|---|"]
    for row in before.itertuples(index=False):
        means = " | ".join(f"{fixed(getattr(row, name), 2)}" for name in GROUPS)
        out.append(f"| {row.what} | {means} | {fixed(row.H, 2)} | {fixed(row.p, 3)} |")
    smallest = table.loc[table["holm"].idxmin()]
    out += ["", f"The smallest Holm-corrected p of a cell is {fixed(smallest['holm'], 3)} ({smallest['claim']}, "
                f"{smallest['where']}): " + ("no cell shows a record effect at 0.05 once the cells are corrected."
                                             if smallest["holm"] >= 0.05 else "a record effect at 0.05."), ""]
    return out
