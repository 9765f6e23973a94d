"""`make test-slurm`: the arithmetic smoke DAG through profiles/slurm on a real (one-node) SLURM.

Run as root on a Debian machine like ours; it starts tests/local_slurm.sh (or $LOCAL_SLURM), a SLURM
22.05 cluster on loopback with accounting, partitions gpu (default) and cpu, account `local` and two fake
GPUs, installing its Debian packages if they are missing; at the end it stops the cluster and purges the
packages it installed, unless KEEP_SLURM=1. As a new cluster user would, it copies profiles/slurm and fills
the site keys (account); the jobs run this Python (the profile's default), then it checks:
1. the whole arithmetic smoke DAG (packs included) ends with every SLURM job COMPLETED in sacct, and the
   per-rule resources arrive: partition, time limit, memory, CPUs = the rule's threads, --gpus;
2. a job killed at its time limit is retried with a longer one and resumes from its checkpoint.
Not part of `make test`: installing and starting SLURM and polling its jobs takes minutes (README).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def run(command: list[str], cwd: Path | None = None, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, text=True, capture_output=True, **kwargs)
    if check and result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(command)}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def sacct(since: str, submitted: dict[str, str]) -> list[dict]:
    """The SLURM jobs since `since` that this Snakemake run submitted, each with its rule under "rule"."""
    fields = ["JobID", "Partition", "Timelimit", "ReqMem", "ReqCPUS", "ReqTRES", "State", "Elapsed"]
    out = run(["sacct", "-X", "-n", "--parsable2", "--starttime", since, "--format=" + ",".join(fields)]).stdout
    jobs = [dict(zip(fields, line.split("|"))) for line in out.splitlines() if line.strip()]
    return [{**job, "rule": submitted[job["JobID"]]} for job in jobs if job["JobID"] in submitted]


def submitted_jobs(result: subprocess.CompletedProcess) -> dict[str, str]:
    """SLURM job id -> rule, from the plugin's "submitted with SLURM jobid N (log: .../rule_<name>/...)" lines.
    (sacct's Comment column would name the rule, but SLURM stores comments only with
    AccountingStoreFlags=job_comment, which many sites, and local_slurm.sh, do not set.)"""
    pattern = re.compile(r"SLURM jobid (\d+) \(log: \S*/rule_(\w+?)/")
    return {jobid: rule for jobid, rule in pattern.findall(result.stdout + result.stderr)}


def workdir_copy(config: dict) -> Path:
    workdir = Path(tempfile.mkdtemp(prefix="slurm_smoke_", dir=os.environ.get("SLURM_SMOKE_DIR", "/tmp")))
    for name in ("Snakefile", "workflow", "config", "envs", "profiles"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, workdir / name)
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(config))
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    profile["default-resources"]["slurm_account"] = "local"  # the site key a user fills in
    profile["slurm-init-seconds-before-status-checks"] = 5
    profile["jobs"] = 4
    (workdir / "profiles/slurm/config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return workdir


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return run([sys.executable, "-m", "snakemake", "--workflow-profile", "profiles/slurm", *args],
               cwd=workdir, check=False, env=env)


def main() -> None:
    began = time.monotonic()
    script = Path(os.environ.get("LOCAL_SLURM", REPO / "tests/local_slurm.sh"))
    if not script.is_file():
        sys.exit(f"error: {script} not found")
    run(["bash", str(script), "start"], timeout=900)
    print(f"local SLURM up after {time.monotonic() - began:.0f} s")
    try:
        check(began)
    finally:
        if os.environ.get("KEEP_SLURM") != "1":
            run(["bash", str(script), "stop"], check=False)
    print(f"test-slurm passed in {time.monotonic() - began:.0f} s")


def smoke_slurm_config() -> dict:
    """The smoke DAG's config as the harness runs it through profiles/slurm (and tests/test_cluster_resources.py
    dry-runs it, so the two cannot drift apart unseen)."""
    config = yaml.safe_load((REPO / "tests/smoke_config.yaml").read_text())
    config.update(families=["arithmetic"], threads_per_job=2, device="cpu")
    config["arithmetic"]["transfer"]["pack_size"] = 3  # two packs per n: 4 pack jobs
    config["arithmetic"]["chains"] = [0]
    config["resources"]["gpu_per_training_job"] = 1  # ask SLURM for --gpus=1 (fake GPUs run on the CPU)
    return config


def expected_requests(config: dict, rule: str, pack_size: int | None = None) -> dict:
    """What a job of `rule` must ask SLURM for, computed by the functions the rules use (not typed in): runtime
    in minutes, mem_mb, CPUs, GPUs, partition (profiles/slurm's default, or resources.cpu_partition)."""
    sys.path.insert(0, str(REPO / "workflow"))
    from subtask_induction.packs import PACKED_STEPS, pack_mem_mb, pack_minutes

    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    if rule.startswith("arithmetic_transfer_pack_"):
        layers, n = map(int, re.match(r"arithmetic_transfer_pack_layers(\d+)_n(\d+)_", rule).groups())
        costs = config["resources"]["transfer_pack"]
        runtime, mem = pack_minutes(costs["minutes"], pack_size, 1, n, layers), pack_mem_mb(costs["mem_mb"], pack_size)
        spec = {}
    else:  # a pack of a one-point step asks for its step's one-point request, the runtime times its points
        step = next((step for step in PACKED_STEPS if rule.startswith(f"{step}_pack_")), rule)
        spec = config["resources"]["rules"][step]
        runtime, mem = spec["minutes"] * (pack_size or 1), spec["mem_mb"]
    partition = (config["resources"].get("cpu_partition") if spec.get("cpu") else None) or \
        profile["default-resources"]["slurm_partition"]
    return {"runtime": runtime, "mem_mb": mem, "cpus": config["threads_per_job"],
            "gpus": config["resources"]["gpu_per_training_job"], "partition": partition}


def base_pack_of(config: dict, chain: int = 0) -> str:
    """The name of the arithmetic base pack that holds chain `chain`'s base (packs.PackedStep)."""
    sys.path.insert(0, str(REPO / "workflow"))
    from subtask_induction.workflow_config import normalise

    packed = normalise(json.loads(json.dumps(config))).arithmetic.packed["arithmetic_base"]
    return next(name for name, members in packed.packs if any(point["chain"] == str(chain) for point in members))


def slurm_limit(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def check(began: float) -> None:
    config = smoke_slurm_config()
    workdir = workdir_copy(config)
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    time.sleep(1)
    started = time.monotonic()
    result = snakemake(workdir)
    print(f"1. smoke DAG through profiles/slurm: {time.monotonic() - started:.0f} s, exit {result.returncode}")
    if result.returncode != 0:
        sys.exit(result.stdout[-4000:] + result.stderr[-4000:])
    submitted = submitted_jobs(result)
    jobs = sacct(since, submitted)
    assert len(jobs) == len(submitted) > 0, f"sacct lacks submitted jobs: {sorted(submitted)} vs {jobs}"
    states = {job["State"] for job in jobs}
    rules = sorted({job["rule"] for job in jobs})
    print(f"   {len(jobs)} SLURM jobs, states {sorted(states)}; rules {rules}")
    assert jobs and states == {"COMPLETED"}, jobs
    local = {"arithmetic_data", "arithmetic_select_subnetwork", "arithmetic_aggregate", "arithmetic_plots",
             "arithmetic_overlap", "all"}
    assert not local & set(rules), f"local rules went to SLURM: {local & set(rules)}"
    packs = [job for job in jobs if job["rule"].startswith("arithmetic_transfer_pack_")]
    assert len(packs) == 2 * 2, packs  # 2 n x 4 variants in packs of 3: two packs per n

    base_pack = base_pack_of(config)
    for job in [next(job for job in jobs if job["rule"] == f"arithmetic_base_pack_{base_pack}"), packs[0]]:
        if job["rule"].startswith("arithmetic_transfer_pack_"):
            pack_name = job["rule"].removeprefix("arithmetic_transfer_pack_")
            size = len(json.loads((workdir / f"results/arithmetic/transfer/packs/{pack_name}.points.json").read_text()))
        else:
            size = len(json.loads((workdir / f"results/arithmetic/packs/arithmetic_base/{base_pack}.points.json").read_text()))
        want = expected_requests(config, job["rule"], size)
        print(f"   {job['rule']}: partition {job['Partition']}, limit {job['Timelimit']}, mem {job['ReqMem']}, "
              f"cpus {job['ReqCPUS']}, TRES {job['ReqTRES']}; expected {want}")
        assert job["Partition"] == want["partition"] and job["Timelimit"] == slurm_limit(want["runtime"]), (job, want)
        assert job["ReqMem"].startswith(f"{want['mem_mb']}M") and job["ReqCPUS"] == str(want["cpus"]), (job, want)
        assert f"gres/gpu={want['gpus']}" in job["ReqTRES"], (job, want)

    # 2. A base training of about 3 minutes (LONG_EPOCHS) under a 1-minute limit: killed at the limit,
    #    retried with 10 minutes (runtime = 10 ** (attempt - 1); the profile's own limits are hours), and
    #    resumed from its epoch checkpoint. The wide second limit keeps the check robust to a slower CPU.
    long = workdir / "long_base.yaml"
    epochs = int(os.environ.get("LONG_EPOCHS", 12000))  # ~60 epochs/s on 2 threads of our CPUs: ~3 minutes
    long.write_text(yaml.safe_dump({"checkpoint_interval_s": 5, "arithmetic": {"base": {"epochs": epochs}}}))
    target = "results/arithmetic/chain0/base/a+ab/layers2/model.pt"
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    time.sleep(1)
    started = time.monotonic()
    base_rule = f"arithmetic_base_pack_{base_pack}"  # the pack that holds chain 0's base
    result = snakemake(workdir, target, "--configfile", str(long), "--set-resources", f"{base_rule}:runtime=10**(attempt-1)")
    print(f"2. time-limit retry: {time.monotonic() - started:.0f} s, exit {result.returncode}")
    attempts = [job for job in sacct(since, submitted_jobs(result)) if job["rule"] == base_rule]
    print("   attempts: " + ", ".join(f"{job['State']} after {job['Elapsed']} (limit {job['Timelimit']})" for job in attempts))
    log = (workdir / f"logs/arithmetic/packs/arithmetic_base/{base_pack}.log").read_text()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert [job["State"] for job in attempts] == ["TIMEOUT", "COMPLETED"], attempts
    assert [job["Timelimit"] for job in attempts] == ["00:01:00", "00:10:00"], attempts
    assert "resuming from" in log, log[-2000:]
    assert not list(workdir.glob("results/**/*.ckpt")), "checkpoints are removed once the step has returned"
    print("   " + next(line for line in log.splitlines() if "resuming from" in line).strip())


if __name__ == "__main__":
    main()
