"""The config's cross-field checks (subtask_induction/config_checks.py), which the Snakefile runs once before
any family's rules are read: every shipped config passes; each wrong field is named, all at once."""

import copy

import pytest
import yaml

from conftest import REPO
from subtask_induction.config_checks import check_config, config_problems

DEFAULT = yaml.safe_load((REPO / "config/config.yaml").read_text())


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_the_shipped_configs_pass(name):
    assert config_problems(yaml.safe_load((REPO / "config" / name).read_text())) == []


def broken(change):
    config = copy.deepcopy(DEFAULT)
    change(config)
    return config


CASES = [
    (lambda c: c["arithmetic"]["experiments"][0].update(chains=[99]), "chains [99] are not in arithmetic.chains"),
    (lambda c: c["arithmetic"]["experiments"][0].update(variants=["nope"]),
     "variants ['nope'] are not defined in arithmetic.transfer.variants"),
    (lambda c: c["arithmetic"]["model"].update(n_head=3), "is not divisible by n_head 3"),
    (lambda c: c["arithmetic"]["report"].update(dial_n=7), "config arithmetic.report.dial_n: 7 is not one of"),
    (lambda c: c["arithmetic"]["transfer"].update(disambiguation_rows=[0, 10 ** 6]), "rows exceed the"),
    (lambda c: c["arithmetic"].update(added_experiments={"x": [{"base": "a+ab", "subtask": "ab", "targets": ["a2+ab"],
                                                                "layers": [9]}]}),
     "layers [9] are not in arithmetic.layers"),
    (lambda c: c["vision"]["transfer"].update(run=["sketch"]), "['sketch'] are not defined in vision.transfer.variants"),
    (lambda c: c.update(families=["submasking"], submasking={}), "there is no submasking section"),
    (lambda c: c["arithmetic"]["overlap"].update(layers=[]), "config arithmetic.overlap.layers: empty, but"),
    (lambda c: c["arithmetic"]["report"].update(protocol="train_holdout"),
     "config arithmetic.report.protocol: train_holdout selects on a held-out slice"),
    (lambda c: c["arithmetic"]["transfer"]["variants"].update(
        mix={"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "subtask_rows": "mixture"}),
     "config arithmetic.transfer.variants.mix: say task_marker: true"),
    (lambda c: c["arithmetic"]["transfer"]["variants"].update(
        mix={"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True, "subtask_rows": "mixture",
             "task_marker": True}),
     "variants.mix: subtask_rows trains the labels without a mask, so its kind is random"),
    (lambda c: c["arithmetic"]["transfer"]["variants"]["si"].update(task_marker=True),
     "variants.si: task_marker marks the subtask rows, but the variant trains on none"),
    (lambda c: c["arithmetic"]["transfer"]["variants"]["random"].update(masked_init_std=0.02),
     "variants.random: masked_init_std draws the fresh weights of a masked kind again; kind random has none"),
    (lambda c: c["vision"]["transfer"]["variants"]["si"].update(model_kwargs={"aa_layer": "blurpool"}),
     "variants.si: model_kwargs changes the architecture, so nothing of the base fits it: kind must be random"),
    (lambda c: c["vision"]["transfer"]["variants"]["scratch"].update(model_kwargs={"aa_layer": "gauss"}),
     "variants.scratch.model_kwargs.aa_layer: 'gauss' is not one of ['blurpool']"),
    (lambda c: (c["vision"]["data"]["reading"].update(image_size=16),
                c["vision"]["transfer"]["variants"]["scratch"].update(model_kwargs={"aa_layer": "blurpool"})),
     "variants.scratch.model_kwargs.aa_layer: the blur pads by reflection, .*image_size 16 is below 32"),
    (lambda c: c["vision"]["transfer"]["variants"].update(
        xd={"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
            "trainable": "all", "cross_domain": "fresh"}),
     "variants.xd: cross_domain fresh takes kind sampled with inherit_unmasked: false"),
    (lambda c: (c.update(families=["vision"]), c["vision"]["transfer"]["variants"].update(
        xd={"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
            "trainable": "all", "cross_domain": "gpt2"})),
     "cross-domain variants copy an arithmetic subnetwork, but `families` ['vision'] leaves arithmetic out"),
]


@pytest.mark.parametrize("change, message", CASES)
def test_each_wrong_field_is_named(change, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        check_config(broken(change))


def test_every_problem_is_named_at_once():
    def two(config):
        config["arithmetic"]["model"]["n_head"] = 3
        config["vision"]["transfer"]["run"] = ["sketch"]

    assert len(config_problems(broken(two))) == 2
