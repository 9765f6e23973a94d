"""Check (not a test of the suite): the models a checkout builds, as SHA-256 digests, so two checkouts can be
compared bit for bit in fresh processes (issue 81: imports moved into functions must change no number).

For a fixed seed it builds what the steps build, the way they build it (`runtime.configure` first, then the
model): the arithmetic GPT-2 of config/config.yaml (build_gpt2, a mimetic_init copy, and the file round trip
save_gpt2 / load_gpt2), a pack of three transfer points (StackedGPT2.from_models over TransferPlans), the transfer
step's own records for a pack over two bases (steps/arithmetic_transfer.py: reading, fingerprints, training), the vision
family's quarter-width ResNet18 (channels_last) and the world's ViT (build_classifier), and a submasking
TaskModel over the vision base (load_backbone). Each gives the digest of its state_dict tensors, of its outputs
on a fixed input, and of its state_dict after one optimiser step on a fixed batch.

    .venv/bin/python benchmarks/model_digests.py                                   # this checkout's digests
    .venv/bin/python benchmarks/model_digests.py --compare /tmp/before/workflow workflow
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARITHMETIC = {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.0}   # config/config.yaml arithmetic.model
RESNET = {"arch": "resnet18", "model_kwargs": {"channels": [16, 32, 64, 128]}, "num_outputs": 16,
          "memory_format": "channels_last"}                                  # config/config.yaml vision.model
VIT = {"arch": "vit_world_patch4", "num_outputs": 16, "model_kwargs": None}  # config/vit.yaml's world ViT


def digest(tensors) -> str:
    import torch

    h = hashlib.sha256()
    items = tensors.items() if isinstance(tensors, dict) else enumerate(tensors)
    for key, value in sorted(items, key=lambda kv: str(kv[0])):
        value = value.detach().cpu().contiguous()
        h.update(f"{key} {value.dtype} {tuple(value.shape)}".encode())
        h.update((value.view(torch.uint8) if value.dtype == torch.bool else value).numpy().tobytes())
    return h.hexdigest()


def stepped(model, loss) -> str:
    """The state_dict after one AdamW step on `loss(model)` (train mode)."""
    import torch

    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    optimizer.zero_grad()
    loss(model).backward()
    optimizer.step()
    return digest(model.state_dict())


def arithmetic(out: dict, tmp: Path) -> None:
    import torch

    from subtask_induction.arithmetic.model import (build_gpt2, lm_loss, load_gpt2, masked_weight_names, mimetic_init,
                                                    save_gpt2)
    from subtask_induction.runtime import configure
    from subtask_induction.seeds import arithmetic_base_seeds

    seeds = arithmetic_base_seeds(0, "a+ab", 2)
    configure(1, seeds["batches"])
    model = build_gpt2(200, 2, ARITHMETIC, seeds["init"])
    rows = torch.randint(0, 201, (50, 4), generator=torch.Generator().manual_seed(7))
    out["gpt2 state"] = digest(model.state_dict())
    with torch.no_grad():
        out["gpt2 logits"] = digest([model.eval()(input_ids=rows).logits])
    save_gpt2(model, {"n_numbers": 200, "layers": 2, "model_settings": ARITHMETIC}, tmp / "base.pt")
    loaded, _ = load_gpt2(tmp / "base.pt")
    out["gpt2 loaded state"] = digest(loaded.state_dict())
    out["gpt2 mimetic state"] = digest(mimetic_init(build_gpt2(200, 2, ARITHMETIC, seeds["init"]), 3).state_dict())
    out["gpt2 one step"] = stepped(model, lambda m: lm_loss(m, rows))

    from subtask_induction.arithmetic.stacked import StackedGPT2
    from subtask_induction.method.transfer import TransferPlan

    masks = {name: torch.rand(loaded.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(loaded)}
    plans = [TransferPlan("subnetwork", 0.0, True), TransferPlan("sampled", 0.0, True), TransferPlan("random")]
    models = [plan.build(loaded, build_gpt2(200, 2, ARITHMETIC, seed=seed), masks, torch.Generator().manual_seed(seed))
              for seed, plan in enumerate(plans)]
    stacked = StackedGPT2.from_models(models, [11, 12, 13], plans)
    pack_rows = torch.stack([rows] * 3)
    out["pack state"] = digest(stacked.state_dict())
    with torch.no_grad():
        out["pack logits"] = digest([stacked.eval()(input_ids=pack_rows).logits])
    out["pack one step"] = stepped(stacked, lambda m: lm_loss(m, pack_rows).sum())


def transfer_step(out: dict, tmp: Path) -> None:
    """A pack of three points over two bases, trained by the step itself (steps/arithmetic_transfer.py, dropout on):
    each point's metrics.json less what names the code or the clock (fingerprint, provenance, seconds)."""
    import torch

    from subtask_induction.arithmetic.data import build_dataset
    from subtask_induction.arithmetic.model import build_gpt2, masked_weight_names, save_gpt2
    from subtask_induction.method.masks import save_subnetwork
    from subtask_induction.points import ArithmeticPoint
    from subtask_induction.runtime import save_torch
    from subtask_induction.steps import arithmetic_transfer

    model = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.2}
    meta = {"n_numbers": 20, "layers": 1, "model_settings": model, "computation": "a+ab", "modulus": 7}
    for name, seed in (("base.pt", 0), ("base2.pt", 1)):
        save_gpt2(build_gpt2(20, 1, model, seed), meta, tmp / name)
    base = build_gpt2(20, 1, model, 0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    save_subnetwork(tmp / "subnetwork.pt", masks, subtask="ab")
    save_torch(build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=40, eval_rows=30,
                             test_rows=30), tmp / "data.pt")
    variants = {"si": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True},
                "sampled": {"kind": "sampled", "lr_scale": 0.0, "inherit_unmasked": True},
                "random": {"kind": "random", "lr_scale": 0.0, "inherit_unmasked": False}}
    points = [{"identity": ArithmeticPoint(0, "a+ab", "ab", "a2+ab", 2, variant, 30, replicate).identity(),
               "variant_settings": variants[variant], "base": str(tmp / base_file),
               "subnetwork": str(tmp / "subnetwork.pt"), "data": str(tmp / "data.pt"),
               "out": str(tmp / variant / "metrics.json")}
              for replicate, (variant, base_file) in enumerate((("si", "base.pt"), ("random", "base2.pt"),
                                                                ("sampled", "base.pt")))]
    (tmp / "points.json").write_text(json.dumps(points))
    settings = {"training": {"epochs": 4, "batch_size": 8, "lr": 3e-3, "holdout_fraction": 0.2}}
    arithmetic_transfer.main(["--points", str(tmp / "points.json"), "--checkpoint", str(tmp / "pack.ckpt"),
                              "--checkpoint-interval-s", "0", "--device", "cpu", "--settings", json.dumps(settings)])

    def timeless(value):
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k not in ("seconds", "fingerprint", "provenance")}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    for q in points:
        record = timeless(json.loads(Path(q["out"]).read_text()))
        out[f"transfer step {q['identity']['variant']}"] = hashlib.sha256(
            json.dumps(record, sort_keys=True).encode()).hexdigest()


def vision(out: dict, tmp: Path) -> None:
    import torch

    from subtask_induction.runtime import configure, save_torch
    from subtask_induction.seeds import vision_seeds
    from subtask_induction.vision.models import build_classifier, save_classifier

    images = torch.randint(0, 256, (8, 3, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(7))
    labels = torch.arange(8) % 16
    for name, spec in (("resnet18", RESNET), ("vit", VIT)):
        seeds = vision_seeds("base", 0)
        configure(1, seeds["batches"])
        model = build_classifier(spec, seeds["init"])
        out[f"{name} state"] = digest(model.state_dict())
        with torch.no_grad():
            out[f"{name} outputs"] = digest([model.eval()(images)])
        if name == "resnet18":
            save_torch(save_classifier(model, spec), tmp / "vision.pt")
        out[f"{name} one step"] = stepped(model, lambda m: torch.nn.functional.nll_loss(m(images), labels))

    from subtask_induction.submasking.model import TaskModel, load_backbone

    configure(1, 5)
    task = TaskModel(load_backbone({"source": "vision_base"}, tmp / "vision.pt"), 10)
    out["submasking task state"] = digest(task.state_dict())
    with torch.no_grad():
        out["submasking task outputs"] = digest([task.eval()(images)])


def own_digests(workflow: Path) -> dict:
    sys.path.insert(0, str(workflow))
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(sys.stderr):  # the step's own lines
        arithmetic(out, Path(tmp))
        transfer_step(out, Path(tmp))
        vision(out, Path(tmp))
    import torch

    import subtask_induction

    out["where"] = str(Path(subtask_induction.__file__).parent)
    out["torch threads"] = torch.get_num_threads()
    return out


def fresh(workflow: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, __file__, "--workflow", str(workflow)], env=env, capture_output=True,
                          text=True, cwd=workflow.parent)
    if done.returncode:
        raise SystemExit(f"{workflow}: {done.stderr[-3000:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", type=Path, default=REPO / "workflow", help="the checkout's workflow/ folder")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                        help="two checkouts' workflow/ folders, each digested in a fresh process")
    args = parser.parse_args()
    if not args.compare:
        print(json.dumps(own_digests(args.workflow.resolve()), indent=1))
        return
    first, second = (fresh(w.resolve()) for w in args.compare)
    keys = [k for k in first if k != "where"]
    differ = [k for k in keys if first[k] != second.get(k)]
    for key in keys:
        print(f"{'same  ' if key not in differ else 'DIFFER'} {key}: {first[key]}"
              + (f" vs {second.get(key)}" if key in differ else ""))
    print(f"{first['where']} vs {second['where']}: "
          + ("every digest equal" if not differ else f"{len(differ)} of {len(keys)} differ"))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
