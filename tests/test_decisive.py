"""The decisive record in batches (config/decisive.yaml, `make decisive BATCHES=k`): a batch runs exactly its first
k x 8 chains per family, and a record holding only some batches never shows a verdict: its configs plan the whole
record, so every claim reads "incomplete" until the last batch is in."""

import copy
import shutil

import pandas as pd
import yaml

from harness import REPO
from subtask_induction.pages import readme, run_records
from subtask_induction.workflow_config import BATCH, normalise, take_batches

DECISIVE = ["config/beyond/magnitude.yaml", "config/beyond/blurpool.yaml", "config/beyond/signs.yaml",
            "config/decisive.yaml"]


def decisive_config(batches=None) -> dict:
    from subtask_induction.pages.planned import effective_config

    config = effective_config(["config/config.yaml", *DECISIVE])
    config["decisive_batches"] = batches
    return config


def test_each_batch_runs_the_first_k_times_8_chains_of_every_family_and_the_bases_they_need():
    whole = decisive_config()
    assert len(whole["arithmetic"]["chains"]) == 24 and len(whole["vision"]["chains"]) == 12
    assert not set(whole["arithmetic"]["chains"]) & set(range(16))   # disjoint from the default's and replication's
    assert not set(whole["vision"]["chains"]) & set(range(16))
    for batches, arithmetic, vision in ((1, 8, 8), (2, 16, 12), (3, 24, 12)):
        config = take_batches(decisive_config(batches))
        assert config["arithmetic"]["chains"] == whole["arithmetic"]["chains"][:arithmetic]
        assert config["vision"]["chains"] == whole["vision"]["chains"][:vision]
        backbones = [b["chain"] for b in config["submasking"]["backbones"]]
        assert backbones == config["vision"]["chains"]
        sweep = normalise(config)
        assert {p.chain for p in sweep.arithmetic.points} == set(config["arithmetic"]["chains"])
        assert {p.chain for p in sweep.vision.points} == set(config["vision"]["chains"])
    assert take_batches(decisive_config(None)) == whole
    assert BATCH == 8


def test_a_record_of_the_first_batches_shows_no_verdict_only_incomplete(tmp_path):
    """A stored batch names the chains still to run as known gaps (so it can be stored and its tables checked), and
    its planned points stay the whole plan: every claim judged on it reads incomplete, never holds or reversed."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "docs" / "data", data)
    shutil.rmtree(data / "default_replication")
    record = data / "default"
    first = [0, 1, 2, 3]   # "the first batch" of this 8-chain record
    for family, table in (("arithmetic", "transfer.csv"), ("vision", "chains.csv")):
        path = record / family / table
        if path.exists():
            frame = pd.read_csv(path)
            frame[frame["chain"].isin(first)].to_csv(path, index=False)
    run = yaml.safe_load((record / "run.yaml").read_text())
    run["known_gaps"] = [{"family": family, "chain": [c for c in range(8) if c not in first],
                          "why": "batch 2 of the record not run yet"} for family in ("arithmetic", "vision")]
    (record / "run.yaml").write_text(yaml.safe_dump(copy.deepcopy(run), sort_keys=False))
    records = run_records.load_all(data)
    lines = readme.readme_verdict(records)
    arithmetic = [line for line in lines.splitlines() if "SI beats random initialisation" in line
                  and "12-layer" not in line.split("SI beats random initialisation")[1][:30]]
    assert arithmetic and all(line.startswith("- **Incomplete**") for line in arithmetic), lines
    assert "SI beats the count-matched random mask" in next(l for l in lines.splitlines() if l.startswith("- **Incomplete**"))


def test_a_batch_runs_no_chain_of_a_later_batch_even_where_an_experiment_names_one():
    config = decisive_config(1)
    late = config["arithmetic"]["chains"][-1]   # a chain of the last batch
    named = {**config["arithmetic"]["experiments"][0], "chains": [late], "variants": ["si_trainable"]}
    config["arithmetic"]["experiments"].append(dict(named))
    config["arithmetic"].setdefault("added_experiments", {})["late"] = [dict(named)]
    sweep = normalise(take_batches(config))
    assert {p.chain for p in sweep.arithmetic.points} == set(config["arithmetic"]["chains"])
    assert "si_trainable" not in {p.variant for p in sweep.arithmetic.points}
