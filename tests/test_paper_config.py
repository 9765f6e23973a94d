"""`--configfile config/paper.yaml` runs the paper's settings: Snakemake merges it over the CPU default, so
the paper file must state every key its families use, or the default's value leaks into the paper run."""

import copy

import yaml
from snakemake.utils import update_config

from harness import REPO


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
