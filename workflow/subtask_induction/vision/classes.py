"""Geirhos' 16 categories and their 207 ImageNet-1k member classes, and the classes of a `folder` source
(torch-free: the workflow checks a user's folders against them while building the DAG).

`imagenet16_classes.tsv` (category, ImageNet index, WNID) is checked against the ILSVRC index order in
`imagenet1k_wnids.txt`. Class index k is ALWAYS CATEGORIES[k], the sorted names: the authors took indices
from an unsorted os.listdir, so labels depended on the file system.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_TSV = HERE / "imagenet16_classes.tsv"
DEFAULT_WNIDS = HERE / "imagenet1k_wnids.txt"
DEFAULT_ROWS = 207  # only checked for the shipped table, to catch a truncated copy
CATEGORIES: tuple[str, ...] = tuple(sorted((
    "airplane", "bear", "bicycle", "bird", "boat", "bottle", "car", "cat",
    "chair", "clock", "dog", "elephant", "keyboard", "knife", "oven", "truck")))
WNID_PATTERN = re.compile(r"n\d{8}")


def run_classes(settings: dict) -> tuple[str, ...]:
    """A run's class names in index order: a `folder` source's own (its settings carry `classes`, the sorted
    class folders), else Geirhos' 16 categories (the generated world and ImageNet-16)."""
    return tuple(settings.get("classes") or CATEGORIES)


def _read_wnids(wnids_file: Path) -> dict[str, int]:
    """WNID -> ILSVRC index (its 0-based line). A blank or repeated line would shift every index after it."""
    index = {}
    for i, line in enumerate(Path(wnids_file).read_text().splitlines()):
        wnid = line.strip()
        if not WNID_PATTERN.fullmatch(wnid):
            raise ValueError(f"{wnids_file}, line {i + 1}: expected a WNID like n01440764, got {line!r}")
        if wnid in index:
            raise ValueError(f"{wnids_file}, line {i + 1}: {wnid} already on line {index[wnid] + 1}")
        index[wnid] = i
    return index


def _read_rows(tsv: Path | None, wnids_file: Path | None) -> list[tuple[str, int, str]]:
    """Validated (category, imagenet_index, wnid) rows of the class table."""
    path, wnids_path = Path(tsv or DEFAULT_TSV), Path(wnids_file or DEFAULT_WNIDS)
    index = _read_wnids(wnids_path)
    rows, seen = [], {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{path}, line {number}"
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 3:
            raise ValueError(f"{where}: expected 3 tab-separated fields (category, imagenet_index, wnid), got {line!r}")
        category, idx, wnid = (field.strip() for field in fields)
        if category not in CATEGORIES:
            raise ValueError(f"{where}: unknown category {category!r}; expected one of {list(CATEGORIES)}")
        if not idx.isdigit():
            raise ValueError(f"{where}: imagenet_index {idx!r} is not a non-negative integer")
        if wnid not in index:
            raise ValueError(f"{where}: WNID {wnid!r} is not in {wnids_path}")
        if index[wnid] != int(idx):
            raise ValueError(f"{where}: {wnid} has index {index[wnid]} in {wnids_path}, not {idx}")
        if wnid in seen:
            raise ValueError(f"{where}: {wnid} already listed on line {seen[wnid]}")
        seen[wnid] = number
        rows.append((category, int(idx), wnid))
    missing = sorted(set(CATEGORIES) - {row[0] for row in rows})
    if missing:
        raise ValueError(f"{path}: no rows for categories {missing}")
    if tsv is None and len(rows) != DEFAULT_ROWS:
        raise ValueError(f"{path}: {len(rows)} rows, the 16-class table has {DEFAULT_ROWS}")
    return rows


def read_class_table(tsv: Path | None = None, wnids_file: Path | None = None) -> dict[str, list[str]]:
    """Category -> sorted member WNIDs, in CATEGORIES order. Raises ValueError naming file and line."""
    rows = _read_rows(tsv, wnids_file)
    return {c: sorted(wnid for category, _, wnid in rows if category == c) for c in CATEGORIES}


def member_indices(tsv: Path | None = None, wnids_file: Path | None = None) -> list[list[int]]:
    """Per category (CATEGORIES order), the sorted ImageNet-1k indices of its member classes."""
    rows = _read_rows(tsv, wnids_file)
    return [sorted(idx for category, idx, _ in rows if category == c) for c in CATEGORIES]


def member_folder_problems(root: Path, tsv: Path | None = None, wnids_file: Path | None = None) -> list[str]:
    """What an ImageNet tree lacks, by name only (no image opened): train/ and val/, and every member WNID
    folder of the 16 categories in each, listed with its category. The workflow checks this while building
    the DAG, so a tree without the members fails before any job, in one message."""
    root = Path(root)
    table = read_class_table(tsv, wnids_file)
    problems = []
    for split in ("train", "val"):
        if not (root / split).is_dir():
            problems.append(f"{root / split} does not exist; expected {root}/{split}/<wnid>/*.JPEG")
            continue
        missing = [f"{wnid} ({category})" for category in CATEGORIES for wnid in table[category]
                   if not (root / split / wnid).is_dir()]
        if missing:
            problems.append(f"{len(missing)} of {sum(map(len, table.values()))} member WNID folders are missing under "
                            f"{root / split}: " + ", ".join(missing))
    return problems


def class_folders(split_dir: Path) -> list[str]:
    """The class folders of one split of a class-per-folder tree, sorted (hidden folders skipped)."""
    return sorted(p.name for p in split_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def folder_tree_problems(root) -> list[str]:
    """What is wrong with a class-per-folder tree root/{train,val}/<class>/ (torch-free; checked at start-up):
    a missing split, fewer than two classes, classes that differ between the splits."""
    root = Path(root)
    missing = [split for split in ("train", "val") if not (root / split).is_dir()]
    if missing:
        return [f"{root / split} does not exist; expected {root}/{split}/<class>/<image>" for split in missing]
    train, val = class_folders(root / "train"), class_folders(root / "val")
    problems = []
    if len(train) < 2:
        problems.append(f"{root / 'train'} has {len(train)} class folder(s); a classifier needs at least 2")
    if set(train) != set(val):
        problems.append(f"the class folders differ between {root / 'train'} and {root / 'val'}: only in train "
                        f"{sorted(set(train) - set(val))[:10]}, only in val {sorted(set(val) - set(train))[:10]}")
    return problems
