"""Geirhos' 16-class ImageNet (paper §5): 1000 -> 16 probabilities, and the split builder of the two user data
sources (the class table itself: classes.py).

`build_imagenet16` (source `imagenet`: 16 categories of 207 member WNID folders) and `build_folder_splits`
(source `folder`: any class-per-folder tree, each class its own single member) turn a user's tree into
image-folder trees `out/<split>/<category>/`, both through `build_splits`:
eval (drawn from train), discovery (from train, disjoint from eval), train (all member train images
but eval; discovery images are included, as in the paper) and test (the val split). Eval images are
content-unique among the member train images, so no byte-identical copy of an eval image is trained on
(ImageNet holds such duplicates; the authors also leaked eval images into training).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import torch

from ..images import describe_unreadable, unreadable
from ..listing import file_sha256
from ..runtime import save_json
from .classes import CATEGORIES, WNID_PATTERN, class_folders, folder_tree_problems, read_class_table

SPLITS = ("eval", "discovery", "train", "test")
IMAGE_SUFFIXES = {".jpeg", ".jpg", ".png"}


def category_probabilities(logits_or_probs: torch.Tensor, members: list[list[int]],
                           from_logits: bool = True) -> torch.Tensor:
    """[N, 1000] -> [N, 16]: mean probability over each category's member classes (Geirhos' rule).

    Mean rather than sum, so bird (49 members) is not favoured over oven (1 member); rows therefore do
    not sum to 1. The 16-class decision is the argmax. A matrix product keeps it differentiable.
    """
    if logits_or_probs.dim() != 2:
        raise ValueError(f"expected a [N, classes] tensor, got shape {tuple(logits_or_probs.shape)}")
    n_classes = logits_or_probs.shape[1]
    probs = torch.softmax(logits_or_probs, dim=1) if from_logits else logits_or_probs
    weights = torch.zeros(len(members), n_classes, dtype=probs.dtype, device=probs.device)
    for k, member in enumerate(members):
        if not member or min(member) < 0 or max(member) >= n_classes:
            raise ValueError(f"category {k}: member indices {member} must be non-empty and in [0, {n_classes})")
        weights[k, list(member)] = 1.0 / len(member)
    return probs @ weights.T


def _images(folder: Path) -> list[tuple[str, int]]:
    """(name, size) of the image files in one class folder, sorted; hidden files are skipped."""
    with os.scandir(folder) as entries:
        found = [(e.name, e.stat().st_size) for e in entries
                 if e.is_file() and not e.name.startswith(".") and Path(e.name).suffix.lower() in IMAGE_SUFFIXES]
    return sorted(found)


def _check_options(link: str, eval_per_class: int, discovery_per_class: int) -> None:
    if link not in ("symlink", "copy"):
        raise ValueError(f"link must be 'symlink' or 'copy', got {link!r}")
    if eval_per_class < 0 or discovery_per_class < 0:
        raise ValueError("eval_per_class and discovery_per_class must be >= 0")


def _require_wnid_folders(split_dir: Path, wnids: list[str], hint: str = "") -> None:
    missing = [w for w in wnids if not (split_dir / w).is_dir()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} of {len(wnids)} member WNID folders are missing under "
                                f"{split_dir}, e.g. {', '.join(str(split_dir / w) for w in missing[:5])}{hint}")


def build_imagenet16(root: Path, out: Path, *, discovery_per_class: int = 1000, eval_per_class: int = 100,
                     seed: int = 0, link: str = "symlink", tsv: Path | None = None,
                     wnids_file: Path | None = None, skip_unreadable: bool = False, min_fill: float = 0.5,
                     workers: int = 1, write: bool = True) -> dict:
    """Write out/{eval,discovery,train,test}/<category>/<wnid>_<name> and out/manifest.json; return the manifest.

    Expects root/train/<wnid>/*.JPEG and root/val/<wnid>/*.JPEG: the val images must already be sorted
    into WNID folders (as torchvision.datasets.ImageNet or the usual valprep.sh leave them). Only the
    member WNIDs are read; root is never written. Existing out/<split> folders are replaced.

    Bad data stops the build before anything is written, naming the user's files: every member image is
    opened once (images.unreadable); an unreadable one is an error listing each by its path under root
    (skip_unreadable=True leaves them out instead, listed in the manifest). Empty WNID folders are listed in
    the manifest; a category without train or val images, or a discovery or eval split holding fewer than
    min_fill of the images asked for in some category, is an error naming the category, its folders and
    the counts. A split filled below what was asked but above that floor is listed as under-filled.
    With write=False every check runs and the manifest is returned, nothing is written (the check rule that
    runs before the builder, so a failing check never costs a finished build).
    """
    root, out = Path(root).absolute(), Path(out).absolute()
    _check_options(link, eval_per_class, discovery_per_class)
    table = read_class_table(tsv, wnids_file)
    wnids = [w for c in CATEGORIES for w in table[c]]
    if not root.is_dir():
        raise FileNotFoundError(f"ImageNet root {root} does not exist or is not a folder")
    if out.resolve().is_relative_to(root.resolve()) or root.resolve().is_relative_to(out.resolve()):
        raise ValueError(f"output {out} and ImageNet root {root} overlap; rebuilding would touch root")
    for split in ("train", "val"):
        if not (root / split).is_dir():
            raise FileNotFoundError(f"{root / split} does not exist; expected {root}/{split}/<wnid>/*.JPEG")
    if not any(WNID_PATTERN.fullmatch(p.name) and p.is_dir() for p in (root / "val").iterdir()):
        raise FileNotFoundError(f"{root / 'val'} has no WNID subfolders: the val images must be sorted into "
                                f"class folders, {root}/val/<wnid>/*.JPEG (e.g. with valprep.sh)")
    _require_wnid_folders(root / "train", wnids)
    _require_wnid_folders(root / "val", wnids)
    return build_splits(root, out, {c: table[c] for c in CATEGORIES}, discovery_per_class=discovery_per_class,
                        eval_per_class=eval_per_class, seed=seed, link=link, skip_unreadable=skip_unreadable,
                        min_fill=min_fill, workers=workers, what=f"the ImageNet tree {root}", write=write)


def build_folder_splits(root: Path, out: Path, *, discovery_per_class: int = 1000, eval_per_class: int = 100,
                        seed: int = 0, link: str = "symlink", skip_unreadable: bool = False, min_fill: float = 0.5,
                        workers: int = 1, write: bool = True) -> dict:
    """Source `folder`: root/train/<class>/ and root/val/<class>/, any number of classes (sorted names give
    the class indices), any image size; the same splits, checks and manifest as ImageNet-16."""
    root, out = Path(root).absolute(), Path(out).absolute()
    _check_options(link, eval_per_class, discovery_per_class)
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist or is not a folder")
    problems = folder_tree_problems(root)
    if problems:
        raise ValueError("\n".join(problems))
    classes = class_folders(root / "train")
    return build_splits(root, out, {c: [c] for c in classes}, discovery_per_class=discovery_per_class,
                        eval_per_class=eval_per_class, seed=seed, link=link, skip_unreadable=skip_unreadable,
                        min_fill=min_fill, workers=workers, what=f"the image folder {root}", write=write)


def build_splits(root: Path, out: Path, table: dict[str, list[str]], *, discovery_per_class: int, eval_per_class: int,
                 seed: int, link: str, skip_unreadable: bool, min_fill: float, workers: int, what: str,
                 write: bool = True) -> dict:
    """The splits of a tree whose category c gathers the member folders table[c] under root/train and root/val
    (the categories in table order give the class indices). See build_imagenet16 for what is checked, and
    write=False."""
    root, out = Path(root).absolute(), Path(out).absolute()
    if out.resolve().is_relative_to(root.resolve()) or root.resolve().is_relative_to(out.resolve()):
        raise ValueError(f"output {out} and the data root {root} overlap; rebuilding would touch root")
    if not 0 <= min_fill <= 1:
        raise ValueError(f"min_fill must lie in [0, 1], got {min_fill}")
    listed, skipped, empty = _readable_members(root, table, skip_unreadable, workers, what)
    chosen, dropped = _draw_splits(root, table, listed, discovery_per_class, eval_per_class, seed)
    under = _check_fill(root, table, chosen, {"discovery": discovery_per_class, "eval": eval_per_class}, min_fill)
    if write:
        _write_splits(root, out, chosen, link)
    manifest = {
        "class_order": list(table),
        "seed": seed,
        "eval_per_class": eval_per_class,
        "discovery_per_class": discovery_per_class,
        "link": link,
        "root": str(root),
        "counts": {split: {c: len(chosen[split][c]) for c in table} for split in SPLITS},
        "eval_duplicates_dropped": sum(dropped.values()),
        "eval_duplicates_dropped_per_class": dropped,
        "unreadable_skipped": sorted(skipped),
        "empty_wnid_folders": empty,
        "under_filled": {split: short for split, short in under.items() if short},
    }
    if write:
        save_json(manifest, out / "manifest.json")
    return manifest


def _readable_members(root: Path, table: dict[str, list[str]], skip_unreadable: bool, workers: int, what: str):
    """Every member image that decodes, per (split, wnid) as (name, bytes); the user hears which do not before
    anything is built (or, with skip_unreadable, they are left out and listed). Also the empty member folders;
    a category without a readable image in a split is an error."""
    wnids = [w for c in table for w in table[c]]
    listed = {(split, wnid): _images(root / split / wnid) for split in ("train", "val") for wnid in wnids}
    bad = unreadable((root / split / wnid / name for (split, wnid), names in listed.items() for name, _ in names),
                     workers)
    if bad and not skip_unreadable:
        raise ValueError(describe_unreadable(bad, what) +
                         "\nFix or remove them, or set skip_unreadable: true (vision.data.imagenet or vision.data.folder) to leave them out.")
    skipped = {str(path) for path, _ in bad}
    listed = {key: [(name, nbytes) for name, nbytes in names if str(root / key[0] / key[1] / name) not in skipped]
              for key, names in listed.items()}
    empty = {split: sorted(str(root / split / wnid) for wnid in wnids if not listed[(split, wnid)])
             for split in ("train", "val")}
    for c in table:
        for split in ("train", "val"):
            if not any(listed[(split, wnid)] for wnid in table[c]):
                raise ValueError(f"category {c} has no readable {split} image: its folders "
                                 f"{[str(root / split / w) for w in table[c]]} are empty")
    return listed, skipped, empty


def _draw_splits(root: Path, table: dict[str, list[str]], listed: dict, discovery_per_class: int, eval_per_class: int,
                 seed: int):
    """Per split and category, the (wnid, name) items: eval drawn from train without duplicates by content,
    discovery a fresh draw over the rest, train all but eval, test the val folders. Also, per category, how many
    eval candidates were dropped as duplicates."""
    # Per category, every train image as (wnid, name) in sorted order; sizes of all member images
    # let us hash only files that share a size with some other file (duplicates must), not ~270k JPEGs.
    train = {c: [] for c in table}
    size, by_size = {}, {}
    for c in table:
        for wnid in table[c]:
            for name, nbytes in listed[("train", wnid)]:
                path = root / "train" / wnid / name
                train[c].append((wnid, name))
                size[path] = nbytes
                by_size.setdefault(nbytes, []).append(path)
    hashes = {}

    def content_unique(path: Path) -> bool:
        """No other member train image (any category) has the same bytes."""
        group = by_size[size[path]]
        if len(group) == 1:
            return True
        for p in group:
            if p not in hashes:
                hashes[p] = file_sha256(p)
        return sum(hashes[p] == hashes[path] for p in group) == 1

    chosen = {split: {} for split in SPLITS}
    dropped = {}
    for k, c in enumerate(table):
        # One generator per category, so a category's draw does not depend on the others' sizes.
        rng = np.random.default_rng([seed, k])
        order = rng.permutation(len(train[c]))
        picked, dropped[c], position = [], 0, 0
        while len(picked) < eval_per_class and position < len(order):
            i = int(order[position])
            position += 1
            wnid, name = train[c][i]
            if content_unique(root / "train" / wnid / name):
                picked.append(i)
            else:
                dropped[c] += 1
        in_eval = set(picked)  # fewer than eval_per_class: under-filled, judged by min_fill below with the others
        # A fresh draw over all non-eval images: dropped duplicates stay eligible, without being favoured.
        rest = [i for i in range(len(train[c])) if i not in in_eval]
        rest = [rest[j] for j in rng.permutation(len(rest))]
        chosen["eval"][c] = sorted(train[c][i] for i in picked)
        chosen["discovery"][c] = sorted(train[c][i] for i in rest[:discovery_per_class])
        chosen["train"][c] = [item for i, item in enumerate(train[c]) if i not in in_eval]
        chosen["test"][c] = [(w, name) for w in table[c] for name, _ in listed[("val", w)]]
    return chosen, dropped


def _check_fill(root: Path, table: dict[str, list[str]], chosen: dict, asked: dict[str, int], min_fill: float) -> dict:
    """Splits filled below what was asked: listed (returned), and an error below min_fill of it."""
    under = {split: {c: [len(chosen[split][c]), n] for c in table if len(chosen[split][c]) < n}
             for split, n in asked.items()}
    too_few = [(split, c, got, n) for split, short in under.items() for c, (got, n) in short.items() if got < min_fill * n]
    if too_few:
        raise ValueError("splits below their minimum (min_fill {:g} of the images asked for):\n".format(min_fill) + "\n".join(
            f"  {split}, category {c}: {got} of {n} images, from the folders "
            f"{[str(root / 'train' / w) for w in table[c]]}" for split, c, got, n in too_few))
    return under


def _write_splits(root: Path, out: Path, chosen: dict, link: str) -> None:
    """The class-per-folder splits under out, each built beside its target and renamed into place, so a killed
    job never leaves a half-filled split."""
    out.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        source = root / ("val" if split == "test" else "train")
        partial = out / f".{split}.partial"
        _remove(partial)
        for c, items in chosen[split].items():
            (partial / c).mkdir(parents=True)
            for wnid, name in items:
                # Prefix the WNID: two member WNIDs of one category may hold the same file name. A class that is
                # its own only member (source folder) needs none: circle/circle_0.png, not circle/circle_circle_0.png.
                target = partial / c / (name if wnid == c else f"{wnid}_{name}")
                if link == "symlink":
                    target.symlink_to(source / wnid / name)
                else:
                    shutil.copyfile(source / wnid / name, target)
        _remove(out / split)
        os.replace(partial, out / split)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
