"""Benchmark (not a test): what each step's process pays before its main runs, importing its module.

Every job runs `python -m subtask_induction.steps.X`, so every job pays its module's imports: torch, and for a step
that builds a model timm or transformers and what they pull in (torchvision, torch._dynamo, sympy, scipy). For every
module of `steps/`, this starts a fresh `python -c "import subtask_induction.steps.X"` (PYTHONPATH = the checkout's
workflow/ folder, OMP_NUM_THREADS=MKL_NUM_THREADS=1 as a 1-thread rule sets them) `--repeats` times, interleaved
across modules and checkouts (each round in its own shuffled order, so a burst of other work on the host falls on
all of them alike), after one untimed round that compiles byte code and fills the file cache. It prints per step
the median seconds of the import itself (perf_counter around it, in the child), the median wall of the whole
process (interpreter start to exit as the parent sees it, the model built included), for a step that trains the
seconds to its first model (the import, then the default config's GPT-2 or ResNet18 built with the package's own
builder: a library imported where the model is built is then counted), and which heavy packages the import left in
sys.modules.

Several checkouts in one run (`--workflow A/workflow --workflow B/workflow`) compare code before and after a
change on equal terms: the table then holds each one's medians and the ratio of the last to the first. On a shared
host read the ratios, not the absolutes. Time to the first training step is not measured here: that needs a step's
inputs (data, a base model) from the workflow; each job's log has it (`[job time] ... start-up`, subtask_induction/
timing.py).

    .venv/bin/python benchmarks/startup.py                                   # this checkout
    .venv/bin/python benchmarks/startup.py --workflow /tmp/before/workflow --workflow workflow --repeats 5
    .venv/bin/python benchmarks/startup.py --workflow A/workflow --workflow B/workflow --steps common --restored-pack

`--restored-pack` also times a whole job whose work is done: an arithmetic transfer pack (the default config's shapes,
8 points) run a second time, every point restored from its record (sweep.run_pack), as Snakemake reruns a pack whose
points are finished.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "timm", "transformers", "torchvision", "torch._dynamo", "sympy", "scipy", "pandas", "matplotlib")

CHILD = """
import json, sys, time
began = time.perf_counter()
import subtask_induction.steps.{module}
seconds = time.perf_counter() - began
heavy = [name for name in {heavy!r} if name in sys.modules]
{build}
print(json.dumps({{"import_s": seconds, "model_s": time.perf_counter() - began, "heavy": heavy}}))
"""
# A step that trains builds its model soon after its imports; where a library is imported when the model is built
# (not with the module), the import alone would flatter it. For these steps the child also builds the model the
# step builds (the default config's, with the package's own builder) and reports the seconds to it ("to model").
GPT2 = ("from subtask_induction.arithmetic.model import build_gpt2; "
        "build_gpt2(200, 2, {'n_embd': 128, 'n_head': 4, 'n_inner': 512, 'dropout': 0.0}, 0)")
RESNET = ("from subtask_induction.vision.models import build_classifier; build_classifier("
          "{'arch': 'resnet18', 'num_outputs': 16, 'model_kwargs': {'channels': [16, 32, 64, 128]}}, 0)")
BUILDS = {"arithmetic_base": GPT2, "arithmetic_discover": GPT2, "arithmetic_transfer": GPT2,
          "vision_cross_domain": GPT2 + "; " + RESNET, "submasking_train": RESNET,
          **{step: RESNET for step in ("vision_base", "vision_common", "vision_cue_conflict", "vision_diagnostics",
                                       "vision_discover", "vision_transfer")}}


# --restored-pack: a job whose work is already done. A transfer pack whose points all have records for their
# fingerprint restores them and trains nothing (sweep.run_pack): its process is start-up and reading. The inputs are
# the default config's shapes (GPT-2 of 2 layers, 200 numbers; 8 points, n = 250), written by each checkout's own
# code into a folder of its own, trained once (1 epoch), then run again as a job runs (python -m ...).
PACK_SETUP = """
import json, sys
from pathlib import Path
import torch
from subtask_induction.arithmetic.data import build_dataset
from subtask_induction.arithmetic.model import build_gpt2, masked_weight_names, save_gpt2
from subtask_induction.method.masks import save_subnetwork
from subtask_induction.points import ArithmeticPoint
from subtask_induction.runtime import save_torch
folder = Path(sys.argv[1])
model = {'n_embd': 128, 'n_head': 4, 'n_inner': 512, 'dropout': 0.0}
meta = {'n_numbers': 200, 'layers': 2, 'model_settings': model, 'computation': 'a+ab', 'modulus': 7}
save_torch(build_dataset('transfer', 'a2+ab', n_numbers=200, modulus=7, seed=0, train_rows=None, eval_rows=500,
                         test_rows=500), folder / 'data.pt')
variants = {'si': {'kind': 'subnetwork', 'lr_scale': 0.0, 'inherit_unmasked': True},
            'sampled': {'kind': 'sampled', 'lr_scale': 0.0, 'inherit_unmasked': True},
            'random': {'kind': 'random', 'lr_scale': 0.0, 'inherit_unmasked': False},
            'full': {'kind': 'full', 'lr_scale': 0.0, 'inherit_unmasked': True}}
points = []
for chain in (0, 1):
    base = build_gpt2(200, 2, model, chain)
    save_gpt2(base, meta, folder / f'base{chain}.pt')
    generator = torch.Generator().manual_seed(chain)
    save_subnetwork(folder / f'subnetwork{chain}.pt', {name: torch.rand(base.get_parameter(name).shape,
                    generator=generator) < 0.1 for name in masked_weight_names(base)}, subtask='ab')
    points += [{'identity': ArithmeticPoint(chain, 'a+ab', 'ab', 'a2+ab', 2, variant, 250, 0).identity(),
                'variant_settings': settings, 'base': str(folder / f'base{chain}.pt'),
                'subnetwork': str(folder / f'subnetwork{chain}.pt'), 'data': str(folder / 'data.pt'),
                'out': str(folder / f'{variant}{chain}' / 'metrics.json')} for variant, settings in variants.items()]
(folder / 'points.json').write_text(json.dumps(points))
"""
PACK_SETTINGS = {"training": {"epochs": 1, "batch_size": 50, "lr": 3e-4, "weight_decay": 0.01, "holdout_fraction": 0.0}}


def restored_pack(python: str, workflows: list[Path], repeats: int, seed: int) -> dict:
    """{checkout index: [wall seconds of a rerun whose 8 points are all restored, ...]}."""
    folders = [Path(tempfile.mkdtemp(prefix="startup_pack_")) for _ in workflows]

    def job(i: int) -> float:
        env = {**os.environ, "PYTHONPATH": str(workflows[i]), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        began = time.perf_counter()
        done = subprocess.run([python, "-m", "subtask_induction.steps.arithmetic_transfer", "--points",
                               str(folders[i] / "points.json"), "--checkpoint", str(folders[i] / "pack.ckpt"),
                               "--device", "cpu", "--threads", "1", "--settings", json.dumps(PACK_SETTINGS)],
                              env=env, cwd=workflows[i].parent, capture_output=True, text=True)
        wall = time.perf_counter() - began
        if done.returncode:
            raise RuntimeError(f"{workflows[i]}: the transfer pack failed:\n{done.stderr[-2000:]}")
        return wall if "8 restored from their records, 0 to train" in done.stdout else -wall

    try:
        for i, workflow in enumerate(workflows):
            env = {**os.environ, "PYTHONPATH": str(workflow), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            subprocess.run([python, "-c", PACK_SETUP, str(folders[i])], env=env, check=True, capture_output=True)
            job(i)  # trains the 8 points once, writing their records
        walls: dict = {}
        rng = random.Random(seed)
        for _ in range(repeats):
            for i in rng.sample(range(len(workflows)), len(workflows)):
                wall = job(i)
                if wall < 0:
                    raise RuntimeError(f"{workflows[i]}: the rerun trained points instead of restoring them")
                walls.setdefault(i, []).append(wall)
        return walls
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def step_modules(workflow: Path) -> list[str]:
    return sorted(p.stem for p in (workflow / "subtask_induction" / "steps").glob("*.py") if p.stem != "__init__")


def run_once(python: str, workflow: Path, module: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(workflow), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    began = time.perf_counter()
    child = CHILD.format(module=module, heavy=HEAVY, build=BUILDS.get(module, ""))
    done = subprocess.run([python, "-c", child], env=env, cwd=workflow.parent, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode:
        raise RuntimeError(f"{workflow}: importing steps.{module} failed:\n{done.stderr[-2000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "wall_s": wall}


def measure(python: str, workflows: list[Path], modules: list[str], repeats: int, seed: int) -> dict:
    """{(checkout index, module): [run, ...]} over `repeats` interleaved rounds after one untimed warm-up round."""
    runs: dict = {}
    order = [(i, module) for module in modules for i in range(len(workflows))]
    rng = random.Random(seed)
    for round_ in range(repeats + 1):
        rng.shuffle(order)
        for i, module in order:
            result = run_once(python, workflows[i], module)
            if round_:
                runs.setdefault((i, module), []).append(result)
        print(f"round {round_}/{repeats} done{' (warm-up, not counted)' if not round_ else ''}", file=sys.stderr,
              flush=True)
    return runs


def short(name: str) -> str:
    return {"torch._dynamo": "dynamo", "torchvision": "tv", "transformers": "hf", "matplotlib": "mpl"}.get(name, name)


def table(workflows: list[Path], labels: list[str], modules: list[str], runs: dict) -> str:
    medians = {key: tuple(statistics.median(r[field] for r in value) for field in ("import_s", "wall_s", "model_s"))
               for key, value in runs.items()}
    head = ["step"]
    for label in labels:
        head += [f"import s ({label})", f"process s ({label})", f"to model s ({label})"]
    if len(workflows) > 1:
        head += [f"import {labels[-1]}/{labels[0]}", f"process {labels[-1]}/{labels[0]}",
                 f"to model {labels[-1]}/{labels[0]}"]
    head += [f"heavy modules ({label})" for label in labels]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for module in modules:
        row = [module]
        built = module in BUILDS
        for i in range(len(workflows)):
            row += [f"{medians[i, module][0]:.2f}", f"{medians[i, module][1]:.2f}",
                    f"{medians[i, module][2]:.2f}" if built else "-"]
        if len(workflows) > 1:
            first, last = medians[0, module], medians[len(workflows) - 1, module]
            row += [f"{last[0] / first[0]:.2f}", f"{last[1] / first[1]:.2f}",
                    f"{last[2] / first[2]:.2f}" if built else "-"]
        for i in range(len(workflows)):
            row.append(" ".join(short(n) for n in runs[i, module][-1]["heavy"]) or "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", type=Path, action="append",
                        help="a checkout's workflow/ folder (repeat to compare; default: this checkout's)")
    parser.add_argument("--label", action="append", help="a name per --workflow (default: its checkout's folder)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the steps run with")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", nargs="*", help="only these step modules (default: every module of steps/)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rounds' shuffled orders")
    parser.add_argument("--json", type=Path, help="also write every run's numbers here")
    parser.add_argument("--restored-pack", action="store_true",
                        help="also time an arithmetic transfer job whose 8 points are all restored from their records")
    args = parser.parse_args()
    workflows = [w.resolve() for w in (args.workflow or [REPO / "workflow"])]
    labels = args.label or [w.parent.name for w in workflows]
    if len(labels) != len(workflows):
        parser.error("give one --label per --workflow")
    modules = args.steps or step_modules(workflows[0])
    missing = {str(w): sorted(set(modules) - set(step_modules(w))) for w in workflows}
    if any(missing.values()):
        parser.error(f"step modules missing in a checkout: {missing}")
    runs = measure(args.python, workflows, modules, args.repeats, args.seed)
    print(f"{len(modules)} step modules, {args.repeats} fresh processes each per checkout, medians in seconds; "
          f"heavy modules: which of {', '.join(HEAVY)} the import left in sys.modules "
          "(dynamo = torch._dynamo, tv = torchvision, hf = transformers, mpl = matplotlib)")
    for label, workflow in zip(labels, workflows):
        print(f"  {label}: {workflow}")
    print(table(workflows, labels, modules, runs))
    pack = restored_pack(args.python, workflows, args.repeats, args.seed) if args.restored_pack else {}
    if pack:
        medians = [statistics.median(pack[i]) for i in range(len(workflows))]
        print("\nA transfer job whose 8 points are all restored (python -m ...arithmetic_transfer, whole process), "
              "median s: " + ", ".join(f"{label} {m:.2f}" for label, m in zip(labels, medians))
              + (f"; {labels[-1]}/{labels[0]} {medians[-1] / medians[0]:.2f}" if len(workflows) > 1 else ""))
    if args.json:
        args.json.write_text(json.dumps({"workflows": [str(w) for w in workflows], "labels": labels,
                                         "runs": [{"checkout": labels[i], "step": module, **run}
                                                  for (i, module), value in sorted(runs.items()) for run in value],
                                         "restored_pack_s": {labels[i]: walls for i, walls in pack.items()}},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
