"""Argument handling every step shares: settings as JSON from the rule's params, threads, device."""

from __future__ import annotations

import argparse
import hashlib
import json
import platform

import torch

from .. import __version__


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


def fingerprint(*parts) -> str:
    """Hash of everything that defines a run: a checkpoint from other settings is not resumed."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def provenance() -> dict:
    return {"package_version": __version__, "torch": torch.__version__, "python": platform.python_version()}
