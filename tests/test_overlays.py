"""The overlays that go beyond the paper build their DAGs on top of the default and the paper config."""

import json
import re

import pytest
import yaml

from harness import REPO, effective_config, planned_work, snakemake

# the default's vision chains: every vision overlay runs on each of them
V = len(yaml.safe_load((REPO / "config/config.yaml").read_text())["vision"]["chains"])


def counts(result) -> dict[str, int]:
    return {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}


@pytest.mark.parametrize("configs, expect", [
    # the kept-% dial (12 variants x 2 n x 3 chains at 2 layers) and the label budget (2 x 8 chains) on the default;
    # vision: the texture swap's data, a label-free discovery per chain, 3 transfer variants more per chain, the
    # architectural rival, and arithmetic -> vision (its bases per chain, 4 models x 3 sizes per chain)
    # (make beyond: config/beyond.yaml and the three questions of config/beyond/)
    (["config/beyond.yaml", "config/beyond/magnitude.yaml", "config/beyond/blurpool.yaml",
      "config/beyond/cross_domain.yaml"],
     {"arithmetic_discover_budget": 2 * 8, "arithmetic_budget": 1, "vision_texture_swap": 1,
      "vision_discover": 3 * V, "vision_transfer": V * (7 + 1 + 4 * 3), "vision_cross_domain": V}),
    # one question alone (make beyond-cross-domain): its bases and 12 models per chain, nothing else beyond
    (["config/beyond/cross_domain.yaml"], {"vision_cross_domain": V, "vision_transfer": V * (4 + 4 * 3),
                                           "vision_texture_swap": None, "arithmetic_discover_budget": None}),
    # the same at paper scale: the budget at every depth
    (["config/paper.yaml", "config/paper_beyond.yaml"], {"arithmetic_discover_budget": 2 * 6, "arithmetic_budget": 1}),
])
def test_beyond_the_paper_overlays_add_the_dial_and_the_budget(configs, expect, tmp_path):
    # in an empty folder (the counts are of a fresh run, whatever the repository's results/ holds); there the
    # Snakefile's default config/config.yaml is not found, so it is given first, as the overlays say
    result = snakemake(REPO, "-n", "--quiet", "rules", "--cores", "1", "--directory", str(tmp_path),
                       "--configfile", "config/config.yaml", *configs)
    assert result.returncode == 0, result.stderr[-2000:]
    found = planned_work(result, effective_config(*configs))  # a pack counted as its points
    assert {rule: found.get(rule) for rule in expect} == expect


def test_the_vit_overlay_runs_the_vision_family_with_the_vit_in_its_own_folder(tmp_path):
    result = snakemake(REPO, "-n", "-p", "--cores", "1", "--directory", str(tmp_path),
                       "--configfile", "config/config.yaml", "config/vit.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    planned = planned_work(result, effective_config("config/vit.yaml"))
    assert planned["vision_base"] == V and "arithmetic_base" not in planned
    assert not (tmp_path / "results").exists()
    # the bases' settings as their pack's step reads them (the points file; it waits for the generated world only)
    points = sorted(set(re.findall(r"results/vision/packs/vision_base/\S+\.points\.json", result.stdout)))
    assert points, result.stdout[-2000:]
    made = snakemake(REPO, points[0], "--cores", "1", "--directory", str(tmp_path),
                     "--configfile", "config/config.yaml", "config/vit.yaml")
    assert made.returncode == 0, (made.stdout + made.stderr)[-2000:]
    for point in json.loads((tmp_path / points[0]).read_text()):
        settings = json.loads(point["argv"][point["argv"].index("--settings") + 1])
        assert settings["model"]["spec"]["arch"] == "vit_world_patch4"
        assert settings["model"]["spec"]["model_kwargs"] == {}  # no ResNet kwargs leak


def test_an_overlay_adds_experiments_and_follows_a_change_to_the_defaults_list(tmp_path):
    """config/beyond.yaml adds under arithmetic.added_experiments and does not restate the default's list, so
    an experiment added to the default (here a new target) runs with the overlay too."""
    import yaml

    from harness import copy_workflow

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config["families"] = ["arithmetic"]
    workdir = copy_workflow(tmp_path / "run", config)
    overlay = ["--configfile", "config/config.yaml", "config/beyond.yaml"]
    before = counts(snakemake(workdir, "-n", "--quiet", "rules", "--cores", "1", *overlay))
    config["arithmetic"]["experiments"].append({"base": "a+ab", "subtask": "ab", "targets": ["a3+ab"], "variants": ["si"]})
    copy_workflow(tmp_path / "changed", config)
    after = snakemake(tmp_path / "changed", "-n", "--quiet", "rules", "--cores", "1", *overlay)
    assert after.returncode == 0, after.stderr[-2000:]
    def pack_jobs(found):  # named arithmetic_transfer_pack_..._<i>of<k>_<digest>, up to pack_size points each
        return sum(count for rule, count in found.items() if rule.startswith("arithmetic_transfer_pack_"))

    # 18 new points (2 depths x 3 n x 3 chains) need more packs
    assert pack_jobs(counts(after)) > pack_jobs(before)
    assert before["arithmetic_discover_budget"] == 2 * 8  # the overlay's label budget, in the default's eight chains
    assert "experiments:\n" not in (REPO / "config/beyond.yaml").read_text()  # the default's list is not restated


def test_a_vision_overlay_can_run_fewer_variants_than_the_config_defines(tmp_path):
    """--configfile merges the variants dict, so an overlay cannot drop one there; vision.transfer.run lists
    the ones to run."""
    import yaml

    overlay = tmp_path / "two.yaml"
    overlay.write_text(yaml.safe_dump({"families": ["vision"], "vision": {"transfer": {"run": ["si", "scratch"]}}}))
    result = snakemake(REPO, "-n", "--quiet", "rules", "--cores", "1", "--directory", str(tmp_path / "run"),
                       "--configfile", "config/config.yaml", str(overlay))
    assert result.returncode == 0, result.stderr[-2000:]
    two = effective_config()
    two["families"], two["vision"]["transfer"]["run"] = ["vision"], ["si", "scratch"]
    assert planned_work(result, two)["vision_transfer"] == 2 * V  # two variants in each of the default's chains
    overlay.write_text(yaml.safe_dump({"vision": {"transfer": {"run": ["si", "sketch"]}}}))
    wrong = snakemake(REPO, "-n", "--cores", "1", "--directory", str(tmp_path / "run"),
                      "--configfile", "config/config.yaml", str(overlay))
    assert wrong.returncode != 0 and "['sketch'] are not defined in vision.transfer.variants" in wrong.stdout + wrong.stderr


def test_the_replication_is_the_default_with_disjoint_chain_seeds():
    """config/replication.yaml (make replication) runs the default's experiments on chains no default run uses: the
    lists an overlay replaces whole are restated with only the chain changed."""
    import yaml as _yaml

    default = _yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    again = _yaml.safe_load((REPO / "config" / "replication.yaml").read_text())
    assert not set(default["arithmetic"]["chains"]) & set(again["arithmetic"]["chains"])
    assert len(again["arithmetic"]["chains"]) == len(default["arithmetic"]["chains"])
    assert not set(default["vision"]["chains"]) & set(again["vision"]["chains"])
    assert not set(default["submasking"]["replicates"]) & set(again["submasking"]["replicates"])
    first = {"chains": [default["arithmetic"]["chains"][0]]}
    renamed = [{**e, **({"chains": [again["arithmetic"]["chains"][0]]} if e.get("chains") == first["chains"] else {})}
               for e in default["arithmetic"]["experiments"]]
    assert again["arithmetic"]["experiments"] == renamed
    # one backbone per vision chain, as the default's, each on the replication's chain in the same place
    offset = {d: r for d, r in zip(default["vision"]["chains"], again["vision"]["chains"])}
    backbones = [{**b, "name": f"world_base{offset[b['chain']]}", "chain": offset[b["chain"]]}
                 for b in default["submasking"]["backbones"]]
    assert again["submasking"]["backbones"] == backbones
