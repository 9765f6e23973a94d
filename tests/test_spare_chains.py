"""Spare chains (issue 89 item 9; roster.py): a plan names a spare list; a planned chain whose base fails the validity
criterion runs none of its discoveries or transfers and the next spare whose base passes takes its place; the pages
say so. The rule on generated accuracies (Hypothesis), the config's refusals, the packs, and the workflow's own run
with a base the real check rejects."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness import copy_workflow, smoke_config, snakemake, write_config
from subtask_induction import roster
from subtask_induction.arithmetic.jobs import ArithmeticJobs
from subtask_induction.config_checks import config_problems
from subtask_induction.pages import planned
from subtask_induction.pages.sections import validity as validity_section
from subtask_induction.validity import BASE_VALID

from conftest import REPO

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())


@st.composite
def plans(draw):
    chains = draw(st.lists(st.integers(0, 60), min_size=1, max_size=12, unique=True))
    spares = draw(st.lists(st.integers(61, 99), max_size=6, unique=True))
    accuracy = {c: draw(st.sampled_from([0.0, 0.5, 0.899, 0.9, 1.0])) for c in chains + spares}
    return chains, spares, accuracy


@given(plans())
def test_each_failed_chain_takes_the_next_passing_spare_in_order(plan):
    chains, spares, accuracy = plan
    valid = {c: a >= BASE_VALID["arithmetic"] for c, a in accuracy.items()}
    got = roster.resolve("arithmetic", chains, spares, accuracy)
    assert len(got.chains) == len(chains)   # as many chains as the plan fixed, whatever failed
    passing_spares = [s for s in spares if valid[s]]
    failed = [c for c in chains if not valid[c]]
    used = passing_spares[:len(failed)]
    # each failed chain, in the plan's order, is replaced by the next passing spare, at its own place
    expected = []
    spare_iter = iter(used)
    for chain in chains:
        expected.append(chain if valid[chain] else next(spare_iter, chain))
    assert got.chains == expected
    assert [by for _, _, by in got.replacements()] == used + [None] * (len(failed) - len(used))
    table = got.table.set_index("chain")
    assert set(table.index[table["counts"]]) == set(expected)
    assert not any(table.loc[s, "counts"] for s in spares if s not in used)   # an unneeded spare runs nothing more


@given(plans())
def test_a_roster_reads_back_as_written(tmp_path_factory, plan):
    got = roster.resolve("vision", *plan)
    path = tmp_path_factory.mktemp("roster") / "roster.csv"
    roster.write(got, path)
    again = roster.read(path, "vision")
    assert again.chains == got.chains and again.replacements() == got.replacements()
    pd.testing.assert_frame_equal(again.table, got.table)   # bools stay bools, an empty place stays empty


def test_a_chain_without_a_base_or_in_both_lists_is_refused():
    with pytest.raises(ValueError, match=r"no base accuracy for chains \[7\]"):
        roster.resolve("arithmetic", [0], [7], {0: 0.1})
    with pytest.raises(ValueError, match="must be distinct"):
        roster.resolve("arithmetic", [0, 1], [1], {0: 1.0, 1: 1.0})


def with_spares(change=lambda c: None):
    """The default config as a confirmatory plan takes it: spares, no runs that name chains of their own."""
    config = copy.deepcopy(DEFAULT)
    arith = config["arithmetic"]
    arith["spare_chains"] = [90, 91]
    arith["experiments"] = [{k: v for k, v in e.items() if k != "chains"} for e in arith["experiments"]]
    arith["overlap"]["runs"] = []
    config["vision"]["spare_chains"] = [90]
    config["families"] = ["arithmetic", "vision"]   # submasking's backbones name vision chains of their own
    change(config)
    return config


def test_the_default_with_spares_passes_and_what_names_chains_of_its_own_is_refused():
    assert [p for p in config_problems(with_spares()) if "spare" in p] == []
    cases = [
        (lambda c: c["arithmetic"].update(spare_chains=[3, 90]), "arithmetic.spare_chains: [3] are in arithmetic.chains"),
        (lambda c: c["arithmetic"]["experiments"][0].update(chains=[0]), "an experiment's own chains"),
        (lambda c: c["arithmetic"]["overlap"].update(runs=[{"name": "seed1", "seed": 1}]), "overlap runs read the first"),
        (lambda c: c.update(decisive_batches=1), "decisive_batches cuts the chains list"),
        (lambda c: c["vision"].update(spare_chains=[4]), "vision.spare_chains: [4] are in vision.chains"),
        (lambda c: c["arithmetic"]["transfer"]["variants"]["si"].update(discovery_rows=100), "label-budget variants"),
        (lambda c: c["vision"]["transfer"]["variants"]["si"].update(cross_domain="gpt2"), "a cross-domain variant"),
        (lambda c: c.update(families=["arithmetic", "vision", "submasking"]), "a vision_base backbone names its"),
    ]
    for change, message in cases:
        assert any(message in p for p in config_problems(with_spares(change))), message


def test_a_roster_s_packs_are_the_candidates_packs_of_its_chains():
    """With spares a pack holds one chain's points, so the roster's packs (what the tables read) are a subset of the
    rules built for every candidate, with the same names: a replaced chain's packs are rules nothing asks for."""
    arith = with_spares()["arithmetic"]
    jobs = ArithmeticJobs(arith)
    assert all(len({p.chain for p in members}) == 1 for _, members in jobs.packs)
    assert {p.chain for p in jobs.points} == set(arith["chains"]) | {90, 91}
    on = jobs.on_roster([0, 91, 2, 3, 4, 5, 6, 7])
    assert dict(on.packs).keys() == {name for name, members in jobs.packs if members[0].chain in {0, 91, 2, 3, 4, 5, 6, 7}}
    assert {p.chain for _, members in on.packs for p in members} == {0, 91, 2, 3, 4, 5, 6, 7}
    assert all(dict(on.packs)[name] == dict(jobs.packs)[name] for name in dict(on.packs))
    # without spares the packs are today's, across chains
    plain = ArithmeticJobs(DEFAULT["arithmetic"])
    assert any(len({p.chain for p in members}) > 1 for _, members in plain.packs)


def spare_config(base_epochs: int, base_lr: float) -> dict:
    """The smoke arithmetic family where a 1-layer GPT-2 learns its base task (a + ab mod 2, ten numbers) within
    seconds: planned chain 0, spares 1 and 2; the smoke vision family with planned chain 0 and spare 1."""
    config = smoke_config("arithmetic", "vision")
    config["vision"].update(chains=[0], spare_chains=[1])   # the smoke world's bases all fail: no spare left
    arith = config["arithmetic"]
    arith.update(n_numbers=10, modulus=2, chains=[0], spare_chains=[1, 2])
    arith["data"] = {"eval_rows": 20, "test_rows": 20, "base": {"train_rows": 60}, "discovery": {"train_rows": 40}}
    arith["base"] = {"epochs": base_epochs, "batch_size": 20, "lr": base_lr}
    arith["model"] = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}
    arith.pop("overlap")
    # one base a pack: the test trains chain 0's base alone under other settings first (a pack of three would
    # train the spares' bases with it, under the same too-little settings)
    config["pack_sizes"] = {**config["pack_sizes"], "arithmetic_base": 1}
    return config


def test_a_failed_base_is_replaced_by_the_next_spare_in_the_workflow_s_own_run(tmp_path):
    """Chain 0's base is trained too little (one epoch at a learning rate of 1e-5), and the real check rejects it; the
    spares' bases are trained as the plan says and pass. The run trains every base, writes the roster, runs no
    discovery or transfer of chain 0 and none past the base of the spare it did not need, and its tables hold the
    spare in chain 0's place; the console, the record's planned points and the results page say so."""
    work = copy_workflow(tmp_path / "run", spare_config(1, 1e-5))
    chain0 = "results/arithmetic/chain0/base/a+ab/layers1/metrics.json"
    result = snakemake(work, "--cores", "2", chain0, timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    write_config(work, spare_config(80, 1e-2))
    # the plan's config, keeping the base chain 0 was given (its settings differ; only this test makes them differ)
    result = snakemake(work, "--cores", "2", "--rerun-triggers", "mtime", timeout=1500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    accuracy = json.loads((work / chain0).read_text())["metrics"]["eval_accuracy"]
    assert accuracy < BASE_VALID["arithmetic"]
    assert "arithmetic chain 0: its base did not learn its task" in result.stderr
    assert "spare chain 1 runs in its place" in result.stderr

    table = roster.read(work / "results/arithmetic/summary/roster.csv", "arithmetic")
    assert table.chains == [1] and table.replacements() == [(0, pytest.approx(accuracy), 1)]
    assert table.table.set_index("chain").loc[2, "valid"]   # spare 2 passed, and was not needed
    arithmetic = work / "results/arithmetic"
    for chain, folders in ((0, ["base"]), (1, ["base", "discovery", "transfer"]), (2, ["base"])):
        assert sorted(p.name for p in (arithmetic / f"chain{chain}").iterdir()) == folders
    for name in ("transfer", "base", "discovery"):
        assert set(pd.read_csv(arithmetic / f"summary/{name}.csv")["chain"]) == {1}, name

    # vision: every smoke base fails, so the spare cannot help: chain 0 keeps its place and counts, the spare stops at
    # its base, and the first chain that counts gives the diagnostics
    sight = roster.read(work / "results/vision/summary/roster.csv", "vision")
    assert sight.chains == [0] and [by for _, _, by in sight.replacements()] == [None]
    assert "vision chain 0: its base did not learn its task" in result.stderr and "no spare left" in result.stderr
    assert sorted(p.name for p in (work / "results/vision/chain1").iterdir()) == ["base"]
    assert set(pd.read_csv(work / "results/vision/summary/chains.csv")["chain"]) == {0}
    assert (work / "results/vision/summary/diagnostics.csv").is_file()

    # the same command again: nothing to do
    again = snakemake(work, "--cores", "2", "--rerun-triggers", "mtime", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr

    # a record of the run plans the roster's points, and its results page names the replacement
    config = yaml.safe_load((work / "config/config.yaml").read_text())
    points = planned.planned_points(config, planned.rosters(work / "results", config))
    assert set(points["arithmetic"]["chain"]) == {1} and set(points["vision"]["chain"]) == {0}
    with pytest.raises(FileNotFoundError, match="roster.csv is missing"):
        planned.rosters(tmp_path / "elsewhere", config)
    record = tmp_path / "record"
    (record / "arithmetic").mkdir(parents=True)
    (record / "arithmetic/roster.csv").write_bytes((arithmetic / "summary/roster.csv").read_bytes())

    class Record:   # what the section reads of a stored record
        def has(self, table):
            return (record / table).is_file()

        def path(self, table):
            return record / table

    lines = validity_section.roster_lines(validity_section.replaced({"confirmatory": Record()}))
    assert any(line.startswith("- `confirmatory`, arithmetic chain 0: its base did not learn its task (base eval accuracy")
               and line.endswith("spare chain 1 runs in its place.") for line in lines), lines


def test_a_plan_without_spares_asks_for_no_roster(tmp_path):
    """The default's DAG is unchanged: no roster job, no roster table."""
    work = copy_workflow(tmp_path / "run", smoke_config("arithmetic"))
    result = snakemake(work, "--cores", "1", "-n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "arithmetic_roster" not in result.stdout
    assert not Path(work / "results/arithmetic/summary/roster.csv").exists()


def test_a_roster_an_earlier_config_left_behind_is_not_reported(tmp_path):
    """Snakemake never deletes summary/roster.csv: a run whose config has no spares now must not say a spare ran."""
    summary = tmp_path / "arithmetic" / "summary"
    summary.mkdir(parents=True)
    roster.write(roster.resolve("arithmetic", [0], [1], {0: 0.2, 1: 1.0}), summary / "roster.csv")
    assert roster.report(tmp_path, []) == []
    assert roster.report(tmp_path, ["arithmetic"]) == [
        "arithmetic chain 0: its base did not learn its task (base eval accuracy 20.0 %, under 90 %); spare chain 1 "
        "runs in its place"]
