"""The same labels without a mask (arithmetic/subtask_rows.py): the mixture reads exactly the discovery's
rows and none of the eval or test pairs; the distillation target is the subnetwork's, not the base's."""

import torch

from subtask_induction.arithmetic.data import build_dataset
from subtask_induction.arithmetic.model import masked_weight_names
from subtask_induction.arithmetic.subtask_rows import discovery_rows, pack_batches, pack_loss, teacher_log_probs
from subtask_induction.method.masks import save_subnetwork

SIZES = {"n_numbers": 20, "modulus": 7, "seed": 0, "eval_rows": 40, "test_rows": 40}


def pairs(rows):
    return {(int(a), int(b)) for a, b in rows[:, :2].tolist()}


def test_the_mixture_reads_exactly_the_discoverys_rows_and_no_eval_or_test_pair():
    discovery = build_dataset("discovery", "ab", train_rows=100, **SIZES)
    target = build_dataset("transfer", "a2+ab", train_rows=None, **SIZES)
    budget = discovery_rows(discovery, {"train_rows": 60})  # a label-budget subnetwork read the first 60
    assert torch.equal(budget, discovery["splits"]["train"][:60])
    every = discovery_rows(discovery, {"train_rows": 100})
    assert torch.equal(every, discovery["splits"]["train"])
    held = pairs(target["splits"]["eval"]) | pairs(target["splits"]["test"])
    assert not pairs(every) & held


def test_the_distillation_target_is_the_subnetwork_not_the_base(tiny_gpt2):
    base = tiny_gpt2(seed=3)
    rows = build_dataset("discovery", "ab", train_rows=100, **SIZES)["splits"]["train"]
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.5
             for name in masked_weight_names(base)}
    before = {name: parameter.clone() for name, parameter in base.named_parameters()}
    teacher = teacher_log_probs(base, masks, rows)
    with torch.no_grad():
        own = torch.log_softmax(base(input_ids=rows).logits[:, 2, :], -1)
        masked = dict(base.named_parameters())
        for name, mask in masks.items():
            masked[name] = masked[name] * mask
        expected = torch.log_softmax(torch.func.functional_call(base, masked, (rows,)).logits[:, 2, :], -1)
    assert torch.allclose(teacher, expected, atol=1e-5) and not torch.allclose(teacher, own, atol=1e-3)
    assert all(torch.equal(before[name], parameter) for name, parameter in base.named_parameters())  # base untouched


def test_one_subtask_batch_per_target_batch_and_the_losses_add_a_subtask_term():
    from subtask_induction.arithmetic.stacked import StackedGPT2
    from subtask_induction.arithmetic.model import build_gpt2, lm_loss

    settings = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}
    models = [build_gpt2(20, 1, settings, seed) for seed in (0, 1)]
    from subtask_induction.method.transfer import TransferPlan

    stacked = StackedGPT2.from_models(models, [0, 1], [TransferPlan("random")] * 2)
    target = build_dataset("transfer", "a2+ab", train_rows=None, **SIZES)["splits"]["ambiguous"]
    subtask = build_dataset("discovery", "ab", train_rows=100, **SIZES)["splits"]["train"]
    teacher = torch.log_softmax(torch.randn(100, 21), -1)
    batches = pack_batches([target, target], 8, [0, 1], [subtask, subtask], [teacher, teacher], [5, 6], epoch=0)
    assert len(batches) == 3  # 20 target rows at batch 8
    first, rows, probs = batches[0]
    assert rows.shape == (2, 8, 4) and probs.shape == (2, 8, 21) and not torch.equal(rows[0], rows[1])
    plain = lm_loss(stacked, first)
    assert (pack_loss("mixture")(stacked, batches[0]) > plain).all()
    assert (pack_loss("distill")(stacked, batches[0]) > plain).all()


# --- the task marker and SI's own start (issue 38) -------------------------------------------------------------

MIXTURE = {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False, "subtask_rows": "mixture", "task_marker": True}


def inputs_of(tmp_path):
    """A tiny base, a subnetwork of it, the discovery (ab) and transfer (a2+ab) datasets, as the pipeline writes them."""
    from subtask_induction.arithmetic.model import build_gpt2, save_gpt2
    from subtask_induction.runtime import save_torch

    model = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}
    base = build_gpt2(20, 1, model, seed=7)
    save_gpt2(base, {"n_numbers": 20, "layers": 1, "model_settings": model, "computation": "a+ab", "modulus": 7},
              tmp_path / "base.pt")
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    save_subnetwork(tmp_path / "subnetwork.pt", masks, subtask="ab", train_rows=100)
    save_torch(build_dataset("discovery", "ab", train_rows=100, **SIZES), tmp_path / "discovery.pt")
    save_torch(build_dataset("transfer", "a2+ab", train_rows=None, **SIZES), tmp_path / "data.pt")
    return base, masks


def point_of(tmp_path, variant, settings, seed=0):
    return {"identity": transfer_identity(variant, 30, seed), "variant_settings": settings,
            "base": str(tmp_path / "base.pt"), "subnetwork": str(tmp_path / "subnetwork.pt"),
            "data": str(tmp_path / "data.pt"), "subtask_data": str(tmp_path / "discovery.pt"),
            "out": str(tmp_path / variant / "metrics.json")}


from subtask_induction.arithmetic import transfer as arithmetic_pack  # noqa: E402
from subtask_induction.steps import arithmetic_transfer  # noqa: E402
from harness import transfer_identity  # noqa: E402


def members_of(points):
    from subtask_induction.arithmetic.transfer import Inputs, build_member

    settings = {"training": {"epochs": 1, "batch_size": 8, "lr": 1e-3, "holdout_fraction": 0.0}}
    inputs = Inputs.load(points, settings)
    return [build_member(point, inputs, torch.device("cpu")) for point in points], inputs


def test_a_marked_subtask_row_never_equals_a_target_rows_input_and_an_unmarked_one_does():
    from subtask_induction.arithmetic.subtask_rows import mark, marker_token

    discovery = build_dataset("discovery", "ab", train_rows=300, **SIZES)["splits"]["train"]
    target = build_dataset("transfer", "a2+ab", train_rows=None, **SIZES)["splits"]
    target_inputs = {tuple(row) for part in target.values() for row in part[:, :3].tolist()}
    marked = mark(discovery, SIZES["n_numbers"])
    assert (marked[:, 2] == marker_token(20)).all() and torch.equal(marked[:, [0, 1, 3]], discovery[:, [0, 1, 3]])
    assert not {tuple(row) for row in marked[:, :3].tolist()} & target_inputs
    # unmarked, the same (a, b) is one input with two answers wherever ab and a2+ab differ: the contradiction
    clashes = [row for row in discovery.tolist() if tuple(row[:3]) in target_inputs
               and (row[0] * row[0] + row[0] * row[1]) % 7 != row[3]]
    assert clashes


def test_the_marked_mixture_trains_on_exactly_the_discoverys_rows_marked_and_on_no_eval_or_test_pair(tmp_path):
    from subtask_induction.arithmetic.subtask_rows import mark
    from subtask_induction.arithmetic.transfer import pack_batches_and_loss

    inputs_of(tmp_path)
    (member,), _ = members_of([point_of(tmp_path, "mixture", MIXTURE)])
    discovery = torch.load(tmp_path / "discovery.pt", weights_only=True)
    expected = mark(discovery["splits"]["train"], 20)
    assert torch.equal(member.subtask, expected)
    assert torch.equal(member.subtask_test, mark(discovery["splits"]["test"], 20))
    _, batches = pack_batches_and_loss([member], "mixture", 8)
    given = {tuple(row) for _, subtask, _ in batches(0) for row in subtask[0].tolist()}
    assert given <= {tuple(row) for row in expected.tolist()}
    target = torch.load(tmp_path / "data.pt", weights_only=True)["splits"]
    assert not pairs(torch.tensor(sorted(given))) & (pairs(target["eval"]) | pairs(target["test"]))
    # the network has the marker's token: one more than the base's vocabulary, its row fresh
    assert member.model.get_input_embeddings().num_embeddings == 22
    assert member.model.lm_head.weight is member.model.get_input_embeddings().weight
    assert "marker" in arithmetic_pack.point_seeds(member.point)
    # unmarked (the 0.3.0 mixture): the same rows in the target's format, the base's vocabulary, no marker seed
    (plain,), _ = members_of([point_of(tmp_path, "mixture_unmarked", {**MIXTURE, "task_marker": False})])
    assert torch.equal(plain.subtask, discovery["splits"]["train"])
    assert plain.model.get_input_embeddings().num_embeddings == 21
    assert "marker" not in arithmetic_pack.point_seeds(plain.point)


def test_the_inherit_baselines_start_from_sis_own_start_tensor_by_tensor(tmp_path):
    base, masks = inputs_of(tmp_path)
    inherit = {**MIXTURE, "inherit_unmasked": True}
    si = {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True}
    (si_member,), _ = members_of([point_of(tmp_path, "si", si)])
    (mixture, fresh), _ = members_of([point_of(tmp_path, "mixture_inherit", inherit), point_of(tmp_path, "mixture", MIXTURE)])
    (distill,), _ = members_of([point_of(tmp_path, "distill_inherit", {**inherit, "subtask_rows": "distill"})])
    base_state = base.state_dict()
    si_start = dict(si_member.model.named_parameters())  # masked weights: their fresh values (parametrization.original)
    for member in (mixture, distill):
        state = member.model.state_dict()
        for name, value in base_state.items():
            if name in masks:  # fresh, exactly SI's fresh weights under its mask
                original = si_start[name.replace(".weight", ".parametrizations.weight.original")]
                assert torch.equal(state[name], original), name
                assert not torch.equal(state[name], value), name
            elif name in ("transformer.wte.weight", "lm_head.weight"):  # the base's rows, then the marker's own
                assert torch.equal(state[name][:21], value) and state[name].shape[0] == 22, name
            else:  # embeddings, norms, biases: the base's, as SI has them
                assert torch.equal(state[name], value), name
                assert torch.equal(si_member.model.state_dict()[name], value), name
    # mixture and distill _inherit start identically, and the fresh mixture differs from both only where SI inherits
    assert all(torch.equal(a, b) for a, b in zip(mixture.model.state_dict().values(), distill.model.state_dict().values()))
    fresh_state = fresh.model.state_dict()
    assert torch.equal(fresh_state["transformer.wte.weight"][21], mixture.model.state_dict()["transformer.wte.weight"][21])
    assert not torch.equal(fresh_state["transformer.wpe.weight"], base_state["transformer.wpe.weight"])


def test_a_random_start_that_inherits_needs_the_masks_and_a_marker_needs_its_vocabulary(tiny_gpt2):
    import pytest

    from subtask_induction.arithmetic.subtask_rows import add_task_marker
    from subtask_induction.method.transfer import TransferPlan

    base, fresh = tiny_gpt2(seed=0), tiny_gpt2(seed=1)
    with pytest.raises(ValueError, match="needs the subnetwork's masks"):
        TransferPlan("random", inherit_unmasked=True).build(base, fresh, None, torch.Generator())
    assert TransferPlan("random", inherit_unmasked=True).reads_subnetwork
    assert not TransferPlan("random", inherit_unmasked=True).freezes_weights
    grown = add_task_marker(fresh, 20, seed=3)
    with pytest.raises(ValueError, match="vocabulary has 22 tokens"):
        add_task_marker(grown, 20, seed=3)
