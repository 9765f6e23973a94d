"""Per-rule cluster requests live in the rules (config resources.rules), so a command-line override of one
rule's key leaves every other rule's runtime and memory as they were (through the SLURM profile, dry run)."""

import re

from harness import REPO, snakemake


DETAILS = {"SUBTASK_INDUCTION_JOB_DETAILS": "1"}  # Snakemake's full job listing instead of one line a job


def job_resources(output: str, field: str = "resources") -> dict[str, str]:
    """rule -> the `<field>:` line of its first job in a dry run's full listing (DETAILS)."""
    found, rule = {}, None
    for line in output.splitlines():
        started = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):$", line.strip())
        if started:
            rule = started.group(1)
        elif rule and line.strip().startswith(f"{field}:") and rule not in found:
            found[rule] = line.strip()
    return found


def resource(line: str, key: str) -> str:
    return re.search(rf"\b{key}=([^,]+)", line).group(1)


def test_overriding_one_rule_on_the_command_line_keeps_every_other_rules_requests_and_partition(tmp_path):
    common = ["-n", "--workflow-profile", "profiles/slurm", "--directory", str(tmp_path),
              "--configfile", "config/config.yaml"]
    plain = snakemake(REPO, *common, env=DETAILS)
    assert plain.returncode == 0, plain.stderr[-2000:]
    before = job_resources(plain.stdout + plain.stderr)
    # a pack of 4 bases asks for 4 x a base's 240 minutes; the override names the pack's rule
    base, discover, vision_base = (next(rule for rule in before if rule.startswith(f"{step}_pack_"))
                                   for step in ("arithmetic_base", "arithmetic_discover", "vision_base"))
    overridden = snakemake(REPO, *common, "--set-resources", f"{base}:runtime=5", env=DETAILS)
    assert overridden.returncode == 0, overridden.stderr[-2000:]
    after = job_resources(overridden.stdout + overridden.stderr)
    assert resource(before[base], "runtime") == str(4 * 240) and resource(after[base], "runtime") == "5"
    assert resource(after[base], "mem_mb") == "16000"  # the rule's other keys stay
    for key, value in (("runtime", str(4 * 120)), ("mem_mb", "16000")):  # another rule keeps its own requests
        assert resource(before[discover], key) == resource(after[discover], key) == value
    # the rules that need no GPU stay on the CPU partition (the profile's default partition is the GPU one)
    for rule in ("vision_world", "submasking_task"):
        assert resource(before[rule], "slurm_partition") == resource(after[rule], "slurm_partition") == "cpu", rule
    assert resource(after[vision_base], "slurm_partition") == "gpu"


def test_a_misspelt_rule_in_resources_rules_stops_the_run(tmp_path):
    import yaml

    overlay = tmp_path / "typo.yaml"
    overlay.write_text(yaml.safe_dump({"resources": {"rules": {"arithmetic_bsae": {"minutes": 5}}}}))
    result = snakemake(REPO, "-n", "--directory", str(tmp_path / "run"), "--configfile", "config/config.yaml", str(overlay))
    assert result.returncode != 0
    assert "config resources.rules: ['arithmetic_bsae'] are not rules of this workflow" in result.stdout + result.stderr


def test_a_transfer_packs_runtime_request_grows_with_its_rows_and_depth(tmp_path):
    """The paper slice's packs (n from 0 to 6,400), at 2 and 4 layers: attempt 1 asks base + P * (per_point +
    per_1000_rows * n / 1000) * layers / 2 minutes, from config/paper.yaml's measured costs."""
    import math

    import yaml

    overlay = tmp_path / "depths.yaml"
    overlay.write_text(yaml.safe_dump({"arithmetic": {"layers": [2, 4]}}))
    result = snakemake(REPO, "-n", "--workflow-profile", "profiles/slurm", "--directory", str(tmp_path / "run"),
                       "--configfile", "config/paper.yaml", "config/paper_depth2.yaml", str(overlay), env=DETAILS)
    assert result.returncode == 0, result.stderr[-2000:]
    minutes = yaml.safe_load((REPO / "config/paper.yaml").read_text())["resources"]["transfer_pack"]["minutes"]
    packs = {rule: line for rule, line in job_resources(result.stdout + result.stderr).items()
             if rule.startswith("arithmetic_transfer_pack_")}
    assert len(packs) == 2 * 8  # one pack per depth and n
    for rule, line in packs.items():
        layers, n = map(int, re.match(r"arithmetic_transfer_pack_layers(\d+)_n(\d+)_", rule).groups())
        size = 25 if n == 1000 else 5  # the five curves, five seeds at 1,000
        expected = math.ceil(minutes["base"] + size * (minutes["per_point"] + minutes["per_1000_rows"] * n / 1000) * layers / 2)
        assert resource(line, "runtime") == str(expected), (rule, line)
    runtimes = {rule: int(resource(line, "runtime")) for rule, line in packs.items()}
    assert max(runtimes, key=runtimes.get).startswith("arithmetic_transfer_pack_layers4_n1000_")
    # the longest work starts first: each pack's priority is its estimated minutes (less the base), in tenths
    priorities = {rule: int(line.split(":")[1]) for rule, line in job_resources(result.stdout + result.stderr,
                                                                                "priority").items() if rule in packs}
    assert priorities.keys() == packs.keys()
    for rule, priority in priorities.items():
        assert priority == round(10 * (runtimes[rule] - minutes["base"])) or abs(
            priority - 10 * (runtimes[rule] - minutes["base"])) <= 10, (rule, priority, runtimes[rule])
    assert sorted(priorities, key=priorities.get) == sorted(runtimes, key=lambda rule: (runtimes[rule], priorities[rule]))


def test_what_make_test_slurm_checks_in_slurm_holds_in_a_dry_run_through_the_profile(tmp_path):
    """tests/slurm_smoke.py (make test-slurm) runs the smoke DAG on a real SLURM and checks each job's partition,
    time limit, memory, CPUs and GPUs against expected_requests; here the same DAG, through the same profile, as a
    dry run: every request the harness checks but the CPUs, against the same expectations, in every make test."""
    from harness import copy_workflow
    from slurm_smoke import base_pack_of, expected_requests, smoke_slurm_config

    config = smoke_slurm_config()
    workdir = copy_workflow(tmp_path / "wf", config)
    result = snakemake(workdir, "-n", "--workflow-profile", "profiles/slurm", env=DETAILS)
    assert result.returncode == 0, result.stderr[-2000:]
    found = job_resources(result.stdout + result.stderr)
    packs = sorted(rule for rule in found if rule.startswith("arithmetic_transfer_pack_"))
    assert len(packs) == 4  # 4 variants at 2 n, packs of at most 3 of near-equal size: two packs of 2 per n
    for rule, size in [(f"arithmetic_base_pack_{base_pack_of(config)}", 1)] + [(pack, 2) for pack in packs]:
        want, line = expected_requests(config, rule, size), found[rule]
        assert resource(line, "runtime") == str(want["runtime"]), (rule, line, want)
        assert resource(line, "mem_mb") == str(want["mem_mb"]), (rule, line, want)
        assert resource(line, "slurm_partition") == want["partition"] and resource(line, "gpu") == str(want["gpus"])
    # CPUs: the rules' threads, which a dry run does not show as SLURM will get them (Snakemake scales threads to
    # the cores of the machine that plans); make test-slurm checks them on SLURM
