"""The GPU path (issue 47, item 5): the arithmetic pack, resume, `device: auto`, a vision and a submasking step,
on CUDA. Every test is marked `cuda` and skips where torch sees no CUDA device; benchmarks/gpu_check.sh runs
them (`pytest -q -m cuda tests/test_cuda.py`) on the first machine with one.

Tolerances. On the CPU a pack and its points alone are bit-identical (tests/test_pack.py). On a GPU they need
not be: cuBLAS picks its batched-matmul kernels (and their order of summation) by the batch count, so a pack of
8 and a pack of 1 round differently, and the backward passes of an embedding and of the pack's advanced
indexing add with atomics in whatever order the threads arrive. Those differences start at ~1e-7 relative and
grow slowly over training; AdamW, which divides by the root of the second moment, makes them larger for weights
whose true gradient is about zero (the key bias of attention has an exactly zero gradient in exact arithmetic),
so the tests compare what the models compute (losses, logits), not each weight. A bug moves them far more: a point
trained on its mate's batch (measured on the CPU) is off by 2 in its logits and 0.05 in its loss. Each test
prints what it measured ("[gpu-check] ...", shown with `pytest -s`) so the tolerances can be tightened from the
first GPU run. The resume tests are exact: with torch.use_deterministic_algorithms the same kernels on the same
shapes give the same bits, so a resumed run must equal an uninterrupted one bit for bit, as on the CPU.
"""

import json
import math
import os
from pathlib import Path

# Deterministic cuBLAS (the resume tests) needs this before cuBLAS starts, i.e. before any test runs.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from harness import points_file  # noqa: E402
from subtask_induction.arithmetic import transfer as arithmetic_pack  # noqa: E402
from subtask_induction.arithmetic.data import build_dataset, transfer_training_rows  # noqa: E402
from subtask_induction.arithmetic.model import (accuracy, build_gpt2, lm_loss, masked_weight_names,  # noqa: E402
                                                shuffled_batches)
from subtask_induction.arithmetic.stacked import StackedGPT2, optimizer_groups  # noqa: E402
from subtask_induction.method.transfer import TransferPlan  # noqa: E402
from subtask_induction.runtime import compute_identity, resolve_device  # noqa: E402
from subtask_induction.stacked_training import StackedAdamW  # noqa: E402
from subtask_induction.steps import arithmetic_transfer  # noqa: E402
from subtask_induction.training import Checkpointing, EpochRun, Schedule, fit  # noqa: E402
from test_pack import PLANS, inputs, numbers, point  # noqa: E402,F401  (inputs: test_pack's fixture, used here)

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="needs a CUDA device: torch.cuda.is_available() is False")]

DEVICE = torch.device("cuda")
# Training losses (about 2 to 7 here) of the same point computed two ways on the GPU: ~1e-4 relative.
LOSS_TOLERANCE = 1e-3
# Logits (|logit| up to ~10) of the same trained point computed two ways on the GPU.
LOGIT_TOLERANCE = 1e-2
# GPU against CPU, both in full float32 (TF32 off, see full_fp32): per-operation rounding only, over a few steps.
CPU_RELATIVE_TOLERANCE = 1e-3
# The paper's transfer model (config/paper.yaml) and batch: the shapes the GPU runs at scale.
PAPER_MODEL = {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.0}
VOCAB = 1000  # numbers; the model adds SEP


def report(what: str, **numbers_) -> None:
    """One line per measurement, for the gpu_check log (pytest -s)."""
    print(f"[gpu-check] {what}: " + ", ".join(f"{key} {value:.3g}" if isinstance(value, float) else f"{key} {value}"
                                              for key, value in numbers_.items()), flush=True)


@pytest.fixture
def deterministic():
    """Deterministic kernels for one test (embedding and index backward without atomics, a fixed cuBLAS
    workspace, deterministic memory-efficient attention); the previous setting afterwards."""
    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(before[0], warn_only=before[1])


@pytest.fixture
def full_fp32():
    """TF32 off for one test. cuDNN convolutions use TF32 by default (10-bit mantissa, ~1e-3 relative per
    convolution), so a vision run on the GPU differs from the CPU's by more than rounding; with it off, a GPU
    step is compared with a CPU step at rounding level, which is what shows a device bug."""
    before = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


# ---- (a) a pack on the GPU against its points alone on the GPU ---------------------------------------------
def paper_points(variants, dropout, layers=2):
    """The points' models (CPU, as the step builds them) and their base's masks, at the paper's width."""
    model = {**PAPER_MODEL, "dropout": dropout}
    base = build_gpt2(VOCAB, layers, model, seed=0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    models = [PLANS[v].build(base, build_gpt2(VOCAB, layers, model, seed=seed + 1), masks,
                             torch.Generator().manual_seed(seed))
              for seed, v in enumerate(variants)]
    return base, masks, models


def train_on_gpu(models, seeds, plans, batches, lr=1e-3):
    """test_pack.train_pack on DEVICE, with each step's per-point losses."""
    stacked = StackedGPT2.from_models(models, seeds, plans).to(DEVICE)
    optimizer = StackedAdamW(optimizer_groups(stacked, lr, plans), weight_decay=0.01)
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = lm_loss(stacked, batch.to(DEVICE))
        loss.sum().backward()
        optimizer.step()
        losses.append(loss.detach().cpu())
    return stacked, torch.stack(losses)  # [steps, M]


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["sdpa", "counter_dropout"])
def test_a_pack_of_eight_on_the_gpu_computes_what_its_points_compute_alone_on_the_gpu(dropout):
    """The pack engine on CUDA at the paper's width and batch (d 128, batch 50): 8 points of five variants trained
    as one stacked model give, point by point, the losses and logits of each trained alone on the GPU (within
    LOSS_/LOGIT_TOLERANCE: see the module docstring), and the frozen subnetwork entries stay bit-identical to the
    base's on the GPU. Without dropout the attention is torch's SDPA kernel; with it, the explicit softmax and
    the counter-based dropout, whose masks must be the same alone and packed on any device."""
    variants = ["si", "sampled", "si_trainable", "random", "full", "si", "sampled", "random"]
    plans = [PLANS[v] for v in variants]
    seeds = list(range(len(variants)))
    generator = torch.Generator().manual_seed(5)
    batches = [torch.randint(0, VOCAB + 1, (len(variants), 50, 4), generator=generator) for _ in range(30)]
    held_out = torch.randint(0, VOCAB + 1, (50, 4), generator=generator).to(DEVICE)
    base, masks, models = paper_points(variants, dropout)
    pack, pack_losses = train_on_gpu(models, seeds, plans, batches)
    assert pack.weights.device.type == DEVICE.type and torch.isfinite(pack_losses).all()
    pack.eval()
    with torch.no_grad():
        pack_logits = pack(input_ids=held_out.expand(len(variants), -1, -1)).logits
    base_state = {name: value.to(DEVICE) for name, value in base.state_dict().items()}
    worst_loss = worst_logit = 0.0
    for index, variant in enumerate(variants):
        alone, alone_losses = train_on_gpu([paper_points(variants, dropout)[2][index]], [seeds[index]], [plans[index]],
                                           [batch[index:index + 1] for batch in batches])
        alone.eval()
        with torch.no_grad():
            alone_logits = alone(input_ids=held_out[None]).logits[0]
        loss_gap = (alone_losses[:, 0] - pack_losses[:, index]).abs().max().item()
        logit_gap = (alone_logits - pack_logits[index]).abs().max().item()
        worst_loss, worst_logit = max(worst_loss, loss_gap), max(worst_logit, logit_gap)
        assert loss_gap <= LOSS_TOLERANCE, (variant, loss_gap)
        assert logit_gap <= LOGIT_TOLERANCE, (variant, logit_gap)
        effective = pack.point_state_dict(index)
        for name in masks:
            start, shape = pack.sub_layout[name]
            gamma = pack.gamma[index, start:start + shape.numel()].view(shape)
            if plans[index].freezes_weights and not plans[index].trains_subnetwork:
                assert torch.equal(effective[name][gamma], base_state[name][gamma]), (variant, name)  # frozen: exact
            elif variant == "si_trainable":
                assert not torch.equal(effective[name][gamma], base_state[name][gamma])  # negative control: trains
    report(f"pack of 8 vs alone, dropout {dropout}", max_loss_gap=worst_loss, max_logit_gap=worst_logit)


def run_step(points, folder, name, device, retrain=False):
    """test_pack.run with a device: the transfer step on `points` as one pack."""
    settings = {"training": {"epochs": 4, "batch_size": 8, "lr": 3e-3, "holdout_fraction": 0.2}}
    arithmetic_transfer.main(["--points", points_file(points, folder / f"{name}.points.json"),
                              "--checkpoint", str(folder / f"{name}.ckpt"), "--checkpoint-interval-s", "0",
                              "--manifest", str(folder / f"{name}.json"), "--device", str(device),
                              "--settings", json.dumps(settings)] + (["--retrain"] if retrain else []))
    return json.loads((folder / f"{name}.json").read_text())


def close_curves(first, second, rows):
    """Two metrics.json curves equal within the GPU tolerances: losses within LOSS_TOLERANCE; accuracies (and rule
    agreements) within one item of the rows they score (`rows`: the record's counts; an argmax that is a near
    tie may flip under 1e-7 noise). Returns the largest loss gap."""
    assert len(first) == len(second)
    worst = 0.0
    for a, b in zip(first, second):
        assert a.keys() == b.keys()
        for key in a:
            if key == "epoch" or not isinstance(a[key], (int, float)):
                continue
            gap = abs(a[key] - b[key])
            if "loss" in key:
                worst = max(worst, gap)
                assert gap <= LOSS_TOLERANCE, (key, a[key], b[key])
            else:
                scored = rows["holdout"] if key.startswith("holdout") else rows["eval"] if key.startswith("eval") \
                    else rows["test"]
                assert gap <= 1 / scored + 1e-9, (key, a[key], b[key])
    return worst


def test_the_transfer_step_on_the_gpu_gives_a_pack_the_numbers_of_its_points_alone_and_of_the_cpu(inputs):
    """tests/test_pack.py's step-level check on CUDA: the transfer step (arithmetic_transfer, dropout 0.2, a 20%
    held-out slice) trains a pack of three on the GPU; each point's metrics.json equals, within the GPU
    tolerances, the point trained alone on the GPU and the same pack trained on the CPU (a device bug in the
    step's evaluation, batching or records would show against the CPU)."""
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "sampled", 1), point(inputs, "c", "si_trainable", 2)]
    manifest = run_step(points, inputs, "pack", DEVICE)
    assert manifest["trained"] == [q["out"] for q in points]
    worst = 0.0
    for index, single in enumerate(points):
        record = json.loads(Path(single["out"]).read_text())
        assert record["pack_size"] == 3 and all(math.isfinite(e["train_loss"]) for e in record["curve"])
        alone = {**single, "out": str(inputs / f"alone{index}" / "metrics.json")}
        run_step([alone], inputs, f"alone{index}", DEVICE)
        worst = max(worst, close_curves(numbers(single["out"]), numbers(alone["out"]), record["rows"]))
        on_cpu = {**single, "out": str(inputs / f"cpu{index}" / "metrics.json")}
        run_step([on_cpu], inputs, f"cpu{index}", "cpu")
        worst = max(worst, close_curves(numbers(single["out"]), numbers(on_cpu["out"]), record["rows"]))
    report("transfer step: pack on GPU vs alone on GPU and vs CPU", max_loss_gap=worst)


# ---- (b) resume on the GPU ---------------------------------------------------------------------------------
class Interrupt(Exception):
    pass


def gpu_transfer_run(checkpoint=None, interrupt_after=None, epochs=5):
    """tests/test_training.py's transfer_run on DEVICE, with dropout 0.1 so that the CUDA random stream (HF
    GPT-2 draws its dropout masks from it) must come back with the checkpoint."""
    model_settings = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.1}
    data = build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=60, eval_rows=40,
                         test_rows=40)
    rows = transfer_training_rows(data, 60).to(DEVICE)
    eval_rows = data["splits"]["eval"].to(DEVICE)
    base = build_gpt2(20, 1, model_settings, seed=0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.2
             for name in masked_weight_names(base)}
    model = TransferPlan("sampled", 0.0, True).build(base, build_gpt2(20, 1, model_settings, seed=5), masks,
                                                     torch.Generator().manual_seed(5)).to(DEVICE)
    optimizer = torch.optim.AdamW(TransferPlan("subnetwork", 0.0).parameter_groups(model, 3e-3))

    def stop(epoch):
        if interrupt_after is not None and epoch + 1 == interrupt_after:
            raise Interrupt

    torch.manual_seed(0)  # seeds the CUDA generator too
    result = fit(model, optimizer, lm_loss, lambda e: shuffled_batches(rows, 16, 0, e),
                 lambda net: {"eval_accuracy": accuracy(net, eval_rows)["accuracy"]}, Schedule(epochs),
                 Checkpointing(checkpoint, 0, "x"),
                 EpochRun(on_epoch_start=stop if interrupt_after is not None else None))
    return model, result


def test_a_resumed_gpu_run_equals_an_uninterrupted_gpu_run_bit_for_bit(tmp_path, deterministic):
    """training.fit on CUDA, interrupted after two epochs and resumed from its checkpoint, ends with the losses,
    selected epoch and weights of an uninterrupted CUDA run, exactly (deterministic kernels: module docstring).
    The checkpoint carries the CUDA random state; without it the resumed dropout masks would differ."""
    checkpoint = tmp_path / "run.ckpt"
    with pytest.raises(Interrupt):
        gpu_transfer_run(checkpoint=checkpoint, interrupt_after=3)
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["epoch"] == 2 and saved["cuda_rng"] is not None
    resumed_model, resumed = gpu_transfer_run(checkpoint=checkpoint)
    reference_model, reference = gpu_transfer_run()
    assert resumed.resumed_from_epoch == 2
    assert next(resumed_model.parameters()).device.type == DEVICE.type
    assert [r["train_loss"] for r in resumed.history] == [r["train_loss"] for r in reference.history]
    assert resumed.best_epoch == reference.best_epoch
    for a, b in zip(resumed_model.state_dict().values(), reference_model.state_dict().values()):
        assert torch.equal(a, b)


def test_an_interrupted_gpu_pack_resumes_to_the_numbers_of_an_uninterrupted_gpu_pack(inputs, monkeypatch,
                                                                                     deterministic):
    """tests/test_pack.py's resume check on CUDA: a pack killed after two epochs resumes from its checkpoint
    (StackedAdamW's moments of the trained rows only, the dropout counter) to exactly the metrics of an
    uninterrupted pack on the GPU, and the checkpoint holds CPU-loadable tensors of the trained rows only."""
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "si_trainable", 1)]
    reference = [{**q, "out": str(inputs / "ref" / q["out"].split("/")[-2] / "metrics.json")} for q in points]
    run_step(reference, inputs, "reference", DEVICE)
    real = arithmetic_pack.stacked_batches

    def interrupted(rows, batch_size, seeds, epoch):
        if epoch == 2:
            raise KeyboardInterrupt
        return real(rows, batch_size, seeds, epoch)

    with monkeypatch.context() as patch:
        patch.setattr(arithmetic_pack, "stacked_batches", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_step(points, inputs, "pack", DEVICE)
    saved = torch.load(inputs / "pack.ckpt", map_location="cpu", weights_only=True)
    assert saved["model"]["subnetwork_rows"].tolist() == [1] and saved["model"]["subnetwork"].shape[0] == 1
    assert saved["optimizer"]["state"][1]["exp_avg"].shape[0] == 1
    run_step(points, inputs, "pack", DEVICE)
    for resumed, uninterrupted in zip(points, reference):
        assert numbers(resumed["out"]) == numbers(uninterrupted["out"])


# ---- (c) device: auto ---------------------------------------------------------------------------------------
def test_device_auto_resolves_to_cuda_and_a_step_given_auto_trains_there(inputs, monkeypatch):
    """`device: auto` (config/config.yaml's default) picks CUDA when present: runtime.resolve_device, the GPU in
    the compute identity that fingerprints records, and a transfer step launched with --device auto trains its
    stacked model on the GPU."""
    assert resolve_device("auto") == torch.device("cuda")
    assert resolve_device("cuda").type == "cuda" and resolve_device("cpu").type == "cpu"
    assert compute_identity()["cuda"] == torch.cuda.get_device_name(0)
    seen = []
    real_fit = arithmetic_pack.fit

    def watching_fit(model, *args, **kwargs):
        seen.append(next(model.parameters()).device.type)
        return real_fit(model, *args, **kwargs)

    monkeypatch.setattr(arithmetic_pack, "fit", watching_fit)
    run_step([point(inputs, "a", "si", 0)], inputs, "auto", "auto")
    assert seen == ["cuda"]


# ---- (d) one vision step and one submasking step ------------------------------------------------------------
VISION_DATA = {"image_size": 16, "in_memory": True, "resize": None, "workers": 0}
TINY_RESNET = {"arch": "resnet18", "num_outputs": 16, "model_kwargs": {"channels": [4, 8, 8, 8]}}


def vision_base(world, out, device):
    from subtask_induction.steps import vision_base as step

    settings = {"chain": 0, "data": VISION_DATA, "eval_batch_size": 64,
                "model": {"spec": TINY_RESNET, "weights": None},
                "training": {"epochs": 2, "batch_size": 16, "lr": 0.05}}
    # The test folder doubles as the "pooled" test set: the step checks only that the two hold the same images.
    step.main(["--train", str(world / "pretrain"), "--eval", str(world / "eval"), "--test", str(world / "test"),
               "--pooled-test", str(world / "test"), "--device", str(device), "--checkpoint-interval-s", "0",
               "--out-model", str(out / "base.pt"), "--out-metrics", str(out / "base.json"),
               "--identity", '{"family": "vision", "stage": "base"}', "--settings", json.dumps(settings)])
    return json.loads((out / "base.json").read_text())


def test_a_vision_base_trains_on_the_gpu_as_on_the_cpu(tmp_path, full_fp32):
    """The vision base step (timm ResNet, BatchNorm, SGD; 2 epochs on a tiny generated world) on CUDA: finite
    losses within CPU_RELATIVE_TOLERANCE of the same step on the CPU, test accuracy within one image, and a
    model file of CPU tensors that a CPU-only machine loads and that scores there what the GPU recorded."""
    from subtask_induction.vision.models import load_classifier
    from subtask_induction.vision.tasks import accuracy as vision_accuracy
    from subtask_induction.vision.tasks import open_split
    from subtask_induction.vision.world import generate_world

    world = tmp_path / "world"
    generate_world(world, image_size=16, per_class={"pretrain": 3, "eval": 1, "test": 1},
                   texture_match=1.0, conflict_per_texture=1, seed=0)
    (tmp_path / "gpu").mkdir(), (tmp_path / "cpu").mkdir()
    gpu, cpu = vision_base(world, tmp_path / "gpu", DEVICE), vision_base(world, tmp_path / "cpu", "cpu")
    gpu_losses = np.array([epoch["train_loss"] for epoch in gpu["curve"]])
    cpu_losses = np.array([epoch["train_loss"] for epoch in cpu["curve"]])
    assert np.isfinite(gpu_losses).all()
    gap = float(np.max(np.abs(gpu_losses - cpu_losses) / np.abs(cpu_losses)))
    assert gap <= CPU_RELATIVE_TOLERANCE, (gpu_losses, cpu_losses)
    n_test = gpu["metrics"]["items"]["n_test"]
    assert abs(gpu["metrics"]["original_accuracy"] - cpu["metrics"]["original_accuracy"]) <= 1 / n_test + 1e-9
    saved = torch.load(tmp_path / "gpu/base.pt", weights_only=True)  # no map_location: as a CPU machine reads it
    assert all(value.device.type == "cpu" for value in saved["state_dict"].values())
    model, _ = load_classifier(tmp_path / "gpu/base.pt")
    test = open_split(str(world / "test"), VISION_DATA, "test")
    on_cpu = vision_accuracy(model.eval(), test, 64, "cpu")
    assert abs(on_cpu - gpu["metrics"]["original_accuracy"]) <= 1 / n_test + 1e-9
    report("vision base GPU vs CPU", max_relative_loss_gap=gap)


def test_submasking_points_train_on_the_gpu_and_a_linear_probe_matches_the_cpu(tmp_path, full_fp32):
    """The submasking step (tests/test_submasking.py's tiny backbone and folder task) on CUDA for a linear probe,
    full submasking (straight-through masks on every conv) and its label-free variant (rotations on the GPU):
    finite losses, boolean masks that load back from their files, and the probe's losses within
    CPU_RELATIVE_TOLERANCE of the CPU's (its accuracies within one test image). The masks themselves are not
    compared with the CPU's: with threshold 0, mask_init 1 and mask_lr 0.5, two Adam steps bring scores to about
    0, where rounding decides which side of the threshold a weight falls."""
    from subtask_induction.method.masks import load_subnetwork
    from subtask_induction.points import SubmaskingPoint
    from subtask_induction.runtime import save_torch
    from subtask_induction.steps import submasking_train
    from subtask_induction.vision.models import build_classifier, save_classifier
    from test_submasking import write_folder_task

    save_torch(save_classifier(build_classifier(TINY_RESNET, 0), TINY_RESNET), tmp_path / "base.pt")
    task = write_folder_task(tmp_path / "task", per_class=(8, 4), size=16)
    settings = {"backbone": {"name": "b", "source": "vision_base", "chain": 0, "image_size": 16},
                "task": {"name": "toy", "source": "folder"}, "image_size": 16,
                "training": {"epochs": 2, "batch_size": 8, "head_lr": 0.01, "mask_lr": 0.5, "mask_init": 1.0,
                             "threshold": 0.0, "finetune_lr": 0.001},
                "self_supervised": {"epochs": 1}, "knn": {"k": 3}}

    def run(adaptations, device, where):
        points = [{"identity": SubmaskingPoint("b", "toy", adaptation, "0.5", 0).identity(),
                   "metrics": str(tmp_path / where / adaptation / "metrics.json"),
                   "mask": str(tmp_path / where / adaptation / "mask.pt")} for adaptation in adaptations]
        submasking_train.main(["--backbone", str(tmp_path / "base.pt"), "--task-root", str(task), "--points",
                               points_file(points, tmp_path / f"{where}.points"), "--threads", "1",
                               "--device", str(device), "--checkpoint-interval-s", "0",
                               "--settings", json.dumps(settings), "--manifest", str(tmp_path / f"{where}.json")])
        return {adaptation: json.loads((tmp_path / where / adaptation / "metrics.json").read_text()) for adaptation in adaptations}

    gpu = run(("lp", "fs", "ss_fs"), DEVICE, "gpu")
    cpu = run(("lp",), "cpu", "cpu")
    for adaptation, record in gpu.items():
        assert all(math.isfinite(epoch["train_loss"]) for epoch in record["curve"] + record["pretext_curve"]), adaptation
        assert 0 <= record["metrics"]["test_accuracy"] <= 1 and 0 <= record["metrics"]["knn_accuracy"] <= 1
    for adaptation in ("fs", "ss_fs"):
        masks = load_subnetwork(tmp_path / "gpu" / adaptation / "mask.pt")["masks"]
        assert masks and all(mask.dtype == torch.bool for mask in masks.values())
        assert 0 <= gpu[adaptation]["metrics"]["off_fraction"] <= 1
    assert gpu["fs"]["mask_steps"] == 2 * 2 and gpu["ss_fs"]["mask_steps"] == 1 * 3
    gpu_losses = np.array([epoch["train_loss"] for epoch in gpu["lp"]["curve"]])
    cpu_losses = np.array([epoch["train_loss"] for epoch in cpu["lp"]["curve"]])
    gap = float(np.max(np.abs(gpu_losses - cpu_losses) / np.abs(cpu_losses)))
    assert gap <= CPU_RELATIVE_TOLERANCE, (gpu_losses, cpu_losses)
    test_rows = gpu["lp"]["rows"]["test"]
    for key in ("test_accuracy", "knn_accuracy"):
        assert abs(gpu["lp"]["metrics"][key] - cpu["lp"]["metrics"][key]) <= 1 / test_rows + 1e-9, key
    report("submasking lp GPU vs CPU", max_relative_loss_gap=gap,
           fs_off_fraction=gpu["fs"]["metrics"]["off_fraction"])
