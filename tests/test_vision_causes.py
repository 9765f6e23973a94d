"""Why SI loses its subnetwork's shape (issue 82): the three causes' SI variants (config/causes/*.yaml), each SI but
for its one cause: the base's BatchNorm kept frozen, no zeroed residual scales, the paper's size (top_k)."""

import copy
import json
import shutil
import time

import pandas as pd
import pytest
import torch
import yaml
from torch import nn

from harness import REPO, assert_reloads_as_a_plain_network, clone_run, effective_config, jobs_run, snakemake, step_of, work_done
from subtask_induction.config_checks import config_problems
from subtask_induction.method.masks import top_k_masks
from subtask_induction.method.transfer import TransferPlan
from subtask_induction.vision.models import FrozenStatisticsBatchNorm2d, build_classifier, transfer_start
from subtask_induction.vision.diagnostics import reestimate_batchnorm, statistics_source

SPEC = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}
SEEDS = {"init": 11, "mask": 12}
SI = {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": False, "data": "originals", "trainable": "all"}
CAUSES = {"batchnorm_kept": "si_bn_kept", "unit_scales": "si_unit_scales", "paper_size": "si_top15"}


def base_and_masks():
    """A 'trained' base (weights and BatchNorm statistics moved off their initial values) and a subnetwork of it."""
    base = build_classifier(SPEC, seed=3)
    with torch.no_grad():
        for name, module in base.named_modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    generator = torch.Generator().manual_seed(0)
    masks = {name: torch.rand(p.shape, generator=generator) < 0.3 for name, p in base.named_parameters()
             if name.endswith("weight") and p.ndim >= 2 and "fc" not in name}
    return base.eval(), masks


def start(variant, base, masks):
    return transfer_start(TransferPlan.from_settings(variant), variant, base, SPEC, masks, SEEDS)


def residual_scales(model):
    """timm's BasicBlock's last BatchNorm scale, which its zero_init_last sets to 0."""
    return {name: p for name, p in model.named_parameters() if name.endswith("bn2.weight")}


def test_unit_scales_is_si_but_for_each_residual_blocks_last_scale():
    base, masks = base_and_masks()
    si, unit = start(SI, base, masks), start({**SI, "batchnorm": "unit_scales"}, base, masks)
    si_state, unit_state = si.state_dict(), unit.state_dict()
    assert si_state.keys() == unit_state.keys()
    scales = {f"{name}" for name in residual_scales(si)}
    assert len(scales) == 8   # ResNet18's eight BasicBlocks
    for name in si_state:
        if name in scales:
            assert torch.all(si_state[name] == 0) and torch.all(unit_state[name] == 1), name
        else:
            assert torch.equal(si_state[name], unit_state[name]), name   # the same init draws, the same subnetwork


def one_step(model, seed=0):
    torch.manual_seed(seed)
    model.train()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    images = torch.randint(0, 256, (8, 3, 16, 16), dtype=torch.uint8)
    nn.functional.nll_loss(model(images), torch.arange(8)).backward()
    optimizer.step()


def test_base_frozen_keeps_the_bases_batchnorm_through_training_and_saves_as_a_plain_model(tmp_path):
    base, masks = base_and_masks()
    kept = start({**SI, "batchnorm": "base_frozen"}, base, masks)
    base_norms = {name: m for name, m in base.named_modules() if isinstance(m, nn.BatchNorm2d)}
    norms = {name: m for name, m in kept.named_modules() if isinstance(m, nn.BatchNorm2d)}
    assert norms.keys() == base_norms.keys() and all(isinstance(m, FrozenStatisticsBatchNorm2d) for m in norms.values())
    before = copy.deepcopy(kept.state_dict())
    one_step(kept)
    after = kept.state_dict()
    for name, module in norms.items():
        assert not module.training   # evaluation mode while the rest trains
        for key, value in module.state_dict().items():
            assert torch.equal(value, base_norms[name].state_dict()[key]), (name, key)   # the base's, unmoved
    moved = [name for name in after if not torch.equal(after[name], before[name])]
    assert any("conv" in name for name in moved) and not any(".bn" in name or "bn1." in name for name in moved)
    # plain SI's fresh BatchNorm moves in the same step (train-mode statistics, trained scales): the check can fail
    si = start(SI, base, masks)
    si_before = copy.deepcopy(si.state_dict())
    one_step(si)
    assert not torch.equal(si.state_dict()["net.bn1.running_mean"], si_before["net.bn1.running_mean"])
    # saved as the forward pass computes it, loaded as a plain BatchNorm network: the same outputs in eval mode
    assert_reloads_as_a_plain_network(kept, SPEC, tmp_path)


def test_the_diagnostics_do_not_re_estimate_a_kept_batchnorm():
    class Images:   # what reestimate_batchnorm reads of an ImageSet
        images = torch.randint(0, 256, (16, 3, 16, 16), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))

        def batches(self, batch_size, *, seed=0, shuffle=False):
            for first in range(0, 16, batch_size):
                yield self.images[first:first + batch_size], torch.zeros(batch_size, dtype=torch.long)

    base, masks = base_and_masks()
    kept = start({**SI, "batchnorm": "base_frozen"}, base, masks)
    images = Images()
    estimated = reestimate_batchnorm(kept, images, max_images=16, batch_size=8, seed=0, device="cpu")
    assert torch.equal(estimated.state_dict()["net.bn1.running_var"], base.state_dict()["net.bn1.running_var"])
    assert statistics_source(estimated, "original train") == "the base's (kept frozen)"
    fresh = reestimate_batchnorm(start(SI, base, masks), images, max_images=16, batch_size=8, seed=0, device="cpu")
    assert statistics_source(fresh, "original train") == "original train"
    assert not torch.equal(fresh.state_dict()["net.bn1.running_var"], torch.ones(4))


def test_the_paper_size_transfers_the_top_of_the_scores_and_an_old_subnetwork_is_named():
    base, masks = base_and_masks()
    generator = torch.Generator().manual_seed(1)
    scores = {name: torch.randn(mask.shape, generator=generator) for name, mask in masks.items()}
    top = {**SI, "top_k": 0.149}
    plan = TransferPlan.from_settings(top)
    chosen = plan.masks({"masks": masks, "scores": scores})
    total = sum(m.numel() for m in masks.values())
    assert sum(int(m.sum()) for m in chosen.values()) == round(0.149 * total)
    assert all(torch.equal(chosen[name], top_k_masks(scores, 0.149)[name]) for name in masks)
    model = start(top, base, chosen)
    state = base.state_dict()
    for name, mask in chosen.items():   # the frozen weights are the base's at exactly the top's positions
        module_name, attribute = name.rsplit(".", 1)
        weight = getattr(dict(model.named_modules())[module_name], attribute)
        assert torch.equal(weight[mask], state[name][mask])
    with pytest.raises(ValueError, match="holds none.*delete it and rerun its discovery"):
        plan.masks({"masks": masks})


def test_the_causes_config_checks_name_what_cannot_start():
    config = effective_config("config/causes/batchnorm_kept.yaml", "config/causes/unit_scales.yaml",
                              "config/causes/paper_size.yaml")
    assert config_problems(config) == []
    variants = config["vision"]["transfer"]["variants"]
    variants["si_unit_scales"]["inherit_unmasked"] = True
    variants["si_top15_random"] = {**variants["si_top15"], "kind": "random"}
    problems = "\n".join(config_problems(config))
    assert "si_unit_scales.batchnorm (unit_scales" in problems and "takes the base's BatchNorm" in problems
    assert "si_top15_random.top_k: kind random transfers no mask" in problems
    groupnorm = effective_config("config/causes/batchnorm_kept.yaml", "config/groupnorm.yaml")
    assert any("si_bn_kept.batchnorm" in p and "norm_layer 'groupnorm1'" in p for p in config_problems(groupnorm))


@pytest.mark.parametrize("overlay", sorted(CAUSES))
def test_each_cause_overlay_changes_only_its_cause(overlay):
    """Each overlay adds one variant: SI's settings with exactly one key more (its cause)."""
    added = yaml.safe_load((REPO / f"config/causes/{overlay}.yaml").read_text())["vision"]["transfer"]["variants"]
    si = effective_config()["vision"]["transfer"]["variants"]["si"]
    assert list(added) == [CAUSES[overlay]]
    variant = added[CAUSES[overlay]]
    assert {k: v for k, v in variant.items() if k in si} == si and len(set(variant) - set(si)) == 1


def test_the_causes_overlays_on_a_finished_run_train_only_their_own_variants(smoke_run, tmp_path):
    """As a user adds them to a finished run (`--configfile config/config.yaml config/causes/X.yaml`): each plans its
    own SI variant per chain and nothing the run finished; all three together train and reach the tables."""
    workdir = clone_run(smoke_run, tmp_path / "run")
    chains = len(yaml.safe_load((workdir / "config/config.yaml").read_text())["vision"]["chains"])
    for overlay in sorted(CAUSES):
        planned = snakemake(workdir, "-n", "--cores", "2", "--configfile", "config/config.yaml",
                            str(REPO / f"config/causes/{overlay}.yaml"))
        assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
        ran = [step_of(rule) for rule in jobs_run(planned)]  # packs: which points train, the run says (below)
        assert "vision_transfer" in ran, (overlay, ran)
        assert not {"vision_base", "vision_discover", "vision_world", "vision_mean_pool", "arithmetic_base",
                    "arithmetic_transfer", "submasking_pack"} & set(ran), (overlay, ran)
        assert not [rule for rule in ran if rule.startswith(("arithmetic_", "submasking_"))], (overlay, ran)
    started = time.time()
    time.sleep(1)
    result = snakemake(workdir, "--cores", "2", "--configfile", "config/config.yaml",
                       *(str(REPO / f"config/causes/{overlay}.yaml") for overlay in sorted(CAUSES)))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = work_done(result, workdir, started)
    assert ran.count("vision_transfer") == 3 * chains  # the overlays' own variants, and nothing the run finished
    assert not [rule for rule in ran if rule.startswith(("arithmetic_", "submasking_", "vision_base", "vision_discover"))]
    import pandas as pd

    runs = pd.read_csv(workdir / "results/vision/summary/chains.csv")
    assert set(CAUSES.values()) <= set(runs["model"])
    comparisons = (workdir / "results/vision/summary/comparisons.md").read_text()
    assert all(f"| {variant} vs si |" in comparisons for variant in CAUSES.values())   # the smoke runs no finetune
    top = json.loads((workdir / "results/vision/chain0/transfer/si_top15/metrics.json").read_text())
    assert top["config"]["variant"]["top_k"] == 0.149


def causes_record(tmp_path, gains):
    """The decisive record's vision tables as a `vision_causes` record whose three causes score SI's pooled accuracy
    plus `gains[variant]` (points, per chain): the claims and the section read it as they will read the real one."""
    from subtask_induction.pages import run_records

    data = tmp_path / "data"
    shutil.copytree(REPO / "docs/data/decisive", data / "vision_causes", ignore=shutil.ignore_patterns("arithmetic",
                                                                                                        "submasking"))
    folder = data / "vision_causes"
    chains = pd.read_csv(folder / "vision/chains.csv")
    si = chains[chains["model"] == "si"]
    added = [si.assign(model=variant, pooled_accuracy=si["pooled_accuracy"] + gain(si["chain"]) / 100)
             for variant, gain in gains.items()]
    pd.concat([chains, *added]).to_csv(folder / "vision/chains.csv", index=False)
    table1 = pd.read_csv(folder / "vision/table1.csv")
    row = table1[table1["model"] == "si"]
    pd.concat([table1, *(row.assign(model=v, pooled_accuracy=a[a["model"] == v]["pooled_accuracy"].mean())
                         for v, a in zip(gains, added))]).to_csv(folder / "vision/table1.csv", index=False)
    planned = pd.read_csv(folder / "planned/vision.csv")
    extra = [pd.DataFrame({"chain": sorted(si["chain"]), "variant": v}) for v in gains]
    pd.concat([planned, *extra]).to_csv(folder / "planned/vision.csv", index=False)
    return run_records.load("vision_causes", data, check=False), run_records.load("decisive", REPO / "docs/data")


def test_the_causes_claims_and_the_readme_sentence_follow_the_plans_reading(tmp_path):
    """A cause keeps the shape when "SI with X keeps more of the subnetwork's pooled accuracy than SI" holds; as the
    paper reports when it also keeps 75 % of the subnetwork's; the same chains as decisive's are said equal."""
    from subtask_induction.pages import claims as page_claims
    from subtask_induction.pages.sections import causes

    gains = {"si_bn_kept": lambda chain: 30 + chain % 3,    # 20 % + 30 points of 60 %: keeps 83 %
             "si_unit_scales": lambda chain: 6 + chain % 2,  # keeps about 44 %
             "si_top15": lambda chain: (-1) ** chain * 0.5}  # no change
    record, decisive = causes_record(tmp_path, gains)
    found = page_claims.vision_causes(record)
    assert len(found) == 6 and {c.id for c in found} == {page_claims.claim_id("vision", v, s, "pooled_accuracy")
                                                         for v in gains for s in ("si", "finetune")}
    assert causes.keeps(record, found) == {"si_bn_kept": "as the paper reports", "si_unit_scales": "keeps",
                                           "si_top15": "no"}
    said = causes.sentence(record, found)
    assert said.startswith("of three causes on the same 12 chains, keeping the base's BatchNorm (frozen) keeps "
                           "it as the paper reports (")
    assert "; no zeroed residual scales keeps more of it (" in said and said.endswith("; the paper's size does not"
                                                                                         " ([causes](docs/results.md#why-si-loses-the-shape-make-vision-causes)).")
    lines = causes.section(record, decisive, found)
    assert any("`vision/chains.csv` (base, subnetwork, si, finetune, mixture): 60 rows, every column equal" in l
               for l in lines)
    # the check can fail: a changed SI row is named with its column and chain
    chains = record.folder / "vision/chains.csv"
    frame = pd.read_csv(chains)
    frame.loc[(frame["model"] == "si") & (frame["chain"] == 17), "pooled_accuracy"] += 0.01
    frame.to_csv(chains, index=False)
    assert any("differs in ['pooled_accuracy'] (chains [17])" in line for line in causes.equality(record, decisive))
    # none holds: the sentence says so
    record, _ = causes_record(tmp_path / "none", {v: (lambda chain: (-1) ** chain * 0.5) for v in gains})
    assert "none keeps the shape" in causes.sentence(record, page_claims.vision_causes(record))
