"""Per-rule cluster requests live in the rules (config resources.rules), so a command-line override of one
rule's key leaves every other rule's runtime and memory as they were (through the SLURM profile, dry run)."""

import re

from harness import REPO, snakemake


def job_resources(output: str) -> dict[str, str]:
    """rule -> the `resources:` line of its first job in a dry run's listing."""
    found, rule = {}, None
    for line in output.splitlines():
        started = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):$", line.strip())
        if started:
            rule = started.group(1)
        elif rule and line.strip().startswith("resources:") and rule not in found:
            found[rule] = line.strip()
    return found


def resource(line: str, key: str) -> str:
    return re.search(rf"\b{key}=([^,]+)", line).group(1)


def test_overriding_one_rule_on_the_command_line_keeps_every_other_rules_requests(tmp_path):
    common = ["-n", "--workflow-profile", "profiles/slurm", "--directory", str(tmp_path),
              "--configfile", "config/config.yaml", "--config", "families=[arithmetic]"]
    plain = snakemake(REPO, *common)
    assert plain.returncode == 0, plain.stderr[-2000:]
    before = job_resources(plain.stdout + plain.stderr)
    overridden = snakemake(REPO, *common[:-2], "--set-resources", "arithmetic_base:runtime=5", "--config", "families=[arithmetic]")
    assert overridden.returncode == 0, overridden.stderr[-2000:]
    after = job_resources(overridden.stdout + overridden.stderr)
    assert resource(before["arithmetic_base"], "runtime") == "240" and resource(after["arithmetic_base"], "runtime") == "5"
    assert resource(after["arithmetic_base"], "mem_mb") == "16000"  # the rule's other keys stay
    for key, value in (("runtime", "120"), ("mem_mb", "16000")):  # another rule keeps its own requests
        assert resource(before["arithmetic_discover"], key) == resource(after["arithmetic_discover"], key) == value


def test_a_misspelt_rule_in_resources_rules_stops_the_run(tmp_path):
    import yaml

    overlay = tmp_path / "typo.yaml"
    overlay.write_text(yaml.safe_dump({"resources": {"rules": {"arithmetic_bsae": {"minutes": 5}}}}))
    result = snakemake(REPO, "-n", "--directory", str(tmp_path / "run"), "--configfile", "config/config.yaml", str(overlay))
    assert result.returncode != 0
    assert "config resources.rules: ['arithmetic_bsae'] are not rules of this workflow" in result.stdout + result.stderr
