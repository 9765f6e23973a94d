"""Beyond the paper in the vision family (config/beyond.yaml, config/beyond/): shape bias by augmentation (texture_swap, the
training images re-rendered with textures no class uses) and a subnetwork discovered without labels."""

import copy
import itertools
import json
import time

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from harness import clone_run, effective_config, smoke_config, snakemake, work_done, write_config
from subtask_induction.method.masks import load_subnetwork
from subtask_induction.steps import vision_base, vision_discover, vision_pool, vision_texture_swap, vision_world
from subtask_induction.vision.classes import CATEGORIES
from subtask_induction.vision.world import POOL, POOL_TILES, TEXTURE_TILES, texture_colours, texture_pattern

DATA = {"image_size": 16, "in_memory": True, "resize": None, "workers": 0}
WORLD = {"seed": 0, "image_size": 16, "conflict_per_texture": 1, "texture_match": 0.9, "max_rotation_deg": 45,
         "min_scale": 0.6, "per_class": {"pretrain": 4, "discovery": 2, "train": 2, "eval": 2, "test": 1}}
BEYOND = {"texture_swap": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "data": "texture_swap",
                           "trainable": "all"},
          "texture_swap_finetune": {"kind": "full", "lr_scale": 0.0, "inherit_unmasked": True,
                                    "data": "texture_swap", "trainable": "all"},
          "si_label_free": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
                            "trainable": "all", "discovery": "label_free"},
          # arithmetic -> vision at 2 images per class: the smoke GPT-2's subnetwork, and a fresh ViT's weights
          "vit_gpt2_si_2": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
                            "trainable": "all", "cross_domain": "gpt2", "train_per_class": 2},
          "vit_fresh_frozen_2": {"kind": "sampled", "lr_scale": 0.0, "inherit_unmasked": False,
                                 "data": "originals", "trainable": "all", "cross_domain": "fresh",
                                 "train_per_class": 2}}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("beyond")
    vision_world.main(["--settings", json.dumps(WORLD), "--out", str(root / "world")])
    return root


def test_pool_textures_are_used_by_no_class_and_no_cue_conflict_stimulus():
    patterns = [texture_pattern(k, 8) for k in range(len(TEXTURE_TILES) + len(POOL_TILES))]
    assert list(POOL) == list(range(16, 24)) and all(p.mean() == 0.5 for p in patterns)  # mid-grey when pooled
    for i, j in itertools.product(POOL, range(len(patterns))):  # a pool tile equals no other tile up to phase/inversion
        if i == j:
            continue
        for dy, dx in itertools.product(range(8), range(8)):
            shifted = np.roll(patterns[j], (dy, dx), axis=(0, 1))
            assert not np.array_equal(patterns[i], shifted) and not np.array_equal(patterns[i], ~shifted), (i, j)
    class_colours = np.array([texture_colours(k)[0] for k in range(16)])
    for k in POOL:  # hues half-way between the classes': no pool colour is a class colour
        first, second = texture_colours(k)
        assert np.allclose((first + second) / 2, 0.5)
        assert np.abs(class_colours - first).max(axis=1).min() > 0.05


def test_texture_swap_keeps_each_image_shape_label_and_pose_and_draws_a_pool_texture(world, tmp_path):
    out = tmp_path / "swap"
    vision_texture_swap.main(["--world", str(world / "world"), "--settings", json.dumps({**WORLD, "split": "train"}),
                              "--out", str(out)])
    manifest = json.loads((out / "manifest.json").read_text())
    originals = sorted((world / "world/train").rglob("*.png"))
    swapped = sorted((out / "train").rglob("*.png"))
    assert [p.relative_to(out / "train") for p in swapped] == [p.relative_to(world / "world/train") for p in originals]
    assert manifest["images"] == len(originals) == 16 * 2
    colours = [texture_colours(k) for k in range(len(TEXTURE_TILES) + len(POOL_TILES))]
    for original_path, swapped_path in zip(originals, swapped):
        original = np.asarray(Image.open(original_path)).astype(float) / 255
        swap = np.asarray(Image.open(swapped_path)).astype(float) / 255
        same = (original == swap).all(axis=2)
        assert same.mean() > 0.2  # the background (and its noise) is the original's: same pose, same place
        changed = np.abs(original - swap).max(axis=2) > 0.15   # object pixels whose colour the swap changed
        assert changed.sum() >= 5
        # the object's colours are those of the recorded pool texture, nearer than any class texture's
        distance = [np.minimum(np.abs(swap[changed] - a).max(axis=1), np.abs(swap[changed] - b).max(axis=1)).mean()
                    for a, b in colours]
        recorded = manifest["pool_textures"][f"train/{swapped_path.relative_to(out / 'train')}"]
        assert int(np.argmin(distance)) == len(TEXTURE_TILES) + recorded
    assert len(set(manifest["pool_textures"].values())) > 4  # drawn from the whole pool


def test_texture_swap_refuses_a_world_made_with_other_settings(world, tmp_path):
    with pytest.raises(ValueError, match="is not the image these world settings draw"):
        vision_texture_swap.main(["--world", str(world / "world"), "--out", str(tmp_path / "swap"),
                                  "--settings", json.dumps({**WORLD, "seed": 1, "split": "train"})])


def _discover(world, out, init, scramble_labels, monkeypatch):
    """One epoch of discovery; scramble_labels: every split's labels replaced by a permutation of the classes
    (test and cue-conflict, which are reported, never selected on, keep theirs)."""
    from subtask_induction.steps import vision_discover as step

    opened = step.open_split

    def open_split(roots, data, name, classes):
        images = opened(roots, data, name, classes)
        if scramble_labels:
            images.labels = (images.labels + 5) % len(CATEGORIES)
        return images

    monkeypatch.setattr(step, "open_split", open_split)
    settings = {"chain": 0, "data": DATA, "eval_batch_size": 64,
                "discovery": {"epochs": 3, "batch_size": 16, "lr": 0.05, "beta_final": 100, "mask_init": 0.05},
                "originals": {"discovery": str(world / "world/discovery"), "eval": str(world / "world/eval")}}
    vision_discover.main(["--base", str(world / "base.pt"), "--init", init,
                          "--pooled-train", str(world / "pooled/discovery"), "--pooled-eval", str(world / "pooled/eval"),
                          "--test", str(world / "world/test"), "--pooled-test", str(world / "pooled/test"),
                          "--device", "cpu", "--checkpoint-interval-s", "0", "--l0-weight", "1e-4", "--settings", json.dumps(settings),
                          "--identity", json.dumps({"family": "vision", "stage": "discovery", "init": init}),
                          "--out-subnetwork", str(out / "subnetwork.pt"), "--out-metrics", str(out / "metrics.json")])
    return load_subnetwork(out / "subnetwork.pt"), json.loads((out / "metrics.json").read_text())


def scores(run):
    return [{k: v for k, v in point.items() if k != "seconds"} for point in run[1]["curve"]]


def test_label_free_discovery_reads_no_label(world, tmp_path, monkeypatch):
    for split in ("discovery", "eval", "test"):
        vision_pool.main(["--images", str(world / "world" / split), "--shard", "0", "--shards", "1", "--settings",
                          json.dumps({"seed": 0, "min_area": 4, "segmenter": {"kind": "colour_regions", "clusters": 3,
                                                                               "blur_radius": 1}}),
                          "--device", "cpu", "--out", str(world / "pooled" / split)])
    vision_base.main(["--train", str(world / "world/pretrain"), "--eval", str(world / "world/eval"),
                      "--test", str(world / "world/test"), "--pooled-test", str(world / "pooled/test"),
                      "--device", "cpu", "--checkpoint-interval-s", "0", "--out-model", str(world / "base.pt"),
                      "--out-metrics", str(world / "base.json"), "--identity", '{"family": "vision", "stage": "base"}',
                      "--settings", json.dumps({"chain": 0, "data": DATA, "eval_batch_size": 64,
                                                "model": {"spec": {"arch": "resnet18", "num_outputs": 16,
                                                                   "model_kwargs": {"channels": [4, 8, 8, 8]}},
                                                          "weights": None},
                                                "training": {"epochs": 2, "batch_size": 32, "lr": 0.05}})])
    runs = {}
    for init, scramble in itertools.product(("label_free", "pretrained"), (False, True)):
        out = tmp_path / f"{init}{scramble}"
        out.mkdir()
        runs[init, scramble] = _discover(world, out, init, scramble, monkeypatch)
    free, free_scrambled = runs["label_free", False], runs["label_free", True]
    assert free[0]["masks"].keys() == free_scrambled[0]["masks"].keys()
    assert all(torch.equal(free[0]["masks"][k], free_scrambled[0]["masks"][k]) for k in free[0]["masks"])
    assert 0 < free[1]["metrics"]["kept_fraction"] < 0.95  # discovery moved the masks
    assert scores(free) == scores(free_scrambled)  # the same losses, and the epoch selected on the same scores
    assert free[1]["metrics"]["eval_targets"] == "base answers on the originals"
    # the check can fail: the labelled discovery, given scrambled labels, finds another subnetwork
    labelled, labelled_scrambled = runs["pretrained", False], runs["pretrained", True]
    assert scores(labelled) != scores(labelled_scrambled)
    assert labelled[1]["metrics"]["eval_targets"] == "labels"


def test_beyond_vision_variants_run_on_a_finished_default_and_train_only_what_is_new(smoke_run, tmp_path):
    """As `make beyond` adds them: the texture swap, the label-free discovery, the arithmetic -> vision bases and
    the five new transfers run (the architectural rival needs 32 px images: its own test); nothing of the finished default retrains; the tables hold the new rows, the
    label-free overlap and the new comparisons (the cross-domain ones paired by training-set size)."""
    workdir = clone_run(smoke_run, tmp_path / "run")
    config = copy.deepcopy(smoke_config())
    config["vision"]["transfer"]["variants"].update(BEYOND)
    config["vision"]["cross_domain"] = {"layers": 1}   # the smoke GPT-2's depth
    config["vision"]["chains"] = [0]  # one chain keeps the test short; dropping chain 1 retrains nothing either
    write_config(workdir, config)
    started = time.time()
    time.sleep(1)
    result = snakemake(workdir, "--cores", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # the packs that ran say which points they trained; the points files of re-formed packs are local jobs
    ran = [rule for rule in work_done(result, workdir, started) if rule != "packed_points"]
    assert sorted(set(ran) - {"vision_aggregate", "vision_plots", "all", "resources_report"}) == sorted(
        {"vision_texture_swap", "vision_discover", "vision_select_subnetwork", "vision_transfer",
         "vision_cue_conflict", "vision_cross_domain"})  # the chains' cue-conflict scores, with the new models'
    assert ran.count("vision_cue_conflict") == 1 and ran.count("vision_cross_domain") == 1
    assert ran.count("vision_transfer") == 5 and ran.count("vision_discover") == 1  # the new ones only
    assert not {"vision_base", "vision_world", "vision_mean_pool"} & set(ran)
    summary = workdir / "results/vision/summary"
    runs = pd.read_csv(summary / "chains.csv")
    assert {"texture_swap", "texture_swap_finetune", "si_label_free", "subnetwork_label_free"} <= set(runs["model"])
    table2 = (summary / "table2.md").read_text()
    assert "Discovery without labels, per chain" in table2
    rows = [line for line in table2.splitlines() if line.startswith("| 0 | label_free")]
    # a Jaccard and its chance ("—" where neither mask keeps a weight, as the smoke run's can)
    assert len(rows) == 1 and all(len(row.split("|")) == 10 for row in rows)
    assert all(cell.strip() == "—" or 0 <= float(cell) <= 1 for row in rows for cell in row.split("|")[-3:-1])
    comparisons = (summary / "comparisons.md").read_text()
    for pair in ("si vs texture_swap", "texture_swap vs scratch", "texture_swap vs mixture", "si_label_free vs si",
                 "subnetwork_label_free vs subnetwork", "| cue_robustness |", "vit_gpt2_si_2 vs vit_fresh_frozen_2"):
        assert pair in comparisons
    # a size's pairs are compared on the world's own test images too (the sample-efficiency question); no other pair
    assert "| vit_gpt2_si_2 vs vit_fresh_frozen_2 | original_accuracy |" in comparisons
    assert [line for line in comparisons.splitlines() if "| original_accuracy |" in line and "vit_" not in line] == []
    cross = json.loads((workdir / "results/vision/chain0/transfer/vit_gpt2_si_2/metrics.json").read_text())
    copied = json.loads((workdir / "results/vision/chain0/cross_domain/metrics.json").read_text())
    assert cross["train_images"] == 16 * 2 and copied["spec"]["arch"] == "vit_world_patch4"
    assert copied["matrices"] == sorted(f"net.blocks.0.{m}.weight" for m in ("attn.qkv", "attn.proj", "mlp.fc1",
                                                                               "mlp.fc2"))
    transfer = json.loads((workdir / "results/vision/chain0/transfer/si_label_free/metrics.json").read_text())
    selected = json.loads((workdir / "results/vision/chain0/discovery/label_free/selected.json").read_text())
    assert "label_free" in selected["subnetwork"] and transfer["config"]["variant"]["discovery"] == "label_free"
    assert transfer["train_images"] == 16 * 3
    swap = json.loads((workdir / "results/vision/chain0/transfer/texture_swap/metrics.json").read_text())
    assert swap["config"]["variant"]["data"] == "texture_swap" and swap["train_images"] == 16 * 3


def test_texture_swap_needs_the_generated_world(tmp_path):
    from harness import copy_workflow
    config = smoke_config("vision")
    config["vision"]["data"]["source"] = "imagenet"
    config["vision"]["transfer"]["variants"].update(BEYOND)
    copy_workflow(tmp_path, config)
    result = snakemake(tmp_path, "-n", "--cores", "1")
    assert result.returncode != 0 and "data texture_swap re-renders the generated world" in result.stdout + result.stderr


def test_saved_models_compute_what_the_steps_evaluated():
    """The cue-conflict rule scores saved models: an SI transfer (parametrized: the frozen subnetwork folded into
    the saved weights) and a hard-mask subnetwork (the base with its masks multiplied in) must give the
    in-process model's outputs to the last bit, so moving that evaluation out of the training steps changes no number."""
    from subtask_induction.method.masks import apply_binary_masks, attach_masks, find_masks, hard_masks, hard_masks_on
    from subtask_induction.method.transfer import TransferPlan
    from subtask_induction.vision.models import build_classifier, load_classifier, masked_weight_names, save_classifier
    import tempfile

    spec = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}
    images = torch.randint(0, 256, (8, 3, 16, 16), dtype=torch.uint8)
    base = build_classifier(spec, 0).eval()
    masked = build_classifier(spec, 0).eval()
    masks = attach_masks(masked, masked_weight_names(masked), "continuous_sparsification", 0.0)
    for mask in masks.values():  # a mask keeping about half of each tensor
        mask.logits.data = torch.randn(mask.logits.shape, generator=torch.Generator().manual_seed(1))
    binary = hard_masks(find_masks(masked))
    with torch.no_grad(), hard_masks_on(find_masks(masked)):
        in_process = masked(images)
    with torch.no_grad():
        assert torch.equal(apply_binary_masks(build_classifier(spec, 0).eval(), binary)(images), in_process)
    si = TransferPlan("subnetwork", 0.0, False).build(base, build_classifier(spec, 1), binary, torch.Generator().manual_seed(2)).eval()
    with tempfile.TemporaryDirectory() as folder:
        torch.save(save_classifier(si, spec), f"{folder}/model.pt")
        loaded, _ = load_classifier(f"{folder}/model.pt")
    with torch.no_grad():
        assert torch.equal(loaded.eval()(images), si(images))


def test_the_architectural_rival_builds_from_the_config_and_trains_one_step(tmp_path):
    """config/beyond/blurpool.yaml's scratch_blurpool: the default's model with blur-pooled downsampling (a BlurPool2d at
    the stem and at every stride-2 block), the same weights' shapes as scratch, one step moves them, and the saved
    model (its layer given by name) loads back computing the same."""
    from timm.layers import BlurPool2d

    from subtask_induction.runtime import save_torch
    from subtask_induction.vision.models import build_classifier, load_classifier, save_classifier, variant_spec

    config = effective_config("config/config.yaml", "config/beyond/blurpool.yaml")["vision"]
    spec = {"arch": config["model"]["arch"], "num_outputs": 16, "model_kwargs": config["model"]["model_kwargs"]}
    variant = config["transfer"]["variants"]["scratch_blurpool"]
    rival, scratch = build_classifier(variant_spec(spec, variant), 0), build_classifier(spec, 0)
    blurs = [name for name, module in rival.net.named_modules() if isinstance(module, BlurPool2d)]
    assert blurs == ["maxpool.1", "layer2.0.aa", "layer3.0.aa", "layer4.0.aa"]
    assert not any(isinstance(module, BlurPool2d) for module in scratch.net.modules())
    assert {k: v.shape for k, v in rival.state_dict().items() if "filt" not in k} == \
        {k: v.shape for k, v in scratch.state_dict().items()}
    images, labels = torch.randint(0, 256, (4, 3, 32, 32), dtype=torch.uint8), torch.tensor([0, 1, 2, 3])
    before = [p.detach().clone() for p in rival.parameters()]
    optimizer = torch.optim.SGD(rival.parameters(), lr=0.1)
    loss = torch.nn.functional.nll_loss(rival(images), labels)
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss) and any(not torch.equal(a, b) for a, b in zip(before, rival.parameters()))
    save_torch(save_classifier(rival, variant_spec(spec, variant)), tmp_path / "model.pt")
    loaded, saved_spec = load_classifier(tmp_path / "model.pt")
    rival.eval(), loaded.eval()
    assert saved_spec["model_kwargs"]["aa_layer"] == "blurpool" and torch.allclose(loaded(images), rival(images))
