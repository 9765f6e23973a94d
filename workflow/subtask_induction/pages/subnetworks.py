"""Which subnetworks transfer: per chain of a record, the subnetwork's kept fraction, SI's gain over the count-matched
random mask (`sampled`) and over random initialisation at each n, and how much of its mask the other chains' masks
share; beside it the kept-% dial (the kept fraction varied on purpose in one discovery), so that a claim judged over
chains can be read at a fixed size. Everything is read from the records' tables (discovery.csv, chains.csv,
overlap.csv, transfer.csv), never from their Markdown."""

from __future__ import annotations

import re

import pandas as pd

from ..rounding import fixed
from ..labels import TRANSFER
from .run_records import RunRecord

RIVALS = ("sampled", "random")   # variants of the default, named as their kinds (labels.TRANSFER)
MAIN = {"base": "a+ab", "subtask": "ab", "target": "a2+ab"}


def _chain_of(name: str, first_chain: int) -> int | None:
    """overlap.csv's subnetwork names: `default (λ=...)` is the first chain's choice, `chain c (λ=...)` another's;
    an overlap run (`seed1`, `lambda1e-05`) is no chain's."""
    if name.startswith("default ("):
        return first_chain
    found = re.match(r"chain (\d+) \(", name)
    return int(found.group(1)) if found else None


def chain_table(record: RunRecord, layers: int = 2, protocol: str = "last") -> pd.DataFrame:
    """One row per chain: kept % of the selected subnetwork, SI's gain (points) over each rival at each n (the chain's
    replicates averaged), and the mean Jaccard of its kept set with the other chains' (and that over chance), where
    the record's overlap table compares chains."""
    discovery = record.csv("arithmetic/discovery.csv")
    selected = discovery[(discovery["selected"].astype(str) == "True") & (discovery["layers"] == layers)
                         & (discovery["base"] == MAIN["base"]) & (discovery["subtask"] == MAIN["subtask"])]
    rows = {int(r.chain): {"chain": int(r.chain), "kept %": 100 * r.kept_fraction} for r in selected.itertuples()}
    chains = record.csv("arithmetic/chains.csv") if record.has("arithmetic/chains.csv") else pd.DataFrame()
    if not chains.empty:
        main = chains[(chains["layers"] == layers) & (chains["base"] == MAIN["base"])
                      & (chains["subtask"] == MAIN["subtask"]) & (chains["target"] == MAIN["target"])]
        accuracy = main.pivot_table(index=["chain", "n"], columns="variant", values="test_accuracy")
        for (chain, n), values in accuracy.iterrows():
            if int(chain) not in rows or "si" not in values:
                continue
            for rival in RIVALS:
                if rival in values and pd.notna(values[rival]) and pd.notna(values["si"]):
                    rows[int(chain)][f"{rival} n{int(n)}"] = 100 * (values["si"] - values[rival])
    if record.has("arithmetic/overlap.csv") and rows:
        overlap = record.csv("arithmetic/overlap.csv")
        overlap = overlap[overlap["layers"] == layers]
        first = min(rows)
        pairs = []
        for r in overlap.itertuples():
            one, other = _chain_of(r.run, first), _chain_of(r.other, first)
            if one is not None and other is not None:
                pairs += [(one, r.jaccard, r.ratio), (other, r.jaccard, r.ratio)]
        if pairs:
            shared = pd.DataFrame(pairs, columns=["chain", "jaccard", "ratio"]).groupby("chain").mean()
            for chain, values in shared.iterrows():
                if int(chain) in rows:
                    rows[int(chain)]["Jaccard with the other chains"] = values["jaccard"]
                    rows[int(chain)]["× chance"] = values["ratio"]
    return pd.DataFrame(list(rows.values())).sort_values("chain").reset_index(drop=True) if rows else pd.DataFrame()


def kept_dial(record: RunRecord, layers: int = 2, protocol: str = "last") -> pd.DataFrame:
    """The kept-% dial's curve from a record that ran it: per top-k fraction and n, SI − `sampled` of the same counts
    (points, mean over runs), with the kept % it sets."""
    transfer = record.csv("arithmetic/transfer.csv")
    if "top_k" not in transfer:
        return pd.DataFrame()
    rows = transfer[(transfer["protocol"] == protocol) & transfer["top_k"].notna() & (transfer["layers"] == layers)]
    out = []
    for (k, n), part in rows.groupby(["top_k", "n"]):
        kinds = {kind: part[part["kind"] == kind].groupby(["chain", "replicate"])["test_accuracy"].mean()
                 for kind in ("subnetwork", "sampled")}
        gain = (kinds["subnetwork"] - kinds["sampled"]).dropna()
        if len(gain):
            out.append({"kept %": 100 * k, "n": int(n), "gain": 100 * gain.mean(),
                        "chains": gain.index.get_level_values("chain").nunique()})
    return pd.DataFrame(out)


def markdown(table: pd.DataFrame) -> list[str]:
    """The per-chain table as the results page shows it."""
    if table.empty:
        return []
    gains = [c for c in table.columns if c.split()[0] in RIVALS]
    order = sorted(gains, key=lambda c: (list(RIVALS).index(c.split()[0]), int(c.split()[1][1:])))
    shared = [c for c in ("Jaccard with the other chains", "× chance") if c in table.columns]
    header = ["chain", "kept %"] + [f"{TRANSFER['subnetwork'].word} − {TRANSFER[c.split()[0]].markdown()}, "
                                    f"n = {c.split()[1][1:]}" for c in order] + shared
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table.to_dict("records"):
        cells = [str(row["chain"]), f"{fixed(row['kept %'], 2)}"]
        cells += ["—" if pd.isna(row.get(c)) else f"{fixed(row[c], 1, sign=True)}" for c in order]
        cells += ["—" if pd.isna(row.get(c)) else (f"{fixed(row[c], 2)}" if c.startswith("Jaccard") else f"{fixed(row[c], 1)}")
                  for c in shared]
        lines.append("| " + " | ".join(cells) + " |")
    return lines
