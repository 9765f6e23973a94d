"""Argument handling every step shares: settings as JSON from the rule's params, threads, device."""

from __future__ import annotations

import argparse
import hashlib
import json
import platform

import torch

from pathlib import Path

from .. import __version__
from ..runtime import content_hash

PACKAGE = Path(__file__).resolve().parent.parent


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--settings", type=json.loads, default={},
                   help="JSON object with this step's settings (the rule passes its config section)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads; the rule's `threads:`")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:1, ...")
    return p


def require(settings: dict, *keys: str, where: str = "settings") -> None:
    missing = [key for key in keys if key not in settings]
    if missing:
        raise SystemExit(f"error: {where} lacks {missing}")


# Settings that change when or how a run is saved, not what it computes: leaving them out of the
# fingerprint keeps a resumable checkpoint when only they change.
RESULT_NEUTRAL_KEYS = ("checkpoint_interval_s",)


def fingerprint(settings: dict, *parts, inputs=()) -> str:
    """Hash of everything that defines a run's numbers: its settings (less RESULT_NEUTRAL_KEYS), any
    extra parts (λ, seed, ...) and the contents of its input files or folders. A checkpoint written
    against other settings or other inputs (a retrained base, new data) is not resumed."""
    kept = {key: value for key, value in settings.items() if key not in RESULT_NEUTRAL_KEYS}
    hashes = [content_hash(path) for path in inputs]
    return hashlib.sha256(json.dumps([kept, parts, hashes], sort_keys=True, default=str).encode()).hexdigest()[:16]


def source_hash(*modules: str) -> str:
    """Hash of package source files (paths relative to the package): part of a fingerprint when a result
    is kept across runs, so that one computed by other code is not reused."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(module.encode())
        digest.update((PACKAGE / module).read_bytes())
    return digest.hexdigest()[:16]


def provenance() -> dict:
    return {"package_version": __version__, "torch": torch.__version__, "python": platform.python_version()}
