"""Arithmetic -> vision (issue 48 item 1): the GPT-2's matrices land transposed in the matching ViT matrices, and
TransferPlan freezes exactly the masked entries of them (subnetwork), a count-matched draw of them (sampled), or
the same count of a second fresh ViT's weights.

Why a straight transpose is the right layout: Conv1D stores (in, out), nn.Linear (out, in); GPT2Attention splits
c_attn's output into [q | k | v] and views each as (heads, head_dim), timm's Attention reshapes qkv's output as
(3, num_heads, head_dim), and both merge heads head-major before the output projection. The block test below
checks it as a function: a ViT block given the GPT-2 layer's weights, biases and norms computes the GPT-2
layer's output (causally, as GPT-2 attends)."""

import pytest
import torch
import torch.nn.functional as F

from subtask_induction.arithmetic.model import build_gpt2, masked_weight_names
from subtask_induction.method.masks import split_name
from subtask_induction.method.transfer import TransferPlan
from subtask_induction.vision.cross_domain import MATRIX_MAP, cross_domain_base, matrix_names, vit_spec
from subtask_induction.vision.models import build_classifier
from subtask_induction.vision.models import masked_weight_names as vit_masked_names

LAYERS, SIZE = 2, 8


@pytest.fixture(scope="module")
def gpt2():
    return build_gpt2(19, LAYERS, {"n_embd": 16, "n_head": 2, "n_inner": 64, "dropout": 0.0}, seed=0).eval()


@pytest.fixture(scope="module")
def spec(gpt2):
    return vit_spec(gpt2.config, SIZE, 16)


@pytest.fixture(scope="module")
def gpt2_masks(gpt2):
    generator = torch.Generator().manual_seed(0)
    return {name: torch.rand(gpt2.get_parameter(name).shape, generator=generator) < 0.3
            for name in masked_weight_names(gpt2)}


def effective(model, name):
    """The weight the forward pass uses (after any parametrization)."""
    return getattr(*split_name(model, name)).detach().clone()


def pairs():
    return [(gpt2_name.format(i=i), "net." + vit_name.format(i=i))
            for i in range(LAYERS) for gpt2_name, vit_name in MATRIX_MAP.items()]


def one_step(model):
    """One plain SGD step on a random batch of uint8 images."""
    torch.manual_seed(5)
    images, labels = torch.randint(0, 256, (8, 3, SIZE, SIZE), dtype=torch.uint8), torch.randint(0, 16, (8,))
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0)
    F.nll_loss(model(images), labels).backward()
    optimizer.step()


def test_every_gpt2_matrix_lands_transposed_in_its_vit_matrix(gpt2, spec, gpt2_masks):
    vit = build_classifier(spec, seed=0)
    base, masks = cross_domain_base(gpt2.state_dict(), gpt2_masks, vit)
    assert len(pairs()) == 4 * LAYERS and dict(pairs()) == matrix_names(LAYERS)
    for gpt2_name, vit_name in pairs():
        weight = gpt2.get_parameter(gpt2_name)
        assert base.get_parameter(vit_name).shape == weight.t().shape == vit.get_parameter(vit_name).shape
        assert torch.equal(base.get_parameter(vit_name), weight.t())
        assert torch.equal(masks[vit_name], gpt2_masks[gpt2_name].t())
    # the masks cover exactly the block matrices (the vision family's masked names but the patch embedding)
    assert set(masks) == set(vit_masked_names(vit)) - {"net.patch_embed.proj.weight"}
    copied = set(matrix_names(LAYERS).values())
    for name, value in base.state_dict().items():  # everything else is the ViT's own, and the ViT is untouched
        if name not in copied:
            assert torch.equal(value, vit.state_dict()[name]), name
    qkv = "net.blocks.0.attn.qkv.weight"
    assert not torch.equal(vit.get_parameter(qkv), base.get_parameter(qkv))


def test_a_vit_block_with_the_gpt2_layer_computes_the_gpt2_layer(gpt2, spec, gpt2_masks):
    base, _ = cross_domain_base(gpt2.state_dict(), gpt2_masks, build_classifier(spec, seed=0))
    ids = torch.randint(0, 20, (3, 4), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        hidden = gpt2(input_ids=ids, output_hidden_states=True).hidden_states
        for i in range(LAYERS):
            block, layer = base.net.blocks[i].eval(), gpt2.transformer.h[i]
            # the copy moves matrices only; the rest of the layer is set here to compare functions
            for ours, theirs in ((block.attn.qkv, layer.attn.c_attn), (block.attn.proj, layer.attn.c_proj),
                                 (block.mlp.fc1, layer.mlp.c_fc), (block.mlp.fc2, layer.mlp.c_proj)):
                ours.bias.copy_(theirs.bias)
            for ours, theirs in ((block.norm1, layer.ln_1), (block.norm2, layer.ln_2)):
                ours.weight.copy_(theirs.weight), ours.bias.copy_(theirs.bias)
                ours.eps = theirs.eps
            # q, k, v per head, as each model splits its own projection
            x = layer.ln_1(hidden[i])
            q, k, v = (part.view(3, 4, 2, 8).transpose(1, 2) for part in layer.attn.c_attn(x).split(16, dim=2))
            timm_q, timm_k, timm_v = block.attn.qkv(x).reshape(3, 4, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
            for theirs, ours in ((q, timm_q), (k, timm_k), (v, timm_v)):
                torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-6)
            out = block(hidden[i], is_causal=True)
            if i == LAYERS - 1:  # the last hidden state HF returns has ln_f applied
                out = gpt2.transformer.ln_f(out)
            torch.testing.assert_close(out, hidden[i + 1], rtol=1e-5, atol=1e-5)


def test_subnetwork_freezes_exactly_the_masked_gpt2_entries(gpt2, spec, gpt2_masks):
    base, masks = cross_domain_base(gpt2.state_dict(), gpt2_masks, build_classifier(spec, seed=0))
    fresh = build_classifier(spec, seed=1)
    fresh_before = {name: value.clone() for name, value in fresh.state_dict().items()}
    plan = TransferPlan.from_settings({"kind": "subnetwork", "lr_scale": 0, "inherit_unmasked": False})
    model = plan.build(base, fresh, masks, torch.Generator().manual_seed(2))
    before = {}
    for gpt2_name, vit_name in pairs():
        weight, mask = effective(model, vit_name), masks[vit_name]
        assert torch.equal(weight[mask], gpt2.get_parameter(gpt2_name).t()[mask])
        assert torch.equal(weight[~mask], fresh_before[vit_name][~mask])
        before[vit_name] = weight
    for name in ("net.pos_embed", "net.patch_embed.proj.weight", "net.blocks.0.norm1.weight", "net.head.weight",
                 "net.blocks.0.attn.qkv.bias"):  # fresh, not the base's
        assert torch.equal(effective(model, name), fresh_before[name]), name
    one_step(model)
    for _, vit_name in pairs():
        after, mask = effective(model, vit_name), masks[vit_name]
        assert torch.equal(after[mask], before[vit_name][mask])
        assert (after[~mask] != before[vit_name][~mask]).float().mean() > 0.9, vit_name


def test_sampled_controls_keep_the_counts_and_freeze_their_base_at_their_own_positions(gpt2, spec, gpt2_masks):
    base, masks = cross_domain_base(gpt2.state_dict(), gpt2_masks, build_classifier(spec, seed=0))
    plan = TransferPlan.from_settings({"kind": "sampled", "lr_scale": 0, "inherit_unmasked": False})
    # the GPT-2's weights at random positions; then a second fresh ViT's weights, the same count
    other = build_classifier(spec, seed=3)
    for source, generator_seed in ((base, 4), (other, 5)):
        model = plan.build(source, build_classifier(spec, seed=1), masks, torch.Generator().manual_seed(generator_seed))
        moved = False
        for gpt2_name, vit_name in pairs():
            gamma = model.get_submodule(vit_name.rsplit(".", 1)[0]).parametrizations.weight[0].gamma
            assert int(gamma.sum()) == int(masks[vit_name].sum())
            assert torch.equal(effective(model, vit_name)[gamma], source.get_parameter(vit_name)[gamma])
            moved |= not torch.equal(gamma, masks[vit_name])
        assert moved
    gpt2_weight = gpt2.get_parameter("transformer.h.0.attn.c_attn.weight").t()
    assert not torch.equal(other.get_parameter("net.blocks.0.attn.qkv.weight"), gpt2_weight)


def test_a_spec_that_matches_and_clear_errors_when_it_does_not(gpt2, spec, gpt2_masks):
    assert spec["model_kwargs"] | {"img_size": 8} == {"img_size": 8, "embed_dim": 16, "depth": LAYERS, "num_heads": 2,
                                                      "mlp_ratio": 4.0, "qkv_bias": True, "act_layer": "gelu_tanh"}
    state = gpt2.state_dict()
    with pytest.raises(ValueError, match="layers"):
        shallow = build_classifier({**spec, "model_kwargs": {**spec["model_kwargs"], "depth": 1}}, 0)
        cross_domain_base(state, gpt2_masks, shallow)
    with pytest.raises(ValueError, match=r"transformer\.h\.1\.mlp\.c_fc\.weight"):
        cross_domain_base({k: v for k, v in state.items() if k != "transformer.h.1.mlp.c_fc.weight"}, gpt2_masks,
                          build_classifier(spec, 0))
    wide = build_classifier({**spec, "model_kwargs": {**spec["model_kwargs"], "mlp_ratio": 2.0}}, 0)
    with pytest.raises(ValueError, match=r"transformer\.h\.0\.mlp\.c_fc\.weight"):
        cross_domain_base(state, gpt2_masks, wide)
