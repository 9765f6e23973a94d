"""The arithmetic transfer tuning probe, choosing on the eval split, never on test (docs/decisions.md).

    .venv/bin/python benchmarks/transfer_tuning.py RUN_FOLDER [--cores N]

Runs the default's arithmetic family in RUN_FOLDER (a copy of this workflow: chain 0, 2 layers, one transfer
seed, si / sampled / random / full at n = 250 and 750, trained on the paper's rows) once per candidate transfer
lr, reusing the base and discovery, and prints per candidate the mean eval-split accuracy of the four variants
at the last epoch (the choice) and, for the record only, their test accuracy. The candidate with the highest
mean eval accuracy is the choice; the test column never enters it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
CANDIDATES = (1.0e-3, 3.0e-4, 1.0e-4)
VARIANTS = ["si", "sampled", "random", "full"]


def probe_config() -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config["families"] = ["arithmetic"]
    arithmetic = config["arithmetic"]
    arithmetic.update(chains=[0], layers=[2], overlap={"layers": [], "runs": []})
    arithmetic["experiments"] = [{"base": "a+ab", "subtask": "ab", "targets": ["a2+ab"], "variants": VARIANTS}]
    arithmetic["transfer"]["disambiguation_rows"] = [250, 750]
    arithmetic["report"]["dial_n"] = 250
    return config


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path)
    p.add_argument("--cores", type=int, default=1)
    args = p.parse_args(argv)
    args.run.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "workflow", "config", "envs", "profiles"):
        target = args.run / name
        if not target.exists():
            (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, target)
    rows = []
    for lr in CANDIDATES:
        config = probe_config()
        config["arithmetic"]["transfer"].update(lr=lr, holdout_fraction=0.0)
        (args.run / "config/config.yaml").write_text(yaml.safe_dump(config))
        subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(args.cores), "results/arithmetic/summary/transfer.csv"],
                       cwd=args.run, check=True, capture_output=True, text=True)
        transfer = pd.read_csv(args.run / "results/arithmetic/summary/transfer.csv")
        chosen = transfer[(transfer["protocol"] == "last") & transfer["variant"].isin(VARIANTS)]
        row = {"lr": f"{lr:g}", "mean eval accuracy (choice)": chosen["eval_accuracy"].mean()}
        for variant in ("si", "sampled"):
            for n in (250, 750):
                at = chosen[(chosen["variant"] == variant) & (chosen["n"] == n)]
                row[f"{variant} n={n} eval"] = at["eval_accuracy"].mean()
        row["mean test accuracy (not used)"] = chosen["test_accuracy"].mean()
        rows.append(row)
        print(row, flush=True)
    table = pd.DataFrame(rows)
    best = table.loc[table["mean eval accuracy (choice)"].idxmax()]
    print(table.to_markdown(index=False, floatfmt=".3f"))
    print(f"choice (highest mean eval accuracy): lr {best['lr']}")


if __name__ == "__main__":
    main()
