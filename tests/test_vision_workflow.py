"""The vision DAG through the Snakemake CLI: the session's smoke run (conftest.py; a tiny generated world,
two chains), and the DAG-build errors for local files (ImageNet folder, SAM checkpoint, timm weights) that
a config names but lacks."""

import json

import pandas as pd
import pytest
import yaml

from harness import REPO, copy_workflow, planned_work, smoke_config, snakemake


def vision_config() -> dict:
    return smoke_config("vision")


def test_vision_dag_writes_tables_figures_and_samples(smoke_run):
    summary = smoke_run / "results/vision/summary"
    table1 = pd.read_csv(summary / "table1.csv")
    assert list(table1["model"]) == ["base", "subnetwork", "si", "scratch", "mixture", "linear"]
    assert table1[["original_accuracy", "original_balanced_accuracy", "pooled_accuracy", "pooled_balanced_accuracy",
                   "cue_robustness"]].stack().between(0, 1).all()
    assert (table1["pooled_accuracy_count"] == 2).all()  # every row, base and subnetwork too, over both chains
    table2 = pd.read_csv(summary / "table2.csv")
    assert sorted(table2["init"]) == ["pretrained", "random"] and (table2["kept_percent_count"] == 2).all()
    assert (table2["kept_percent"] >= 0).all() and (table2["kept_percent"] <= 100).all()
    assert "| si |" in (summary / "table1.md").read_text() and "→" in (summary / "table2.md").read_text()
    assert "original (balanced)" in (summary / "table1.md").read_text()
    chains = pd.read_csv(summary / "chains.csv")
    assert sorted(chains.groupby("model")["chain"].apply(tuple).unique()) == [(0, 1)]
    comparisons = (summary / "comparisons.md").read_text()
    assert "| si vs scratch | pooled_accuracy |" in comparisons and "McNemar" in comparisons
    # every model's record keeps which test items it got right: the paired tests read them
    from subtask_induction.claims import bits_correct

    record = json.loads((smoke_run / "results/vision/chain0/transfer/si/metrics.json").read_text())["metrics"]
    items = record["items"]
    assert bits_correct(items["pooled_correct"], items["n_test"]).mean() == pytest.approx(record["pooled_accuracy"])
    # the cue-conflict scores: the chain's own record, from the saved models (rule vision_cue_conflict)
    cue = json.loads((smoke_run / "results/vision/chain0/cue_conflict.json").read_text())["scores"]
    assert sorted(cue) == ["base", "discovery/pretrained/1e-06/subnetwork", "discovery/pretrained/1e-06/whole",
                           "discovery/random/1e-06/subnetwork", "discovery/random/1e-06/whole", "transfer/linear",
                           "transfer/mixture", "transfer/scratch", "transfer/si"]
    si_cue = cue["transfer/si"]
    shape = bits_correct(si_cue["items"]["conflict_shape"], si_cue["items"]["n_conflict"])
    texture = bits_correct(si_cue["items"]["conflict_texture"], si_cue["items"]["n_conflict"])
    assert shape.mean() == pytest.approx(si_cue["cue_shape_accuracy"]) and not (shape & texture).any()
    assert "shape_bias" not in record  # the training step reads no cue-conflict image
    si_row = chains[(chains["model"] == "si") & (chains["chain"] == 0)].iloc[0]
    assert si_row["shape_bias"] == pytest.approx(si_cue["shape_bias"])  # the tables merge that record
    assert "items" not in chains.columns
    curves = pd.read_csv(summary / "curves.csv")
    assert set(curves["model"]) == {"si", "scratch", "mixture", "linear"} and curves["step"].max() > 0
    for figure in ("fig5", "fig11", "per_class"):
        for ext in ("png", "pdf"):
            assert (smoke_run / f"results/vision/figures/{figure}.{ext}").stat().st_size > 1000
    assert (smoke_run / "results/vision/figures/samples.png").stat().st_size > 1000
    diagnostics = pd.read_csv(summary / "diagnostics.csv")
    assert list(diagnostics["model"]) == ["base", "base", "subnetwork", "subnetwork", "base", "si at start", "fresh"]
    assert diagnostics["pooled_accuracy"].between(0, 1).all()
    assert "| linear probe | si at start |" in (summary / "diagnostics.md").read_text()
    assert not list(smoke_run.glob("results/**/*.ckpt"))


def test_vision_runs_use_their_inputs(smoke_run):
    world = smoke_run / "results/vision/data/world"
    assert len(list((world / "cue_conflict").rglob("*.png"))) == 16 * 16 * 1
    shards = [json.loads((smoke_run / f"results/vision/pooled/test/shard{k}/pooling.json").read_text()) for k in (0, 1)]
    assert sum(s["images"] for s in shards) == 16 * 2  # the two shards split the test split between them
    mixture = json.loads((smoke_run / "results/vision/chain0/transfer/mixture/metrics.json").read_text())
    si = json.loads((smoke_run / "results/vision/chain0/transfer/si/metrics.json").read_text())
    assert mixture["train_images"] == 16 * (3 + 2)  # originals + pooled discovery images, actually included
    assert si["train_images"] == 16 * 3
    cue = json.loads((smoke_run / "results/vision/chain0/cue_conflict.json").read_text())["scores"]
    assert cue["transfer/si"]["n_conflict"] == 16 * 15
    bases = [json.loads((smoke_run / f"results/vision/chain{c}/base/metrics.json").read_text()) for c in (0, 1)]
    assert all(len(base["curve"]) == 2 and "weights" not in base for base in bases)
    assert [base["identity"]["chain"] for base in bases] == [base["config"]["chain"] for base in bases] == [0, 1]
    assert bases[0]["curve"][0]["train_loss"] != bases[1]["curve"][0]["train_loss"]  # the seed varies the base
    identity = json.loads((smoke_run / "results/vision/chain1/transfer/si/metrics.json").read_text())["identity"]
    assert identity == {"family": "vision", "chain": 1, "variant": "si"}


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda v, tmp: v["data"].update(source="imagenet", cue_conflict=str(tmp),
                                         imagenet={**v["data"]["imagenet"], "root": str(tmp / "no-imagenet")}),
         "vision.data.imagenet.root"),
        (lambda v, tmp: v["pooling"].update(segmenter="sam", sam={"model_type": "vit_b",
                                                                   "checkpoint": str(tmp / "sam_vit_b.pth")}),
         "vision.pooling.sam.checkpoint"),
        (lambda v, tmp: v["model"].update(weights=str(tmp / "resnet18.safetensors")), "vision.model.weights"),
    ],
)
def test_missing_local_file_fails_at_dag_build_naming_key_and_path(tmp_path, edit, key):
    config = vision_config()
    edit(config["vision"], tmp_path / "given")
    (tmp_path / "given").mkdir()
    if config["vision"]["data"]["source"] == "imagenet":
        (tmp_path / "given" / "weights.pth").touch()
        config["vision"]["model"]["weights"] = str(tmp_path / "given" / "weights.pth")
    (tmp_path / "wf").mkdir()
    workdir = copy_workflow(tmp_path / "wf", config)
    result = snakemake(workdir, "--cores", "1")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert key in output and str(tmp_path / "given") in output
    assert not (workdir / "results").exists()


def test_paper_vision_config_builds_its_dag_once_paths_exist(tmp_path):
    config = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    config["families"] = ["vision"]
    vision = config["vision"]
    from test_config_examples import stand_in_data  # every member WNID folder, well-named stimuli, files

    data = stand_in_data(tmp_path / "data")
    vision["data"]["imagenet"]["root"] = str(data["imagenet"])
    vision["data"]["cue_conflict"] = str(data["stimuli"])
    vision["pooling"]["sam"]["checkpoint"] = str(data["sam_vit_h"])
    vision["model"]["weights"] = str(data["pytorch_model.bin"])
    (tmp_path / "wf").mkdir()
    workdir = copy_workflow(tmp_path / "wf", config)
    result = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    counts = planned_work(result, config)  # a pack counted as its points
    shards = sum(vision["pooling"]["shards"].values())
    assert counts["vision_imagenet16"] == 1 and counts["vision_mean_pool"] == shards
    assert counts["vision_discover"] == 2 * len(vision["discovery"]["l0_weights"]) * len(vision["chains"])
    assert counts["vision_transfer"] == len(vision["transfer"]["variants"]) * len(vision["chains"]) == 15
    assert counts["vision_diagnostics"] == 1
    assert "vision_world" not in counts


@pytest.mark.parametrize("inits", [["random"], ["pretrained"]])
def test_every_valid_inits_list_builds_a_dag_and_baselines_never_wait_on_discovery(tmp_path, inits):
    config = vision_config()
    config["vision"]["discovery"]["inits"] = inits
    workdir = copy_workflow(tmp_path, config)
    result = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "1")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    counts = planned_work(result, config)  # a pack counted as its points
    # SI needs the pretrained subnetwork whatever `inits` lists; the random-init control runs when listed
    assert counts["vision_discover"] == len(set(inits) | {"pretrained"}) * len(config["vision"]["chains"])
    assert counts["vision_transfer"] == len(config["vision"]["transfer"]["variants"]) * len(config["vision"]["chains"])
    # scratch, mixture and linear read no subnetwork: building them needs no discovery
    baselines = [f"results/vision/chain0/transfer/{model}/metrics.json" for model in ("scratch", "mixture", "linear")]
    jobs = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "1", *baselines)
    assert jobs.returncode == 0 and "vision_transfer_pack_afterbase_" in jobs.stdout, jobs.stderr[-2000:]
    assert "vision_discover" not in jobs.stdout and "vision_select_subnetwork" not in jobs.stdout
