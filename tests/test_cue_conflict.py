"""Cue-conflict reading and metrics on a hand-made stimulus folder with hand-computed answers."""

import math

import pytest

from subtask_induction.vision.cue_conflict import ConflictImage, cue_conflict_metrics, read_cue_conflict
from subtask_induction.vision.classes import CATEGORIES

# file name -> prediction; 6 conflict images, 2 same-class ones.
PREDICTIONS = {
    "airplane1-bicycle1.png": "airplane",  # shape
    "airplane2-cat1.png": "cat",           # texture
    "airplane3-airplane4.png": "airplane",  # same class: excluded
    "bicycle1-airplane2.png": "bicycle",   # shape
    "bicycle2-cat2.png": "dog",            # neither
    "cat1-airplane3.png": "cat",           # shape
    "cat2-bicycle3.png": "bicycle",        # texture
    "cat3-cat4.png": "dog",                # same class: excluded
}


def make_folder(root, names):
    for name in names:
        shape = name.split("-")[0].rstrip("0123456789")
        (root / shape).mkdir(parents=True, exist_ok=True)
        (root / shape / name).touch()
    return root


@pytest.fixture
def stimuli(tmp_path):
    folder = make_folder(tmp_path / "stimuli", reversed(list(PREDICTIONS)))
    (folder / "cat" / ".DS_Store").touch()  # hidden files are ignored
    return folder


def test_read_sorted_with_labels(stimuli):
    items = read_cue_conflict(stimuli)
    assert [item.path.name for item in items] == sorted(PREDICTIONS)
    assert items[1] == ConflictImage(stimuli / "airplane" / "airplane2-cat1.png", "airplane", "cat")
    assert sum(item.shape == item.texture for item in items) == 2


def test_metrics_by_hand(stimuli):
    items = read_cue_conflict(stimuli)
    metrics = cue_conflict_metrics(items, [PREDICTIONS[item.path.name] for item in items])
    assert metrics["n_conflict"] == 6 and metrics["n_same_class"] == 2
    assert metrics["shape_accuracy"] == pytest.approx(3 / 6)
    assert metrics["texture_accuracy"] == pytest.approx(2 / 6)
    assert metrics["robustness"] == pytest.approx(4 / 6)
    assert metrics["shape_bias"] == pytest.approx(3 / 5)
    per_class = metrics["per_class"]
    assert list(per_class) == ["airplane", "bicycle", "cat"]
    assert per_class["airplane"] == pytest.approx(
        {"n": 2, "shape_accuracy": 0.5, "texture_accuracy": 0.5, "robustness": 0.5, "shape_bias": 0.5})
    assert per_class["bicycle"] == pytest.approx(
        {"n": 2, "shape_accuracy": 0.5, "texture_accuracy": 0.0, "robustness": 1.0, "shape_bias": 1.0})
    assert per_class["cat"] == pytest.approx(
        {"n": 2, "shape_accuracy": 0.5, "texture_accuracy": 0.5, "robustness": 0.5, "shape_bias": 0.5})


def test_each_image_uses_its_own_texture(tmp_path):
    # Same shape, different textures: a stale texture label would count the second as a texture decision.
    items = [ConflictImage(tmp_path / "a.png", "car", "dog"), ConflictImage(tmp_path / "b.png", "car", "cat")]
    metrics = cue_conflict_metrics(items, ["dog", "dog"])
    assert metrics["texture_accuracy"] == 0.5 and metrics["robustness"] == 0.5 and metrics["shape_bias"] == 0.0
    neither = cue_conflict_metrics(items, ["oven", "oven"])
    assert math.isnan(neither["shape_bias"]) and neither["robustness"] == 1.0


def test_metric_input_errors(stimuli):
    items = read_cue_conflict(stimuli)
    with pytest.raises(ValueError, match="8 images but 7 predictions"):
        cue_conflict_metrics(items, ["cat"] * 7)
    with pytest.raises(ValueError, match="not categories"):
        cue_conflict_metrics(items, ["Cat"] * 8)


@pytest.mark.parametrize("folder, name, message", [
    ("airplane", "airplane1_bicycle2.png", "expected a file named"),
    ("airplane", "airplane1-bicycle2.jpg", "expected a file named"),
    ("airplane", "notes.txt", "expected a file named"),
    ("airplane", "cat1-bicycle2.png", "shape 'cat' in the name differs from its folder 'airplane'"),
    ("airplane", "airplane1-zebra2.png", "texture 'zebra' is not a category"),
    ("zebra", "zebra1-cat1.png", "folder name is not a category"),
])
def test_layout_errors(stimuli, folder, name, message):
    (stimuli / folder).mkdir(exist_ok=True)
    (stimuli / folder / name).touch()
    with pytest.raises(ValueError, match=message) as error:
        read_cue_conflict(stimuli)
    assert str(stimuli / folder) in str(error.value)


def test_missing_or_empty_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_cue_conflict(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no cue-conflict images"):
        read_cue_conflict(tmp_path / "empty")
    assert "zebra" not in CATEGORIES
