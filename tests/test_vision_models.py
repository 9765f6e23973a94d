"""timm classifiers: local pretrained weights, the 1000 -> 16 map, which weights get masks; the world."""

import itertools
import numpy as np
import pytest
import torch

from subtask_induction.vision.cue_conflict import read_cue_conflict
from subtask_induction.vision.classes import CATEGORIES
from subtask_induction.vision.models import (Classifier, build_classifier, head_parameter_names,
                                             load_pretrained_classifier, masked_weight_names)
from subtask_induction.vision.world import draw, generate_world, texture_colours

SPEC = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}


def test_pretrained_weights_come_from_a_local_file(tmp_path):
    source = build_classifier(SPEC, seed=3)
    path = tmp_path / "weights.pth"
    torch.save(source.net.state_dict(), path)
    loaded = load_pretrained_classifier(SPEC, path)
    fresh = build_classifier(SPEC, seed=4)
    for name, value in source.net.state_dict().items():
        assert torch.equal(loaded.net.state_dict()[name], value), name
    assert not torch.equal(fresh.net.conv1.weight, source.net.conv1.weight)
    images = torch.randint(0, 256, (2, 3, 16, 16), dtype=torch.uint8)
    source.eval(), loaded.eval()
    assert torch.allclose(source(images), loaded(images))


def test_missing_or_mismatched_weight_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.pth"):
        load_pretrained_classifier(SPEC, tmp_path / "nothing.pth")
    path = tmp_path / "other.pth"
    torch.save(build_classifier({**SPEC, "model_kwargs": {"channels": [8, 8, 8, 8]}}, 0).net.state_dict(), path)
    with pytest.raises(ValueError, match="other.pth"):
        load_pretrained_classifier(SPEC, path)


def test_a_1000_way_network_is_mapped_to_16_categories_by_member_mean():
    model = build_classifier({**SPEC, "num_outputs": 1000}, seed=0).eval()
    images = torch.randint(0, 256, (3, 3, 16, 16), dtype=torch.uint8)
    log_probs = model(images)
    assert log_probs.shape == (3, 16)
    probs = torch.softmax(model.net((images.float() / 255 - model.mean) / model.std), -1)
    airplane = CATEGORIES.index("airplane")  # one member class, ImageNet index 404
    assert torch.allclose(log_probs[:, airplane].exp(), probs[:, 404], rtol=1e-4)
    with pytest.raises(ValueError, match="at least 2 outputs"):  # any other count is a run's own classes (folder source)
        Classifier(build_classifier(SPEC, 0).net, 1)


def test_masks_go_on_every_layer_but_the_classifier():
    model = build_classifier(SPEC, seed=0)
    names = masked_weight_names(model)
    assert "net.conv1.weight" in names and "net.layer4.1.conv2.weight" in names
    assert "net.fc.weight" not in names and head_parameter_names(model) == ["net.fc.weight", "net.fc.bias"]
    assert all(dict(model.named_parameters())[n].ndim >= 2 for n in names)  # no norm or bias vectors


def test_world_layout_determinism_and_texture_means(tmp_path):
    counts = generate_world(tmp_path / "a", image_size=16, per_class={"pretrain": 2, "test": 1},
                            texture_match={"pretrain": 1.0, "test": 1.0}, conflict_per_texture=1, seed=0)
    generate_world(tmp_path / "b", image_size=16, per_class={"pretrain": 2, "test": 1},
                   texture_match=1.0, conflict_per_texture=1, seed=0)
    assert counts == {"pretrain": 32, "discovery": 0, "train": 0, "eval": 0, "test": 16, "cue_conflict": 256}
    assert sorted(p.name for p in (tmp_path / "a/pretrain").iterdir()) == list(CATEGORIES)
    for path in (tmp_path / "a").rglob("*.png"):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()
    conflict = read_cue_conflict(tmp_path / "a/cue_conflict")
    assert len(conflict) == 256 and sum(c.shape == c.texture for c in conflict) == 16
    for texture in range(16):  # complementary colours: a texture's mean is mid-grey, so pooling removes it
        first, second = texture_colours(texture)
        assert np.allclose((first + second) / 2, 0.5)
    with pytest.raises(ValueError, match="texture_match"):
        generate_world(tmp_path / "c", image_size=16, per_class={"test": 1}, texture_match=1.5,
                       conflict_per_texture=1, seed=0)


def test_world_images_differ_by_shape_and_texture():
    a = draw(0, 0, 32, np.random.default_rng(0))
    b = draw(1, 0, 32, np.random.default_rng(0))
    c = draw(0, 1, 32, np.random.default_rng(0))
    assert a.shape == (32, 32, 3) and a.dtype == np.uint8
    assert not np.array_equal(a, b) and not np.array_equal(a, c)


def test_world_textures_are_pairwise_distinct_up_to_phase_and_inversion():
    from subtask_induction.vision.world import TEXTURE_TILES, texture_pattern
    patterns = [texture_pattern(k, 8) for k in range(len(TEXTURE_TILES))]
    assert len(patterns) == 16 and all(p.mean() == 0.5 for p in patterns)
    for i, j in itertools.combinations(range(16), 2):
        for dy, dx in itertools.product(range(8), range(8)):
            shifted = np.roll(patterns[j], (dy, dx), axis=(0, 1))
            assert not np.array_equal(patterns[i], shifted), f"textures {i} and {j} differ only in phase"
            assert not np.array_equal(patterns[i], ~shifted), f"textures {i} and {j} differ only by inversion"


def test_world_texture_scale_sets_the_pattern_size(tmp_path):
    from subtask_induction.vision.world import texture_pattern
    for scale in (1, 2, 3):
        row = texture_pattern(1, 24, scale=scale)[0].astype(int)  # vertical 1-cell stripes
        assert set(np.diff(np.flatnonzero(np.diff(row)))) == {scale}
    with pytest.raises(ValueError, match="texture_scale"):
        generate_world(tmp_path, image_size=16, per_class={"test": 1}, texture_match=1.0,
                       conflict_per_texture=1, seed=0, texture_scale=0)


def test_world_texture_contrast_keeps_the_grey_mean(tmp_path):
    for contrast in (0.1, 0.45):
        for texture in range(16):
            first, second = texture_colours(texture, contrast)
            assert np.allclose((first + second) / 2, 0.5)
            assert np.abs(first - 0.5).max() <= contrast + 1e-12 and np.abs(first - 0.5).max() > 0.8 * contrast
    faint = draw(0, 3, 32, np.random.default_rng(0), texture_contrast=0.1).astype(float) / 255
    vivid = draw(0, 3, 32, np.random.default_rng(0), texture_contrast=0.45).astype(float) / 255
    inside = np.abs(faint - vivid).max(axis=2) > 0.05      # same draw but for the texture: the object's pixels
    assert inside.sum() > 50 and np.abs(faint[inside] - 0.5).max() < 0.1 + 0.08   # + pixel noise
    assert np.abs(vivid[inside] - 0.5).max() > 0.3
    with pytest.raises(ValueError, match="texture_contrast"):
        generate_world(tmp_path, image_size=16, per_class={"test": 1}, texture_match=1.0,
                       conflict_per_texture=1, seed=0, texture_contrast=0.0)


def test_a_channels_last_classifier_computes_what_nchw_computes_and_saves_alike(tmp_path):
    """The layout changes only the order of the convolutions' sums: the same weights give the same answers within
    float error, one training step moves them alike, the file holds the same tensors (the input alone is laid out),
    and a spec without the key (an older run's model file) stays NCHW."""
    from subtask_induction.vision.models import load_classifier, save_classifier
    images = torch.randint(0, 256, (8, 3, 16, 16), dtype=torch.uint8)
    labels = torch.arange(8)
    nchw, nhwc = build_classifier(SPEC, seed=1), build_classifier({**SPEC, "memory_format": "channels_last"}, seed=1)
    assert nchw.normalise(images).is_contiguous()
    assert nhwc.normalise(images).is_contiguous(memory_format=torch.channels_last)
    assert not nhwc.normalise(images).is_contiguous()
    for model in (nchw, nhwc):
        optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
        torch.nn.functional.nll_loss(model(images), labels).backward()
        optimiser.step()
    for name, value in nchw.net.state_dict().items():
        assert torch.allclose(nhwc.net.state_dict()[name], value, atol=1e-5), name
    nchw.eval(), nhwc.eval()
    assert torch.allclose(nchw(images), nhwc(images), atol=1e-4)
    torch.save(save_classifier(nhwc, {**SPEC, "memory_format": "channels_last"}), tmp_path / "m.pt")
    loaded, spec = load_classifier(tmp_path / "m.pt")
    assert spec["memory_format"] == "channels_last" and loaded.memory_format == torch.channels_last
    assert all(value.is_contiguous() for value in save_classifier(nhwc, SPEC)["state_dict"].values())
    assert build_classifier(SPEC, seed=1).memory_format == torch.contiguous_format
    with pytest.raises(ValueError, match="memory_format 'nhwc'"):
        build_classifier({**SPEC, "memory_format": "nhwc"}, seed=1)
