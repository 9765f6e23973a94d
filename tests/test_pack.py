"""The pack engine: transfer points trained as one stacked model each get the numbers they get alone."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from subtask_induction.method.masks import save_subnetwork
from subtask_induction.arithmetic.data import build_dataset
from subtask_induction.arithmetic.model import build_gpt2, lm_loss, load_gpt2, masked_weight_names, read_gpt2, save_gpt2
from subtask_induction.arithmetic.stacked import StackedGPT2, optimizer_groups
from subtask_induction.method.transfer import TransferPlan
from subtask_induction.packs import form_packs
from subtask_induction.runtime import save_torch, tensor_digest
from subtask_induction.stacked_training import StackedAdamW, counter_dropout, dropout_keys
from subtask_induction.arithmetic import transfer as arithmetic_pack
from subtask_induction.steps import arithmetic_transfer
from subtask_induction.training import NonFiniteLoss
from harness import REPO, points_file, transfer_identity

MODEL = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}
VARIANTS = {
    "si": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True},
    "sampled": {"kind": "sampled", "lr_scale": 0.0, "inherit_unmasked": True},
    "si_trainable": {"kind": "subnetwork", "lr_scale": 1.0, "inherit_unmasked": True},
    "random": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False},
    "full": {"kind": "full", "lr_scale": 0.0, "inherit_unmasked": True},
}
PLANS = {name: TransferPlan.from_settings(settings) for name, settings in VARIANTS.items()}
# Measured on this machine: a pack and its points alone are bit-identical (here, and 8 d=128 GPT-2s over 100
# steps). The tolerance leaves room for batched kernels that round differently by batch count elsewhere.
TOLERANCE = 1e-5


def base_and_masks(layers=2, model=MODEL):
    base = build_gpt2(20, layers, model, seed=0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    return base, masks


def point_models(base, masks, variants, model=MODEL):
    return [PLANS[v].build(base, build_gpt2(20, base.config.n_layer, model, seed=seed), masks,
                           torch.Generator().manual_seed(seed))
            for seed, v in enumerate(variants)]


def test_stacked_forward_equals_each_gpt2_it_stacks():
    base, masks = base_and_masks()
    variants = ["si", "sampled", "random", "full", "si_trainable"]
    models = point_models(base, masks, variants)
    stacked = StackedGPT2.from_models(models, list(range(len(models))), [PLANS[v] for v in variants]).eval()
    rows = torch.randint(0, 21, (len(models), 30, 4), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        logits = stacked(input_ids=rows).logits
        for index, model in enumerate(models):
            reference = model.eval()(input_ids=rows[index]).logits
            assert torch.allclose(logits[index], reference, atol=1e-5), variants[index]
            effective = stacked.point_state_dict(index)
            assert torch.equal(effective["transformer.h.0.attn.c_attn.weight"],
                               model.transformer.h[0].attn.c_attn.weight)


def train_pack(models, seeds, plans, batches, lr=3e-3):
    stacked = StackedGPT2.from_models(models, seeds, plans)
    optimizer = StackedAdamW(optimizer_groups(stacked, lr, plans), weight_decay=0.01)
    for batch in batches:
        optimizer.zero_grad()
        lm_loss(stacked, batch).sum().backward()
        optimizer.step()
    return stacked


def batches_for(count, steps=30):
    generator = torch.Generator().manual_seed(5)
    return [torch.randint(0, 21, (count, 8, 4), generator=generator) for _ in range(steps)]


def test_pack_training_equals_torch_adamw_per_point_and_keeps_frozen_entries_bit_identical():
    base, masks = base_and_masks()
    variants = ["si", "sampled", "si_trainable"]
    plans = [PLANS[v] for v in variants]
    batches = batches_for(3)
    stacked = train_pack(point_models(base, masks, variants), [0, 1, 2], plans, batches)
    base_state = base.state_dict()
    for index, variant in enumerate(variants):
        # the same point trained alone by torch's own AdamW on the HF model
        alone = point_models(base, masks, variants)[index]
        optimizer = torch.optim.AdamW(plans[index].parameter_groups(alone, 3e-3), weight_decay=0.01)
        for batch in batches:
            optimizer.zero_grad()
            lm_loss(alone, batch[index]).backward()
            optimizer.step()
        effective = stacked.point_state_dict(index)
        for name, value in alone.state_dict().items():
            if "parametrizations" not in name:
                assert torch.allclose(effective[name], value, atol=1e-4), (variant, name)
        for name in masks:
            start, shape = stacked.sub_layout[name]
            gamma = stacked.gamma[index, start:start + shape.numel()].view(shape)
            kept = effective[name][gamma]
            if variant == "si":
                assert torch.equal(gamma, masks[name])  # the discovered mask itself
            else:
                assert int(gamma.sum()) == int(masks[name].sum())  # a count-matched control, exactly
            if not plans[index].trains_subnetwork:
                assert torch.equal(kept, base_state[name][gamma])  # frozen: bit-identical to the base
            else:
                assert not torch.equal(kept, base_state[name][gamma])  # negative control: these train


def test_a_point_trained_in_a_pack_equals_it_trained_alone():
    base, masks = base_and_masks()
    variants = ["si", "sampled", "random"]
    batches = batches_for(3)
    plans = [PLANS[v] for v in variants]
    pack = train_pack(point_models(base, masks, variants), [0, 1, 2], plans, batches)
    for index in range(3):
        alone = train_pack([point_models(base, masks, variants)[index]], [index], [plans[index]],
                           [batch[index:index + 1] for batch in batches])
        difference = (alone.weights[0] - pack.weights[index]).abs().max().item()
        assert difference <= TOLERANCE, (variants[index], difference)


def test_counter_dropout_is_per_model_and_the_same_alone_or_packed():
    x = torch.ones(3, 50, 4, 16)
    keys = dropout_keys([0, 1, 2])
    packed = counter_dropout(x, 0.25, keys, step=7, site=3)
    for index in range(3):
        alone = counter_dropout(x[index:index + 1], 0.25, keys[index:index + 1], step=7, site=3)
        assert torch.equal(alone[0], packed[index])
    assert not torch.equal(packed[0], packed[1])  # each model its own mask
    assert not torch.equal(packed, counter_dropout(x, 0.25, keys, step=8, site=3))  # and per step
    assert abs(float((packed == 0).float().mean()) - 0.25) < 0.02


# ---- the transfer step on packs -----------------------------------------------------------------------
STEP_MODEL = {**MODEL, "dropout": 0.2}  # dropout on: packs must draw each point's own masks


@pytest.fixture
def inputs(tmp_path):
    base = build_gpt2(20, 1, STEP_MODEL, 0)
    meta = {"n_numbers": 20, "layers": 1, "model_settings": STEP_MODEL, "computation": "a+ab", "modulus": 7}
    save_gpt2(base, meta, tmp_path / "base.pt")
    broken = build_gpt2(20, 1, STEP_MODEL, 0)
    with torch.no_grad():
        broken.transformer.ln_f.weight.fill_(float("nan"))  # every prediction of an inheriting point is NaN
    save_gpt2(broken, meta, tmp_path / "nan_base.pt")
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    save_subnetwork(tmp_path / "subnetwork.pt", masks, subtask="ab")
    save_torch(build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=40, eval_rows=30,
                             test_rows=30), tmp_path / "data.pt")
    return tmp_path


def point(folder, name, variant, seed, base="base.pt", n=30):
    return {"identity": transfer_identity(variant, n, seed), "variant_settings": VARIANTS[variant],
            "base": str(folder / base), "subnetwork": str(folder / "subnetwork.pt"), "data": str(folder / "data.pt"),
            "out": str(folder / name / "metrics.json")}


def run(points, folder, name="pack", retrain=False, **training):
    settings = {"training": {"epochs": 4, "batch_size": 8, "lr": 3e-3, "holdout_fraction": 0.2, **training}}
    arithmetic_transfer.main(["--points", points_file(points, folder / f"{name}.points.json"), "--checkpoint", str(folder / f"{name}.ckpt"),
                              "--checkpoint-interval-s", "0",
                              "--manifest", str(folder / f"{name}.json"), "--device", "cpu",
                              "--settings", json.dumps(settings)] + (["--retrain"] if retrain else []))
    return json.loads((folder / f"{name}.json").read_text())


def numbers(path):
    record = json.loads(Path(path).read_text())
    return [{k: v for k, v in epoch.items() if k != "seconds"} for epoch in record["curve"]]


def close(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], abs=TOLERANCE), key


def test_step_pack_of_three_equals_each_point_alone(inputs):
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "sampled", 1), point(inputs, "c", "si_trainable", 2)]
    manifest = run(points, inputs)
    assert manifest["trained"] == [q["out"] for q in points] and not manifest["restored"]
    for index, single in enumerate(points):
        alone = {**single, "out": str(inputs / f"alone{index}" / "metrics.json")}
        run([alone], inputs, name=f"alone{index}")
        close(numbers(single["out"]), numbers(alone["out"]))
        assert json.loads(Path(single["out"]).read_text())["pack_size"] == 3


def test_a_nan_point_fails_alone_its_mates_finish_and_a_rerun_trains_only_it(inputs, capsys):
    points = [point(inputs, "ok", "random", 0), point(inputs, "broken", "si", 1, base="nan_base.pt"),
              point(inputs, "ok2", "sampled", 2)]
    with pytest.raises(SystemExit, match=r"broken/metrics.json: si n=30 chain=0 replicate=1, the loss became non-finite: the loss is nan"):
        run(points, inputs)
    assert not Path(points[1]["out"]).exists()
    for mate, index in ((points[0], 0), (points[2], 2)):
        assert Path(mate["out"]).is_file() and (Path(mate["out"]).parent / "record.json").is_file()
        alone = {**mate, "out": str(inputs / f"alone{index}" / "metrics.json")}
        run([alone], inputs, name=f"alone{index}")
        close(numbers(mate["out"]), numbers(alone["out"]))  # the NaN never reached them
    for mate in (points[0], points[2]):
        Path(mate["out"]).unlink()  # as Snakemake removes a failed job's outputs
    capsys.readouterr()
    with pytest.raises(NonFiniteLoss, match=r"si n=30 chain=0 replicate=1.*the loss is nan"):  # the only point left to train
        run(points, inputs)
    assert "pack of 3: 2 restored from their records, 1 to train" in capsys.readouterr().out
    assert Path(points[0]["out"]).is_file() and Path(points[2]["out"]).is_file()


def test_records_are_restored_only_for_the_same_settings_and_inputs(inputs):
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "random", 1)]
    run(points, inputs)
    first = numbers(points[0]["out"])
    assert run(points, inputs)["restored"] == [q["out"] for q in points]
    assert numbers(points[0]["out"]) == first
    retrain = [{**points[0], "retrain": True}, points[1]]  # a single-point rerun
    manifest = run(retrain, inputs)
    assert manifest["trained"] == [points[0]["out"]] and manifest["restored"] == [points[1]["out"]]
    close(numbers(points[0]["out"]), first)
    changed = [{**q, "variant_settings": {**q["variant_settings"], "lr_scale": 0.5}} for q in points[:1]]
    assert run(changed, inputs)["trained"] == [points[0]["out"]]  # other settings: not restored


def test_a_bases_digest_read_from_its_file_is_that_of_the_gpt2_it_builds(inputs):
    """A point's fingerprint covers its base's tensors, read from the file without building the GPT-2 (issue 81):
    they are the tensors load_state_dict copies into the built model, key for key."""
    path = str(inputs / "base.pt")
    reading = arithmetic_pack.Inputs({}, None, False, "")
    reading.bases[path] = read_gpt2(path)
    model, meta = load_gpt2(path)
    assert reading.base_digest(path) == tensor_digest({
        "state_dict": model.state_dict(), "layers": meta["layers"], "n_numbers": meta["n_numbers"],
        "model_settings": meta["model_settings"]})
    assert not reading.models  # digesting built nothing


def test_a_pack_whose_points_are_all_restored_builds_no_gpt2_and_never_imports_transformers(inputs):
    """A rerun pack of finished points restores them all: its process starts without transformers (~4 s of imports,
    issue 81), in a fresh interpreter as a job's."""
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "random", 1)]
    run(points, inputs)
    settings = {"training": {"epochs": 4, "batch_size": 8, "lr": 3e-3, "holdout_fraction": 0.2}}
    argv = ["--points", points_file(points, inputs / "again.points.json"), "--checkpoint", str(inputs / "again.ckpt"),
            "--manifest", str(inputs / "again.json"), "--device", "cpu", "--settings", json.dumps(settings)]
    script = ("import sys; from subtask_induction.steps import arithmetic_transfer; "
              f"arithmetic_transfer.main({argv!r}); "
              "print(sorted(m for m in ('transformers', 'timm', 'torchvision', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pack of 2: 2 restored from their records, 0 to train" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads((inputs / "again.json").read_text())["restored"] == [q["out"] for q in points]


def test_points_of_different_shapes_do_not_share_a_pack(inputs):
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "si", 1, n=10)]
    with pytest.raises(SystemExit, match="shares its number of training rows"):
        run(points, inputs)


def test_packs_are_a_function_of_the_config_alone():
    points = [{"layers": layers, "n": n, "seed": seed, "variant": variant, "base": "a+ab", "subtask": "ab",
               "target": "a2+ab"}
              for layers in (2, 3) for n in (0, 250) for seed in range(5) for variant in ("si", "sampled", "random")]
    def shape(p):
        return {"layers": p["layers"], "n": p["n"]}

    def order(p):
        return tuple(p[key] for key in ("seed", "base", "subtask", "target", "variant"))

    packs = form_packs(points, 8, shape=shape, order=order)
    shuffled = points[:]
    random.Random(3).shuffle(shuffled)
    assert form_packs(shuffled, 8, shape=shape, order=order) == packs
    assert sorted((p["layers"], p["n"], p["seed"], p["variant"]) for _, members in packs for p in members) == \
        sorted((p["layers"], p["n"], p["seed"], p["variant"]) for p in points)  # every point exactly once
    assert [len(members) for _, members in packs] == [7, 8] * 4  # 15 points per shape: two packs, balanced
    assert all(len({(p["layers"], p["n"]) for p in members}) == 1 for _, members in packs)
    assert packs[0][0].startswith("layers2_n0_1of2_")
    # a pack whose members change gets another name (its manifest, which the tables read, is then new)
    fewer = form_packs([p for p in points if p["seed"] != 4], 8, shape=shape, order=order)
    assert fewer[0][0].startswith("layers2_n0_1of2_") and fewer[0][0] != packs[0][0]


def test_an_interrupted_pack_resumes_to_the_numbers_of_an_uninterrupted_one(inputs, monkeypatch):
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "si_trainable", 1)]
    reference = [{**q, "out": str(inputs / "ref" / q["out"].split("/")[-2] / "metrics.json")} for q in points]
    run(reference, inputs, name="reference")
    real = arithmetic_pack.stacked_batches

    def interrupted(rows, batch_size, seeds, epoch):
        if epoch == 2:
            raise KeyboardInterrupt
        return real(rows, batch_size, seeds, epoch)

    with monkeypatch.context() as patch:
        patch.setattr(arithmetic_pack, "stacked_batches", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run(points, inputs)
    assert (inputs / "pack.ckpt").is_file() and not Path(points[0]["out"]).exists()
    # The checkpoint holds what training changes: no gamma, no dropout keys, only the trained point's
    # subnetwork row and only its moments for the subnetwork (si's row is rebuilt from the inputs).
    saved = torch.load(inputs / "pack.ckpt", weights_only=True)
    assert set(saved["model"]) == {"weights", "subnetwork", "subnetwork_rows", "forward_count"}
    assert saved["model"]["subnetwork_rows"].tolist() == [1] and saved["model"]["subnetwork"].shape[0] == 1
    (weights_state, subnetwork_state) = (saved["optimizer"]["state"][index] for index in (0, 1))
    assert weights_state["exp_avg"].shape[0] == 2 and subnetwork_state["exp_avg"].shape[0] == 1
    run(points, inputs)
    for resumed, uninterrupted in zip(points, reference):
        assert numbers(resumed["out"]) == numbers(uninterrupted["out"])  # dropout 0.2: its counter resumes too
        # the weights kept for each protocol's epoch came through the checkpoint: the same test numbers
        assert selected(resumed["out"]) == selected(uninterrupted["out"])


def selected(path):
    record = json.loads(Path(path).read_text())
    return {name: {k: v for k, v in chosen.items() if k != "seconds"} for name, chosen in record["metrics"].items()}


def test_each_protocol_gets_the_test_numbers_of_its_epoch_from_one_test_pass(inputs, monkeypatch):
    """The test rows are scored once per protocol, on the weights kept at its epoch: the numbers a test pass after
    every epoch gives there, to the bit (the equality the pack's evaluation promises)."""
    points = [point(inputs, "a", "si", 0), point(inputs, "b", "si_trainable", 1), point(inputs, "c", "random", 2)]
    every_epoch = []
    scored = arithmetic_pack.PackEvaluation.__call__

    def also_test(self, net):
        every_epoch.append(self._test(net))  # the old way: the test rows after every epoch
        return scored(self, net)

    monkeypatch.setattr(arithmetic_pack.PackEvaluation, "__call__", also_test)
    run(points, inputs, epochs=12, lr=3e-2)  # long and fast enough that accuracies move and protocols disagree
    assert len(every_epoch) == 12
    epochs = set()
    for index, q in enumerate(points):
        record = json.loads(Path(q["out"]).read_text())
        assert set(record["metrics"]) == {"eval", "last", "train_holdout"}
        assert all("test_accuracy" not in epoch for epoch in record["curve"])  # scored where read, not per epoch
        for name, chosen in record["metrics"].items():
            epochs.add(chosen["epoch"])
            reference = every_epoch[chosen["epoch"] - 1][index]
            assert {key: chosen[key] for key in reference} == reference, (q["out"], name)
    assert len(epochs) > 1  # the protocols chose different epochs somewhere: kept weights, not the last ones'

