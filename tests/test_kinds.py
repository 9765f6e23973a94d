"""A transfer kind is one record (method/kinds.py, issue 59): the config checks, the plan, the training and the pages
read it, so a kind added in this test alone is checked, planned, trained one step and named on the page. And the
two rivals it was made for: `signs` (the subnetwork's positions with the base's signs and fresh magnitudes) and the
mimetic initialisation (an `init`, not a kind)."""

import copy

import pandas as pd
import torch
import yaml

from harness import REPO
from subtask_induction.arithmetic.model import (MIMETIC, lm_loss, masked_weight_names, mimetic_init, mimetic_target,
                                                truncated_factors)
from subtask_induction.arithmetic.paper import authors_code_option
from subtask_induction.config_checks import config_problems
from subtask_induction.method import kinds, transfer
from subtask_induction.method.transfer import TransferPlan


def effective(*overlays):
    from snakemake.utils import update_config

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for overlay in overlays:
        update_config(config, overlay)
    from snakemake.utils import validate

    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return config


def test_the_config_checks_name_the_kinds_a_family_accepts():
    config = effective({"arithmetic": {"transfer": {"variants": {"odd": {"kind": "nonsense", "lr_scale": 0.0,
                                                                          "inherit_unmasked": True}}}}})
    problems = [p for p in config_problems(config) if "odd" in p]
    assert problems and "'nonsense' is not a transfer kind of the arithmetic family" in problems[0]
    assert "signs" in problems[0] and "magnitude" in problems[0]
    assert kinds.kinds_of("vision") == ("subnetwork", "sampled", "complement", "random", "full")


def test_a_new_kind_is_one_record_checked_planned_trained_and_named_on_the_page(monkeypatch, tiny_gpt2):
    """A hypothetical kind: the first half (by position) of each tensor's subnetwork, an authors'-code-like option
    drawn beside the figure's SI curve. One record and one mask rule, in this test only."""
    half = kinds.TransferKind("half_subnetwork", "the first half of the subnetwork's positions per tensor", "half",
                              families=("arithmetic",), curve="subnetwork", option="half the subnetwork frozen")
    monkeypatch.setitem(kinds.KINDS, half.name, half)

    def first_half(masks, generator, base_state):
        out = {}
        for name, mask in masks.items():
            kept = mask.flatten().nonzero().squeeze(1)
            chosen = torch.zeros(mask.numel(), dtype=torch.bool)
            chosen[kept[: len(kept) // 2]] = True
            out[name] = chosen.view_as(mask)
        return out

    monkeypatch.setitem(transfer.MASK_RULES, "half", first_half)
    variant = {"kind": "half_subnetwork", "lr_scale": 0.0, "inherit_unmasked": True}
    config = effective({"arithmetic": {"transfer": {"variants": {"si_half": variant}},
                                       "added_experiments": {"half": [{"base": "a+ab", "subtask": "ab",
                                                                       "targets": ["a2+ab"], "layers": [2],
                                                                       "variants": ["si_half"]}]}}})
    assert config_problems(config) == []
    from subtask_induction.points import arithmetic_points

    assert any(point.variant == "si_half" for point in arithmetic_points(config["arithmetic"]))
    assert kinds.reads_subnetwork(variant)

    base, fresh = tiny_gpt2(seed=0), tiny_gpt2(seed=1)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(2)) < 0.3
             for name in masked_weight_names(base)}
    plan = TransferPlan.from_settings(variant)
    model = plan.build(base, fresh, masks, torch.Generator().manual_seed(3))
    name = masked_weight_names(base)[0]
    frozen = transfer.MASK_RULES["half"](masks, None, None)[name]
    before = getattr(*transfer.split_name(model, name)).detach().clone()
    assert torch.equal(before[frozen], base.get_parameter(name)[frozen])
    optimizer = torch.optim.AdamW(plan.parameter_groups(model, lr=1e-2))
    rows = torch.randint(0, 20, (8, 4))
    lm_loss(model, rows).backward()
    optimizer.step()
    after = getattr(*transfer.split_name(model, name)).detach()
    assert torch.equal(after[frozen], before[frozen]) and not torch.equal(after[~frozen], before[~frozen])
    # the pages draw it beside the figure's SI curve with its label
    assert authors_code_option(pd.Series({"kind": "half_subnetwork"})) == ("subnetwork", "half the subnetwork frozen, as the authors' code")


def test_signs_freezes_the_subnetwork_with_the_base_s_signs_and_fresh_magnitudes(tiny_gpt2):
    base, fresh = tiny_gpt2(seed=0), tiny_gpt2(seed=1)
    names = masked_weight_names(base)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(4)) < 0.2
             for name in names}
    name = names[0]
    with torch.no_grad():   # a base weight of exactly 0 at a kept position: no sign, frozen at 0
        zero = masks[name].flatten().nonzero()[0, 0]
        base.get_parameter(name).view(-1)[zero] = 0.0
    fresh_values = {n: fresh.get_parameter(n).detach().clone() for n in names}
    model = TransferPlan("signs", 0.0, True).build(base, copy.deepcopy(fresh), masks, torch.Generator())
    for n in names:
        weight = getattr(*transfer.split_name(model, n)).detach()
        kept = masks[n]
        expected = torch.sign(base.get_parameter(n).detach()) * fresh_values[n].abs()
        assert torch.equal(weight[kept], expected[kept])              # exactly the subnetwork's positions
        assert torch.equal(weight[~kept], fresh_values[n][~kept])     # the rest fresh, as SI's
        assert torch.equal(weight[kept].abs(), torch.where(base.get_parameter(n).detach()[kept] == 0,
                                                             torch.zeros(()), fresh_values[n][kept].abs()))
    assert getattr(*transfer.split_name(model, name)).detach().view(-1)[zero] == 0.0
    assert kinds.KINDS["signs"].masked and kinds.KINDS["signs"].values == "signs"


def test_a_mimetic_point_draws_its_targets_from_a_seed_role_of_its_own():
    from subtask_induction.arithmetic.transfer import point_seeds

    point = {"variant_settings": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "init": "mimetic"},
             "identity": {"chain": 1, "replicate": 0}}
    seeds = point_seeds(point)
    assert "mimetic" in seeds and seeds["mimetic"] not in {v for k, v in seeds.items() if k != "mimetic"}
    plain = point_seeds({**point, "variant_settings": {**point["variant_settings"], "init": "fresh"}})
    assert "mimetic" not in plain and {k: v for k, v in seeds.items() if k != "mimetic"} == plain


def test_mimetic_init_sets_each_head_to_the_truncated_svd_of_its_target_and_trains(tiny_gpt2):
    model = tiny_gpt2(seed=0, layers=2)
    seed = 7
    mimetic_init(model, seed)
    d, heads = model.config.n_embd, model.config.n_head
    dh = d // heads
    generator = torch.Generator().manual_seed(seed)   # the targets, drawn again in the same order
    for block in model.transformer.h:
        qkv, out = block.attn.c_attn.weight.detach().double(), block.attn.c_proj.weight.detach().double()
        for head in range(heads):
            q = qkv[:, head * dh:(head + 1) * dh]
            k = qkv[:, d + head * dh:d + (head + 1) * dh]
            v = qkv[:, 2 * d + head * dh:2 * d + (head + 1) * dh]
            o = out[head * dh:(head + 1) * dh, :]
            for product, name in ((q @ k.T, "qk"), (v @ o, "vo")):
                target = mimetic_target(d, *MIMETIC[name], generator)
                a, b = truncated_factors(target, dh)
                assert torch.allclose(product, a @ b, atol=1e-5), name
                sign = MIMETIC[name][2]
                assert sign * torch.diagonal(product).mean() > 0, name   # the diagonal's sign as stated
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss = lm_loss(model, torch.randint(0, 20, (8, 4)))
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
