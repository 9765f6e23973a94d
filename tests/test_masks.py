"""Invariants of continuous-sparsification masks and discovery."""

import pytest
import torch
from torch import nn

from subtask_induction.method.discovery import MaskSearch, discover_subnetwork
from subtask_induction.method.masks import (attach_masks, beta_after, find_masks, hard_masks, hard_masks_on,
                                            kept_fraction, l0_penalty)


def small_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))


def test_beta_reaches_final_exactly_and_starts_at_one():
    for epochs in (1, 3, 7, 50, 100):
        assert beta_after(0, epochs, 100) == 1.0
        assert beta_after(epochs, epochs, 100) == 100.0
        values = [beta_after(e, epochs, 100) for e in range(epochs + 1)]
        assert values == sorted(values)
    with pytest.raises(ValueError):
        beta_after(4, 3, 100)


def test_masks_on_linear_conv_and_hf_conv1d(tiny_gpt2):
    net = small_net()
    masks = attach_masks(net, ["0.weight", "2.weight"])
    assert set(find_masks(net)) == {"0.weight", "2.weight"}
    assert net(torch.randn(2, 1, 6, 6)).shape == (2, 2)
    gpt = tiny_gpt2()
    attach_masks(gpt, ["transformer.h.0.attn.c_attn.weight"])
    assert gpt(input_ids=torch.tensor([[1, 2, 20, 3]])).logits.shape == (1, 4, 21)
    assert [p for p in net.parameters() if p.requires_grad] == [m.logits for m in masks.values()]


def test_unknown_weight_name_is_named():
    with pytest.raises(KeyError, match="nonexistent"):
        attach_masks(small_net(), ["nonexistent.weight"])


def test_hard_mask_is_logits_above_zero_and_applied_in_forward():
    net = small_net()
    original = net[2].weight.detach().clone()
    masks = attach_masks(net, ["2.weight"])
    torch.manual_seed(1)
    masks["2.weight"].logits.data = torch.randn_like(original)
    expected = masks["2.weight"].logits.detach() > 0
    assert torch.equal(hard_masks(masks)["2.weight"], expected)
    with hard_masks_on(masks):
        assert torch.equal(net[2].weight, original * expected)
    for mask in masks.values():
        mask.beta = 3.0
    assert torch.allclose(net[2].weight, original * torch.sigmoid(3.0 * masks["2.weight"].logits))


def test_l0_penalty_is_unnormalised_sum_of_soft_masks():
    net = small_net()
    masks = attach_masks(net, ["0.weight", "2.weight"], init=0.3)
    for mask in masks.values():
        mask.beta = 2.0
    net(torch.randn(1, 1, 6, 6))
    total = sum(torch.sigmoid(2.0 * m.logits).sum() for m in masks.values())
    assert torch.allclose(l0_penalty(masks), total)


def test_kept_fraction_per_tensor_and_overall():
    result = kept_fraction({"a": torch.tensor([True, False, False, False]), "b": torch.ones(4, dtype=torch.bool)})
    assert result["per_tensor"] == {"a": 0.25, "b": 1.0}
    assert result["overall"] == 5 / 8 and result["kept"] == 5 and result["total"] == 8


def test_discovery_trains_only_logits_and_ends_at_beta_final():
    net = small_net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    torch.manual_seed(0)
    x, y = torch.randn(64, 1, 6, 6), torch.randint(0, 2, (64,))
    loss = lambda model, batch: nn.functional.cross_entropy(model(batch[0]), batch[1])  # noqa: E731
    evaluate = lambda model: {"eval_accuracy": float((model(x).argmax(1) == y).float().mean())}  # noqa: E731
    binary, result = discover_subnetwork(net, ["0.weight", "2.weight"], loss, lambda e: [(x, y)], evaluate,
                                         MaskSearch(4, 0.05, 1e-3, beta_final=100))
    live = find_masks(net)
    assert all(mask.beta == 100.0 for mask in live.values())
    assert [record["beta"] for record in result.history][-1] == 100.0
    for name in ("0.weight", "2.weight"):
        module_index = name.split(".")[0]
        original = net.get_submodule(module_index).parametrizations.weight.original
        assert torch.equal(original, before[name])
        assert binary[name].dtype == torch.bool and binary[name].shape == before[name].shape
    assert any(not torch.equal(m.logits, torch.full_like(m.logits, -0.1)) for m in live.values())
