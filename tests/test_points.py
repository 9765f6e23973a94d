"""The sweep's points and the config normalised once (points.py, workflow_config.py): what the Snakefile's
rules and the steps both read. Torch-free and fast: no workflow runs here."""

import copy
import json

import pytest
import yaml

from conftest import REPO
from harness import copy_workflow, snakemake
from subtask_induction.config_checks import submasking_problems
from subtask_induction.points import ArithmeticPoint, SubmaskingPoint, replicate_number, submasking_points
from subtask_induction.workflow_config import normalise, upgrade_keys

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())


def merged(*overlays):
    """config/config.yaml with each overlay merged over it, as Snakemake merges --configfile files."""
    def merge(into, update):
        for key, value in update.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = copy.deepcopy(value)
    config = copy.deepcopy(DEFAULT)
    for overlay in overlays:
        merge(config, overlay)
    return config


def test_the_defaults_points_are_its_experiments_crossed_each_once():
    arith = normalise(merged()).arithmetic
    expected = set()
    for experiment in DEFAULT["arithmetic"]["experiments"]:
        for chain in experiment.get("chains", DEFAULT["arithmetic"]["chains"]):
            for layers in experiment["layers"]:
                for variant in experiment["variants"]:
                    for n in DEFAULT["arithmetic"]["transfer"]["disambiguation_rows"]:
                        for replicate in experiment.get("replicates", DEFAULT["arithmetic"]["transfer"]["replicates"]):
                            expected.add((chain, layers, variant, n, replicate))
    assert sorted((p.chain, p.layers, p.variant, p.n, p.replicate) for p in arith.points) == sorted(expected)
    assert len(arith.points) == len({p.folder for p in arith.points})
    # every point in exactly one pack, and a pack holds one depth, one n, one kind of batch
    assert sorted(p.metrics for _, members in arith.packs for p in members) == sorted(p.metrics for p in arith.points)
    assert all(len({(p.layers, p.n) for p in members}) == 1 for _, members in arith.packs)


def test_a_points_folder_and_identity_name_the_same_point():
    point = ArithmeticPoint(chain=1, base="a+ab", subtask="ab", target="a2+ab", layers=2, variant="si", n=250,
                            replicate=3)
    assert point.metrics == "results/arithmetic/chain1/transfer/a+ab/ab/a2+ab/layers2/si/n250/replicate3/metrics.json"
    assert point.identity() == {"family": "arithmetic", "chain": 1, "base": "a+ab", "subtask": "ab",
                                "target": "a2+ab", "layers": 2, "variant": "si", "n": 250, "replicate": 3}
    assert SubmaskingPoint("b", "t", "fs", "0.5", 1).identity()["fraction"] == 0.5
    assert replicate_number(1, 3) == 103 and replicate_number(0, 3) == 3
    with pytest.raises(ValueError, match="replicate 100"):
        replicate_number(0, 100)


def test_an_overlays_added_experiments_come_after_the_defaults_and_the_config_is_not_changed():
    beyond = yaml.safe_load((REPO / "config/beyond.yaml").read_text())
    config = merged(beyond)
    before = copy.deepcopy(config)
    arith = normalise(config).arithmetic
    assert config == before
    added = [e for name in sorted(beyond["arithmetic"]["added_experiments"])
             for e in beyond["arithmetic"]["added_experiments"][name]]
    assert arith.experiments == DEFAULT["arithmetic"]["experiments"] + added
    # points that train beside the subtask rows pack apart, by kind and marker
    kinds = {name.split("_1of")[0].split("_2of")[0] for name, _ in arith.packs}
    assert any("withmixture_marked" in name for name in kinds) and any("withdistill_marked" in name for name in kinds)


def test_a_users_old_seeds_key_is_read_as_replicates_with_a_note_and_wins_over_the_defaults_key():
    config = merged({"arithmetic": {"transfer": {"seeds": [0, 1, 2]}}, "submasking": {"seeds": [4]}})
    config["arithmetic"]["experiments"][0]["seeds"] = [7]
    notes = upgrade_keys(config)
    assert config["arithmetic"]["transfer"]["replicates"] == [0, 1, 2] and "seeds" not in config["arithmetic"]["transfer"]
    assert config["submasking"]["replicates"] == [4]
    assert config["arithmetic"]["experiments"][0]["replicates"] == [7]
    assert len(notes) == 3 and all("renamed in 0.5.0" in note for note in notes)
    assert any("arithmetic.transfer.seeds is read as arithmetic.transfer.replicates" in note for note in notes)
    assert upgrade_keys(merged()) == []  # the shipped config uses the new keys only


def test_a_users_old_method_keys_are_read_as_the_kind_and_the_adaptations_with_a_note():
    config = merged({"arithmetic": {"transfer": {"variants": {"si": {"method": "sampled"}}}},
                     "vision": {"transfer": {"variants": {"mine": {"method": "random", "lr_scale": 0.0,
                                                                   "inherit_unmasked": False, "data": "originals",
                                                                   "trainable": "all"}}}},
                     "submasking": {"methods": ["lp"]}})
    notes = upgrade_keys(config)
    si = config["arithmetic"]["transfer"]["variants"]["si"]
    assert si["kind"] == "sampled" and "method" not in si   # the user's old key wins over the default's new one
    assert config["vision"]["transfer"]["variants"]["mine"]["kind"] == "random"
    assert config["submasking"]["adaptations"] == ["lp"] and "methods" not in config["submasking"]
    assert config["arithmetic"]["discovery"]["mask"] == {"method": "continuous_sparsification"}  # a mask's method stays
    assert sorted(notes) == sorted([
        "config arithmetic.transfer.variants.si.method is read as arithmetic.transfer.variants.si.kind (renamed in "
        "0.5.0; the old key goes in 0.6.0)",
        "config vision.transfer.variants.mine.method is read as vision.transfer.variants.mine.kind (renamed in 0.5.0; "
        "the old key goes in 0.6.0)",
        "config submasking.methods is read as submasking.adaptations (renamed in 0.5.0; the old key goes in 0.6.0)"])
    assert upgrade_keys({"arithmetic": {"transfer": {"variants": ["si"]}}}) == []  # malformed: left to the schema


def test_a_workflow_given_an_old_key_says_so_and_builds_the_same_dag(tmp_path):
    workdir = copy_workflow(tmp_path / "workflow", DEFAULT)
    overlay = tmp_path / "old.yaml"
    overlay.write_text("arithmetic:\n  transfer:\n    seeds: [0, 1]\n    variants: {si_trainable: {method: sampled}}\n")
    new = tmp_path / "new.yaml"
    new.write_text("arithmetic:\n  transfer:\n    replicates: [0, 1]\n    variants: {si_trainable: {kind: sampled}}\n")

    def dry_run(path):
        run = snakemake(workdir, "-n", "--cores", "1", "--configfile", "config/config.yaml", str(path), timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        jobs = sorted(line for line in run.stdout.splitlines() if line.startswith("arithmetic_transfer_pack_"))
        return jobs, run.stderr

    old_jobs, old_err = dry_run(overlay)
    new_jobs, new_err = dry_run(new)
    assert old_jobs == new_jobs and old_jobs
    assert "arithmetic.transfer.seeds is read as arithmetic.transfer.replicates" in old_err
    assert "arithmetic.transfer.variants.si_trainable.method is read as" in old_err
    assert "is read as" not in new_err


def test_the_submasking_grid_gives_every_point_once_and_packs_by_task():
    sub = normalise(merged()).submasking
    grid = DEFAULT["submasking"]
    assert len(sub.points) == len(set(sub.points)) == sum(
        len(backbone.get("adaptations") or grid["adaptations"]) for backbone in grid["backbones"]) * (
        len(grid["tasks"]) * len(grid["label_fractions"]) * len(grid["replicates"]))
    assert all(len({(p.task, sub.backbones[p.backbone]["image_size"]) for p in members}) == 1 for _, members in sub.packs)
    assert sorted(map(repr, (p for _, members in sub.packs for p in members))) == sorted(map(repr, sub.points))
    # a pack reads one task, each point its own backbone and settings
    points = json.loads(sub.pack_points(sub.packs[0][0]))
    assert {point["settings"]["backbone"]["name"] for point in points} == {p.backbone for p in sub.packs[0][1]}


def test_a_backbones_own_adaptations_replace_the_familys_for_it_alone_and_the_aggregate_crosses_the_same_points():
    """One backbone per vision chain (the default): the claim's adaptations on every base, the rest on one. The
    aggregate's grid must give the same points as the rules, and the list must not reach a point's settings (a
    backbone's list changed must not retrain its finished points)."""
    config = merged()
    config["submasking"]["backbones"] = [{"name": "a", "source": "vision_base", "chain": 0, "image_size": 32},
                                         {"name": "b", "source": "vision_base", "chain": 1, "image_size": 32,
                                          "adaptations": ["lp", "fs"]}]
    sub = normalise(config).submasking
    mine = {(p.backbone, p.adaptation) for p in sub.points}
    assert {a for b, a in mine if b == "b"} == {"lp", "fs"}
    assert {a for b, a in mine if b == "a"} == set(config["submasking"]["adaptations"])
    assert submasking_points(json.loads(sub.grid())) == sub.points
    assert "adaptations" not in json.loads(sub.train_settings("b", sub.points[0].task))["backbone"]


def test_a_backbones_adaptation_outside_the_familys_list_is_named():
    config = merged()
    config["submasking"]["backbones"][1]["adaptations"] = ["lp", "magic"]
    problems = submasking_problems(config["submasking"], config["families"])
    assert len(problems) == 1 and "'world_base1'" in problems[0] and "magic" in problems[0]
