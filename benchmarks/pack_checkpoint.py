"""Bytes of one arithmetic transfer pack's resume checkpoint at the paper's settings (a benchmark, not a test).

    PYTHONPATH=workflow python benchmarks/pack_checkpoint.py            # the largest 12-layer pack of config/paper.yaml

Builds the points of the largest pack of the chosen depth exactly as config/paper.yaml forms them (its
variants, seeds and pack size; one base per base computation and a subnetwork that keeps Table 3's
fraction, random weights: bytes do not depend on values), trains it one step through `training.fit`, which
writes the checkpoint as a transfer job does, and prints the file's size with a breakdown by tensor, beside
what the same pack cost before checkpoints left out what training does not change (every tensor of the
model and of the optimizer, the frozen subnetwork rows and gamma included).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from subtask_induction.arithmetic.jobs import ArithmeticJobs  # noqa: E402
from subtask_induction.arithmetic.model import build_gpt2, lm_loss, masked_weight_names  # noqa: E402
from subtask_induction.arithmetic.stacked import StackedGPT2, optimizer_groups  # noqa: E402
from subtask_induction.method.transfer import TransferPlan  # noqa: E402
from subtask_induction.stacked_training import StackedAdamW  # noqa: E402
from subtask_induction.training import Checkpointing, EpochRun, Schedule, fit  # noqa: E402
from subtask_induction.workflow_config import upgrade_keys  # noqa: E402

KEPT = {2: 0.0768, 4: 0.0700, 6: 0.0470, 8: 0.0355, 10: 0.0356, 12: 0.0320}  # paper Table 3


def paper_pack(config: dict, layers: int) -> list:
    """The largest pack of depth `layers` (at the first n) as the workflow forms it from the paper config."""
    n = config["arithmetic"]["transfer"]["disambiguation_rows"][0]
    upgrade_keys(config)
    packs = ArithmeticJobs(config["arithmetic"]).packs
    return max((members for _, members in packs if (members[0].layers, members[0].n) == (layers, n)), key=len)


def megabytes(count: int) -> str:
    return f"{count / 1e6:,.0f} MB"


def tensor_bytes(obj) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(value) for value in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(value) for value in obj)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--paper", default=str(REPO / "config/paper.yaml"))
    p.add_argument("--layers", type=int, default=12)
    args = p.parse_args()
    torch.set_num_threads(1)
    config = yaml.safe_load(Path(args.paper).read_text())
    arithmetic = config["arithmetic"]
    members = paper_pack(config, args.layers)
    variants = arithmetic["transfer"]["variants"]
    n_numbers, settings = arithmetic["n_numbers"], arithmetic["model"]
    print(f"pack: {len(members)} points at {args.layers} layers, variants "
          + ", ".join(f"{name} {sum(m.variant == name for m in members)}" for name in variants
                      if any(m.variant == name for m in members)))
    bases, masks = {}, {}
    for member in members:
        if member.base not in bases:
            bases[member.base] = build_gpt2(n_numbers, args.layers, settings, seed=len(bases))
            generator = torch.Generator().manual_seed(len(bases))
            masks[member.base] = {name: torch.rand(parameter.shape, generator=generator) < KEPT[args.layers]
                                     for name, parameter in bases[member.base].named_parameters()
                                     if name in set(masked_weight_names(bases[member.base]))}
    plans = [TransferPlan.from_settings(variants[member.variant]) for member in members]
    models = [plan.build(bases[member.base], build_gpt2(n_numbers, args.layers, settings, seed=index),
                         masks[member.base], torch.Generator().manual_seed(index))
              for index, (plan, member) in enumerate(zip(plans, members))]
    model = StackedGPT2.from_models(models, list(range(len(members))), plans)
    del models
    optimizer = StackedAdamW(optimizer_groups(model, 2e-4, plans), weight_decay=0.01)
    batch = torch.randint(0, n_numbers, (len(members), 50, 4))
    with tempfile.TemporaryDirectory() as folder:
        checkpoint = Path(folder) / "pack.ckpt"
        fit(model, optimizer, lm_loss, lambda epoch: [batch], lambda net: [{} for _ in members], Schedule(1, select=None),
            Checkpointing(checkpoint, fingerprint="benchmark"), EpochRun(desc="pack checkpoint"))
        size = checkpoint.stat().st_size
        saved = torch.load(checkpoint, weights_only=True)
    former = (tensor_bytes(dict(model.named_parameters())) + tensor_bytes(dict(model.named_buffers()))
              + tensor_bytes(torch.optim.Optimizer.state_dict(optimizer)["state"]))
    trains = int(model.subnetwork_trains.sum())
    print(f"checkpoint file: {megabytes(size)} ({size / len(members) / 1e6:.1f} MB per point); "
          f"with every model and optimizer tensor it was {megabytes(former)}")
    for name, tensor in saved["model"].items():
        print(f"  model {name:<16} {tuple(tensor.shape)!s:<22} {megabytes(tensor_bytes(tensor))}")
    for index, state in saved["optimizer"]["state"].items():
        group = "weights" if index == 0 else "subnetwork"
        print(f"  AdamW moments of {group:<10} {tuple(state['exp_avg'].shape)!s:<22} "
              f"{megabytes(tensor_bytes(state))}")
    print(f"  {trains} of {len(members)} points train their subnetwork (lr_scale > 0); the other rows are "
          f"rebuilt from the inputs on resume")
    trained = model.weights.numel()
    floor = 3 * 4 * trained
    print(f"floor for an exact resume in float32 (weights + AdamW's two moments of every trained weight): "
          f"{megabytes(floor)}")


if __name__ == "__main__":
    main()
