"""## Arithmetic: the default (`config/config.yaml`): the transfer means per variant and n, every chain's verdicts
(the record's chains.md), and which subnetworks transfer (per chain, beside the kept-% dial)."""

from __future__ import annotations

import pandas as pd

from ...rounding import fixed
from .. import claims as claims_module
from .. import subnetworks
from ..page import FIGURES, embed, provenance_line
from ..run_records import RunRecord


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
            spread = (lambda s: f" ± {fixed(s, 3)}" if runs_here > 1 else "")
            row.append(f"{fixed(a['mean'], 3)}{spread(a['std'])} / {fixed(b['mean'], 3)}{spread(b['std'])}"
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
    verdicts = [(heading, table) for heading, table in record.tables("arithmetic/chains.md")
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
    """The per-chain table and figure: which subnetworks transfer, beside the kept-% dial."""
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
             "the kept-% dial (`make beyond`: one discovery's top k % of scores, so the kept fraction moves alone): a "
             "verdict over chains can then be read at a fixed size.", ""]
    lines += subnetworks.markdown(table) + ["", f"![SI's gain per chain against the kept fraction, beside the kept-% dial]"
                                                f"({FIGURES}/subnetworks.png)", ""]
    return lines
