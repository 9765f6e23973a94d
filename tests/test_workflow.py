"""The arithmetic DAG driven through the Snakemake CLI, on the session's smoke run (conftest.py)."""

import json
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from harness import REPO, clone_run, copy_workflow, pack_manifests, smoke_config, snakemake, work_done

TRANSFER_POINT = "results/arithmetic/chain0/transfer/a+ab/ab/a2+ab/layers1/si/n10/replicate0/metrics.json"


def test_whole_arithmetic_dag_runs_and_writes_every_output(smoke_run):
    summary = smoke_run / "results/arithmetic/summary"
    transfer = pd.read_csv(summary / "transfer.csv")
    assert len(transfer) == 4 * 2 * 2 * 2  # variants x sizes x chains, one row per selection protocol
    assert sorted(transfer["chain"].unique()) == [0, 1] and sorted(transfer["replicate"].unique()) == [0]
    assert set(transfer["variant"]) == {"si", "si_trainable", "sampled", "random"}
    assert set(transfer["protocol"]) == {"eval", "last"}  # the paper's rows: no held-out slice to select on
    assert transfer["paper_rows"].all() and (transfer["train_rows"] == 20 + transfer["n"]).all()
    assert transfer["test_accuracy"].between(0, 1).all()
    assert (summary / "table3.md").read_text().count("|") > 10
    # floor off in the smoke run: a subnetwork below it is flagged in the selection record and Table 3, never silent
    selected = json.loads((smoke_run / "results/arithmetic/chain0/discovery/a+ab/ab/layers1/selected.json").read_text())
    kept = pd.read_csv(summary / "table3.csv")
    assert "below_floor" in selected and kept["below_floor"].dtype == bool
    assert bool(selected["below_floor"]) == bool(kept[kept["chain"] == 0]["below_floor"].iloc[0])
    assert ("**Below the floor**" in (summary / "table3.md").read_text()) == bool(kept["below_floor"].any())
    chains = (summary / "chains.md").read_text()
    assert "| chain 0 | chain 1 |" in chains and "si vs sampled" in chains
    assert "protocol `last`" in (summary / "transfer.md").read_text().split("###")[1]
    assert "the paper's rows" in (summary / "transfer.md").read_text().split("###")[0]
    for figure in ("fig3", "fig6", "fig7", "protocols", "inheritance", "dial", "discovery_curves"):
        for ext in ("png", "pdf"):
            assert (smoke_run / f"results/arithmetic/figures/{figure}.{ext}").stat().st_size > 1000
    point = json.loads((smoke_run / TRANSFER_POINT).read_text())
    assert point["identity"] == {"family": "arithmetic", "chain": 0, "base": "a+ab", "subtask": "ab", "target": "a2+ab",
                                 "layers": 1, "variant": "si", "n": 10, "replicate": 0}
    assert point["config"]["variant"]["kind"] == "subnetwork" and "package_version" in point["provenance"]
    assert len(point["curve"]) == 2 and set(point["metrics"]) == {"eval", "last"}
    assert point["metrics"]["last"]["epoch"] == 2 and "test_agree_2a2" in point["metrics"]["last"]
    assert point["competing_rules"] == ["2a2", "2b2", "a2+b2"]
    # 20 numbers: every one of the 20 a=b rows + the 10 disambiguation rows, nothing held out (the paper's rows)
    assert point["rows"] == {"train": 20 + 10, "ambiguous": 20, "disambiguation": 10, "holdout": 0,
                             "paper_rows": True, "eval": 40, "test": 40}
    overlap = pd.read_csv(summary / "overlap.csv")  # default, seed1, hard_concrete and chain 1's: six pairs
    assert len(overlap) == 6 and overlap["jaccard"].between(0, 1).all() and (overlap["layers"] == 1).all()
    # each run is compared with the subnetwork the selection chose (of the smoke run's two λ), at that λ, and every
    # other chain's choice is in the table too (which subnetworks the chains found)
    names = set(overlap["run"]) | set(overlap["other"])
    assert {f"default (λ={selected['l0_weight']:g})", "seed1", "hard_concrete"} <= names
    assert len(names) == 4 and any(name.startswith("chain 1 (λ=") for name in names)
    seed1 = json.loads((smoke_run / "results/arithmetic/overlap/a+ab/ab/layers1/seed1/metrics.json").read_text())
    assert seed1["config"]["l0_weight"] == selected["l0_weight"]
    assert (smoke_run / "results/arithmetic/figures/overlap.png").stat().st_size > 1000
    hard_concrete = json.loads((smoke_run / "results/arithmetic/overlap/a+ab/ab/layers1/hard_concrete/metrics.json")
                               .read_text())
    assert hard_concrete["mask_method"] == "hard_concrete" and hard_concrete["config"]["mask_init"] == 2.0
    assert not list(smoke_run.glob("results/**/*.ckpt")), "checkpoints are removed after success"
    base_pack = next((smoke_run / "logs/arithmetic/packs/arithmetic_base").glob("*[0-9a-f].log")).read_text()
    assert "base a+ab 1 layers: eval" in base_pack and "[job time]" in base_pack  # both chains' bases, one process


def curve(path: Path) -> list[dict]:
    return [{k: v for k, v in epoch.items() if k != "seconds"} for epoch in json.loads(path.read_text())["curve"]]


def test_single_point_rerun_retrains_that_point_only_and_aggregate_picks_it_up(smoke_run, tmp_path):
    smoke_run = clone_run(smoke_run, tmp_path / "run")
    point = smoke_run / TRANSFER_POINT
    before = curve(point)
    others = {path: path.read_text() for path in smoke_run.glob("results/arithmetic/chain*/transfer/a+ab/**/metrics.json")
              if path != point}
    started = time.time()
    time.sleep(1)
    result = snakemake(smoke_run, TRANSFER_POINT, "--config", f"retrain_points=[{TRANSFER_POINT}]", "--cores", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    ran = pack_manifests(smoke_run, since=started)
    assert len(ran) == 1  # only its pack ran
    (pack,) = ran.values()
    assert pack["trained"] == [TRANSFER_POINT] and len(pack["restored"]) == len(pack["points"]) - 1
    assert curve(point) == before  # trained again, to the same numbers (same seed, same machine)
    assert {path: path.read_text() for path in others} == others
    rerun = json.loads(point.read_text())["metrics"]["last"]["test_accuracy"]
    started = time.time()
    time.sleep(1)
    result = snakemake(smoke_run, "--cores", "2")  # back to the plain config: the pack restores, tables rebuild
    assert result.returncode == 0, result.stderr[-3000:]
    assert not [path for pack in pack_manifests(smoke_run, since=started).values() for path in pack["trained"]]
    table = pd.read_csv(smoke_run / "results/arithmetic/summary/transfer.csv")
    row = table[(table["variant"] == "si") & (table["n"] == 10) & (table["protocol"] == "last") & (table["chain"] == 0)]
    assert row["test_accuracy"].item() == pytest.approx(rerun)
    assert "Nothing to be done" in snakemake(smoke_run, "-n").stdout


def test_retrain_points_never_does_nothing_silently(smoke_run, tmp_path):
    """A point the config in force does not hold, or one trained under other transfer settings (a run made with
    an overlay, retrained without it), stops before any job, naming the config files and how to repeat them."""
    import copy

    from harness import write_config

    workdir = clone_run(smoke_run, tmp_path / "run")
    foreign = TRANSFER_POINT.replace("/n10/", "/n12345/")
    result = snakemake(workdir, foreign, "-n", "--config", f"retrain_points=[{foreign}]")
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert f"{foreign} is not a packed point (a transfer, a base, a discovery) of the config in force" in said
    assert "The config in force comes from" in result.stdout + result.stderr and "Repeat the --configfile" in result.stdout + result.stderr
    other = copy.deepcopy(smoke_config())
    other["arithmetic"]["transfer"]["lr"] *= 2  # the config without the overlay the point was made with
    write_config(workdir, other)
    result = snakemake(workdir, TRANSFER_POINT, "-n", "--config", f"retrain_points=[{TRANSFER_POINT}]")
    assert result.returncode != 0
    assert f"{TRANSFER_POINT} was trained with other transfer settings (lr) than the config in force" in result.stdout + result.stderr
    write_config(workdir, smoke_config())  # the run's own config: the point is planned
    result = snakemake(workdir, TRANSFER_POINT, "-n", "--config", f"retrain_points=[{TRANSFER_POINT}]")
    assert result.returncode == 0 and "arithmetic_transfer_pack" in result.stdout + result.stderr


@pytest.mark.parametrize("method,init", [("straight_through", 1.0)])  # hard_concrete: the smoke's overlap run
def test_discovery_takes_its_mask_method_from_the_config(smoke_run, tmp_path, method, init):
    from subtask_induction.method.masks import load_subnetwork

    workdir = clone_run(smoke_run, tmp_path / "run")
    switch = workdir / "mask.yaml"
    switch.write_text(yaml.safe_dump({"arithmetic": {"discovery": {"mask": {"method": method}, "mask_init": init}}}))
    selected = "results/arithmetic/chain0/discovery/a+ab/ab/layers1/selected.json"
    started = time.time()
    result = snakemake(workdir, selected, "--configfile", str(switch), "--cores", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "arithmetic_discover" in work_done(result, workdir, started) and "arithmetic_transfer" not in result.stderr
    selection = json.loads((workdir / selected).read_text())
    chosen = load_subnetwork(workdir / selection["subnetwork"], ("kept",))
    assert chosen["mask_method"] == method == selection["mask_method"]
    assert all(mask.dtype == torch.bool for mask in chosen["masks"].values())
    for tag in ("0.0001", "0.001"):
        metrics = json.loads((workdir / f"results/arithmetic/chain0/discovery/a+ab/ab/layers1/lambda{tag}/metrics.json")
                             .read_text())
        assert metrics["mask_method"] == method and metrics["config"]["mask"] == {"method": method}


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["arithmetic"]["transfer"].update(epochz=3), "epochz"),
        (lambda c: c["arithmetic"].update(layers=[0]), "layers"),
        (lambda c: c["arithmetic"]["transfer"]["variants"]["si"].update(kind="magic"), "magic"),
        (lambda c: c["arithmetic"]["experiments"][0].update(subtask="a*b"), "a*b"),
        (lambda c: c.update(device="gpu"), "device"),
        (lambda c: c["arithmetic"]["model"].update(n_head=3), "n_head 3"),
        (lambda c: c["arithmetic"]["report"].update(dial_n=7), "dial_n"),
        (lambda c: c["arithmetic"]["transfer"].update(patience=5), "patience"),
    ],
)
def test_bad_config_fails_before_any_job_naming_the_key(tmp_path, edit, message):
    config = smoke_config("arithmetic")
    edit(config)
    workdir = copy_workflow(tmp_path, config)
    result = snakemake(workdir, "--cores", "1")
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (workdir / "results").exists()


def test_paper_config_lists_the_full_grid_quickly():
    started = time.perf_counter()
    result = snakemake(REPO, "-n", "--configfile", "config/paper.yaml", "--quiet", "rules", "--cores", "1")
    seconds = time.perf_counter() - started
    assert result.returncode == 0, result.stderr[-2000:]
    counts = {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines()
              if len(line.split()) == 2 and line.split()[1].isdigit()}
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())["arithmetic"]
    points = sum(len(e["targets"]) * len(e.get("variants", paper["transfer"]["variants"]))
                 for e in paper["experiments"]) * 6 * 17 * 5
    packs = {rule: count for rule, count in counts.items() if rule.startswith("arithmetic_transfer_pack_")}
    # 145 points per (depth, n), packs of at most 128: two per (depth, n)
    assert points == 14790 and len(packs) == 6 * 17 * 2 and set(packs.values()) == {1}
    discoveries = sum(count for rule, count in counts.items() if rule.startswith("arithmetic_discover_pack_"))
    assert discoveries == len({(e["base"], e["subtask"]) for e in paper["experiments"]}) * 6 * 3  # packs of one
    print(f"paper dry-run: {sum(counts.values())} jobs ({points} transfer points in {len(packs)} packs) in {seconds:.1f} s")
