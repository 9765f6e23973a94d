"""Process set-up shared by every step: device choice, thread count, seeds, input hashes, atomic writes."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .files import atomic_write, write_text
from .kernels import NUMERIC_LIBRARIES, PIN_VARIABLES


def configure(threads: int, seed: int) -> None:
    """Pin PyTorch to `threads` threads and seed every RNG.

    Two jobs that each use all cores run ~100x slower on a small machine (docs/running.md, "Threads"), so every step
    uses exactly the threads its rule declared. OMP_NUM_THREADS only takes effect if set before torch is
    imported, so the rules set it on the command line; here torch.set_num_threads is what counts.
    Denormal flushing removes a ~5x CPU slowdown of sigmoid(beta*s) tails late in discovery.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    keep_freed_memory()
    seed_everything(seed)


def keep_freed_memory() -> None:
    """Let glibc's malloc keep the blocks a training step frees for the next step: a step allocates and frees
    tensors of megabytes (a pack's [points, weights] temporaries), which glibc otherwise returns to the kernel
    (mmap above 128 KiB-32 MiB, trimming the heap's top) and the next step faults in again, zeroed page by page.
    The same arithmetic on the same memory contents: it changes no number, only time (3-9% a pack step on 2 CPUs,
    docs/decisions.md). Elsewhere than glibc nothing happens."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
        libc.mallopt(m_mmap_threshold, 2**29)
        libc.mallopt(m_trim_threshold, 2**31 - 1)
    except (OSError, AttributeError):  # no glibc (macOS, musl): its allocator keeps its own policy
        pass


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


def tensor_digest(obj: Any) -> str:
    """SHA-256 of what a value holds: tensors by dtype, shape and bytes, everything else as JSON, dict keys
    sorted. Two files that carry the same tensors under other metadata (a selection record, a longer
    data pool of which a point reads the same prefix) give the same digest for what a point reads."""
    digest = hashlib.sha256()

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().contiguous()
            digest.update(f"tensor {value.dtype} {tuple(value.shape)}".encode())
            digest.update(value.view(torch.uint8).numpy().tobytes() if value.dtype == torch.bool
                          else value.numpy().tobytes() if value.dtype != torch.bfloat16
                          else value.view(torch.int16).numpy().tobytes())
        elif isinstance(value, dict):
            digest.update(b"dict")
            for key in sorted(value, key=str):
                digest.update(json.dumps(str(key)).encode())
                feed(value[key])
        elif isinstance(value, (list, tuple)):
            digest.update(f"list {len(value)}".encode())
            for item in value:
                feed(item)
        else:
            digest.update(json.dumps(value, sort_keys=True, default=str).encode())

    feed(obj)
    return digest.hexdigest()


# The libraries whose kernels and initialisers compute a run's numbers: their versions are part of it.


def _package_imports(module: str, root: Path) -> set[str]:
    """The modules of this package that `module`'s source imports (anywhere in it, lazy imports included)."""
    import ast

    package = root.name
    parts = module.split(".")
    source = root.joinpath(*parts[1:])
    path = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
    if not path.is_file():
        return set()
    anchor = parts if path.name == "__init__.py" else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (anchor[:len(anchor) - node.level + 1] if node.level else []) + (node.module.split(".") if node.module else [])
            names = [".".join(base)] + [".".join(base + [alias.name]) for alias in node.names]
        else:
            continue
        found |= {name for name in names if name == package or name.startswith(package + ".")}
    return found


def code_hash(entry: str | None = None) -> str:
    """Hash of the source of every module of this package that `entry` imports, directly or through others
    (read from the sources, lazy imports included, so the hash does not depend on what has been imported
    so far), plus the installed versions of the numeric libraries. `entry` defaults to the module run as
    `python -m`; anywhere else (a test, a notebook) every module of the package counts. Also hashes where
    the process computes (compute_identity), so call it after `configure` has set the threads.

    Part of every fingerprint of a result kept across runs (a transfer record, a resumable checkpoint), so
    one computed by other code is not reused (a fresh GPT-2's initialisation lives in transformers, seeds
    and splits in runtime.py)."""
    import sys
    from importlib import metadata

    root = Path(__file__).resolve().parent
    package = root.name
    if entry is None:
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        entry = spec.name if spec is not None and spec.name.startswith(package + ".") else None
    if entry is None:
        modules = {package + "." + ".".join(p.relative_to(root).with_suffix("").parts) for p in root.rglob("*.py")}
    else:
        modules, todo = set(), [entry]
        while todo:
            name = todo.pop()
            if name not in modules:
                modules.add(name)
                todo += sorted(_package_imports(name, root) - modules)
    digest = hashlib.sha256()
    for name in sorted(modules):
        parts = name.split(".")[1:]
        source = root.joinpath(*parts)
        path = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
        if path.is_file() and path != root / "__init__.py":  # the top-level __init__ holds only the version
            digest.update(name.encode())
            digest.update(path.read_bytes())
    for library in NUMERIC_LIBRARIES:
        try:
            digest.update(f"{library}=={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            pass
    for name in PIN_VARIABLES:  # kernel pins choose other code paths: other numbers
        digest.update(f"{name}={os.environ.get(name, '')}".encode())
    digest.update(json.dumps(compute_identity(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def compute_identity() -> dict:
    """Where this process computes, as far as it changes numbers: the CPU kernels torch dispatches to (its
    capability after any pin, so `cpu_kernels: native` on an AVX-512 node differs from an AVX2 node), the
    thread count (reductions split by thread), and the GPU when one is present (device `auto` uses it).
    Part of code_hash: a record or checkpoint computed elsewhere is not restored or resumed as if local."""
    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def resolve_device(name: str) -> torch.device:
    """`auto` -> CUDA when present, else CPU; anything else is passed to torch.device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device '{name}' was requested but CUDA is not available; use 'auto' or 'cpu'")
    return torch.device(name)


def save_torch(obj: Any, path: str | os.PathLike) -> None:
    """torch.save through a temporary file and rename, so a killed job never leaves half a file. Serialised in
    memory first: torch names the archive inside after the file it writes, and the temporary file's random name
    would make two identical runs' files differ byte for byte."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    atomic_write(Path(path), lambda tmp: Path(tmp).write_bytes(buffer.getvalue()))


def save_json(obj: Any, path: str | os.PathLike) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def save_text(text: str, path: str | os.PathLike) -> None:
    write_text(path, text)


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
