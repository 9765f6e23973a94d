"""Benchmark (not a test): what each step's process pays before its main runs, importing its module.

Every job runs `python -m subtask_induction.steps.X`, so every job pays its module's imports: torch, and for a step
that builds a model timm or transformers and what they pull in (torchvision, torch._dynamo, sympy, scipy). For every
module of `steps/`, this starts a fresh `python -c "import subtask_induction.steps.X"` (PYTHONPATH = the checkout's
workflow/ folder, OMP_NUM_THREADS=MKL_NUM_THREADS=1 as a 1-thread rule sets them) `--repeats` times, interleaved
across modules and checkouts (each round in its own shuffled order, so a burst of other work on the host falls on
all of them alike), after one untimed round that compiles byte code and fills the file cache. It prints per step
the median seconds of the import itself (perf_counter around it, in the child), the median wall of the whole
process (interpreter start to exit as the parent sees it, the model built included), for a step that trains the seconds to its first model
(the import, then the default config's GPT-2 or ResNet18 built with the package's own builder: a library imported
where the model is built is then counted), and which heavy packages the import left in sys.modules.

Several checkouts in one run (`--workflow A/workflow --workflow B/workflow`) compare code before and after a
change on equal terms: the table then holds each one's medians and the ratio of the last to the first. On a shared
host read the ratios, not the absolutes. Time to the first training step is not measured here: that needs a step's
inputs (data, a base model) from the workflow; each job's log has it (`[job time] ... start-up`, subtask_induction/
timing.py).

    .venv/bin/python benchmarks/startup.py                                   # this checkout
    .venv/bin/python benchmarks/startup.py --workflow /tmp/before/workflow --workflow workflow --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
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
    if args.json:
        args.json.write_text(json.dumps({"workflows": [str(w) for w in workflows], "labels": labels,
                                         "runs": [{"checkout": labels[i], "step": module, **run}
                                                  for (i, module), value in sorted(runs.items()) for run in value]},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
