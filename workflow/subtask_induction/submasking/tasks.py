"""Downstream tasks of the submasking family: where their images come from, and how they are read.

A task is a folder `train/<class>/`, `test/<class>/` and optionally `val/<class>/` (any image-folder
dataset a user downloads: DTD, EuroSAT, Flowers, Pets, SUN397, UCF101 frames), or CIFAR-10/100's
python-pickle folder as distributed (`cifar-10-batches-py/`, `cifar-100-python/`). The embedded default
builds small tasks from images that ship inside wheels (no download):

- `digits`: scikit-learn's UCI handwritten digits (1,797 real 8x8 scans, 10 classes), upscaled.
- `textures`: crops of scikit-image's real texture photographs (brick, grass, gravel); train crops come
  from the left 70% of each photograph, test crops from the right 30%, so no test pixel is trained on.
  Crop sides are drawn from [s, 3s) for an image size s, capped by the narrower strip (154 px): at sizes
  above 51 px the crops are smaller than 3s and at sizes above 154 px they are upsampled.
- `faces`: scikit-image's `lfw_subset` (100 LFW faces, 100 non-face patches, 25x25 grey).

Label fractions are class-balanced, seeded and nested: the 10% subset of a seed lies inside its 50%.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from ..images import list_images, read_image
from ..runtime import derive_seed

EMBEDDED = ("digits", "textures", "faces")
CIFAR_FILES = {"cifar10": (["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"],
                           "test_batch", "batches.meta", b"labels", b"label_names"),
               "cifar100": (["train"], "test", "meta", b"fine_labels", b"fine_label_names")}


@dataclass
class Split:
    """uint8 images (N, 3, S, S), int64 labels (N,), and the task's class names."""

    images: torch.Tensor
    labels: torch.Tensor
    classes: list[str]

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, index: torch.Tensor) -> "Split":
        return Split(self.images[index], self.labels[index], self.classes)


# ---- reading ---------------------------------------------------------------------------------------------

def read_folder_task(root: str | Path, image_size: int) -> dict[str, Split]:
    """train/test (and val when present) of an image-folder task; classes from train/, sorted."""
    root = Path(root)
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(classes) < 2:
        raise ValueError(f"task {root}: train/ has {len(classes)} class folder(s); a task needs at least 2")
    splits = {}
    for split in ("train", "val", "test"):
        folder = root / split
        if split == "val" and not folder.is_dir():
            continue
        extra = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in classes)
        if extra:
            raise ValueError(f"task {root}: {split}/ has classes {extra} that train/ lacks")
        items = list_images(folder, classes, what=f"task {root} {split}")
        if not items:
            raise ValueError(f"task {root}: {split}/ holds no images")
        images = torch.stack([read_image(item.path, image_size) for item in items])
        splits[split] = Split(images, torch.tensor([item.label for item in items]), classes)
    return splits


def _unpickle(path: Path) -> dict:
    with open(path, "rb") as handle:
        return pickle.load(handle, encoding="bytes")  # noqa: S301 - CIFAR's own format, a user's local copy


def read_cifar(root: str | Path, kind: str, image_size: int) -> dict[str, Split]:
    """CIFAR-10/100 from the python-pickle folder as downloaded (train and test)."""
    root = Path(root)
    train_files, test_file, meta_file, label_key, names_key = CIFAR_FILES[kind]
    classes = [name.decode() for name in _unpickle(root / meta_file)[names_key]]

    def load(files):
        batches = [_unpickle(root / f) for f in files]
        data = np.concatenate([b[b"data"] for b in batches]).reshape(-1, 3, 32, 32)
        labels = np.concatenate([np.asarray(b[label_key]) for b in batches])
        images = torch.from_numpy(data)
        if image_size != 32:
            images = torch.nn.functional.interpolate(images.float(), size=image_size, mode="bilinear",
                                                     align_corners=False).round().clamp(0, 255).to(torch.uint8)
        return Split(images, torch.from_numpy(labels).long(), classes)

    return {"train": load(train_files), "test": load([test_file])}


def read_task(spec: dict, root: str | Path, image_size: int) -> dict[str, Split]:
    return read_cifar(root, spec["source"], image_size) if spec["source"] in CIFAR_FILES \
        else read_folder_task(root, image_size)


# ---- label fractions ------------------------------------------------------------------------------------

def label_subset(labels: torch.Tensor, fraction: float, seed: int) -> torch.Tensor:
    """Indices of a class-balanced fraction of the labelled rows (at least one per class), seeded.

    Nested: each class's rows are ranked once by a permutation from `seed`, and a fraction keeps a prefix
    of that ranking, so the rows of a smaller fraction are inside a larger one.
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"label fraction {fraction} outside (0, 1]")
    chosen = []
    for label in torch.unique(labels).tolist():
        rows = torch.nonzero(labels == label).flatten()
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(
            derive_seed("label fraction", seed, label)))
        keep = max(1, round(fraction * len(rows)))
        chosen.append(rows[order[:keep]])
    return torch.sort(torch.cat(chosen)).values


# ---- the embedded tasks ---------------------------------------------------------------------------------

def _save_png(array: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).convert("RGB").save(path, compress_level=1)  # fast; pixels are what count


def _split_rows(count: int, test_fraction: float, seed: int, labels: np.ndarray) -> np.ndarray:
    """A stratified boolean 'is test' per row."""
    rng = np.random.default_rng(derive_seed("submasking split", seed))
    is_test = np.zeros(count, dtype=bool)
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        rng.shuffle(rows)
        is_test[rows[:round(test_fraction * len(rows))]] = True
    return is_test


def crop_sides(image_size: int, strip: int) -> tuple[int, int]:
    """[low, high) of a texture crop's side: [s, 3s) where that fits in a strip `strip` px wide, else
    capped at the strip (and at most half of it as the low end), so every size builds."""
    high = min(3 * image_size, strip)
    low = min(image_size, high // 2)
    if low < 1 or high <= low:
        raise ValueError(f"a texture strip of {strip} px is too narrow for crops at image size {image_size}")
    return low, high


def build_embedded_task(name: str, out: str | Path, *, image_size: int, seed: int,
                        crops_per_class: int = 300) -> dict:
    """Write an embedded task as train/<class>/ and test/<class>/ PNGs; returns the counts per split.

    Also writes `sources.json`: for every image, where it came from (the dataset's row index, or the
    photograph and crop box), so that train and test can be checked to be disjoint."""
    out = Path(out)
    counts = {"train": 0, "test": 0}
    sources = {}

    def write(split, label, index, array, source):
        name = f"{split}/{label}/{index:05d}.png"
        _save_png(array, out / name)
        counts[split] += 1
        sources[name] = source

    if name == "digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        is_test = _split_rows(len(digits.target), 0.3, seed, digits.target)
        for i, (image, target) in enumerate(zip(digits.images, digits.target)):
            grey = np.asarray(Image.fromarray((image * 255 / 16).astype(np.uint8)).resize(
                (image_size, image_size), Image.BILINEAR))
            write("test" if is_test[i] else "train", str(target), i, grey, {"index": i})
    elif name == "faces":
        from skimage.data import lfw_subset

        faces = lfw_subset()
        labels = np.array([0] * 100 + [1] * 100)
        is_test = _split_rows(len(labels), 0.3, seed, labels)
        for i, image in enumerate(faces):
            grey = np.asarray(Image.fromarray((image * 255).astype(np.uint8)).resize(
                (image_size, image_size), Image.BILINEAR))
            write("test" if is_test[i] else "train", ("face", "nonface")[labels[i]], i, grey, {"index": i})
    elif name == "textures":
        import skimage.data

        rng = np.random.default_rng(derive_seed("texture crops", seed))
        for texture in ("brick", "grass", "gravel"):
            photo = getattr(skimage.data, texture)()
            border = int(0.7 * photo.shape[1])
            low, high = crop_sides(image_size, min(border, photo.shape[1] - border, photo.shape[0]))
            for split, (left, right), n in (("train", (0, border), crops_per_class),
                                            ("test", (border, photo.shape[1]), crops_per_class // 3)):
                for i in range(n):
                    size = int(rng.integers(low, high))  # scale jitter
                    x = int(rng.integers(left, right - size))
                    y = int(rng.integers(0, photo.shape[0] - size))
                    crop = Image.fromarray(photo[y:y + size, x:x + size]).resize((image_size, image_size),
                                                                                Image.BILINEAR)
                    write(split, texture, i, np.asarray(crop), {"photo": texture, "box": [x, y, x + size, y + size]})
    else:
        raise ValueError(f"unknown embedded task '{name}'; choose one of {EMBEDDED}")
    (out / "sources.json").write_text(json.dumps(sources, indent=1, sort_keys=True))
    return counts
