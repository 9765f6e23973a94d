"""Figure saving every family shares: PNG + PDF, written atomically."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# files', not runtime's re-export: runtime imports torch, and a figure step needs none (issue 81, start-up)
from .files import atomic_write  # noqa: E402


def save_figure(figure, outdir: Path, name: str, formats=("png", "pdf")) -> list[Path]:
    paths = []
    for ext in formats:
        path = Path(outdir) / f"{name}.{ext}"
        atomic_write(path, lambda tmp, ext=ext: figure.savefig(tmp, format=ext, dpi=150, bbox_inches="tight"))
        paths.append(path)
    plt.close(figure)
    return paths
