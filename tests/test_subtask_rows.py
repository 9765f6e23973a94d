"""The same labels without a mask (arithmetic/subtask_rows.py): the mixture reads exactly the discovery's
rows and none of the eval or test pairs; the distillation target is the subnetwork's, not the base's."""

import torch

from subtask_induction.arithmetic.data import build_dataset
from subtask_induction.arithmetic.model import masked_weight_names
from subtask_induction.arithmetic.subtask_rows import discovery_rows, pack_batches, pack_loss, teacher_log_probs

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
