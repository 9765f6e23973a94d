"""Invariants of transfer: frozen weights stay bit-identical; controls keep exact per-tensor counts."""

import pytest
import torch

from subtask_induction.arithmetic.model import lm_loss, masked_weight_names
from subtask_induction.method.masks import split_name
from subtask_induction.method.transfer import TransferPlan, control_masks, sample_complement_mask


def effective_weights(model, names):
    """The weights the forward pass uses (after any parametrization), detached."""
    return {name: getattr(*split_name(model, name)).detach().clone() for name in names}


def random_masks(model, fraction=0.1, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return {name: torch.rand(model.get_parameter(name).shape, generator=generator) < fraction
            for name in masked_weight_names(model)}


def train_a_little(model, lr_scale, steps=5):
    optimizer = torch.optim.AdamW(TransferPlan("subnetwork", lr_scale).parameter_groups(model, 1e-2), weight_decay=0.01)
    rows = torch.randint(0, 20, (16, 4))
    for _ in range(steps):
        optimizer.zero_grad()
        lm_loss(model, rows).backward()
        optimizer.step()


@pytest.mark.parametrize("kind", ["subnetwork", "sampled", "complement"])
def test_frozen_entries_bit_identical_after_training(tiny_gpt2, kind):
    base, fresh = tiny_gpt2(seed=0), tiny_gpt2(seed=1)
    masks = random_masks(base)
    model = TransferPlan(kind, 0.0, False).build(base, fresh, masks, torch.Generator().manual_seed(3))
    names = masked_weight_names(base)
    frozen = {name: model.get_submodule(name.rsplit(".", 1)[0]).parametrizations.weight[0].gamma for name in names}
    before = effective_weights(model, names)
    train_a_little(model, lr_scale=0.0)
    after = effective_weights(model, names)
    for name in names:
        gamma = frozen[name]
        assert int(gamma.sum()) == int(masks[name].sum())  # exactly k frozen, not N - k
        assert torch.equal(after[name][gamma], base.get_parameter(name)[gamma])
        assert torch.equal(after[name][gamma], before[name][gamma])
        assert not torch.equal(after[name][~gamma], before[name][~gamma])


def test_trainable_subnetwork_moves_at_scaled_learning_rate(tiny_gpt2):
    base = tiny_gpt2(seed=0)
    model = TransferPlan("subnetwork", 0.5, True).build(base, tiny_gpt2(seed=1), random_masks(base), torch.Generator())
    groups = TransferPlan("subnetwork", 0.5).parameter_groups(model, 1e-2)
    assert [g["lr"] for g in groups] == [1e-2, 5e-3]
    name = masked_weight_names(base)[0]
    parametrization = model.get_submodule(name.rsplit(".", 1)[0]).parametrizations.weight[0]
    before = parametrization.subnetwork.detach().clone()
    train_a_little(model, lr_scale=0.5)
    assert not torch.equal(parametrization.subnetwork[parametrization.gamma], before[parametrization.gamma])


def test_sampled_and_complement_keep_exact_per_tensor_counts():
    generator = torch.Generator().manual_seed(0)
    masks = {"a": torch.rand(30, 40, generator=generator) < 0.2, "b": torch.tensor([True, False, False, True, False, False, False])}
    sampled = control_masks("sampled", masks, generator)
    complement = control_masks("complement", masks, generator)
    for name, mask in masks.items():
        assert int(sampled[name].sum()) == int(mask.sum())
        assert int(complement[name].sum()) == int(mask.sum())
        assert not (complement[name] & mask).any()
    assert not torch.equal(sampled["a"], masks["a"])


def test_the_authors_sampled_control_freezes_all_but_k_per_tensor_and_ours_exactly_k():
    masks = {"a": torch.rand(30, 40, generator=torch.Generator().manual_seed(1)) < 0.2,
             "b": torch.tensor([True, False, False, True, False, False, False])}
    ours = control_masks("sampled", masks, torch.Generator().manual_seed(5))
    theirs = control_masks("sampled_authors", masks, torch.Generator().manual_seed(5))
    for name, mask in masks.items():
        assert int(ours[name].sum()) == int(mask.sum())
        assert int(theirs[name].sum()) == mask.numel() - int(mask.sum())
        assert torch.equal(theirs[name], ~ours[name])  # the same draw, the other side frozen


def test_the_authors_complement_control_unfreezes_k_outside_the_subnetwork_and_freezes_the_rest():
    masks = {"a": torch.rand(30, 40, generator=torch.Generator().manual_seed(1)) < 0.2}
    ours = control_masks("complement", masks, torch.Generator().manual_seed(5))
    theirs = control_masks("complement_authors", masks, torch.Generator().manual_seed(5))
    mask = masks["a"]
    assert int(theirs["a"].sum()) == mask.numel() - int(mask.sum())
    assert torch.equal(theirs["a"], ~ours["a"])          # the same draw from the complement, the other side frozen
    assert bool(theirs["a"][mask].all())                 # the subnetwork itself is frozen (an all-ones start)


def test_complement_too_large_is_an_error_naming_the_tensor():
    with pytest.raises(ValueError, match="layer.weight"):
        sample_complement_mask(torch.tensor([True, True, True, False]), torch.Generator(), "layer.weight")


def test_inherit_unmasked_copies_embeddings_only_when_asked(tiny_gpt2):
    base = tiny_gpt2(seed=0)
    masks = random_masks(base)
    kept = TransferPlan("subnetwork", 0.0, True).build(base, tiny_gpt2(seed=1), masks, torch.Generator())
    fresh = TransferPlan("subnetwork", 0.0, False).build(base, tiny_gpt2(seed=1), masks, torch.Generator())
    embedding = "transformer.wte.weight"
    assert torch.equal(kept.get_parameter(embedding), base.get_parameter(embedding))
    assert not torch.equal(fresh.get_parameter(embedding), base.get_parameter(embedding))


def test_random_and_full_controls(tiny_gpt2):
    base, fresh = tiny_gpt2(seed=0), tiny_gpt2(seed=1)
    masks = random_masks(base)
    assert TransferPlan("random", 0, True).build(base, fresh, masks, torch.Generator()) is fresh
    full = TransferPlan("full", 0, True).build(base, fresh, masks, torch.Generator())
    assert full is not base
    assert all(torch.equal(a, b) for a, b in zip(full.state_dict().values(), base.state_dict().values()))
    with pytest.raises(ValueError, match="unknown transfer kind"):
        TransferPlan("bogus", 0, True).build(base, fresh, masks, torch.Generator())


def test_complement_is_checked_when_the_subnetwork_is_selected(tmp_path):
    from subtask_induction.method.masks import save_subnetwork
    from subtask_induction.steps import select_subnetwork

    dense = {"h.0.weight": torch.tensor([True, True, True, False])}
    save_subnetwork(tmp_path / "a.pt", dense, kept={"overall": 0.75}, eval_accuracy=1.0, l0_weight=1e-6)
    with pytest.raises(SystemExit, match=r"keep more than half.*h\.0\.weight"):
        select_subnetwork.main(["--subnetworks", str(tmp_path / "a.pt"), "--out", str(tmp_path / "s.pt"),
                                "--check-complement"])
    assert not (tmp_path / "s.pt").exists()
    select_subnetwork.main(["--subnetworks", str(tmp_path / "a.pt"), "--out", str(tmp_path / "s.pt")])
    assert (tmp_path / "s.pt").exists()


def test_inherit_unmasked_refuses_models_that_differ(tiny_gpt2):
    base, other = tiny_gpt2(seed=0, layers=2), tiny_gpt2(seed=1, layers=1)
    masks = {"transformer.h.0.mlp.c_fc.weight": torch.ones(16, 32, dtype=torch.bool)}
    with pytest.raises(ValueError, match="differ"):
        TransferPlan("subnetwork", 0.0, True).build(base, other, masks, torch.Generator())


def test_train_holdout_ties_go_to_the_lower_answer_token_loss_not_the_whole_row_loss():
    from subtask_induction.protocols import choose_epoch

    # Epochs 1 and 2 tie on holdout accuracy. Epoch 1 has the lower whole-row LM loss (it predicts b from a
    # better, noise on a!=b rows), epoch 2 the lower loss on the answer token: epoch 2 is chosen.
    history = [{"epoch": 1, "holdout_accuracy": 0.9, "holdout_loss": 2.0, "holdout_answer_loss": 0.40, "eval_accuracy": 0.5},
               {"epoch": 2, "holdout_accuracy": 0.9, "holdout_loss": 2.3, "holdout_answer_loss": 0.30, "eval_accuracy": 0.4},
               {"epoch": 3, "holdout_accuracy": 0.8, "holdout_loss": 1.0, "holdout_answer_loss": 0.10, "eval_accuracy": 0.6}]
    assert choose_epoch(history, "train_holdout")["epoch"] == 2
    assert min(history[:2], key=lambda record: record["holdout_loss"])["epoch"] == 1  # the old tie-break's pick


def test_answer_loss_is_the_loss_of_the_answer_token(tiny_gpt2):
    from subtask_induction.arithmetic.model import answer_loss, lm_loss

    model = tiny_gpt2(seed=0).eval()
    rows = torch.tensor([[1, 2, 20, 3], [4, 5, 20, 6]])
    logits = model(input_ids=rows).logits
    expected = torch.nn.functional.cross_entropy(logits[:, 2, :], rows[:, 3])
    assert torch.allclose(answer_loss(model, rows), expected)
    assert not torch.allclose(answer_loss(model, rows), lm_loss(model, rows))


def test_a_transfer_plan_is_checked_once_and_says_what_trains(tiny_gpt2):
    with pytest.raises(ValueError, match=r"lr_scale must lie in \[0, 1\], got 1.5"):
        TransferPlan.from_settings({"kind": "subnetwork", "lr_scale": 1.5, "inherit_unmasked": True})
    with pytest.raises(ValueError, match="unknown transfer kind 'nope'"):
        TransferPlan("nope")
    frozen, trained = TransferPlan("subnetwork"), TransferPlan("subnetwork", lr_scale=0.5)
    assert not frozen.trains_subnetwork and trained.trains_subnetwork
    assert not TransferPlan("random", lr_scale=1.0).trains_subnetwork  # nothing transferred, nothing to train
    base = tiny_gpt2(seed=0)
    masks = random_masks(base)
    scores = {name: torch.randn(mask.shape, generator=torch.Generator().manual_seed(3)) for name, mask in masks.items()}
    assert TransferPlan("subnetwork").masks({"masks": masks, "scores": scores}) is masks
    top = TransferPlan("subnetwork", top_k=0.1).masks({"masks": masks, "scores": scores})
    assert abs(sum(int(m.sum()) for m in top.values()) / sum(m.numel() for m in top.values()) - 0.1) < 0.01
    model = trained.build(base, tiny_gpt2(seed=1), masks, torch.Generator().manual_seed(0))
    groups = trained.parameter_groups(model, 1e-2)
    assert [group["lr"] for group in groups] == [1e-2, 5e-3]  # the subnetwork at lr * lr_scale


def test_a_head_only_plan_trains_the_named_head_and_nothing_else(tiny_gpt2):
    """trainable: head (the vision family's linear probe) is a rule of the plan, as every optimizer-group rule."""
    base = tiny_gpt2(seed=0)
    plan = TransferPlan.from_settings({"kind": "full", "lr_scale": 0.0, "inherit_unmasked": True, "trainable": "head"})
    model = plan.build(base, tiny_gpt2(seed=1), None, torch.Generator())
    head = ["lm_head.weight"] if "lm_head.weight" in dict(model.named_parameters()) else [next(iter(dict(model.named_parameters())))]
    groups = plan.parameter_groups(model, 1e-2, head=head)
    trained = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
    assert trained == head and [len(group["params"]) for group in groups] == [1]
    with pytest.raises(ValueError, match="give the names of the head"):
        plan.parameter_groups(tiny_gpt2(seed=2), 1e-2)
    with pytest.raises(ValueError, match="trainable must be all or head"):
        TransferPlan("full", trainable="body")



def test_the_magnitude_control_freezes_exactly_k_per_tensor_and_they_are_the_largest():
    """magnitude (issue 48): per tensor, the subnetwork's count of the base's largest-|w| weights, put in frozen."""
    from subtask_induction.method.transfer import magnitude_mask

    weight = torch.randn(30, 40, generator=torch.Generator().manual_seed(2))
    mask = torch.rand(30, 40, generator=torch.Generator().manual_seed(1)) < 0.2
    kept = magnitude_mask(mask, weight)
    k = int(mask.sum())
    assert int(kept.sum()) == k
    assert weight.abs()[kept].min() >= weight.abs()[~kept].max()   # every kept weight outranks every other
    net = torch.nn.Sequential(torch.nn.Linear(40, 30))
    base = torch.nn.Sequential(torch.nn.Linear(40, 30))
    with torch.no_grad():
        base[0].weight.copy_(weight)
    model = TransferPlan("magnitude", 0.0, True).build(base, net, {"0.weight": mask}, torch.Generator())
    frozen = model[0].parametrizations.weight[0].gamma
    assert torch.equal(frozen, kept) and torch.equal(model[0].weight[kept], weight[kept])
