"""A Snakemake run killed with SIGKILL resumes by the same make command: its lock is removed only where no Snakemake on
this host works in the folder (subtask_induction/stale_lock.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from subtask_induction import stale_lock

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

TINY = """
rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "sleep {config[sleep]} && echo done > {output}"
"""


def run(folder: Path, sleep: float) -> subprocess.CompletedProcess:
    return subprocess.run([str(SNAKEMAKE), "--cores", "1", "--config", f"sleep={sleep}"], cwd=folder,
                          capture_output=True, text=True, timeout=120)


def test_a_snakemake_killed_mid_job_resumes_by_the_same_command(tmp_path):
    (tmp_path / "Snakefile").write_text(TINY)
    job = subprocess.Popen([str(SNAKEMAKE), "--cores", "1", "--config", "sleep=60"], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    locks = tmp_path / ".snakemake" / "locks"
    deadline = time.monotonic() + 60
    while not (locks.is_dir() and any(locks.iterdir())):
        assert job.poll() is None and time.monotonic() < deadline, "Snakemake never took its lock"
        time.sleep(0.2)
    # While it runs, its lock is its own: nothing is removed.
    assert stale_lock.live_snakemakes(tmp_path) == [job.pid]
    assert stale_lock.clear(tmp_path) is None and any(locks.iterdir())
    os.killpg(job.pid, signal.SIGKILL)  # the run and its job, as a closed session kills them
    job.wait()

    refused = run(tmp_path, 0)
    assert refused.returncode != 0 and "cannot be locked" in refused.stderr  # what a user met before

    line = stale_lock.clear(tmp_path)
    assert line and "removed the lock a killed Snakemake run left" in line
    resumed = run(tmp_path, 0)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "done.txt").read_text() == "done\n"
    assert stale_lock.clear(tmp_path) is None  # a finished run leaves no lock


@pytest.mark.parametrize(("argv", "cwd", "folder"), [
    (["/v/bin/python", "/v/bin/snakemake", "--cores", "2"], "/w/run", "/w/run"),
    (["python", "-m", "snakemake", "-d", "runs/groupnorm"], "/w/run", "/w/run/runs/groupnorm"),
    (["snakemake", "--directory=/elsewhere"], "/w/run", "/elsewhere"),
    (["/v/bin/python", "-m", "subtask_induction.steps.train", "snakemake"], "/w/run", None),
    (["bash", "-c", "snakemake --cores 1"], "/w/run", None),
])
def test_which_processes_are_snakemake_and_where_they_work(argv, cwd, folder):
    found = stale_lock.snakemake_folder(argv, Path(cwd))
    assert found == (Path(folder).resolve() if folder else None)


def test_every_make_target_that_runs_snakemake_clears_its_own_folder_first():
    lines = (ROOT / "Makefile").read_text().splitlines()
    runs = [i for i, line in enumerate(lines) if re.match(r"\t\$\(BIN\)/snakemake --cores", line)]
    assert runs, "no snakemake run in the Makefile"
    for i in runs:
        directory = re.search(r"--directory (\S+)", lines[i])
        expected = "\t$(UNLOCK)" + (f" {directory.group(1)}" if directory else "")
        assert lines[i - 1] == expected, (lines[i - 1], lines[i])
