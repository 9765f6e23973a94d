"""A ViT and a GroupNorm ResNet (no BatchNorm statistics: config/groupnorm.yaml) through the vision family's
path: base -> pooled discovery -> transfer (SI and a baseline) -> cue-conflict scores, one epoch each on a tiny
generated world, through the steps the rules run."""

import json

import pytest

from subtask_induction.steps import (vision_base, vision_cue_conflict, vision_discover, vision_pool, vision_transfer,
                                     vision_world)

DATA = {"image_size": 16, "in_memory": True, "resize": None, "workers": 0}
# A timm VisionTransformer sized for 16 px (4 px patches: 16 tokens); the default's is sized for 32 px.
VIT = {"arch": "vit_tiny_patch16_224", "num_outputs": 16,
       "model_kwargs": {"img_size": 16, "patch_size": 4, "embed_dim": 32, "depth": 1, "num_heads": 2}}
# The ResNet of config/groupnorm.yaml, narrower: GroupNorm with one group keeps no running statistics.
GROUPNORM = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8], "norm_layer": "groupnorm1"}}
ARCHITECTURES = {"vit": (VIT, "adamw", 1e-3, "attn.qkv"), "groupnorm_resnet": (GROUPNORM, "sgd", 0.05, "layer1.0.conv1")}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("vit")
    vision_world.main(["--settings", json.dumps({"seed": 0, "image_size": 16, "conflict_per_texture": 1,
                                                 "texture_match": 0.9, "per_class": {"pretrain": 3, "discovery": 2,
                                                 "train": 2, "eval": 1, "test": 1}}), "--out", str(root / "world")])
    for split in ("discovery", "eval", "test"):
        vision_pool.main(["--images", str(root / "world" / split), "--shard", "0", "--shards", "1", "--settings",
                          json.dumps({"seed": 0, "min_area": 4, "segmenter": {"kind": "colour_regions", "clusters": 3,
                                                                               "blur_radius": 1}}),
                          "--device", "cpu", "--out", str(root / "pooled" / split)])
    return root


def evaluation_arguments(root):
    return ["--test", str(root / "world/test"), "--pooled-test", str(root / "pooled/test"), "--device", "cpu",
            "--checkpoint-interval-s", "0"]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_every_stage_of_the_vision_path_runs_on_a_vit_and_a_groupnorm_resnet(world, architecture, tmp_path):
    import torch

    from subtask_induction.vision.models import load_classifier

    spec, optimizer, lr, masked = ARCHITECTURES[architecture]
    out = tmp_path
    base = {"chain": 0, "data": DATA, "eval_batch_size": 64, "model": {"spec": spec, "weights": None},
            "training": {"epochs": 1, "batch_size": 16, "optimizer": optimizer, "lr": lr}}
    vision_base.main(["--train", str(world / "world/pretrain"), "--eval", str(world / "world/eval"),
                      "--settings", json.dumps(base), "--out-model", str(out / "base.pt"),
                      "--out-metrics", str(out / "base.json"), "--identity", '{"stage": "base"}',
                      *evaluation_arguments(world)])
    model, _ = load_classifier(out / "base.pt")
    has_batchnorm = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())
    assert not has_batchnorm  # neither keeps running statistics
    discovery = {"chain": 0, "data": DATA, "eval_batch_size": 64,
                 "discovery": {"epochs": 1, "batch_size": 16, "lr": 0.05, "beta_final": 100, "mask_init": 1.0}}
    vision_discover.main(["--base", str(out / "base.pt"), "--init", "pretrained",
                          "--pooled-train", str(world / "pooled/discovery"), "--pooled-eval", str(world / "pooled/eval"),
                          "--l0-weight", "1e-8", "--settings", json.dumps(discovery), "--identity", '{"stage": "discovery"}',
                          "--out-subnetwork", str(out / "subnetwork.pt"), "--out-metrics", str(out / "discovery.json"),
                          *evaluation_arguments(world)])
    found = json.loads((out / "discovery.json").read_text())
    assert found["metrics"]["kept_fraction"] > 0.5  # from mask_init 1.0, one epoch keeps most of the network
    assert any(masked in name for name in found["kept_per_tensor"])  # masks reach attention / convolution weights
    assert not any("bn" in name or "norm" in name for name in found["kept_per_tensor"])  # never the norms' scales
    for variant in ({"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
                     "trainable": "all"},
                    {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals",
                     "trainable": "all"}):
        name = "si" if variant["kind"] == "subnetwork" else "scratch"
        settings = {"chain": 0, "data": DATA, "eval_batch_size": 64, "variant": variant,
                    "training": {"epochs": 1, "batch_size": 16, "optimizer": optimizer, "lr": lr}}
        vision_transfer.main(["--base", str(out / "base.pt"), "--subnetwork", str(out / "subnetwork.pt"),
                              "--train", str(world / "world/train"), "--eval", str(world / "world/eval"),
                              "--pooled-eval", str(world / "pooled/eval"),
                              "--identity", json.dumps({"family": "vision", "chain": 0, "variant": name}),
                              "--settings", json.dumps(settings), "--out", str(out / f"{name}.json"),
                              "--out-model", str(out / name / "model.pt"), *evaluation_arguments(world)])
    # the cue-conflict scores, from the saved models (their own rule in the workflow)
    vision_cue_conflict.main(["--cue-conflict", str(world / "world/cue_conflict"), "--base", str(out / "base.pt"),
                              "--subnetworks", str(out / "subnetwork.pt"),
                              "--transfers", str(out / "si/model.pt"), str(out / "scratch/model.pt"),
                              "--settings", json.dumps({"chain": 0, "data": DATA, "eval_batch_size": 64}),
                              "--device", "cpu", "--out", str(out / "cue_conflict.json")])
    scores = json.loads((out / "cue_conflict.json").read_text())["scores"]
    assert sorted(scores) == ["base", "discovery/pretrained/1e-08/subnetwork", "discovery/pretrained/1e-08/whole",
                              "transfer/scratch", "transfer/si"]
    assert all(0 <= score["shape_bias"] <= 1 and score["n_conflict"] == 16 * 15 for score in scores.values())


def test_the_world_vit_is_registered_with_timm_and_sized_for_32_px():
    import torch

    from subtask_induction.vision.models import build_classifier, masked_weight_names

    model = build_classifier({"arch": "vit_world_patch4", "num_outputs": 16, "model_kwargs": None}, seed=0)
    assert model.net.patch_embed.num_patches == 64  # 32 px in 4 px patches
    assert 0.3e6 < sum(p.numel() for p in model.parameters()) < 0.6e6  # near the quarter-width ResNet18's
    assert model(torch.zeros(2, 3, 32, 32, dtype=torch.uint8)).shape == (2, 16)
    assert any("attn.qkv" in name for name in masked_weight_names(model))
