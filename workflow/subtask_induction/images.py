"""The one image-folder interface every image-reading step uses: `<root>/<category>/<image file>`.

Vision: the generated world, the ImageNet-16 builder and the mean-pooling shards all write this layout, so
the training and evaluation steps never know where images came from. Submasking: every downstream task's
`train/`, `test/` and `val/`. Labels follow the category list the caller gives (never a directory listing
order). A split may span several roots (the shards of a pooled split).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from PIL import Image

from .training import epoch_order

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass(frozen=True)
class ImageItem:
    path: Path
    label: int
    relative: str  # "<category>/<file>": the same image's name in every copy of a split (original, pooled)


def list_images(roots, categories, what: str = "image folder") -> list[ImageItem]:
    """Every image under the roots, ordered by (label, relative path). A root may lack some categories."""
    roots = [Path(root) for root in ([roots] if isinstance(roots, (str, Path)) else roots)]
    items = []
    for root in roots:
        if not root.is_dir():
            raise FileNotFoundError(f"{what} {root} does not exist")
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name not in categories:
                raise ValueError(f"{what} {root}: folder '{folder.name}' is not one of the categories {list(categories)}")
            label = categories.index(folder.name)
            items += [ImageItem(path, label, f"{folder.name}/{path.name}") for path in sorted(folder.iterdir())
                      if path.suffix.lower() in IMAGE_SUFFIXES and not path.name.startswith(".")]
    items.sort(key=lambda item: (item.label, item.relative))
    return items


def decode_problem(path) -> str | None:
    """Why `path` is not a readable image, or None. The pixels are decoded, not only the header checked
    (PIL's verify() passes a JPEG cut at half its bytes, which fails later when read): a JPEG in draft mode
    (decoded at 1/8 scale, which still reads every byte of its entropy-coded data), anything else in full."""
    try:
        if Path(path).stat().st_size == 0:
            return "empty file (0 bytes)"
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    try:
        with Image.open(path) as image:
            if image.format == "JPEG":
                image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
    except Exception as error:  # noqa: BLE001 - every reason a file is not a readable image
        return f"{type(error).__name__}: {error}"
    return None


def unreadable(paths, workers: int = 1) -> list[tuple[Path, str]]:
    """The image files among `paths` whose pixels cannot be decoded, each with the reason, in the order
    given; `workers` threads decode at once (PIL releases the GIL while decoding)."""
    paths = [Path(path) for path in paths]
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            problems = list(pool.map(decode_problem, paths, chunksize=64))
    else:
        problems = [decode_problem(path) for path in paths]
    return [(path, why) for path, why in zip(paths, problems) if why is not None]


def describe_unreadable(bad: list[tuple[Path, str]], what: str, limit: int = 20) -> str:
    """An error message listing unreadable files by their own paths (the first `limit`)."""
    lines = [f"{len(bad)} unreadable image file(s) in {what}:"] + [f"  {path}: {why}" for path, why in bad[:limit]]
    if len(bad) > limit:
        lines.append(f"  ... and {len(bad) - limit} more")
    return "\n".join(lines)


def check_folder(root: Path, what: str, workers: int = 1) -> dict:
    """Every image under `root` (any depth) decodes: else a ValueError naming each file that does not.
    Returns counts per folder, for a manifest."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{what} {root} does not exist")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    bad = unreadable(files, workers)
    if bad:
        raise ValueError(describe_unreadable(bad, f"{what} {root}") + "\nFix or remove them; nothing was trained.")
    counts = {}
    for path in files:
        counts[str(path.parent.relative_to(root))] = counts.get(str(path.parent.relative_to(root)), 0) + 1
    return {"root": str(root), "images": len(files), "per_folder": counts}


def read_rgb(path: Path) -> Image.Image:
    """An image file as an RGB PIL image, file closed: the one place the families open image files."""
    try:
        with Image.open(path) as opened:
            return opened.convert("RGB")
    except OSError as error:  # a file that went bad after the checks: say which
        raise OSError(f"cannot read image {path}: {error}") from error


def read_image(path: Path, image_size: int, resize: int | None = None) -> torch.Tensor:
    """uint8 3xSxS. resize: scale the shorter side to it and centre-crop image_size (ImageNet style);
    without it an image of another size is scaled to image_size x image_size."""
    image = read_rgb(path)
    if resize:
        scale = resize / min(image.size)
        image = image.resize((max(image_size, round(image.width * scale)), max(image_size, round(image.height * scale))),
                             Image.BILINEAR)
        left, top = (image.width - image_size) // 2, (image.height - image_size) // 2
        image = image.crop((left, top, left + image_size, top + image_size))
    elif image.size != (image_size, image_size):
        image = image.resize((image_size, image_size), Image.BILINEAR)
    return torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1)


class ImageSet(torch.utils.data.Dataset):
    """Images and labels of one split. in_memory decodes everything once (small splits, the CPU default);
    otherwise a DataLoader with `workers` processes decodes each batch (ImageNet scale)."""

    def __init__(self, items: list[ImageItem], image_size: int, resize: int | None = None, *,
                 in_memory: bool = True, workers: int = 0, name: str = "split"):
        if not items:
            raise ValueError(f"{name}: no images")
        self.items, self.image_size, self.resize, self.workers, self.name = items, image_size, resize, workers, name
        self.labels = torch.tensor([item.label for item in items])
        self.images = None
        if in_memory:
            self.images = torch.stack([self[i][0] for i in range(len(items))])

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int):
        if self.images is not None:
            return self.images[index], self.labels[index]
        return read_image(self.items[index].path, self.image_size, self.resize), self.labels[index]

    def batches(self, batch_size: int, *, seed: int = 0, epoch: int = 0, shuffle: bool = False) -> Iterator:
        """(uint8 images, labels) batches; the order is a function of (seed, epoch) only."""
        order = epoch_order(len(self), seed, epoch) if shuffle else torch.arange(len(self))
        if self.images is not None:
            for start in range(0, len(order), batch_size):
                chosen = order[start:start + batch_size]
                yield self.images[chosen], self.labels[chosen]
            return
        loader = torch.utils.data.DataLoader(self, batch_size=batch_size, sampler=order.tolist(),
                                             num_workers=self.workers)
        yield from loader


def concatenate(first: ImageSet, second: ImageSet, name: str) -> ImageSet:
    """Both splits' images in one set (the data-mixture baseline: originals + pooled images)."""
    if (first.images is None) != (second.images is None):
        raise ValueError("concatenate: both sets must be in memory, or neither")
    merged = ImageSet(first.items + second.items, first.image_size, first.resize, in_memory=False,
                      workers=first.workers, name=name)
    if first.images is not None:
        merged.images = torch.cat([first.images, second.images])
    return merged
