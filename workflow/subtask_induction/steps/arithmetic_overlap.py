"""Is "the" subnetwork unique? Pairwise overlap of the kept sets of subnetworks discovered for the same
subtask with different seeds, λ values and mask methods, against chance: a table and a heatmap."""

import argparse
from itertools import combinations
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..rounding import fixed
from ..method.masks import load_subnetwork  # noqa: E402
from ..method.overlap import mask_overlap  # noqa: E402
from ..plotting import save_figure  # noqa: E402
from ..records import read_record  # noqa: E402
from ..runtime import save_text  # noqa: E402
from ..timing import run_step


def describe(path: Path, first_chain=None) -> dict:
    """A subnetwork's labels, from the identity of the record beside it: the selection's choice in the first chain
    (the first subnetwork given) is the default, named by its λ, another chain's choice is `chain c (λ=...)`, an
    overlap run is named by its run."""
    identity = read_record(path.with_name("metrics.json"))["identity"]
    if identity["stage"] != "discovery":
        name = identity["run"]
    elif first_chain is None or identity["chain"] == first_chain:
        name = f"default (λ={identity['l0_weight']:g})"   # the overlap runs' reference: the first chain's choice
    else:
        name = f"chain {identity['chain']} (λ={identity['l0_weight']:g})"
    return {"base": identity["base"], "subtask": identity["subtask"], "layers": identity["layers"], "run": name}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--subnetworks", nargs="+", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--markdown", required=True)
    p.add_argument("--figures", required=True)
    args = p.parse_args(argv)
    found = {}
    first_chain = read_record(Path(args.subnetworks[0]).with_name("metrics.json"))["identity"].get("chain")
    for path in map(Path, args.subnetworks):
        record = load_subnetwork(path, ("kept",))
        key = describe(path, first_chain)
        found.setdefault((key["base"], key["subtask"], key["layers"]), {})[key["run"]] = (
            record["masks"], record["kept"]["overall"], record.get("mask_method", "continuous_sparsification"))
    rows = []
    for (base, subtask, layers), runs in found.items():
        for first, second in combinations(sorted(runs), 2):
            rows.append({"base": base, "subtask": subtask, "layers": layers, "run": first, "other": second,
                         "kept_run": runs[first][1], "kept_other": runs[second][1],
                         **mask_overlap(runs[first][0], runs[second][0])})
    table = pd.DataFrame(rows)
    save_text(table.to_csv(index=False), args.table)
    lines = ["Overlap of the kept weights of subnetworks for the same subtask (Jaccard; chance = two random masks",
             "with each tensor's own densities, summed expected intersection over summed expected union; ratio =",
             "Jaccard / chance)", ""]
    for (base, subtask, layers), part in table.groupby(["base", "subtask", "layers"]):
        lines += [f"### {subtask} of {base}, {layers} layers", "",
                  "| subnetwork | other | kept | kept (other) | Jaccard | chance | ratio |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r.run} | {r.other} | {fixed(100 * r.kept_run, 2)}% | {fixed(100 * r.kept_other, 2)}% | {fixed(r.jaccard, 3)} | "
                  f"{fixed(r.chance, 3)} | {fixed(r.ratio, 1)} |" for r in part.itertuples()]
        lines.append("")
    save_text("\n".join(lines), args.markdown)
    groups = sorted(found)
    figure, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4.6), squeeze=False)
    for ax, key in zip(axes[0], groups):
        names = sorted(found[key])
        grid = np.eye(len(names))
        part = table[(table["base"] == key[0]) & (table["subtask"] == key[1]) & (table["layers"] == key[2])]
        for r in part.itertuples():
            i, j = names.index(r.run), names.index(r.other)
            grid[i, j] = grid[j, i] = r.jaccard
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        for i in range(len(names)):
            for j in range(len(names)):
                ax.text(j, i, f"{fixed(grid[i, j], 2)}", ha="center", va="center", color="w" if grid[i, j] < 0.6 else "k",
                        fontsize=8)
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right", fontsize=7)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_title(f"{key[1]} of {key[0]}, {key[2]} layers: Jaccard of kept sets", fontsize=9)
        figure.colorbar(image, ax=ax)
    save_figure(figure, Path(args.figures), "overlap")
    print("\n".join(lines))


if __name__ == "__main__":
    run_step(main)
