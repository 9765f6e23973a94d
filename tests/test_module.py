"""The workflow imported as a Snakemake `module` by another workflow in another directory."""

import yaml

from harness import REPO, smoke_config, snakemake


def test_another_workflow_imports_this_one_as_a_module_and_builds_its_dag(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(smoke_config()))
    (tmp_path / "Snakefile").write_text(f'''configfile: "config.yaml"


module subtask_induction:
    snakefile:
        "{REPO / "Snakefile"}"
    config:
        config


use rule * from subtask_induction as si_*


rule all:
    input:
        rules.si_all.input,
    default_target: True
''')
    result = snakemake(tmp_path, "-n", "--cores", "1")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout + result.stderr
    for rule in ("si_arithmetic_base", "si_vision_transfer", "si_submasking_pack_", "si_resources_report"):
        assert rule in out
    assert not (tmp_path / "results").exists()
    # A step runs: it finds the package from the module's own files (this folder has none), whatever the
    # importing workflow's folder and whether or not the package is installed.
    target = "results/arithmetic/data/base/a+ab.pt"
    result = snakemake(tmp_path, target, "--cores", "1", env={"PYTHONPATH": ""})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / target).stat().st_size > 0 and not (tmp_path / "workflow").exists()
