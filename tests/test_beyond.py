"""Beyond the paper on the smoke run, as a user adds it: a size-dial variant (top k of the mask scores, SI and
the sampled control) and a label-budget variant (discovery from fewer subtask rows) in one chain at one n.
Only the new discovery and the new points train; the dial and budget tables and figures hold them."""

import copy
import json
import time

import pandas as pd
import torch

from harness import work_done, REPO, clone_run, jobs_run, pack_manifests, smoke_config, snakemake, write_config
from test_report import ONLY_WITH_A_BUDGET, assert_captions_in, report_html

BEYOND = {"si_top50": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True, "top_k": 0.5},
          "sampled_top50": {"kind": "sampled", "lr_scale": 0.0, "inherit_unmasked": True, "top_k": 0.5},
          "si_rows50": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True, "discovery_rows": 50},
          "sampled_rows50": {"kind": "sampled", "lr_scale": 0.0, "inherit_unmasked": True, "discovery_rows": 50},
          "si_rewind": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True, "init": "rewind"},
          "mixture": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "subtask_rows": "mixture",
                      "task_marker": True},
          "distill": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "subtask_rows": "distill",
                      "task_marker": True},
          "mixture_inherit": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": True, "subtask_rows": "mixture",
                              "task_marker": True}}


def test_the_size_dial_and_the_label_budget_train_only_what_is_new_and_reach_the_report(smoke_run, tmp_path):
    workdir = clone_run(smoke_run, tmp_path / "run")
    config = copy.deepcopy(smoke_config())
    arithmetic = config["arithmetic"]
    plain = list(arithmetic["transfer"]["variants"])
    experiment = arithmetic["experiments"][0]
    arithmetic["experiments"] = [{**experiment, "variants": plain},
                                 {**experiment, "chains": [0], "n": [10], "variants": list(BEYOND)}]
    arithmetic["transfer"]["variants"].update(BEYOND)
    arithmetic["report"]["budget_n"] = 10
    write_config(workdir, config)
    started = time.time()
    time.sleep(1)
    result = snakemake(workdir, "--cores", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    ran = work_done(result, workdir, started)
    assert ran.count("arithmetic_discover_budget") == 1
    assert not {"arithmetic_base", "arithmetic_discover", "vision_base", "vision_transfer"} & set(ran)
    trained = sorted(p for m in pack_manifests(workdir, started).values() for p in m["trained"])
    assert sorted(path.split("/")[-4] for path in trained) == sorted(BEYOND)  # the new points, nothing else

    summary = workdir / "results/arithmetic/summary"
    chain0 = "results/arithmetic/chain0"
    selected = json.loads((workdir / f"{chain0}/discovery/a+ab/ab/layers1/selected.json").read_text())
    budget_discovery = torch.load(workdir / f"{chain0}/discovery_budget/a+ab/ab/layers1/rows50/subnetwork.pt",
                                  weights_only=True)
    assert budget_discovery["train_rows"] == 50 and budget_discovery["l0_weight"] == selected["l0_weight"]
    every_row_discovery = torch.load(workdir / selected["subnetwork"], weights_only=True)
    # labels differ, optimiser steps do not: 100 rows x 2 epochs at batch 50 = 50 rows x 4 epochs
    assert budget_discovery["steps"] == every_row_discovery["steps"] == 4
    assert budget_discovery["selection_rows"] == 40  # the eval rows that picked its epoch count in its budget
    rewind = json.loads((workdir / f"{chain0}/transfer/a+ab/ab/a2+ab/layers1/si_rewind/n10/replicate0/metrics.json").read_text())
    base = json.loads((workdir / f"{chain0}/base/a+ab/layers1/metrics.json").read_text())
    si_point = json.loads((workdir / f"{chain0}/transfer/a+ab/ab/a2+ab/layers1/si/n10/replicate0/metrics.json").read_text())
    assert rewind["seeds"]["init"] == base["seeds"]["init"] != si_point["seeds"]["init"]
    for kind in ("mixture", "distill", "mixture_inherit"):
        # beside its own rows, each read the every-row discovery's 100 subtask rows, marked (the unmarked kind,
        # the 0.3.0 mixture, is the same step without mark(): tests/test_subtask_rows.py)
        record = json.loads((workdir / f"{chain0}/transfer/a+ab/ab/a2+ab/layers1/{kind}/n10/replicate0/metrics.json").read_text())
        assert record["rows"]["subtask"] == every_row_discovery["train_rows"] == 100
        assert record["rows"]["task_marker"] and "marker" in record["seeds"]
        assert record["seeds"]["init"] == si_point["seeds"]["init"]  # paired with SI on one fresh network
        assert all(0 <= epoch["subtask_test_accuracy"] <= 1 for epoch in record["curve"])  # its own ab accuracy
    packs = sorted(pack_manifests(workdir, started))
    assert {name.split("_1of")[0] for name in packs if "with" in name} == {
        "layers1_n10_withmixture_marked", "layers1_n10_withdistill_marked"}  # marked rows: a vocabulary of their own
    same_labels = (summary / "same_labels.md").read_text()
    for kind in ("mixture", "distill", "mixture_inherit"):
        assert f"| {kind} |" in same_labels
    assert "marked `a b SEP2 c`" in same_labels and "base's unmasked tensors, rest fresh" in same_labels

    transfer = pd.read_csv(summary / "transfer.csv")
    top = transfer[(transfer["variant"] == "si_top50") & (transfer["protocol"] == "last")]
    assert len(top) == 1 and abs(top["mask_fraction"].iloc[0] - 0.5) < 1e-3  # exactly the top half of the scores
    assert transfer[transfer["variant"].isin(BEYOND)]["chain"].unique().tolist() == [0]

    budget = pd.read_csv(summary / "budget.csv")
    assert sorted(budget["rows"]) == [50, 100] and set(budget["chain"]) == {0}
    every_row = budget[budget["rows"] == 100].iloc[0]
    assert every_row["jaccard_vs_every_row"] == 1.0 and every_row["variant"] == "si"
    si = transfer[(transfer["variant"] == "si") & (transfer["chain"] == 0) & (transfer["n"] == 10)
                  & (transfer["protocol"] == "last")]
    assert every_row["si_test_accuracy"] == si["test_accuracy"].mean()  # si transfers the chosen subnetwork
    sampled = transfer[(transfer["variant"] == "sampled_rows50") & (transfer["protocol"] == "last")]
    budget50 = budget[budget["rows"] == 50].iloc[0]
    assert budget50["sampled_test_accuracy"] == sampled["test_accuracy"].mean() and budget50["steps"] == 4
    assert "| 50 | 90 | 4 |" in (summary / "budget.md").read_text()  # subtask rows, labelled rows, steps
    dial = (summary / "sparsity_dial.md").read_text()
    assert "| 50 |" in dial and "n = 10" in dial
    for figure in ("sparsity_dial", "budget"):
        assert (workdir / f"results/arithmetic/figures/{figure}.png").stat().st_size > 1000
    names, html = report_html(workdir, tmp_path / "report.zip")
    assert {"budget.csv", "budget.png", "sparsity_dial.png", "sparsity_dial.md"} <= names
    assert_captions_in(html, [REPO / f"workflow/report/{caption}.rst" for caption in sorted(ONLY_WITH_A_BUDGET)])
