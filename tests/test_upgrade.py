"""Records of earlier versions are read in one place (legacy.upgrade_record) within a stated support window
(0.4.0 and later): a 0.4.0 table reads as today's, an older record is refused by name with what to run again."""

import json

import pandas as pd
import pytest
import torch

from harness import REPO
from subtask_induction.arithmetic.subtask_rows import discovery_rows
from subtask_induction.method.masks import load_subnetwork, masks_to_bits
from subtask_induction.pages import run_records
from subtask_induction.runtime import save_torch
from subtask_induction.legacy import SUPPORTED_FROM, OutsideSupport, upgrade_record
from subtask_induction.upgrade import renamed_json, renamed_keys, renamed_table


def test_a_0_4_0_table_reads_as_today_s():
    old = pd.DataFrame({"chain": [0, 0], "seed": [0, 1], "test_accuracy": [0.5, 0.6]})
    assert list(upgrade_record(old, "table").columns) == ["chain", "replicate", "test_accuracy"]
    today = old.rename(columns={"seed": "replicate"})
    assert upgrade_record(today, "table").equals(today)
    # the stored 0.4.0 records of docs/data read with replicates, as the pages use them
    stored = run_records.load("paper_depth2", REPO / "docs" / "data")
    assert stored.provenance["version"] == "0.4.0" and "replicate" in stored.csv("arithmetic/transfer.csv")


def test_a_tables_method_column_reads_as_the_kind_or_the_adaptation_it_meant():
    transfer = pd.DataFrame({"variant": ["si"], "method": ["subnetwork"], "test_accuracy": [0.9]})
    assert list(upgrade_record(transfer, "table").columns) == ["variant", "kind", "test_accuracy"]
    points = pd.DataFrame({"backbone": ["b"], "task": ["t"], "method": ["fs"], "test_accuracy": [0.9]})
    assert list(upgrade_record(points, "table").columns) == ["backbone", "task", "adaptation", "test_accuracy"]
    # the stored records of docs/data (written before the rename) read in today's words
    stored = run_records.load("default", REPO / "docs" / "data")
    assert "kind" in stored.csv("arithmetic/transfer.csv") and "method" not in stored.csv("arithmetic/transfer.csv")
    assert "adaptation" in stored.csv("submasking/points.csv")
    page = stored.text("submasking/tables.md")
    assert "| adaptation | digits | textures |" in page and "| method |" not in page
    assert "| world_base | digits | fs |" in page   # rows unchanged


def test_renamed_keys_are_told_apart_by_their_values_and_keep_the_layout():
    settings = {"variants": {"si": {"method": "subnetwork", "lr_scale": 0.0}}, "mask": {"method": "continuous_sparsification"},
                "methods": ["lp", "fs"], "identity": {"method": "fft", "fraction": "1"}}
    assert renamed_keys(settings) == {"variants": {"si": {"kind": "subnetwork", "lr_scale": 0.0}},
                                      "mask": {"method": "continuous_sparsification"}, "adaptations": ["lp", "fs"],
                                      "identity": {"adaptation": "fft", "fraction": "1"}}
    for layout, end in (({"sort_keys": True}, ""), ({"indent": 2, "sort_keys": True}, "\n")):
        text = json.dumps(settings, **layout) + end
        assert renamed_json(text) == json.dumps(renamed_keys(settings), **layout) + end   # keys sorted again
    assert renamed_json("not json") == "not json"
    assert renamed_table("backbone,task,method\nb,t,fs\n") == "backbone,task,adaptation\nb,t,fs\n"
    assert renamed_table("variant,method\nsi,subnetwork\n") == "variant,kind\nsi,subnetwork\n"


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
    with pytest.raises(ValueError, match="unknown record"):
        upgrade_record({}, "vision base")


def test_a_run_of_0_5_0_s_development_plans_nothing_after_its_upgrade(smoke_run, tmp_path):
    """Three renames of 0.5.0's development: the vision λ wildcard was `penalty` (now `l0`, as in arithmetic), a
    point's folder `seed{r}` (now `replicate{r}`), and a variant's and a submasking point's `method` (now `kind`,
    `adaptation`). A finished run of that layout would retrain every vision discovery (Snakemake's code trigger),
    every transfer point (their outputs missing, their settings changed), and all that follows;
    `python -m subtask_induction.upgrade FOLDER` moves the folders, rewrites the records and nothing is planned."""
    from harness import clone_run, snakemake
    from subtask_induction.upgrade import RENAMED_COLUMNS, RENAMED_RECORD_KEYS, RENAMED_PATHS, upgrade_run
    from subtask_induction.upgrade import main as upgrade_main

    workdir = clone_run(smoke_run, tmp_path / "run")
    # the run as the old layout wrote it: the same machinery with the renames reversed
    old_paths = [(pattern.replace(")seed(", ")replicate("), new.replace("replicate", "seed"))
                 for pattern, new in RENAMED_PATHS]
    # (the λ wildcard's rename in commands, RENAMED_IN_COMMANDS, has nothing to reverse here: a vision discovery runs in
    # a pack, whose command names no wildcard)
    assert upgrade_run(workdir, renames=old_paths,
                       keys=[(new, old, values) for old, new, values in RENAMED_RECORD_KEYS],
                       columns={key: (new, old) for key, (old, new) in RENAMED_COLUMNS.items()})
    point = "results/arithmetic/chain0/transfer/a+ab/ab/a2+ab/layers1/si/n10/{}0/metrics.json"
    fraction = "results/submasking/points/world_base/faces/fs/fraction1/{}0/metrics.json"
    assert (workdir / point.format("seed")).is_file() and not (workdir / point.format("replicate")).exists()
    assert (workdir / fraction.format("seed")).is_file()
    packs = list((workdir / "results/arithmetic/transfer/packs").glob("*.points.json"))
    assert packs and all("/seed0/" in p.read_text() and "/replicate0/" not in p.read_text() for p in packs)
    assert all('"method": "' in p.read_text() and '"kind": "' not in p.read_text() for p in packs)
    assert json.loads((workdir / fraction.format("seed")).read_text())["identity"]["method"] == "fs"
    assert "method" in (workdir / "results/arithmetic/summary/transfer.csv").read_text().split("\n")[0]

    before = snakemake(workdir, "-n")
    assert "arithmetic_transfer_pack_" in before.stdout and "submasking_pack_" in before.stdout
    assert upgrade_main([str(workdir)]) == 0
    assert json.loads((workdir / point.format("replicate")).read_text())["identity"]["replicate"] == 0
    assert json.loads((workdir / point.format("replicate")).read_text())["config"]["variant"]["kind"] == "subnetwork"
    assert json.loads((workdir / fraction.format("replicate")).read_text())["identity"]["adaptation"] == "fs"
    after = snakemake(workdir, "-n")
    assert "Nothing to be done" in after.stdout, after.stdout[-3000:]
    assert upgrade_run(workdir) == []   # twice: nothing more to rewrite
