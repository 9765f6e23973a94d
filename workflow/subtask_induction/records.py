"""What every step writes into a record besides its numbers: the fingerprint of what defines them (settings,
inputs, code; a record or checkpoint made for another fingerprint is not restored or resumed) and the
provenance block (which code and machine computed them). Shared by the steps and the families' pack code."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path

import torch

from . import __version__
from .kernels import NUMERIC_LIBRARIES, PIN_VARIABLES, THREAD_VARIABLES
from .runtime import code_hash, content_hash

def read_record(path) -> dict:
    """A step's metrics.json (or any JSON record), as the families' tables read it."""
    with open(path) as handle:
        return json.load(handle)


# Settings that change when or how a run is saved, not what it computes: leaving them out of the
# fingerprint keeps a resumable checkpoint when only they change.
RESULT_NEUTRAL_KEYS = ("checkpoint_interval_s",)


def fingerprint(settings: dict, *parts, inputs=(), code: bool = True) -> str:
    """Hash of everything that defines a run's numbers: its settings (less RESULT_NEUTRAL_KEYS), any
    extra parts (λ, seed, content digests, ...), the contents of its input files or folders and (code=True)
    the package code and library versions the process runs (runtime.code_hash). A checkpoint written
    against other settings, inputs or code (a retrained base, new data, an edited module) is not resumed."""
    kept = {key: value for key, value in settings.items() if key not in RESULT_NEUTRAL_KEYS}
    hashes = [content_hash(path) for path in inputs]
    identity = [kept, parts, hashes] + ([code_hash()] if code else [])
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


# Environment variables that choose kernels; read once when torch loads (the rules set them: kernel pins).


def _cpu_model() -> str:
    """The CPU's name with its family and model numbers (virtual machines often report only "AMD EPYC"),
    and whether it offers AVX-512."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    flags = fields.get("flags", "").split()
    return (f"{fields.get('model name', platform.machine())} (family {fields.get('cpu family', '?')}, model "
            f"{fields.get('model', '?')}; {'avx512f' if 'avx512f' in flags else 'avx2' if 'avx2' in flags else 'no avx2'})")


def _library_versions() -> dict:
    from importlib import metadata

    versions = {}
    for name in (*NUMERIC_LIBRARIES[1:], "snakemake"):   # torch: its own key, with its build
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions


@functools.lru_cache(maxsize=1)
def code_commit() -> dict | None:
    """The git commit of the checkout whose package this process runs ({"commit", "modified": whether the package's
    files differ from it}), or None where the package is not in a git checkout (installed, copied) or git is absent:
    a record's jobs then name the commit they ran, beside the plan's (issue 93)."""
    package = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(package), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", str(package), "status", "--porcelain", "--", "."], capture_output=True,
                                text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "modified": bool(status.stdout.strip())}


def provenance() -> dict:
    """Which code and which machine computed a record: versions, the CPU and the kernels torch dispatches to
    (ATen's capability, BLAS, oneDNN), threads, kernel pins from the environment, and the GPU if one ran it.
    Same seeds give bit-identical numbers on one CPU type, other numbers on another (docs/running.md, "What reruns after a change"; docs/glossary.md, `cpu_kernels`)."""
    build = torch.__config__.show()
    onednn = next((line.split("MKL-DNN", 1)[1].split("(")[0].strip() for line in build.splitlines()
                   if "MKL-DNN" in line or "oneDNN" in line), None)
    blas = next((part.split("=", 1)[1] for part in build.replace(",", " ").split() if part.startswith("BLAS_INFO=")), None)
    return {"package_version": __version__, "torch": torch.__version__, "python": platform.python_version(),
            **_library_versions(), "cpu": _cpu_model(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "blas": blas, "mkl": torch.backends.mkl.is_available(), "onednn": onednn,
            "onednn_enabled": torch.backends.mkldnn.is_available(), "threads": torch.get_num_threads(),
            "kernel_environment": {name: os.environ[name] for name in (*PIN_VARIABLES, *THREAD_VARIABLES)
                                   if name in os.environ},
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "code": code_commit()}
