"""Collect the configured submasking points into the family's tables (CSV + Markdown) and figures.

The points are exactly the rule's inputs: points.submasking_points of the grid the rule passes (the config's
backbones, tasks, adaptations, label fractions and replicates), never a glob of the folder, so a replicate, adaptation,
task or fraction dropped from the config leaves every table. (The grid, not the list of paths: the paper
grid's paths exceed a shell argument's length limit.)"""

import argparse
import json
from pathlib import Path

from ..points import submasking_points
from ..runtime import save_text
from ..submasking.figures import label_fractions, mask_similarity, sparsity_per_layer
from ..submasking.tables import collect, overlaps, summary, tables_markdown
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--grid", required=True, type=json.loads,
                   help="JSON: the config's submasking backbones and tasks (by name), adaptations, label_fractions, "
                        "replicates: the points the rule takes as input")
    p.add_argument("--out", required=True, help="results/submasking (writes summary/ and figures/)")
    args = p.parse_args(argv)
    points, layers = collect([Path(point.metrics) for point in submasking_points(args.grid)])
    between, stability = overlaps(points)
    points = points.drop(columns="path")
    summary_dir, figures = Path(args.out) / "summary", Path(args.out) / "figures"
    save_text(points.to_csv(index=False), summary_dir / "points.csv")
    save_text(summary(points, "test_accuracy").to_csv(index=False), summary_dir / "accuracy.csv")
    save_text(summary(points, "knn_accuracy").to_csv(index=False), summary_dir / "knn.csv")
    sparsity = summary(points, "off_fraction")
    per_layer = (layers.groupby(["backbone", "task", "adaptation", "fraction", "tensor"], sort=False)["off_fraction"]
                 .mean().reset_index() if not layers.empty else layers)
    save_text(sparsity.to_csv(index=False), summary_dir / "sparsity.csv")
    save_text(per_layer.to_csv(index=False), summary_dir / "sparsity_per_layer.csv")
    save_text(between.to_csv(index=False), summary_dir / "mask_similarity.csv")
    save_text(stability.to_csv(index=False), summary_dir / "mask_stability.csv")
    markdown = tables_markdown(points, between, stability)
    accuracy_md = markdown.split("## Fraction of masked weights off")[0]
    save_text(accuracy_md, summary_dir / "accuracy.md")
    save_text(markdown, summary_dir / "tables.md")
    sparsity_per_layer(layers, figures)
    label_fractions(points, figures)
    mask_similarity(between, stability, figures)
    print(markdown)


if __name__ == "__main__":
    run_step(main)
