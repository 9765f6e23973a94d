"""16-class ImageNet: the shipped class table, the mean-probability rule, and splits built from a fake ImageNet."""

import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest
import torch
from PIL import Image

from subtask_induction.vision.classes import CATEGORIES, member_indices, read_class_table
from subtask_induction.vision.imagenet16 import build_imagenet16, category_probabilities

VISION = Path(__file__).resolve().parents[1] / "workflow" / "subtask_induction" / "vision"


def test_shipped_class_table():
    assert CATEGORIES == tuple(sorted(CATEGORIES)) and len(CATEGORIES) == 16
    table = read_class_table()
    assert tuple(table) == CATEGORIES
    assert sum(map(len, table.values())) == 207
    assert len(table["dog"]) == 109 and len(table["oven"]) == 1 and len(table["bird"]) == 49
    assert all(wnids == sorted(wnids) for wnids in table.values())
    wnids = (VISION / "imagenet1k_wnids.txt").read_text().split()
    indices = member_indices()
    assert indices[CATEGORIES.index("airplane")] == [404]
    for category, members in zip(CATEGORIES, indices):
        assert sorted(wnids[i] for i in members) == table[category]


def test_category_probabilities_mean_rule():
    members = member_indices()
    bicycle, oven = members[CATEGORIES.index("bicycle")], members[CATEGORIES.index("oven")]
    assert len(bicycle) == 2 and len(oven) == 1
    probs = torch.zeros(2, 1000, dtype=torch.float64)
    probs[0, 404] = 1.0
    probs[1, bicycle[0]], probs[1, oven[0]] = 0.6, 0.4
    out = category_probabilities(probs, members, from_logits=False)
    assert out.shape == (2, 16)
    expected0 = torch.zeros(16, dtype=torch.float64)
    expected0[CATEGORIES.index("airplane")] = 1.0
    assert torch.allclose(out[0], expected0)
    # Most mass sits on a bicycle class, but the mean over bicycle's 2 members (0.3) loses to oven's 0.4.
    assert out[1, CATEGORIES.index("bicycle")].item() == pytest.approx(0.3)
    assert out[1, CATEGORIES.index("oven")].item() == pytest.approx(0.4)
    assert out[1].sum().item() == pytest.approx(0.7)  # rows need not sum to 1
    assert out.argmax(1).tolist() == [CATEGORIES.index("airplane"), CATEGORIES.index("oven")]


def test_category_probabilities_from_logits_is_differentiable():
    members = member_indices()
    logits = torch.randn(3, 1000, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = category_probabilities(logits, members)
    dog = CATEGORIES.index("dog")
    manual = torch.softmax(logits, 1)[:, members[dog]].mean(1)
    assert torch.allclose(out[:, dog], manual)
    torch.log(out[:, dog]).sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all() and logits.grad.abs().sum() > 0
    with pytest.raises(ValueError):
        category_probabilities(torch.zeros(2, 10), members)


# ---------------------------------------------------------------- fake ImageNet

FAKE_WNIDS = [f"n{i:08d}" for i in range(40)]
NON_MEMBERS = ["n00000003", "n00000033"]


def fake_members():
    """Category k owns WNID 2k, plus 2k+1 when k % 3 == 0; the other WNIDs are not members."""
    return {c: [FAKE_WNIDS[2 * k]] + ([FAKE_WNIDS[2 * k + 1]] if k % 3 == 0 else []) for k, c in enumerate(CATEGORIES)}


def n_train(category):
    return 4 + CATEGORIES.index(category) % 5


def wnid_of(category, j=0):
    return fake_members()[category][j]


# (category, wnid position, image) -> content of (category, wnid position, image): planted byte-identical copies.
DUPLICATES = {
    ("oven", 0, 1): ("oven", 0, 0),       # within one WNID
    ("oven", 0, 2): ("truck", 0, 0),      # across categories
    ("oven", 0, 4): ("oven", 0, 3),
    ("dog", 0, 0): ("bird", 0, 0),
    ("airplane", 1, 0): ("airplane", 0, 0),  # across the two WNIDs of one category
}


def jpeg(text: str) -> bytes:
    """A tiny real JPEG whose pixels follow from `text`: the same text gives the same bytes (a planted
    duplicate), another text other bytes."""
    digest = hashlib.sha256(text.encode()).digest()
    image = Image.frombytes("RGB", (4, 4), (digest * 2)[:48])
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def content(category, j, i):
    category, j, i = DUPLICATES.get((category, j, i), (category, j, i))
    return jpeg(f"{wnid_of(category, j)}/{i}")


@pytest.fixture
def fake(tmp_path):
    members = fake_members()
    tsv, wnids_file = tmp_path / "classes.tsv", tmp_path / "wnids.txt"
    wnids_file.write_text("\n".join(FAKE_WNIDS) + "\n")
    rows = [f"{c}\t{FAKE_WNIDS.index(w)}\t{w}" for c in CATEGORIES for w in members[c]]
    tsv.write_text("# category\timagenet_index\twnid\n" + "\n".join(reversed(rows)) + "\n")
    root = tmp_path / "imagenet"
    # Folders made in reverse order, so a listing-order bug would show up as wrong class indices.
    for c in reversed(CATEGORIES):
        for j, wnid in reversed(list(enumerate(members[c]))):
            (root / "train" / wnid).mkdir(parents=True)
            for i in range(n_train(c)):
                (root / "train" / wnid / f"{wnid}_{i}.JPEG").write_bytes(content(c, j, i))
    for wnid in NON_MEMBERS:
        (root / "train" / wnid).mkdir(parents=True)
        (root / "train" / wnid / f"{wnid}_0.JPEG").write_bytes(jpeg("non-member"))
    for n, wnid in enumerate(reversed([w for c in CATEGORIES for w in members[c]] + NON_MEMBERS)):
        (root / "val" / wnid).mkdir(parents=True)
        for i in range(2):
            (root / "val" / wnid / f"ILSVRC2012_val_{2 * n + i:08d}.JPEG").write_bytes(jpeg(f"val {wnid} {i}"))
    (root / "train" / members["cat"][0] / ".DS_Store").write_bytes(b"hidden")
    return {"root": root, "tsv": tsv, "wnids_file": wnids_file, "members": members, "tmp": tmp_path}


def build(fake, out="out", **kw):
    """The fake tree's categories hold 4-8 train images: most discovery splits are under-filled (min_fill 0)."""
    kw = {"eval_per_class": 3, "discovery_per_class": 6, "tsv": fake["tsv"], "wnids_file": fake["wnids_file"],
          "min_fill": 0.0} | kw
    return build_imagenet16(fake["root"], fake["tmp"] / out, **kw)


def split_files(out, split):
    """category -> {link name: target path}."""
    return {c.name: {f.name: Path(os.readlink(f)) if f.is_symlink() else f for f in c.iterdir()}
            for c in (out / split).iterdir()}


def sha1(path):
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()


def snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_fake_class_table(fake):
    table = read_class_table(fake["tsv"], fake["wnids_file"])
    assert tuple(table) == CATEGORIES and table == fake["members"]
    assert member_indices(fake["tsv"], fake["wnids_file"])[0] == [0, 1]


def test_build_splits(fake):
    before = snapshot(fake["root"])
    manifest = build(fake)
    out, root, members = fake["tmp"] / "out", fake["root"], fake["members"]
    assert snapshot(root) == before  # root untouched
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert manifest["class_order"] == sorted(CATEGORIES) and manifest["seed"] == 0
    splits = {s: split_files(out, s) for s in ("eval", "discovery", "train", "test")}
    for split, files in splits.items():
        assert sorted(files) == sorted(CATEGORIES), split
        for c, links in files.items():
            assert manifest["counts"][split][c] == len(links)
            for name, target in links.items():
                assert target.is_absolute() and target.is_file()
                assert target.parent.name in members[c]  # every image sits under its own category
                assert name == f"{target.parent.name}_{target.name}"
    every_train = {c: {root / "train" / w / f"{w}_{i}.JPEG" for w in members[c] for i in range(n_train(c))}
                   for c in CATEGORIES}
    for c in CATEGORIES:
        total = len(members[c]) * n_train(c)
        ev, disc, tr = (set(splits[s][c].values()) for s in ("eval", "discovery", "train"))
        assert len(ev) == 3
        assert len(disc) == min(total - 3, 6)
        assert not ev & disc and not ev & tr and disc <= tr
        assert tr == every_train[c] - ev
        assert set(splits["test"][c].values()) == {p for w in members[c] for p in (root / "val" / w).iterdir()}
    # Discovery is a uniform draw, not the first files of the sorted listing (checked where the cap bites).
    capped = [c for c in CATEGORIES if len(members[c]) * n_train(c) - 3 > 6]
    assert capped and any(set(splits["discovery"][c].values()) != set(sorted(every_train[c] - set(splits["eval"][c].values()))[:6])
                          for c in capped)
    all_eval = {p for c in CATEGORIES for p in splits["eval"][c].values()}
    all_train = {p for c in CATEGORIES for p in splits["train"][c].values()}
    assert not {sha1(p) for p in all_eval} & {sha1(p) for p in all_train}  # no content leak, across categories
    planted = {root / "train" / wnid_of(c, j) / f"{wnid_of(c, j)}_{i}.JPEG"
               for key in DUPLICATES for c, j, i in (key, DUPLICATES[key])}
    assert not all_eval & planted
    # oven and dog have exactly 3 content-unique images, so their eval set is forced.
    for c, unique in (("oven", (5, 6, 7)), ("dog", (1, 2, 3))):
        assert set(splits["eval"][c].values()) == {root / "train" / wnid_of(c) / f"{wnid_of(c)}_{i}.JPEG" for i in unique}
    dropped = manifest["eval_duplicates_dropped_per_class"]
    assert manifest["eval_duplicates_dropped"] == sum(dropped.values())
    assert 0 <= dropped["oven"] <= 5 and all(dropped[c] == 0 for c in ("bear", "cat", "knife"))
    non_members = {str(root / s / w) for s in ("train", "val") for w in NON_MEMBERS}
    assert not any(str(p.parent) in non_members for files in splits.values() for ps in files.values() for p in ps.values())


def test_build_is_deterministic_and_rebuilds(fake):
    out = fake["tmp"] / "out"
    build(fake, seed=0)
    first = split_files(out, "eval")
    (out / "eval" / "airplane" / "stale.JPEG").write_bytes(b"stale")
    build(fake, seed=0)
    assert split_files(out, "eval") == first  # same seed, same eval set; stale file gone
    build(fake, out="other", seed=0)
    assert split_files(fake["tmp"] / "other", "eval") == first
    build(fake, out="other", seed=1)
    assert split_files(fake["tmp"] / "other", "eval") != first


def test_build_copy_mode(fake):
    build(fake, link="copy")
    for c, links in split_files(fake["tmp"] / "out", "eval").items():
        for name, path in links.items():
            assert not path.is_symlink()
            wnid, original = name.split("_", 1)
            assert path.read_bytes() == (fake["root"] / "train" / wnid / original).read_bytes()


def test_build_errors(fake):
    root = fake["root"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_imagenet16(fake["tmp"] / "nowhere", fake["tmp"] / "out", tsv=fake["tsv"], wnids_file=fake["wnids_file"])
    # eval short of what is asked (dog has 3 content-unique train images): under-filled, judged by min_fill
    assert build(fake, "short", eval_per_class=4)["under_filled"]["eval"]["dog"] == [3, 4]
    with pytest.raises(ValueError, match=r"eval, category dog: 3 of 4 images") as error:
        build(fake, eval_per_class=4, min_fill=1.0)
    assert "splits below their minimum" in str(error.value)
    with pytest.raises(ValueError, match="overlap"):
        build_imagenet16(root, root / "out", tsv=fake["tsv"], wnids_file=fake["wnids_file"])
    oven = wnid_of("oven")
    for f in (root / "train" / oven).iterdir():
        f.unlink()
    (root / "train" / oven).rmdir()
    with pytest.raises(FileNotFoundError, match=re.escape(str(root / "train" / oven))) as error:
        build(fake)
    assert "1 of 22" in str(error.value)
    assert not (fake["tmp"] / "out").exists()  # nothing written before validation passed


def test_flat_val_is_a_clear_error(fake):
    val = fake["root"] / "val"
    for d in list(val.iterdir()):
        for f in d.iterdir():
            f.rename(val / f.name)
        d.rmdir()
    with pytest.raises(FileNotFoundError, match="no WNID subfolders"):
        build(fake)


@pytest.mark.parametrize("edit, message", [
    (lambda text: text.replace("airplane\t0\t", "airplane\t5\t"), r"line \d+: n00000000 has index 0"),
    (lambda text: text.replace("oven\t", "stove\t"), r"line \d+: unknown category 'stove'"),
    (lambda text: text + "knife\t28\tn00000028\n", r"line 24: n00000028 already listed on line \d+"),
    (lambda text: "".join(row for row in text.splitlines(True) if not row.startswith("truck")), r"no rows for categories \['truck'\]"),
    (lambda text: text.replace("\tn00000000", " n00000000"), r"line \d+: expected 3 tab-separated"),
])
def test_malformed_class_table(fake, edit, message):
    tsv = fake["tsv"]
    tsv.write_text(edit(tsv.read_text()))
    with pytest.raises(ValueError, match=re.escape(str(tsv)) + ", " + message if "line" in message else message):
        read_class_table(tsv, fake["wnids_file"])


def test_a_corrupt_image_stops_the_build_naming_the_file_before_anything_is_written(fake):
    bad = fake["root"] / "train" / wnid_of("cat") / "broken.JPEG"
    bad.write_bytes(b"not a jpeg at all")
    truncated = fake["root"] / "val" / wnid_of("dog") / "cut.JPEG"
    truncated.write_bytes(content("dog", 0, 0)[:20])
    with pytest.raises(ValueError) as error:
        build(fake)
    message = str(error.value)
    assert str(bad) in message and str(truncated) in message and "2 unreadable" in message
    assert not (fake["tmp"] / "out").exists()  # nothing was built
    manifest = build(fake, skip_unreadable=True)  # or leave them out, listed
    assert sorted(manifest["unreadable_skipped"]) == sorted([str(bad), str(truncated)])
    assert not any("broken" in name for name in split_files(fake["tmp"] / "out", "train")["cat"])


def test_empty_folders_and_under_filled_splits_are_listed_and_a_split_below_its_floor_stops(fake):
    empty = fake["root"] / "train" / fake["members"]["airplane"][1]  # airplane's second WNID
    for file in empty.iterdir():
        file.unlink()
    manifest = build(fake, discovery_per_class=7)
    assert manifest["empty_wnid_folders"]["train"] == [str(empty)]
    assert manifest["under_filled"]["discovery"]["airplane"] == [manifest["counts"]["discovery"]["airplane"], 7]
    with pytest.raises(ValueError) as error:  # 4 train images of airplane, 3 go to eval: 1 of 7 < half
        build(fake, out="again", discovery_per_class=7, min_fill=0.5)
    assert "discovery, category airplane: 1 of 7" in str(error.value) and str(empty) in str(error.value)
    for file in (fake["root"] / "train" / wnid_of("airplane")).iterdir():
        file.unlink()
    with pytest.raises(ValueError, match="category airplane has no readable train image"):
        build(fake, out="third")
