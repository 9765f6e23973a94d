"""Process set-up shared by every step: device choice, thread count, seeds, input hashes, atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch


def configure(threads: int, seed: int) -> None:
    """Pin PyTorch to `threads` threads and seed every RNG.

    Two jobs that each use all cores run ~100x slower on a small machine (DESIGN §7), so every step
    uses exactly the threads its rule declared. OMP_NUM_THREADS only takes effect if set before torch is
    imported, so the rules set it on the command line; here torch.set_num_threads is what counts.
    Denormal flushing removes a ~5x CPU slowdown of sigmoid(beta*s) tails late in discovery.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    seed_everything(seed)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def derive_seed(*parts) -> int:
    """A 63-bit seed from named parts, e.g. derive_seed("batches", seed, epoch).

    Each use of randomness gets its own stream: a data split and a batch order never share a seed just
    because two integer formulas happen to coincide.
    """
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def content_hash(path: str | os.PathLike) -> str:
    """SHA-256 of a file, or of a folder's relative file names and contents (sorted walk)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"input not found: {path}")
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if file != path else file.name).encode())
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def resolve_device(name: str) -> torch.device:
    """`auto` -> CUDA when present, else CPU; anything else is passed to torch.device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device '{name}' was requested but CUDA is not available; use 'auto' or 'cpu'")
    return torch.device(name)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write) -> None:
    """Call write(temporary_path), then rename it onto `path`: readers never see half a file.

    The file gets the permissions a plain open() would give (0666 less the umask), not mkstemp's 0600,
    so collaborators sharing a project directory can read results as the umask allows."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_torch(obj: Any, path: str | os.PathLike) -> None:
    """torch.save through a temporary file and rename, so a killed job never leaves half a file."""
    atomic_write(Path(path), lambda tmp: torch.save(obj, tmp))


def save_json(obj: Any, path: str | os.PathLike) -> None:
    def write(tmp):
        with open(tmp, "w") as handle:
            json.dump(obj, handle, indent=2, sort_keys=True)
            handle.write("\n")

    atomic_write(Path(path), write)


def save_text(text: str, path: str | os.PathLike) -> None:
    atomic_write(Path(path), lambda tmp: Path(tmp).write_text(text))


def load_torch(path: str | os.PathLike, required_keys: tuple[str, ...] = (), what: str = "checkpoint") -> dict:
    """Load a checkpoint with weights_only=True and check it holds `required_keys`.

    Raises a ValueError naming the file and what is wrong instead of a deep stack trace later.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - re-raised with the file's name
        raise ValueError(f"{what} {path} could not be read as a PyTorch checkpoint: {error}") from error
    if not isinstance(obj, dict):
        raise ValueError(f"{what} {path} holds a {type(obj).__name__}, expected a dict")
    missing = [key for key in required_keys if key not in obj]
    if missing:
        raise ValueError(f"{what} {path} lacks the keys {missing}; was it written by another step?")
    return obj
