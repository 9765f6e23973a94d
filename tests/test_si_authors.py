"""SI as the authors' code ran it on its ResNet (issue 88): what trains and what stays frozen.

Their start is rebuilt here from reading their files (Rock-Z/instilling-inductive-bias at cf2504f: vision/
vision_transfer.py's `load_model` for a ResNet, and its NeuroSurgeon copy at 5de8f1e: `_NeuroSurgeon/src/Models/
circuit_model.py`, `_NeuroSurgeon/src/Masking/contsparse_layer.py`), not copied: the base loaded whole, every Conv2d
replaced by a masked conv, `freeze_base` (every module's `weight` and `bias` without gradient, every module but the mask
layers kept in evaluation mode by `train()`), the subnetwork loaded, `init_subnet_transfer` (the base weight copied into
`weight_subnet`, `weight` redrawn in place uniform in ±1/√(in_channels·kernel)), then "Freeze subnetwork" setting
`weight_subnet.requires_grad = True`, and SGD over every parameter. A few steps on a small transformers ResNet list what
moved: only the kept conv weights. Our `si_authors` (config/si_authors.yaml) is then held to the same list.
"""

import copy
import math

import pytest
import torch
from torch import nn
from transformers import ResNetConfig, ResNetForImageClassification

from subtask_induction.config_checks import config_problems
from subtask_induction.method.transfer import TransferPlan
from subtask_induction.seeds import vision_seeds
from subtask_induction.vision.models import (FrozenStatisticsBatchNorm2d, build_classifier, masked_weight_names,
                                             transfer_start)
from harness import REPO, assert_reloads_as_a_plain_network, effective_config
import yaml

SI_AUTHORS = yaml.safe_load((REPO / "config/si_authors.yaml").read_text())["vision"]["transfer"]["variants"]["si_authors"]
SI = {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals", "trainable": "all"}


# --- their start, written from reading their files ------------------------------------------------------------------

class MaskedConv(nn.Module):
    """A Conv2d under a continuous-sparsification mask in the authors' "subnet_transfer" mode: the forward pass uses
    weight_subnet where the hard mask (scores > 0) keeps a weight and `weight` elsewhere."""

    def __init__(self, conv: nn.Conv2d):
        super().__init__()
        self.layer = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                               padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                               bias=conv.bias is not None)   # their _base_layer: its own weight, used for its settings
        self.weight = conv.weight     # the base's weight itself
        self.bias = conv.bias
        self.weight_mask_params = nn.Parameter(torch.zeros(conv.weight.shape))

    def init_subnet_transfer(self):
        self.weight_subnet = nn.Parameter(self.weight.detach().clone(), requires_grad=False)
        fan_in = self.layer.in_channels * math.prod(self.layer.kernel_size)
        bound = 1.0 / math.sqrt(fan_in)
        self.weight.data.uniform_(-bound, bound)

    def forward(self, x):
        mask = (self.weight_mask_params > 0).float()
        return self.layer._conv_forward(x, self.weight_subnet * mask + self.weight * (1 - mask), self.bias)


class AuthorsModel(nn.Module):
    """Their CircuitModel with freeze_base: True, as far as a transfer's training reads it."""

    def __init__(self, root: nn.Module, freeze_base: bool = True, eval_others: bool = True):
        super().__init__()
        self.root, self.freeze_base, self.eval_others = root, freeze_base, eval_others

    def train(self, mode: bool = True):
        self.training = mode
        for module in self.root.modules():
            module.train(mode if isinstance(module, MaskedConv) or not self.eval_others else False)
        return self

    def forward(self, pixel_values):
        return self.root(pixel_values=pixel_values).logits


def small_resnet(seed=0) -> ResNetForImageClassification:
    """A 'trained' base: a small transformers ResNet with its BatchNorm statistics and affine weights moved off their
    initial values."""
    torch.manual_seed(seed)
    model = ResNetForImageClassification(ResNetConfig(embedding_size=8, hidden_sizes=[8, 8, 8, 8], depths=[1, 1, 1, 1],
                                                      num_labels=16, layer_type="basic"))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-1, 1), module.running_var.uniform_(0.5, 2)
                module.weight.uniform_(0.5, 1.5), module.bias.uniform_(-0.5, 0.5)
    return model


def authors_start(base: ResNetForImageClassification, mutation: str | None = None) -> AuthorsModel:
    """load_model's ResNet path on `base`; `mutation` changes one thing, so the test below can be shown to fail."""
    model = copy.deepcopy(base)
    generator = torch.Generator().manual_seed(1)
    for name, module in list(model.named_modules()):   # CircuitModel._replace_target_layers over every Conv2d
        if isinstance(module, nn.Conv2d):
            parent, _, attribute = name.rpartition(".")
            masked = MaskedConv(module)
            with torch.no_grad():   # the loaded subnetwork's scores: about a third kept
                masked.weight_mask_params.copy_(torch.rand(module.weight.shape, generator=generator) - 0.67)
            setattr(model.get_submodule(parent), attribute, masked)
    wrapped = AuthorsModel(model, eval_others=mutation != "batchnorm re-estimates")
    for module in model.modules():   # _handle_model_freezing with freeze_base: True
        for attribute in ("weight", "bias"):
            if getattr(module, attribute, None) is not None:
                getattr(module, attribute).requires_grad = False
    for module in model.modules():
        if isinstance(module, MaskedConv):
            module.init_subnet_transfer()
            module.weight_subnet.requires_grad = True   # "Freeze subnetwork" (sic): the kept weights train
            if mutation == "unkept trained":
                module.weight.requires_grad = True
    if mutation == "head unfrozen":
        for parameter in model.classifier.parameters():
            parameter.requires_grad = True
    return wrapped.train()


def steps(model: nn.Module, forward, parameters, n=3, lr=0.05):
    """n SGD steps as the authors' loop takes them (momentum 0.9, weight decay 1e-4, every parameter handed over)."""
    optimizer = torch.optim.SGD(parameters, lr=lr, momentum=0.9, weight_decay=1e-4)
    generator = torch.Generator().manual_seed(2)
    for _ in range(n):
        model.train()
        images = torch.randn(8, 3, 32, 32, generator=generator)
        nn.functional.cross_entropy(forward(images), torch.arange(8)).backward()
        optimizer.step()
        optimizer.zero_grad()


def moved(before: dict, after: dict) -> set[str]:
    return {name for name in before if not torch.equal(before[name], after[name])}


def authors_what_moves(mutation=None):
    base = small_resnet()
    model = authors_start(base, mutation)
    before = copy.deepcopy(model.state_dict())
    steps(model, model, model.parameters())
    return model, before, model.state_dict()


def assert_only_kept_conv_weights_move(model: AuthorsModel, before: dict, after: dict):
    convs = {name for name, module in model.named_modules() if isinstance(module, MaskedConv)}
    assert moved(before, after) == {f"{conv}.weight_subnet" for conv in convs}
    for conv in convs:   # and within them, only the kept positions reach the forward pass changed
        kept = before[f"{conv}.weight_mask_params"] > 0
        used_before = torch.where(kept, before[f"{conv}.weight_subnet"], before[f"{conv}.weight"])
        used_after = torch.where(kept, after[f"{conv}.weight_subnet"], after[f"{conv}.weight"])
        assert torch.equal(used_before[~kept], used_after[~kept]) and not torch.equal(used_before[kept], used_after[kept])
    norms = [module for module in model.modules() if isinstance(module, nn.BatchNorm2d)]
    assert norms and not any(module.training for module in norms)


def test_the_authors_start_trains_only_the_kept_conv_weights():
    model, before, after = authors_what_moves()
    assert_only_kept_conv_weights_move(model, before, after)
    unchanged = set(before) - moved(before, after)
    assert any("normalization.running_mean" in name for name in unchanged)   # BatchNorm statistics,
    assert any("normalization.weight" in name for name in unchanged)         # affine weights,
    assert {"root.classifier.1.weight", "root.classifier.1.bias"} <= unchanged   # the head, kept as the base's


@pytest.mark.parametrize("mutation", ["unkept trained", "head unfrozen", "batchnorm re-estimates"])
def test_the_reading_fails_on_a_start_that_moves_anything_else(mutation):
    with pytest.raises(AssertionError):
        assert_only_kept_conv_weights_move(*authors_what_moves(mutation))


def test_the_authors_unkept_draw_has_their_spread():
    model = authors_start(small_resnet())
    conv = model.root.resnet.encoder.stages[0].layers[0].layer[0].convolution
    fan_in = 8 * 3 * 3
    assert conv.weight.abs().max() <= 1 / math.sqrt(fan_in)
    assert abs(conv.weight.std().item() * math.sqrt(3 * fan_in) - 1) < 0.15


# --- our si_authors held to the same list -----------------------------------------------------------------------------

SPEC = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}


def timm_base_and_masks():
    base = build_classifier(SPEC, seed=3)
    with torch.no_grad():
        for module in base.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-1, 1), module.running_var.uniform_(0.5, 2)
                module.weight.uniform_(0.5, 1.5), module.bias.uniform_(-0.5, 0.5)
    generator = torch.Generator().manual_seed(0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=generator) < 0.3
             for name in masked_weight_names(base)}
    return base.eval(), masks


def our_start(variant, base, masks, chain=16):
    return transfer_start(TransferPlan.from_settings(variant), variant, base, SPEC, masks,
                          vision_seeds("transfer", chain, masked_init=True))


def used(model, masks) -> dict:
    """Each masked tensor as the forward pass uses it."""
    with torch.no_grad():
        return {name: model.get_submodule(name.removesuffix(".weight")).weight.detach().clone() for name in masks}


def our_what_moves(variant):
    base, masks = timm_base_and_masks()
    model = our_start(variant, base, masks)
    before, used_before = copy.deepcopy(model.state_dict()), used(model, masks)
    plan = TransferPlan.from_settings(variant)
    steps(model, lambda images: model.net(images), plan.parameter_groups(model, 0.05))
    return base, masks, model, before, used_before


def assert_ours_moves_only_the_kept_weights(masks, model, before, used_before):
    after, used_after = model.state_dict(), used(model, masks)
    assert moved(before, after) == {name.removesuffix(".weight") + ".parametrizations.weight.0.subnetwork"
                                    for name in masks}
    for name, mask in masks.items():
        assert torch.equal(used_before[name][~mask], used_after[name][~mask])
        assert not torch.equal(used_before[name][mask], used_after[name][mask])
    norms = [module for module in model.modules() if isinstance(module, nn.BatchNorm2d)]
    assert norms and not any(module.training for module in norms)


def test_si_authors_moves_what_the_authors_start_moves():
    base, masks, model, before, used_before = our_what_moves(SI_AUTHORS)
    assert_ours_moves_only_the_kept_weights(masks, model, before, used_before)
    base_state = base.state_dict()
    after = model.state_dict()
    for name in base_state:   # BatchNorm (buffers and affine weights) and the head: the base's, unchanged by a step
        if ".bn" in name or name.startswith("net.bn1") or "downsample.1" in name or name.startswith("net.fc"):
            assert torch.equal(after[name], base_state[name]), name


@pytest.mark.parametrize("change", [{"unkept": None}, {"head": None}, {"batchnorm": None}])
def test_the_same_check_fails_on_si_authors_less_one_setting(change):
    variant = {key: value for key, value in {**SI_AUTHORS, **change}.items() if value is not None}
    _, masks, model, before, used_before = our_what_moves(variant)
    with pytest.raises(AssertionError):
        assert_ours_moves_only_the_kept_weights(masks, model, before, used_before)


def test_si_authors_starts_at_the_base_and_the_authors_draw():
    base, masks = timm_base_and_masks()
    model = our_start(SI_AUTHORS, base, masks)
    start = used(model, masks)
    for name, mask in masks.items():
        kept_values = base.get_parameter(name)[mask]
        assert torch.equal(start[name][mask], kept_values)   # the kept weights start at the base's values
        unkept = start[name][~mask]
        fan_in = base.get_parameter(name)[0].numel()
        assert unkept.abs().max() <= 1 / math.sqrt(fan_in)
        if unkept.numel() > 2000:   # the spread 1/√(3·fan_in), timm's He init about 2.4x it on a 3x3 conv
            assert abs(unkept.std().item() * math.sqrt(3 * fan_in) - 1) < 0.1, name
    model.train()
    assert all(isinstance(m, FrozenStatisticsBatchNorm2d) and not m.training
               for m in model.modules() if isinstance(m, nn.BatchNorm2d))
    assert not any(p.requires_grad for p in model.net.get_classifier().parameters())
    # the other seeds are SI's: the unkept draw has a role of its own
    assert vision_seeds("transfer", 16, masked_init=True) == {**vision_seeds("transfer", 16),
                                                               "masked_init": vision_seeds("transfer", 16, True)["masked_init"]}


def test_si_authors_saves_as_a_plain_network(tmp_path):
    base, masks, model, *_ = our_what_moves(SI_AUTHORS)
    assert_reloads_as_a_plain_network(model, SPEC, tmp_path)


def test_the_settings_are_config_checked():
    config = effective_config("config/si_authors.yaml")
    assert config_problems(config) == []
    variants = config["vision"]["transfer"]["variants"]
    variants["scratch_authors"] = {**variants["scratch"], "unkept": "authors_frozen"}
    variants["probe_frozen"] = {**variants["finetune"], "trainable": "head", "head": "base_frozen"}
    problems = "\n".join(config_problems(config))
    assert "scratch_authors.unkept" in problems and "needs a masked kind" in problems
    assert "probe_frozen.head" in problems and "trainable head" in problems


def test_the_overlay_on_a_finished_run_trains_only_si_authors(smoke_run, tmp_path):
    """As a user adds it to a finished run: one transfer per chain and nothing the run finished; it trains, reaches the
    tables, and its metrics name the seed its unkept draw used."""
    import json

    import pandas as pd

    import time

    from harness import clone_run, snakemake, work_done

    workdir = clone_run(smoke_run, tmp_path / "run")
    chains = len(yaml.safe_load((workdir / "config/config.yaml").read_text())["vision"]["chains"])
    overlay = ("--configfile", "config/config.yaml", str(REPO / "config/si_authors.yaml"))
    started = time.time()
    time.sleep(1)
    result = snakemake(workdir, "--cores", "2", *overlay)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = work_done(result, workdir, started)  # the packs say which points they trained (the rest came back)
    assert ran.count("vision_transfer") == chains
    assert not [rule for rule in ran if rule.startswith(("arithmetic_", "submasking_", "vision_base", "vision_discover"))]
    assert "si_authors" in set(pd.read_csv(workdir / "results/vision/summary/chains.csv")["model"])
    metrics = json.loads((workdir / "results/vision/chain0/transfer/si_authors/metrics.json").read_text())
    assert metrics["seeds"]["masked_init"] == vision_seeds("transfer", 0, masked_init=True)["masked_init"]
    assert metrics["config"]["variant"]["unkept"] == "authors_frozen"


# --- the record's pages, on a stand-in made from the decisive record's tables ------------------------------------------

def authors_record(tmp_path, shift):
    """The decisive record's vision tables as a `vision_authors` record whose si_authors is SI plus `shift[metric]`
    (points, a function of the chain): the claims, the section and the README read it as they will read the real one."""
    import shutil

    import pandas as pd

    from subtask_induction.pages import run_records

    folder = tmp_path / "data" / "vision_authors"
    shutil.copytree(REPO / "docs/data/decisive", folder, ignore=shutil.ignore_patterns("arithmetic", "submasking"))
    chains = pd.read_csv(folder / "vision/chains.csv")
    si = chains[chains["model"] == "si"]
    added = si.assign(model="si_authors", **{metric: si[metric] + move(si["chain"]) / 100
                                             for metric, move in shift.items()})
    pd.concat([chains, added]).to_csv(folder / "vision/chains.csv", index=False)
    table1 = pd.read_csv(folder / "vision/table1.csv")
    row = table1[table1["model"] == "si"].assign(model="si_authors", **{m: added[m].mean() for m in shift})
    pd.concat([table1, row]).to_csv(folder / "vision/table1.csv", index=False)
    planned = pd.read_csv(folder / "planned/vision.csv")
    extra = pd.DataFrame({"chain": sorted(si["chain"]), "variant": "si_authors"})
    pd.concat([planned, extra]).to_csv(folder / "planned/vision.csv", index=False)
    records = {"vision_authors": run_records.load("vision_authors", tmp_path / "data", check=False),
               "decisive": run_records.load("decisive", REPO / "docs/data")}
    return records


def wobble(points):
    return lambda chain: points + (chain % 3) - 1


def test_the_readings_follow_the_plan(tmp_path):
    """A disagreement of our SI with the paper is the protocol's where si_authors points the paper's way, the world's
    where it points against the paper too; a row where our SI agrees or is undecided is no disagreement."""
    from subtask_induction.pages import claims as page_claims
    from subtask_induction.pages.results import all_claims
    from subtask_induction.pages.sections import authors

    # pooled +20 (beats the base and the mixture as run, and SI), cue shape +0 (SI's reversal stays), robustness +0
    records = authors_record(tmp_path, {"pooled_accuracy": wobble(20), "cue_shape_accuracy": wobble(0)})
    found = all_claims(records)
    mine = [c for c in found if c.record == "vision_authors"]
    assert {c.id for c in mine} == {page_claims.claim_id("vision", "si_authors", s, m) for s, m in (
        ("base", "pooled_accuracy"), ("finetune", "pooled_accuracy"), ("scratch", "original_accuracy"),
        ("finetune", "cue_shape_accuracy"), ("finetune", "cue_robustness"), ("si", "pooled_accuracy"))}
    readings = {row.si.id: row.reading for row in authors.rows(found)}
    # decisive's SI: no effect against the mixture as run on pooled images (against the paper), reversed on cue shape
    assert readings["vision/si-finetune/pooled_accuracy"] == authors.PROTOCOL
    assert readings["vision/si-finetune/cue_shape_accuracy"] == authors.WORLD
    assert readings["vision/si-base/pooled_accuracy"] == authors.NONE         # our SI holds: no disagreement
    assert readings["vision/si-finetune/cue_robustness"] == authors.NONE      # our SI undecided: no disagreement
    said = authors.sentence(records["vision_authors"], found)
    assert ("the disagreements are the protocol's against the mixture as the authors' code ran it on pooled images; the "
            "world's against that mixture on cue-conflict shape accuracy") in said
    lines = authors.section(records["vision_authors"], records["decisive"], found)
    assert any("(base, subnetwork, si, scratch, finetune, mixture): " in line and "every column equal" in line
               for line in lines)
    assert any(line.startswith("| the mixture as the authors' code ran it on pooled images | +17.3 |") and
               line.endswith("| the protocol's |") for line in lines)


def test_the_readme_judges_table_1_like_for_like(tmp_path):
    from subtask_induction.pages import first_screen
    from subtask_induction.pages.results import all_claims

    records = authors_record(tmp_path, {"pooled_accuracy": wobble(20), "cue_shape_accuracy": wobble(0)})
    found = all_claims(records)
    table = first_screen.table(found, records).splitlines()
    assert table[0].endswith("| vision: SI as the authors' code ran it (`si_authors`), the same |")
    cells = [line.split(" | ")[-1] for line in table[2:]]
    vision = [line for line in table[2:] if "(Table 1)" in line]
    assert len(vision) == 5 and all(line.split(" | ")[-1] != "— |" for line in vision)   # a like-for-like cell each
    assert sum(cell == "— |" for cell in cells) == len(table) - 2 - 5                     # and no other row has one
    assert "(`si`'s disagreement: the protocol's)" in vision[1]
    finding = first_screen.finding(found, records)
    assert "vision's judged like for like, SI as the authors' code ran it" in finding
    # without the record, the table and the count are as before
    plain = {"decisive": records["decisive"]}
    assert "si_authors" not in first_screen.table(all_claims(plain), plain)
    assert "like for like" not in first_screen.finding(all_claims(plain), plain)
