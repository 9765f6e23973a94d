"""What a user does after the default: shrink the config, grow it back, add an n, a seed or a λ, change a
setting that changes no number. Tables follow the config exactly, and nothing already trained trains again."""

import copy
import json
import time

import pandas as pd

from harness import clone_run, jobs_run, pack_manifests, smoke_config, snakemake, work_done, write_config

TRAINING_RULES = ("arithmetic_base", "arithmetic_discover", "arithmetic_overlap_discover", "vision_base",
                  "vision_discover", "vision_transfer", "vision_mean_pool")


def tables(workdir):
    summary = workdir / "results"
    return {"arithmetic": pd.read_csv(summary / "arithmetic/summary/transfer.csv"),
            "vision": pd.read_csv(summary / "vision/summary/chains.csv"),
            "vision_table1": pd.read_csv(summary / "vision/summary/table1.csv"),
            "submasking": pd.read_csv(summary / "submasking/summary/points.csv"),
            "submasking_accuracy": pd.read_csv(summary / "submasking/summary/accuracy.csv"),
            "submasking_stability": pd.read_csv(summary / "submasking/summary/mask_stability.csv")}


def run(workdir, config, *args):
    write_config(workdir, config)
    result = snakemake(workdir, "--cores", "2", *args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_tables_follow_the_config_and_nothing_trained_trains_again(smoke_run, tmp_path):
    workdir = clone_run(smoke_run, tmp_path / "run")
    full = smoke_config()
    before = tables(workdir)

    # A setting that changes no number reruns nothing (it is a resource, not a param).
    quiet = copy.deepcopy(full)
    quiet["checkpoint_interval_s"] = 30
    write_config(workdir, quiet)
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout

    # Shrink every family: a seed, an adaptation, a task and a label fraction of submasking, a vision chain and a
    # variant, an arithmetic n. The tables hold exactly the configured points, and no training job runs.
    small = copy.deepcopy(full)
    small["submasking"].update(replicates=[0], adaptations=["fs"], label_fractions=[1.0],
                               tasks=[task for task in full["submasking"]["tasks"] if task["name"] == "faces"])
    small["vision"]["chains"] = [1]
    del small["vision"]["transfer"]["variants"]["linear"]
    small["arithmetic"]["transfer"]["disambiguation_rows"] = [10]
    started = time.time()
    time.sleep(1)
    result = run(workdir, small)
    assert not set(work_done(result, workdir, started)) & set(TRAINING_RULES), work_done(result, workdir, started)
    assert not [rule for rule in jobs_run(result) if rule.startswith("arithmetic_transfer_pack_")]
    # the submasking pack of the task kept was re-formed: it restores its points from their records
    assert not [p for m in pack_manifests(workdir, started, "submasking").values() for p in m["trained"]]
    shrunk = tables(workdir)
    points = shrunk["submasking"]
    assert list(zip(points["task"], points["adaptation"], points["fraction"], points["replicate"])) == [("faces", "fs", 1.0, 0)]
    assert len(shrunk["submasking_accuracy"]) == 1 and (shrunk["submasking_accuracy"]["replicates"] == 1).all()
    assert shrunk["submasking_stability"].empty  # one seed: nothing to compare
    assert set(shrunk["vision"]["chain"]) == {1} and "linear" not in set(shrunk["vision"]["model"])
    assert (shrunk["vision_table1"]["pooled_accuracy_count"] == 1).all()
    assert set(shrunk["arithmetic"]["n"]) == {10}

    # Grow it back, and add an n above the largest, a transfer seed and a λ that loses (the vision selection is
    # the same checkpoint mechanism): only the new points and the new discovery train; every finished point
    # is kept as it was.
    grown = copy.deepcopy(full)
    grown["arithmetic"]["transfer"]["disambiguation_rows"] = [0, 10, 20]
    grown["arithmetic"]["transfer"]["replicates"] = [0, 1]
    grown["arithmetic"]["discovery"]["l0_weights"] += [1.0e-5]
    chains = full["arithmetic"]["chains"]
    selected = [f"results/arithmetic/chain{chain}/discovery/a+ab/ab/layers1/selected.json" for chain in chains]
    chosen = [json.loads((workdir / path).read_text())["subnetwork"] for path in selected]
    started = time.time()
    time.sleep(1)
    result = run(workdir, grown)
    ran = work_done(result, workdir, started)
    assert [rule for rule in ran if rule in TRAINING_RULES] == ["arithmetic_discover"] * len(chains), ran  # the new λ
    assert [json.loads((workdir / path).read_text())["subnetwork"] for path in selected] == chosen  # it lost
    assert not [p for m in pack_manifests(workdir, started, "submasking").values() for p in m["trained"]]
    trained = [path for manifest in pack_manifests(workdir, since=started).values() for path in manifest["trained"]]
    assert trained and all("/replicate1/" in path or "/n20/" in path for path in trained), trained
    assert len(trained) == 4 * len(chains) * (2 + 2)  # per chain: the variants at n 0 and 10 for seed 1, n 20 both
    after = tables(workdir)
    for name in ("vision", "submasking", "submasking_accuracy", "submasking_stability"):
        pd.testing.assert_frame_equal(after[name], before[name])  # the same points, the same numbers
    old = after["arithmetic"][(after["arithmetic"]["replicate"] == 0) & (after["arithmetic"]["n"] <= 10)]
    columns = [c for c in before["arithmetic"].columns if c != "seconds"]
    pd.testing.assert_frame_equal(old[columns].reset_index(drop=True), before["arithmetic"][columns])
    assert set(after["arithmetic"]["n"]) == {0, 10, 20} and set(after["arithmetic"]["replicate"]) == {0, 1}
