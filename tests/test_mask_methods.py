"""The three mask methods behind one interface, the straight-through mask's two invariances, and packing."""

import pytest
import torch
from torch import nn

from harness import REPO

from subtask_induction.method.discovery import MaskSearch, discover_subnetwork
from subtask_induction.method.masks import (MASK_METHODS, attach_masks, find_masks, hard_masks, hard_masks_on,
                                            kept_fraction, l0_penalty, load_subnetwork, mask_parameters,
                                            masks_to_bits, save_subnetwork, masks_from_bits)

METHODS = sorted(MASK_METHODS)


def conv_linear_net(dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2)).to(dtype)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_on_linear_conv2d_and_hf_conv1d(method, tiny_gpt2):
    """Hard masks are binary, gradients reach the scores, the backbone's own weights never change."""
    for build, names, inputs, out in [
        (conv_linear_net, ["0.weight", "3.weight"], lambda: torch.randn(4, 1, 6, 6), lambda y: y.sum()),
        (tiny_gpt2, ["transformer.h.0.attn.c_attn.weight", "transformer.h.0.mlp.c_fc.weight"],
         lambda: torch.randint(0, 20, (4, 4)), None),
    ]:
        net = build()
        before = {k: v.clone() for k, v in net.state_dict().items()}
        masks = attach_masks(net, names, method)
        assert set(find_masks(net)) == set(names)
        assert [p for p in net.parameters() if p.requires_grad] == mask_parameters(masks)
        optimizer = torch.optim.SGD(mask_parameters(masks), lr=0.5)
        for _ in range(3):
            x = inputs()
            y = net(x) if out else net(input_ids=x).logits
            loss = y.square().mean() + 1e-3 * l0_penalty(masks)
            optimizer.zero_grad()
            loss.backward()
            assert all(m.scores.grad is not None and m.scores.grad.abs().sum() > 0 for m in masks.values())
            optimizer.step()
        binary = hard_masks(masks)
        for name in names:
            module = net.get_submodule(name.rsplit(".", 1)[0])
            assert torch.equal(module.parametrizations.weight.original, before[name])
            assert binary[name].dtype == torch.bool and binary[name].shape == before[name].shape
            with hard_masks_on(masks):
                assert torch.equal(module.weight, before[name] * binary[name])
        fractions = kept_fraction(binary)
        assert 0 <= fractions["overall"] <= 1 and fractions["off"] == pytest.approx(1 - fractions["overall"])


def test_straight_through_forward_mask_is_exactly_zero_or_one():
    net = conv_linear_net()
    masks = attach_masks(net, ["3.weight"], "straight_through", init=1.0, threshold=0.0)
    mask = masks["3.weight"]
    torch.manual_seed(3)
    mask.score.data = torch.randn_like(mask.score) * 1e-3 + 1e-7
    values = mask.training_mask()
    assert set(values.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(values.bool(), mask.hard_mask())


def test_straight_through_with_zero_learning_rate_leaves_the_backbone_unchanged(tiny_gpt2):
    backbone = tiny_gpt2()
    x = torch.randint(0, 20, (8, 4))
    reference = backbone(input_ids=x).logits.detach().clone()
    names = [n for n, p in backbone.named_parameters() if n.endswith("weight") and p.dim() == 2 and "wte" not in n
             and "wpe" not in n]
    masks = attach_masks(backbone, names, "straight_through", init=1.0, threshold=0.0)
    optimizer = torch.optim.SGD(mask_parameters(masks), lr=0.0)
    for _ in range(3):
        loss = backbone(input_ids=x).logits.square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert torch.equal(backbone(input_ids=x).logits, reference)


def _train_straight_through(init, threshold, lr, *, dtype, momentum=0.0, weight_decay=0.0, optimizer="sgd",
                            steps=25):
    """Hard masks of a straight-through run after every step (same data and backbone every call)."""
    net = conv_linear_net(dtype)
    masks = attach_masks(net, ["0.weight", "3.weight"], "straight_through", init=init, threshold=threshold)
    params = mask_parameters(masks)
    opt = (torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay) if optimizer == "sgd"
           else torch.optim.Adam(params, lr=lr))
    generator = torch.Generator().manual_seed(1)
    history = []
    for _ in range(steps):
        x = torch.randn(16, 1, 6, 6, generator=generator).to(dtype)
        target = torch.randint(0, 2, (16,), generator=generator)
        loss = nn.functional.cross_entropy(net(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(torch.cat([m.hard_mask().reshape(-1) for m in masks.values()]))
    return torch.stack(history)


@pytest.mark.parametrize("optimizer,momentum", [("sgd", 0.0), ("sgd", 0.9), ("adam", 0.0)])
def test_shifting_init_and_threshold_together_gives_the_same_masks(optimizer, momentum):
    lr = 50.0 if optimizer == "sgd" else 0.3  # large enough that masks flip back and forth
    reference = _train_straight_through(1.0, 0.0, lr, dtype=torch.float64, momentum=momentum, optimizer=optimizer)
    assert (~reference[-1]).sum() > 0, "no mask flipped: the test would prove nothing"
    for shift in (-3.0, 0.5, 7.25):
        shifted = _train_straight_through(1.0 + shift, shift, lr, dtype=torch.float64, momentum=momentum,
                                          optimizer=optimizer)
        assert torch.equal(shifted, reference), f"shift {shift}"
    moved = _train_straight_through(1.0 + 0.5, 0.0, lr, dtype=torch.float64, momentum=momentum, optimizer=optimizer)
    assert not torch.equal(moved, reference), "shifting the init alone should change the masks"


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_scaling_init_and_lr_by_a_power_of_two_gives_bit_identical_masks(momentum, weight_decay):
    reference = _train_straight_through(1.0, 0.0, 50.0, dtype=torch.float32, momentum=momentum,
                                        weight_decay=weight_decay)
    assert (~reference[-1]).sum() > 0, "no mask flipped: the test would prove nothing"
    for alpha in (0.25, 4.0, 1024.0):
        scaled = _train_straight_through(alpha, 0.0, 50.0 * alpha, dtype=torch.float32, momentum=momentum,
                                         weight_decay=weight_decay / alpha)
        assert torch.equal(scaled, reference), f"alpha {alpha}"
    lr_only = _train_straight_through(1.0, 0.0, 50.0 * 4.0, dtype=torch.float32, momentum=momentum,
                                      weight_decay=weight_decay)
    assert not torch.equal(lr_only, reference), "scaling the lr alone should change the masks"


def test_hard_concrete_l0_term_and_test_mask():
    net = conv_linear_net()
    masks = attach_masks(net, ["3.weight"], "hard_concrete", init=0.0)
    mask = masks["3.weight"]
    mask.log_alpha.data = torch.linspace(-3, 3, mask.log_alpha.numel()).reshape(mask.log_alpha.shape)
    net(torch.randn(2, 1, 6, 6))
    shift = (2 / 3) * torch.log(torch.tensor(0.1 / 1.1))
    assert torch.allclose(l0_penalty(masks), torch.sigmoid(mask.log_alpha - shift).sum())
    assert torch.equal(mask.hard_mask(), mask.log_alpha > 0)  # symmetric stretch: gate > 0.5 <=> log_alpha > 0
    samples = mask.training_mask()
    assert samples.min() >= 0 and samples.max() <= 1


def test_hard_concrete_discovery_repeats_with_the_seed():
    def run():
        net = conv_linear_net()
        torch.manual_seed(0)
        x, y = torch.randn(32, 1, 6, 6), torch.randint(0, 2, (32,))
        loss = lambda model, batch: nn.functional.cross_entropy(model(batch[0]), batch[1])  # noqa: E731
        evaluate = lambda model: {"eval_accuracy": float((model(x).argmax(1) == y).float().mean())}  # noqa: E731
        binary, _ = discover_subnetwork(net, ["0.weight", "3.weight"], loss, lambda e: [(x, y)], evaluate,
                                        MaskSearch(3, 0.1, 1e-2, mask_method="hard_concrete", mask_init=0.5))
        return binary

    first, second = run(), run()
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match="unknown mask method 'magic'.*straight_through"):
        attach_masks(conv_linear_net(), ["3.weight"], "magic")


def test_packed_masks_round_trip_at_one_bit_per_weight(tmp_path):
    torch.manual_seed(0)
    masks = {"a": torch.rand(3, 5) > 0.5, "b": torch.rand(7) > 0.2, "c": torch.rand(2, 3, 3, 3) > 0.9}
    packed = masks_to_bits(masks)
    assert sum(p["bits"].numel() for p in packed.values()) == sum((m.numel() + 7) // 8 for m in masks.values())
    assert all(torch.equal(masks_from_bits(packed)[k], masks[k]) for k in masks)
    save_subnetwork(tmp_path / "s.pt", masks, kept=kept_fraction(masks))
    loaded = load_subnetwork(tmp_path / "s.pt", ("kept",))
    assert all(torch.equal(loaded["masks"][k], masks[k]) for k in masks)
    packed["a"]["bits"] = packed["a"]["bits"][:1]
    with pytest.raises(ValueError, match="mask 'a' has 1"):
        masks_from_bits(packed)


def test_top_k_keeps_exactly_k_percent_ties_deterministic_and_contains_the_discovered_subnetwork():
    from subtask_induction.method.masks import top_k_masks

    generator = torch.Generator().manual_seed(0)
    scores = {"b.weight": torch.randn(30, 20, generator=generator), "a.weight": torch.randn(50, generator=generator)}
    scores["a.weight"][:10] = 0.5  # ten equal scores: ties
    total = 30 * 20 + 50
    discovered = {name: value > 0 for name, value in scores.items()}  # what continuous sparsification keeps
    discovered_fraction = sum(int(m.sum()) for m in discovered.values()) / total
    for fraction in (0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 0.75):
        masks = top_k_masks(scores, fraction)
        assert sum(int(m.sum()) for m in masks.values()) == round(fraction * total)
        again = top_k_masks(scores, fraction)
        assert all(torch.equal(masks[name], again[name]) for name in masks)  # deterministic
        kept = [float(scores[n][masks[n]].min()) for n in masks if masks[n].any()]
        dropped = [float(scores[n][~masks[n]].max()) for n in masks if (~masks[n]).any()]
        assert min(kept) >= max(dropped)  # the highest scores, over every tensor at once
        if fraction >= discovered_fraction:
            assert all(bool((masks[n] | ~discovered[n]).all()) for n in masks)  # contains the discovered one
        else:
            assert all(bool((~masks[n] | discovered[n]).all()) for n in masks)  # inside it
    # ties go by position: a.weight (first in name order), lowest index first
    tied = top_k_masks({"a.weight": torch.zeros(10)}, 0.3)["a.weight"]
    assert tied.tolist() == [True, True, True] + [False] * 7


def test_top_k_keeps_round_k_times_n_weights_as_the_decisions_say():
    from subtask_induction.method.masks import top_k_masks

    scores = {"a": torch.arange(600, dtype=torch.float32).reshape(20, 30), "b": torch.randn(400)}
    for fraction, kept in ((0.05, 50), (0.0125, 12), (0.0135, 14), (0.0005, 0), (1.0, 1000)):  # 12.5 -> 12, 13.5 -> 14
        assert sum(int(mask.sum()) for mask in top_k_masks(scores, fraction).values()) == kept, fraction
    assert "round(k·N)" in (REPO / "docs/decisions.md").read_text()
