"""Each family's jobs (arithmetic/jobs.py, vision/jobs.py, submasking/jobs.py, built by
workflow_config.normalise): the settings strings the rules pass to the steps, the paths they wire, the targets.
A settings string is a job's params: it must change exactly when a number of that job could, so a finished job
reruns when it should and never otherwise. Torch-free and fast: no workflow runs here."""

import json

from snakemake.io import expand as snakemake_expand

from subtask_induction.jobs import expand
from subtask_induction.workflow_config import normalise
from test_points import DEFAULT, merged

BEYOND = __import__("yaml").safe_load((__import__("conftest").REPO / "config/beyond.yaml").read_text())


def test_expand_gives_snakemakes_paths_in_snakemakes_order():
    grid = {"chain": [0, 1, 2], "init": ["pretrained", "random"], "l0": ["1e-06", "1e-05"]}
    pattern = "results/vision/chain{chain}/discovery/{init}/lambda{l0}/metrics.json"
    assert expand(pattern, **grid) == snakemake_expand(pattern, **grid)
    assert expand("x/{a}", a=[]) == snakemake_expand("x/{a}", a=[]) == []


def test_a_discoverys_settings_leave_out_the_lambda_list_and_a_bases_its_chain_seeds_it():
    arith = normalise(merged()).arithmetic
    more_lambdas = merged({"arithmetic": {"discovery": {"l0_weights": [1.0e-9, 1.0e-8, 1.0e-7]}}})
    assert normalise(more_lambdas).arithmetic.discovery_settings(1) == arith.discovery_settings(1)
    settings = json.loads(arith.discovery_settings(1))
    assert settings["seed"] == settings["chain"] == 1 and "l0_weights" not in settings and "floor" not in settings
    base = json.loads(arith.base_settings("2"))
    assert base["chain"] == 2 and base["model"] == DEFAULT["arithmetic"]["model"]
    assert base["training"] == DEFAULT["arithmetic"]["base"]
    # a change to the discovery's optimiser does change them
    other_lr = merged({"arithmetic": {"discovery": {"lr": 0.5}}})
    assert normalise(other_lr).arithmetic.discovery_settings(1) != arith.discovery_settings(1)


def test_the_transfer_settings_change_with_a_training_setting_and_not_with_the_sweeps_lists():
    arith = normalise(merged()).arithmetic
    grown = merged({"arithmetic": {"transfer": {"replicates": [0, 1, 2, 3], "disambiguation_rows": [0, 5000],
                                                "pack_size": 1}}})
    assert normalise(grown).arithmetic.transfer_settings() == arith.transfer_settings()
    assert normalise(merged({"arithmetic": {"transfer": {"lr": 1.0}}})).arithmetic.transfer_settings() != (
        arith.transfer_settings())


def test_a_points_args_name_its_files_and_a_budget_variant_transfers_its_own_discovery():
    arith = normalise(merged(BEYOND)).arithmetic
    point = next(p for p in arith.points if not arith.variants[p.variant].get("discovery_rows"))
    assert arith.budget_subnetwork(point) is None
    args = arith.point_args(point, "chosen/subnetwork.pt")
    assert args["subnetwork"] == "chosen/subnetwork.pt" and args["out"] == point.metrics
    assert args["base"] == f"results/arithmetic/chain{point.chain}/base/{point.base}/layers{point.layers}/model.pt"
    assert args["identity"] == point.identity() and "retrain" not in args
    budget = [p for p in arith.points if arith.variants[p.variant].get("discovery_rows")]
    assert budget, "config/beyond.yaml runs the label budget"
    rows = arith.variants[budget[0].variant]["discovery_rows"]
    assert arith.budget_subnetwork(budget[0]).endswith(f"/layers{budget[0].layers}/rows{rows}/subnetwork.pt")
    assert arith.budget_subnetworks() and arith.budget_targets()
    # retrain_points marks the point and nothing else
    marked = normalise({**merged(BEYOND), "retrain_points": [point.metrics]}).arithmetic
    assert marked.point_args(point, "s")["retrain"] is True


def test_a_packs_selections_are_those_of_its_points_chains_bases_and_depths():
    arith = normalise(merged()).arithmetic
    for pack, members in arith.packs:
        expected = {f"results/arithmetic/chain{p.chain}/discovery/{p.base}/{p.subtask}/layers{p.layers}/selected.json"
                    for p in members}
        assert set(arith.pack_selections(pack)) == expected


def test_only_the_chosen_segmenters_settings_reach_the_pooling():
    vision = normalise(merged()).vision
    chosen = DEFAULT["vision"]["pooling"]["segmenter"]
    other = "sam" if chosen != "sam" else "colour_regions"
    changed = merged({"vision": {"pooling": {other: {"changed_by_test": 1}}}})
    assert normalise(changed).vision.pooling_settings() == vision.pooling_settings()
    assert json.loads(vision.pooling_settings())["segmenter"]["kind"] == chosen


def test_a_vision_variant_that_reads_a_discovery_runs_it_and_a_texture_swap_variant_trains_on_the_swap():
    vision = normalise(merged(BEYOND)).vision
    assert "label_free" in vision.inits and "si_label_free" in vision.readers["label_free"]
    assert vision.discovery_of("scratch") is None
    label_free = json.loads(vision.discovery_settings(0, "label_free"))
    assert label_free["originals"] == {"discovery": vision.split("discovery"), "eval": vision.split("eval")}
    assert "originals" not in json.loads(vision.discovery_settings(0, "pretrained"))
    assert vision.transfer_train("texture_swap") == "results/vision/data/texture_swap/train"
    assert vision.transfer_train("si") == "results/vision/data/world/train"
    assert json.loads(vision.transfer_settings(2, "si"))["variant"] == BEYOND["vision"]["transfer"]["variants"].get(
        "si", DEFAULT["vision"]["transfer"]["variants"]["si"])


def test_submasking_trains_a_vision_base_through_the_dag_and_records_it_only_without_the_vision_family():
    config = merged()
    sub = normalise(config).submasking
    backbone = next(name for name, spec in sub.backbones.items() if spec["source"] == "vision_base")
    assert sub.backbone_arg(backbone) == f"results/vision/chain{sub.backbones[backbone]['chain']}/base/model.pt"
    with_vision = dict(sub.benchmark_files())
    without = dict(normalise({**config, "families": ["submasking"]}).submasking.benchmark_files())
    assert "vision_base_pack" not in with_vision and without["vision_base_pack"]
    assert len(json.loads(sub.pack_points(sub.packs[0][0]))) == len(sub.packs[0][1])


def test_every_base_and_discovery_is_named_by_its_identity_and_the_tables_read_it_and_nothing_else(tmp_path):
    from subtask_induction.arithmetic.tables import base_table, discovery_tables

    arith, vision = normalise(merged()).arithmetic, normalise(merged()).vision
    base = json.loads(arith.base_identity("1", "a+ab", "2"))
    assert base == {"family": "arithmetic", "stage": "base", "chain": 1, "base": "a+ab", "layers": 2}
    found = json.loads(arith.discovery_identity(1, "a+ab", "ab", 2, "1e-06"))
    assert found["stage"] == "discovery" and found["l0_weight"] == 1e-06 and found["subtask"] == "ab"
    assert json.loads(arith.budget_identity(0, "a+ab", "ab", 2, "64"))["rows"] == 64
    assert json.loads(arith.overlap_identity("a+ab", "ab", 2, "seed1"))["chain"] == arith.overlap_chain
    assert json.loads(vision.base_identity(2)) == {"family": "vision", "stage": "base", "chain": 2}
    assert json.loads(vision.transfer_identity(2, "si")) == {"family": "vision", "chain": 2, "variant": "si"}
    # a record whose settings say otherwise is tabled by its identity
    curve = [{"epoch": 0, "eval_accuracy": 0.5, "kept_fraction": 0.1, "beta": 1, "train_loss": 1.0}]
    (tmp_path / "base.json").write_text(json.dumps({
        "identity": base, "metrics": {"eval_accuracy": 1.0, "test_accuracy": 1.0}, "best_epoch": 3,
        "config": {"chain": 7, "computation": "other", "layers": 9}}))
    (tmp_path / "discovery.json").write_text(json.dumps({
        "identity": found, "metrics": {"eval_accuracy": 0.9, "test_accuracy": 0.9, "kept_fraction": 0.1},
        "best_epoch": 1, "curve": curve, "config": {"chain": 7, "subtask": "other", "l0_weight": 5.0}}))
    row = base_table([tmp_path / "base.json"]).iloc[0]
    assert (row["chain"], row["base"], row["layers"]) == (1, "a+ab", 2)
    table, curves = discovery_tables([tmp_path / "discovery.json"])
    assert table.iloc[0][["chain", "subtask", "l0_weight"]].tolist() == [1, "ab", 1e-06] and len(curves) == 1


def test_the_vision_steps_settings_name_the_chain_as_chain():
    vision = normalise(merged()).vision
    for settings in (vision.base_settings(1), vision.discovery_settings(1, "pretrained"),
                     vision.transfer_settings(1, "si"), vision.settings(1)):
        assert json.loads(settings)["chain"] == 1 and "seed" not in json.loads(settings)
    assert json.loads(vision.diagnostics_settings())["chain"] == DEFAULT["vision"]["chains"][0]
