"""`--configfile config/paper.yaml` runs the paper's settings: Snakemake merges it over the CPU default, so
the paper file must state every key its families use, or the default's value leaks into the paper run."""

import copy

import pytest
import yaml
from snakemake.utils import update_config

from harness import REPO, effective_config


def leaves(node, path=()):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from leaves(value, path + (key,))
    else:
        yield path


def has(node, path):
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def test_no_key_of_the_effective_paper_config_comes_from_the_cpu_default():
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    effective = copy.deepcopy(default)
    update_config(effective, paper)  # what Snakemake does with --configfile
    leaked = [".".join(map(str, path)) for path in leaves(effective) if not has(paper, path)]
    assert leaked == [], f"keys the paper config leaves to the CPU default: {leaked}"


def test_a_dict_option_can_be_cleared_by_the_paper_config():
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    assert default["vision"]["model"]["model_kwargs"]  # the CPU default's quarter-width ResNet
    effective = copy.deepcopy(default)
    update_config(effective, paper)
    assert effective["vision"]["model"]["model_kwargs"] is None  # the real architecture in the paper run


# The grid keys the paper slices (config/paper_depth2.yaml, paper_depth12.yaml) may change; everything else must
# stay the paper config's own. λ is a grid of discoveries: a slice keeps the one the selection chooses.
PAPER_SLICE_KEYS = {("arithmetic", "layers"), ("arithmetic", "chains"), ("arithmetic", "experiments"),
                    ("arithmetic", "discovery", "l0_weights"),
                    ("arithmetic", "transfer", "disambiguation_rows"), ("arithmetic", "transfer", "replicates"),
                    ("arithmetic", "overlap", "layers"), ("arithmetic", "overlap", "runs")}


def value(node, path):
    for key in path:
        node = node[key] if isinstance(node, dict) and key in node else "<absent>"
    return node


@pytest.mark.parametrize("slice_file,layers", [("config/paper_depth2.yaml", 2), ("config/paper_depth12.yaml", 12)])
def test_the_paper_slice_overlays_change_only_the_grid_keys_they_name(slice_file, layers):
    paper = effective_config("config/paper.yaml")
    sliced = effective_config("config/paper.yaml", slice_file)
    paths = set(leaves(paper)) | set(leaves(sliced))
    changed = {path for path in paths if value(paper, path) != value(sliced, path)}
    assert changed, "the overlay changes nothing"
    outside = sorted(".".join(map(str, path)) for path in changed
                     if not any(path[:len(key)] == key for key in PAPER_SLICE_KEYS))
    assert outside == [], f"the overlay changes settings that are not grid keys: {outside}"
    assert sliced["arithmetic"]["layers"] == [layers] and sliced["arithmetic"]["chains"] == [0]
    assert set(sliced["arithmetic"]["discovery"]["l0_weights"]) <= set(paper["arithmetic"]["discovery"]["l0_weights"])
    assert set(sliced["arithmetic"]["transfer"]["disambiguation_rows"]) <= set(
        paper["arithmetic"]["transfer"]["disambiguation_rows"])  # the authors' sizes
    assert len(sliced["arithmetic"]["transfer"]["replicates"]) >= 2
    assert sliced["families"] == ["arithmetic"]
    assert sliced["arithmetic"]["transfer"]["holdout_fraction"] == 0  # the paper's rows


# Each hypothesis of docs/results.md ("At the paper's own scale") changes the one setting it tests, and the grid.
HYPOTHESES = {"fresh_unmasked.yaml": set(), "lambda5e-7.yaml": {("arithmetic", "discovery", "l0_weights")},
              "transfer_epochs200.yaml": {("arithmetic", "transfer", "epochs")},
              "discovery_epochs100.yaml": {("arithmetic", "discovery", "epochs")},
              "discovery_weight_decay.yaml": {("arithmetic", "discovery", "weight_decay")},
              "coverage_rows.yaml": {("arithmetic", "data", "transfer", "disambiguation")},
              "magnitude.yaml": {("arithmetic", "transfer", "variants", "magnitude", key)
                                 for key in ("kind", "lr_scale", "inherit_unmasked")},
              "base_schedule_hf.yaml": {("arithmetic", "base", key)
                                        for key in ("select", "lr_decay", "clip_grad_norm", "patience")},
              "complement_authors.yaml": {("arithmetic", "transfer", "variants", "complement_authors", key)
                                          for key in ("kind", "lr_scale", "inherit_unmasked")}}
# the authors' whole pipeline: each setting the single-option overlays test, and variants of its own
AUTHORS_PIPELINE_SETTINGS = (HYPOTHESES["base_schedule_hf.yaml"] | HYPOTHESES["discovery_weight_decay.yaml"]
                             | HYPOTHESES["coverage_rows.yaml"])
HYPOTHESES["authors_pipeline.yaml"] = AUTHORS_PIPELINE_SETTINGS | {
    ("arithmetic", "transfer", "variants", variant, key)
    for variant in ("si_authors_init", "sampled_authors_init", "complement_authors_init")
    for key in ("kind", "lr_scale", "inherit_unmasked", "masked_init_std")}


def test_each_paper_hypothesis_overlay_changes_only_the_setting_it_tests():
    sliced = effective_config("config/paper.yaml", "config/paper_depth2.yaml")
    assert sorted(path.name for path in (REPO / "config/paper_hypotheses").glob("*.yaml")) == sorted(HYPOTHESES)
    for name, tested in HYPOTHESES.items():
        run = effective_config("config/paper.yaml", "config/paper_depth2.yaml", f"config/paper_hypotheses/{name}")
        changed = {path for path in set(leaves(sliced)) | set(leaves(run)) if value(sliced, path) != value(run, path)}
        assert {path for path in changed if path[:2] != ("arithmetic", "experiments")} == tested, name
        assert ("arithmetic", "experiments") in {path[:2] for path in changed}, name  # its own points only


@pytest.mark.parametrize("overlay", ["config/paper_authors_code.yaml", "config/paper_same_labels.yaml"])
def test_the_paper_overlays_only_add_variants_and_points(overlay):
    """Over the depth-2 slice, an overlay of added baselines defines variants of its own and adds experiments:
    no setting, variant or point of the slice changes, so the slice's finished points stay finished."""
    from subtask_induction.config_checks import config_problems

    sliced = effective_config("config/paper.yaml", "config/paper_depth2.yaml")
    run = effective_config("config/paper.yaml", "config/paper_depth2.yaml", overlay)
    assert config_problems(run) == []
    changed = {path for path in set(leaves(sliced)) | set(leaves(run)) if value(sliced, path) != value(run, path)}
    added = set(run["arithmetic"]["transfer"]["variants"]) - set(sliced["arithmetic"]["transfer"]["variants"])
    assert added and all(path[:2] == ("arithmetic", "added_experiments")
                         or path[:3] == ("arithmetic", "transfer", "variants") and path[3] in added for path in changed)


def test_the_authors_pipeline_overlay_turns_on_every_option_of_their_code():
    """Every setting a single-option overlay tests, every authors'-code transfer kind and setting, at once, for
    the five curves of their figure."""
    from subtask_induction.arithmetic.paper import AUTHORS_CODE_SETTINGS, AUTHORS_CURVES, authors_code_options

    run = effective_config("config/paper.yaml", "config/paper_depth2.yaml",
                           "config/paper_hypotheses/authors_pipeline.yaml")
    for path in AUTHORS_PIPELINE_SETTINGS:
        single = next(name for name, tested in HYPOTHESES.items() if path in tested and name != "authors_pipeline.yaml")
        assert value(run, path) == value(effective_config("config/paper.yaml", "config/paper_depth2.yaml",
                                                          f"config/paper_hypotheses/{single}"), path), path
    variants = {name for experiment in run["arithmetic"]["experiments"] for name in experiment["variants"]}
    plans = [run["arithmetic"]["transfer"]["variants"][name] for name in variants]
    assert {plan["kind"] for plan in plans} >= set(authors_code_options())
    masked = [plan for plan in plans if plan["kind"] not in ("random", "full")]
    assert all(setting in plan for plan in masked for setting in AUTHORS_CODE_SETTINGS)
    curves = {authors_code_options().get(plan["kind"], (plan["kind"],))[0] for plan in plans}
    assert curves == set(AUTHORS_CURVES)
