"""The overlays that go beyond the paper build their DAGs on top of the default and the paper config."""

import re

import pytest

from harness import REPO, snakemake


def counts(result) -> dict[str, int]:
    return {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}


@pytest.mark.parametrize("configs, expect", [
    # the size dial (12 variants x 2 n x 3 chains at 2 layers) and the label budget (2 x 3 chains) on the default
    (["config/beyond.yaml"], {"arithmetic_discover_budget": 2 * 3, "arithmetic_budget": 1}),
    # the same at paper scale: the budget at every depth
    (["config/paper.yaml", "config/paper_beyond.yaml"], {"arithmetic_discover_budget": 2 * 6, "arithmetic_budget": 1}),
])
def test_beyond_the_paper_overlays_add_the_dial_and_the_budget(configs, expect, tmp_path):
    # in an empty folder (the counts are of a fresh run, whatever the repository's results/ holds); there the
    # Snakefile's default config/config.yaml is not found, so it is given first, as the overlays say
    result = snakemake(REPO, "-n", "--quiet", "rules", "--cores", "1", "--directory", str(tmp_path),
                       "--configfile", "config/config.yaml", *configs)
    assert result.returncode == 0, result.stderr[-2000:]
    found = counts(result)
    assert {rule: found.get(rule) for rule in expect} == expect


def test_the_vit_overlay_runs_the_vision_family_with_the_vit_in_its_own_folder(tmp_path):
    result = snakemake(REPO, "-n", "-p", "--cores", "1", "--directory", str(tmp_path),
                       "--configfile", "config/config.yaml", "config/vit.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search(r'"arch": "vit_world_patch4", "model_kwargs": \{\}', result.stdout)  # no ResNet kwargs leak
    assert counts(result)["vision_base"] == 3 and "arithmetic_base" not in counts(result)
    assert not (tmp_path / "results").exists()
