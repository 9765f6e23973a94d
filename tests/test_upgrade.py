"""Records of earlier versions are read in one place (upgrade.upgrade_record) within a stated support window
(0.4.0 and later): a 0.4.0 table reads as today's, an older record is refused by name with what to run again."""

import pandas as pd
import pytest
import torch

from harness import REPO
from subtask_induction.arithmetic.subtask_rows import discovery_rows
from subtask_induction.method.masks import load_subnetwork, masks_to_bits
from subtask_induction.pages import run_records
from subtask_induction.runtime import save_torch
from subtask_induction.upgrade import SUPPORTED_FROM, OutsideSupport, upgrade_record


def test_a_0_4_0_table_reads_as_today_s():
    old = pd.DataFrame({"chain": [0, 0], "seed": [0, 1], "test_accuracy": [0.5, 0.6]})
    assert list(upgrade_record(old, "table").columns) == ["chain", "replicate", "test_accuracy"]
    today = old.rename(columns={"seed": "replicate"})
    assert upgrade_record(today, "table").equals(today)
    # the stored 0.4.0 records of docs/data read with replicates, as the pages use them
    stored = run_records.load("paper_depth2", REPO / "docs" / "data")
    assert stored.provenance["version"] == "0.4.0" and "replicate" in stored.csv("arithmetic/transfer.csv")


def test_records_older_than_the_window_are_refused_by_name(tmp_path):
    save_torch({"masks": {"transformer.h.0.attn.c_attn.weight": torch.ones(2, 2, dtype=torch.bool)}},
               tmp_path / "old.pt")
    with pytest.raises(OutsideSupport, match=rf"old.pt: its masks .* are not bit-packed.*before version "
                                             rf"{SUPPORTED_FROM}.*run its discovery again"):
        load_subnetwork(tmp_path / "old.pt")
    rows = {"splits": {"train": torch.arange(10).view(5, 2)}}
    with pytest.raises(OutsideSupport, match="no `train_rows`"):
        discovery_rows(rows, {"masks": masks_to_bits({"w": torch.ones(2, dtype=torch.bool)})})
    assert discovery_rows(rows, {"train_rows": 3}).shape == (3, 2)
    with pytest.raises(OutsideSupport, match="base.pt: it records no seeds.*train the base again"):
        upgrade_record({"state_dict": {}}, "base", "base.pt")
    with pytest.raises(ValueError, match="unknown kind"):
        upgrade_record({}, "vision base")


def test_a_run_of_0_5_0_s_development_plans_nothing_after_its_upgrade(smoke_run, tmp_path):
    """Two renames of 0.5.0's development: the vision λ wildcard was `penalty` (now `l0`, as in arithmetic) and a
    point's folder `seed{r}` (now `replicate{r}`). A finished run of that layout would retrain every vision
    discovery (Snakemake's code trigger) and every transfer point (their outputs missing), and all that follows;
    `python -m subtask_induction.upgrade FOLDER` moves the folders, rewrites the records and nothing is planned."""
    import json

    from harness import clone_run, snakemake
    from subtask_induction.upgrade import RENAMED_PATHS, upgrade_run
    from subtask_induction.upgrade import main as upgrade_main

    workdir = clone_run(smoke_run, tmp_path / "run")
    # the run as the old layout wrote it: the same machinery with the renames reversed
    old_paths = [(pattern.replace(")seed(", ")replicate("), new.replace("replicate", "seed"))
                 for pattern, new in RENAMED_PATHS]
    assert upgrade_run(workdir, renames=old_paths, commands=[("vision_discover", "{wildcards.l0}",
                                                              "{wildcards.penalty}")])
    point = "results/arithmetic/chain0/transfer/a+ab/ab/a2+ab/layers1/si/n10/{}0/metrics.json"
    fraction = "results/submasking/points/world_base/faces/fs/fraction1/{}0/metrics.json"
    assert (workdir / point.format("seed")).is_file() and not (workdir / point.format("replicate")).exists()
    assert (workdir / fraction.format("seed")).is_file()
    packs = list((workdir / "results/arithmetic/transfer/packs").glob("*.points.json"))
    assert packs and all("/seed0/" in p.read_text() and "/replicate0/" not in p.read_text() for p in packs)

    before = snakemake(workdir, "-n")
    assert "code has changed since last execution:\n        vision_discover" in before.stdout
    assert "arithmetic_transfer_pack_" in before.stdout and "submasking_pack_" in before.stdout
    assert upgrade_main([str(workdir)]) == 0
    assert json.loads((workdir / point.format("replicate")).read_text())["identity"]["replicate"] == 0
    after = snakemake(workdir, "-n")
    assert "Nothing to be done" in after.stdout, after.stdout[-3000:]
    assert upgrade_run(workdir) == []   # twice: nothing more to rewrite
