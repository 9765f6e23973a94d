"""Which Python the jobs run, and whether it has the dependencies. The rules run `python -m
subtask_induction.steps...`: the first `python` on PATH, which is the venv's only when the venv is active. Snakemake
started as `.venv/bin/snakemake` without activating the venv would plan every job and then fail each one on
`import torch`, visible only in the job's log; this check names the problem and the fix when a run starts
(common.smk's onstart), before any job; a dry run or a lint, which run no job, are not stopped. Torch-free and cheap: it asks the PATH's Python whether the packages can be found, without
importing them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# What every step imports (a package the steps need that this Python lacks is named, not guessed at).
REQUIRED = ("torch", "transformers", "timm", "numpy", "pandas", "yaml")
_PROBE = ("import importlib.util, sys; "
          "missing = [name for name in sys.argv[1:] if importlib.util.find_spec(name) is None]; "
          "print(' '.join(missing)); sys.exit(1 if missing else 0)")


def job_python_problem(path: str | None = None) -> str | None:
    """None when the `python` the jobs will run (the first on `path`, default PATH) finds every REQUIRED package;
    else a message naming that Python, what it lacks and the fix."""
    found = shutil.which("python", path=path if path is not None else os.environ.get("PATH"))
    fix = (f"put the Python that runs Snakemake first on PATH (`source .venv/bin/activate`, or "
           f"`export PATH={os.path.dirname(sys.executable)}:$PATH`), or give `--sdm conda`")
    if found is None:
        return f"the jobs run `python`, and no `python` is on PATH: {fix}"
    # Not realpath: a venv's python is a link to its base interpreter, which lacks the venv's packages.
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return None
    probe = subprocess.run([found, "-c", _PROBE, *REQUIRED], capture_output=True, text=True)
    if probe.returncode == 0:
        return None
    missing = probe.stdout.strip() or probe.stderr.strip()[-200:]
    return (f"the jobs run `python -m subtask_induction.steps...`, which is {found} here, and it lacks {missing} "
            f"(Snakemake runs in {sys.executable}): {fix}")
