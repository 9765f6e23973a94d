"""Argument handling every step shares: settings as JSON from the rule's params, threads, device."""

from __future__ import annotations

import argparse
import json


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


def add_identity(p: argparse.ArgumentParser) -> None:
    """--identity: what the step's record is (family, stage, chain, ...: the rule's words for its job), written
    first in its metrics.json and read by the tables."""
    p.add_argument("--identity", type=json.loads, required=True,
                   help="JSON object naming this record (the rule passes the jobs module's identity)")


def require(settings: dict, *keys: str, where: str = "settings") -> None:
    missing = [key for key in keys if key not in settings]
    if missing:
        raise SystemExit(f"error: {where} lacks {missing}")
