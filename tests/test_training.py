"""The training loop: same seed same numbers, model selection, resume after an interruption."""

import pytest
import torch

from subtask_induction.arithmetic.data import build_dataset, transfer_training_rows
from subtask_induction.arithmetic.model import accuracy, lm_loss, masked_weight_names, shuffled_batches
from subtask_induction.method.transfer import TransferPlan
from subtask_induction.training import Checkpointing, EpochRun, Schedule, fit


class Interrupt(Exception):
    pass


def transfer_run(tiny_gpt2, checkpoint=None, interrupt_after=None, fingerprint="x", epochs=5):
    data = build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=60, eval_rows=40,
                         test_rows=40)
    rows = transfer_training_rows(data, 60)
    base = tiny_gpt2(seed=0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.2
             for name in masked_weight_names(base)}
    model = TransferPlan("sampled", 0.0, True).build(base, tiny_gpt2(seed=5), masks, torch.Generator().manual_seed(5))
    optimizer = torch.optim.AdamW(TransferPlan("subnetwork", 0.0).parameter_groups(model, 3e-3))

    def stop(epoch):
        if interrupt_after is not None and epoch + 1 == interrupt_after:
            raise Interrupt

    torch.manual_seed(0)
    result = fit(model, optimizer, lm_loss, lambda e: shuffled_batches(rows, 16, 0, e),
                 lambda net: {"eval_accuracy": accuracy(net, data["splits"]["eval"])["accuracy"]}, Schedule(epochs),
                 Checkpointing(checkpoint, 0, fingerprint), EpochRun(on_epoch_start=stop if interrupt_after is not None else None))
    return model, result


def test_same_seed_same_numbers(tiny_gpt2):
    model_a, result_a = transfer_run(tiny_gpt2)
    model_b, result_b = transfer_run(tiny_gpt2)
    assert [r["train_loss"] for r in result_a.history] == [r["train_loss"] for r in result_b.history]
    assert all(torch.equal(a, b) for a, b in zip(model_a.state_dict().values(), model_b.state_dict().values()))


def test_resume_after_interruption_matches_uninterrupted_run(tiny_gpt2, tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    with pytest.raises(Interrupt):
        transfer_run(tiny_gpt2, checkpoint=checkpoint, interrupt_after=3)
    assert torch.load(checkpoint, weights_only=True)["epoch"] == 2
    resumed_model, resumed = transfer_run(tiny_gpt2, checkpoint=checkpoint)
    reference_model, reference = transfer_run(tiny_gpt2)
    assert resumed.resumed_from_epoch == 2
    assert [r["train_loss"] for r in resumed.history] == [r["train_loss"] for r in reference.history]
    assert resumed.best_epoch == reference.best_epoch
    for a, b in zip(resumed_model.state_dict().values(), reference_model.state_dict().values()):
        assert torch.equal(a, b)


def test_checkpoint_of_other_settings_is_not_resumed(tiny_gpt2, tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    with pytest.raises(Interrupt):
        transfer_run(tiny_gpt2, checkpoint=checkpoint, interrupt_after=3, fingerprint="old")
    _, result = transfer_run(tiny_gpt2, checkpoint=checkpoint, fingerprint="new")
    assert result.resumed_from_epoch == 0 and len(result.history) == 5


def test_selection_prefers_later_epoch_on_ties_and_stops_early():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scores = iter([0.5, 0.7, 0.7, 0.6, 0.6, 0.6, 0.9])
    result = fit(model, optimizer, lambda m, b: m(b).sum(), lambda e: [torch.ones(1, 2)],
                 lambda m: {"eval_accuracy": next(scores)}, Schedule(7, patience=3))
    # patience counts from the rise at epoch 2, not from the tie at 3 (which is still the one selected)
    assert result.best_epoch == 3 and result.stopped_early and len(result.history) == 5


def test_patience_counts_from_the_last_rise_so_a_saturated_signal_stops():
    """Ties select the later epoch but do not reset patience: eval accuracy stuck at 1.0 stops after
    `patience` epochs (before, every tie restarted the count and training ran all its epochs)."""
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    signal = iter([0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    result = fit(model, optimizer, lambda net, batch: net(batch).sum(), lambda epoch: [torch.ones(1, 2)],
                 lambda net: {"eval_accuracy": next(signal)}, Schedule(10, patience=3))
    assert [record["epoch"] for record in result.history] == [1, 2, 3, 4, 5]  # rose at 2, stopped 3 epochs later
    assert result.best_epoch == 5  # the latest of the tied epochs


def _linear_model_run(schedule, checkpoint=None, interrupt_after=None, rates=None):
    """A 1-parameter-group linear model, four batches an epoch, SGD: the learning rates the steps used."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 3)
    y = 100 * x.sum(1, keepdim=True)   # large errors: large gradients

    def loss_fn(net, batch):
        if rates is not None:
            rates.append(optimizer.param_groups[0]["lr"])
        return ((net(x[batch]) - y[batch]) ** 2).mean()

    def stop(epoch):
        if interrupt_after is not None and epoch + 1 == interrupt_after:
            raise Interrupt

    fit(model, optimizer, loss_fn, lambda e: [slice(i, i + 4) for i in range(0, 16, 4)],
        lambda net: {"eval_loss": float(((net(x) - y) ** 2).mean())}, schedule,
        Checkpointing(checkpoint, 0, "x"), EpochRun(on_epoch_start=stop if interrupt_after is not None else None))
    return model


def test_a_linear_decay_takes_the_rate_to_zero_over_the_run_and_resumes_where_it_stopped(tmp_path):
    """lr_decay linear (the authors' HF Trainer): step k of T uses lr * (T - k) / T; a resumed run goes on with
    the same rates and ends with the same weights."""
    schedule = Schedule(3, select=None, lr_decay="linear")
    rates = []
    whole = _linear_model_run(schedule, rates=rates)
    assert rates == pytest.approx([0.1 * (12 - k) / 12 for k in range(12)])
    with pytest.raises(Interrupt):
        _linear_model_run(schedule, tmp_path / "run.ckpt", interrupt_after=2)
    resumed = _linear_model_run(schedule, tmp_path / "run.ckpt")
    assert torch.equal(whole.weight, resumed.weight)


def test_clipping_bounds_every_step_and_a_constant_schedule_is_unchanged():
    clipped = _linear_model_run(Schedule(1, select=None, clip_grad_norm=1.0))
    plain = _linear_model_run(Schedule(1, select=None))
    torch.manual_seed(0)
    start = torch.nn.Linear(3, 1)
    # four SGD steps of lr 0.1, each of gradient norm at most 1: the weights move at most 0.4 in all
    moved = torch.cat([clipped.weight.flatten() - start.weight.flatten(), clipped.bias - start.bias]).norm()
    assert moved <= 0.4 + 1e-6
    assert not torch.allclose(clipped.weight, plain.weight)


def test_a_minimised_selection_keeps_the_lowest_epoch_and_ties_go_later():
    values = iter([3.0, 1.0, 2.0, 1.0])
    model = torch.nn.Linear(1, 1)
    result = fit(model, torch.optim.SGD(model.parameters(), lr=0.0), lambda net, b: net(torch.ones(1, 1)).sum(),
                 lambda e: [0], lambda net: {"eval_loss": next(values)}, Schedule(4, select="eval_loss", minimize=True))
    assert result.best_epoch == 4 and result.best_metrics["eval_loss"] == 1.0   # epochs count from 1
