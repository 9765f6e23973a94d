"""Argument handling every step shares: settings as JSON from the rule's params, threads, device."""

from __future__ import annotations

import argparse
import hashlib
import json
import platform

import torch

from .. import __version__
from ..runtime import code_hash, content_hash


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--settings", type=json.loads, default={},
                   help="JSON object with this step's settings (the rule passes its config section)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads; the rule's `threads:`")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:1, ...")
    p.add_argument("--checkpoint-interval-s", type=float, default=60.0,
                   help="least seconds between epoch-end checkpoints (the rule's resources.checkpoint_interval_s; "
                        "changes no number, so it is not a setting)")
    return p


def require(settings: dict, *keys: str, where: str = "settings") -> None:
    missing = [key for key in keys if key not in settings]
    if missing:
        raise SystemExit(f"error: {where} lacks {missing}")


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


def provenance() -> dict:
    return {"package_version": __version__, "torch": torch.__version__, "python": platform.python_version()}
