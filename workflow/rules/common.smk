# Helpers for the workflow: settings passed to steps, target lists, per-family constants.
import json
import math
import os
import re
import shlex
import sys
from functools import partial
from pathlib import Path

# The package's folder, found from this file's own location (not the working directory, not the main
# Snakefile's): steps reach the package through PYTHONPATH, in a venv, a conda env or a cluster's Python
# alike, installed or not, and also when another workflow imports this one as a module.
PACKAGE_ROOT = Path(workflow.current_basedir).parent
# Torch-free helpers of the package (pack forming) for building the DAG.
sys.path.insert(0, str(PACKAGE_ROOT))
from subtask_induction.method.kinds import MASKED_METHODS
from subtask_induction.listing import track_folder
from subtask_induction.packs import form_packs
from subtask_induction.vision.classes import CATEGORIES, class_folders, folder_tree_problems, member_folder_problems
from subtask_induction.vision.cue_conflict import cue_conflict_problems


def as_json(settings):
    """Settings for a step, as a deterministic JSON string (params changes trigger reruns)."""
    return json.dumps(settings, sort_keys=True)


def write_points(path, points, log):
    """A pack's points file (the *_pack_points rules: a JSON list, as the pack's step reads it), atomically;
    the log says how many."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(points)
    os.replace(temporary, path)
    Path(log).write_text(f"{len(json.loads(points))} points -> {path}\n")


def number_tag(value):
    """1e-06 for 1.0e-6: how a float looks in a path."""
    return f"{value:g}"


def one_of(values):
    return "|".join(re.escape(str(value)) for value in values)


# What the console says when a job starts, for every rule: its name and wildcards, one short line (Snakemake
# prints a rule's message instead of its inputs and outputs, which for a pack or a table run to kilobytes).
# The profiles print neither shell commands nor reasons (docs/decisions.md, "The console"). With
# SUBTASK_INDUCTION_JOB_DETAILS=1 in the environment, Snakemake's own listing comes back (inputs, outputs,
# resources), e.g. to see what a dry run would ask a cluster for.
JOB_LINE = None if os.environ.get("SUBTASK_INDUCTION_JOB_DETAILS") == "1" else "{rule} {wildcards}"


# The shell commands read the package's folder from this variable, which every Snakemake process that
# parses the workflow sets (on a cluster, the job's own Snakemake on the node): a path in the commands'
# text would make Snakemake see "code changed" and rerun every job once the project folder moves.
os.environ.update(SUBTASK_INDUCTION_PACKAGE=str(PACKAGE_ROOT))


# cpu_kernels: avx2 pins the kernels torch dispatches to on x86-64 (ATen's vectorised code, MKL's GEMM
# code path, oneDNN's ISA) to AVX2, so that AVX2 and AVX-512 machines compute the same numbers; native lets
# each CPU use its best (docs/results.md, "CPU kernels"). Read once when torch loads: set on the command line.
CPU_KERNEL_PINS = {"native": "", "avx2": "ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 "}


def step(module):
    """The shell prefix that runs a step module. OMP_NUM_THREADS must be set before torch is imported to
    bound its thread pool, so it is set here, on the command line, from the rule's `threads:`; so are the
    kernel pins (config cpu_kernels), which change numbers: changing them changes the rules' code and reruns.
    The package comes first on PYTHONPATH: this checkout's code runs, whatever else the Python has installed."""
    return (
        'PYTHONPATH="$SUBTASK_INDUCTION_PACKAGE${{PYTHONPATH:+:$PYTHONPATH}}" OMP_NUM_THREADS={threads} '
        f"MKL_NUM_THREADS={{threads}} {CPU_KERNEL_PINS[config['cpu_kernels']]}"
        f"python -m subtask_induction.steps.{module}"
    )


def train_step(module):
    """step() for a training step: it also gets its checkpoint interval, from the rule's resources. The
    interval changes no number, so it is a resource (like runtime), not a param: changing it reruns nothing."""
    return step(module) + " --checkpoint-interval-s {resources.checkpoint_interval_s}"


def then_remove_checkpoints(command, output=None, suffixes=(".ckpt",)):
    """`command`, then delete the step's resume checkpoints (its output `output` plus each suffix) once it
    has returned with its outputs written. A job killed before this point keeps them, and its retry
    resumes instead of starting over."""
    name = f"output.{output}" if output else "output"
    checkpoints = " ".join(f"{{{name}:q}}{suffix}" for suffix in suffixes)
    return f"{command} && rm -f {checkpoints}"


def rule_requests(rule):
    """What a rule's jobs ask a cluster for, from config resources.rules[rule]: runtime (minutes x attempt: a
    job killed at its limit is retried with more), mem_mb, cpus_per_task. They live in the rules, not the
    profile, because `--set-resources RULE:KEY=VALUE` on the command line replaces a profile's whole
    set-resources mapping (every other rule's entry with it) but changes only RULE:KEY of a rule's own."""
    spec = config["resources"].get("rules", {}).get(rule, {})
    requests = {}
    if "minutes" in spec:
        requests["runtime"] = lambda wildcards, attempt, minutes=spec["minutes"]: minutes * attempt
    requests.update({key: spec[key] for key in ("mem_mb", "cpus_per_task") if key in spec})
    return requests


def training_resources(rule=None):
    """gpu: GPUs a SLURM job asks for. gpu_slot: one share of a local GPU; `--resources gpu_slot=K` runs at
    most K training jobs (or packs) on it at once (profiles/gpu). Unlimited when not given (CPU runs).
    checkpoint_interval_s: read by the step (train_step); no executor limits it. Plus the rule's requests."""
    return {
        "gpu": config["resources"]["gpu_per_training_job"],
        "gpu_slot": 1,
        "checkpoint_interval_s": config["checkpoint_interval_s"],
        **(rule_requests(rule) if rule else {}),
    }


def tracked(folder, name):
    """A user's folder as an input that changes exactly when an image in it is added, replaced or removed
    (results/listings/<name>.json), rewritten while the DAG is built only when the folder's listing (relative
    paths, sizes, modification times) changes (listing.py). [] for a folder the config does not name."""
    if not folder or not Path(folder).is_dir():
        return []
    return track_folder(folder, f"results/listings/{name}.json")


def with_report(paths, captions, category, subcategory=None):
    """`paths`, those whose file name is in `captions` flagged for `snakemake --report` with their caption
    (workflow/report/<caption>.rst, relative to the rule files that call this)."""
    flagged = []
    for path in paths:  # a loop, not a comprehension: a line starting `report(` parses as the report keyword
        name = Path(path).name
        if name in captions:
            path = report(path, caption=f"../report/{captions[name]}.rst", category=category, subcategory=subcategory)
        flagged.append(path)
    return flagged


# Report captions by file name: every figure (its PNG) and summary table of every family.
ARITH_CAPTIONS = {
    "transfer.csv": "arithmetic/transfer_table",
    "table3.csv": "arithmetic/table3",
    "paper_comparison.md": "arithmetic/paper_comparison",
    "chains.md": "arithmetic/chains",
    "sparsity_dial.md": "arithmetic/sparsity_dial_table",
    "budget.csv": "arithmetic/budget_table",
    "budget.png": "arithmetic/budget",
    "base.csv": "arithmetic/base_table",
    "discovery.csv": "arithmetic/discovery_table",
    "discovery_curves.csv": "arithmetic/discovery_curves_table",
    "overlap.csv": "arithmetic/overlap_table",
    "overlap.png": "arithmetic/overlap",
    **{
        f"{figure}.png": f"arithmetic/{figure}"
        for figure in ["fig3", "fig6", "fig7", "protocols", "inheritance", "dial", "sparsity_dial", "discovery_curves"]
    },
}
VIS_CAPTIONS = {
    "table1.csv": "vision/table1",
    "table2.csv": "vision/table2",
    "chains.csv": "vision/chains",
    "comparisons.md": "vision/comparisons",
    "per_class.csv": "vision/per_class_table",
    "curves.csv": "vision/curves",
    "discovery_curves.csv": "vision/discovery_curves",
    "diagnostics.csv": "vision/diagnostics",
    "samples.png": "vision/samples",
    **{f"{figure}.png": f"vision/{figure}" for figure in ["fig5", "fig11", "per_class"]},
}
SUB_CAPTIONS = {
    "points.csv": "submasking/points",
    "accuracy.csv": "submasking/accuracy",
    "sparsity.csv": "submasking/sparsity",
    "sparsity_per_layer.csv": "submasking/sparsity_per_layer_table",
    "knn.csv": "submasking/knn",
    "mask_similarity.csv": "submasking/mask_similarity_table",
    "mask_stability.csv": "submasking/mask_stability",
    **{
        f"{figure}.png": f"submasking/{figure}"
        for figure in ["sparsity_per_layer", "label_fractions", "mask_similarity"]
    },
}


# Benchmark records (JSON lines) of the jobs a cluster would run (every rule that is not local), which
# results/resources.md compares with what the jobs asked for (workflow/rules/resources.smk).
BENCH_DIR = "results/benchmarks"
RESOURCES_REPORT = ["results/resources.md", "results/resources.csv"]


def final_targets():
    """The final targets: summary tables and figures of each configured family, and the resources report."""
    targets = []
    if "arithmetic" in config["families"]:
        targets += arith_final_targets()
    if "vision" in config["families"]:
        targets += vis_final_targets()
    if "submasking" in config["families"]:
        targets += sub_final_targets()
    return targets + RESOURCES_REPORT


def benchmark_files():
    """The benchmark record of every job of the configured families (the rules' `benchmark:` paths), each
    with its rule (the arithmetic packs under one name)."""
    files = {}

    def add(rule, paths):
        files.update({path: rule for path in paths})

    if "arithmetic" in config["families"]:
        add(
            "arithmetic_base",
            arith_experiment_paths(f"{BENCH_DIR}/arithmetic/chain{{chain}}/base/{{base}}/layers{{layers}}.jsonl"),
        )
        add(
            "arithmetic_discover",
            arith_experiment_paths(
                f"{BENCH_DIR}/arithmetic/chain{{chain}}/discovery/{{base}}/{{subtask}}/layers{{layers}}/lambda{{l0}}.jsonl",
                l0=[number_tag(x) for x in ARITH["discovery"]["l0_weights"]],
            ),
        )
        add(
            "arithmetic_overlap_discover",
            arith_experiment_paths(
                f"{BENCH_DIR}/arithmetic/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}.jsonl",
                run=list(ARITH_OVERLAP_RUNS),
                only_layers=ARITH_OVERLAP["layers"],
            ),
        )
        add(
            "arithmetic_transfer_pack",
            [f"{BENCH_DIR}/arithmetic/transfer/packs/{pack}.jsonl" for pack, _ in ARITH_PACKS],
        )
        add(
            "arithmetic_discover_budget",
            [
                f"{BENCH_DIR}/arithmetic/chain{c}/discovery_budget/{b}/{s}/layers{l}/rows{r}.jsonl"
                for c, b, s, l, r in ARITH_BUDGET
            ],
        )
    if "vision" in config["families"]:
        add(VIS_BUILDER, [f"{BENCH_DIR}/vision/data/{Path(vis_data_dir()).name}.jsonl"])
        add(
            "vision_mean_pool",
            [
                f"{BENCH_DIR}/vision/pooled/{split}/shard{shard}.jsonl"
                for split in VIS_POOLED_SPLITS
                for shard in range(VIS["pooling"]["shards"][split])
            ],
        )
        add("vision_base", expand(f"{BENCH_DIR}/vision/chain{{chain}}/base.jsonl", chain=VIS_CHAINS))
        add(
            "vision_discover",
            expand(
                f"{BENCH_DIR}/vision/chain{{chain}}/discovery/{{init}}/lambda{{penalty}}.jsonl",
                chain=VIS_CHAINS,
                init=VIS_INITS,
                penalty=[number_tag(x) for x in VIS["discovery"]["l0_weights"]],
            ),
        )
        add(
            "vision_transfer",
            expand(f"{BENCH_DIR}/vision/chain{{chain}}/transfer/{{model}}.jsonl", chain=VIS_CHAINS, model=VIS_VARIANTS),
        )
        if "pretrained" in VIS_INITS:
            add("vision_diagnostics", [f"{BENCH_DIR}/vision/diagnostics.jsonl"])
        if _vis_swap:
            add("vision_texture_swap", [f"{BENCH_DIR}/vision/data/texture_swap.jsonl"])
    if "submasking" in config["families"]:
        add(
            "submasking_task",
            [
                f"{BENCH_DIR}/submasking/tasks/{task}.jsonl"
                for task, spec in SUB_TASKS.items()
                if spec["source"] in SUB_EMBEDDED
            ],
        )
        add("submasking_pack", [f"{BENCH_DIR}/submasking/packs/{pack}.jsonl" for pack, _ in SUB_PACKS])
        if "vision" not in config["families"]:  # the backbones the submasking family trains through the DAG
            chains = sorted({spec["chain"] for spec in SUB_BACKBONES.values() if spec["source"] == "vision_base"})
            add("vision_base", [f"{BENCH_DIR}/vision/chain{chain}/base.jsonl" for chain in chains])
            if chains:
                add("vision_world", [f"{BENCH_DIR}/vision/data/world.jsonl"])
    return dict(sorted(files.items()))


# ---- arithmetic family -------------------------------------------------------------------------------
ARITH = config["arithmetic"]
# The experiments to run: the config's list, then those overlays add under names of their own
# (arithmetic.added_experiments; config/beyond.yaml): a change to the default's list reaches every overlay.
ARITH["experiments"] = ARITH["experiments"] + [
    experiment
    for name in sorted(ARITH.get("added_experiments") or {})
    for experiment in ARITH["added_experiments"][name]
]
ARITH_DIR = "results/arithmetic"
ARITH_COMPUTATIONS = sorted(
    {e["base"] for e in ARITH["experiments"]}
    | {e["subtask"] for e in ARITH["experiments"]}
    | {t for e in ARITH["experiments"] for t in e["targets"]}
)
# A chain is one seed for the whole chain base -> discovery -> transfer (the data and the held-out split are
# shared): tables give mean ± std over chains, so the spread includes the base and the discovery.
ARITH_CHAINS = ARITH["chains"]
for _experiment in ARITH["experiments"]:
    _chains = sorted(set(_experiment.get("chains", [])) - set(ARITH_CHAINS))
    if _chains:
        raise ValueError(f"config arithmetic.experiments: chains {_chains} are not in arithmetic.chains {ARITH_CHAINS}")
    _unknown = sorted(set(_experiment.get("variants", [])) - set(ARITH["transfer"]["variants"]))
    if _unknown:
        raise ValueError(
            f"config arithmetic.experiments: variants {_unknown} are not defined in arithmetic.transfer.variants"
        )
    _depths = sorted(set(_experiment.get("layers", [])) - set(ARITH["layers"]))
    if _depths:
        raise ValueError(
            f"config arithmetic.experiments: layers {_depths} are not in arithmetic.layers {ARITH['layers']}"
        )
    _sizes = sorted(set(_experiment.get("n", [])) - set(ARITH["transfer"]["disambiguation_rows"]))
    if _sizes:
        raise ValueError(
            f"config arithmetic.experiments: n {_sizes} are not in arithmetic.transfer.disambiguation_rows "
            f"{ARITH['transfer']['disambiguation_rows']}"
        )
if ARITH["model"]["n_embd"] % ARITH["model"]["n_head"]:
    raise ValueError(
        f"config arithmetic.model: n_embd {ARITH['model']['n_embd']} is not divisible by "
        f"n_head {ARITH['model']['n_head']}"
    )
if ARITH["report"]["dial_n"] not in ARITH["transfer"]["disambiguation_rows"]:
    raise ValueError(
        f"config arithmetic.report.dial_n: {ARITH['report']['dial_n']} is not one of "
        f"arithmetic.transfer.disambiguation_rows {ARITH['transfer']['disambiguation_rows']}"
    )
# The complement control is checked when the subnetwork is selected, not hours later at transfer time.
ARITH_USES_COMPLEMENT = any(
    ARITH["transfer"]["variants"][name]["method"] == "complement"
    for experiment in ARITH["experiments"]
    for name in experiment.get("variants", ARITH["transfer"]["variants"])
)
ARITH_FIGURES = ["fig3", "fig6", "fig7", "protocols", "inheritance", "dial", "sparsity_dial", "discovery_curves"]
ARITH_TABLES = [
    "base.csv",
    "discovery.csv",
    "transfer.csv",
    "table3.csv",
    "table3.md",
    "discovery_curves.csv",
    "transfer.md",
    "chains.csv",
    "chains.md",
    "sparsity_dial.md",
    "paper_comparison.md",
]


# The transfer pool holds every a!=b pair that is not held out, whatever the largest n: adding an n rewrites
# nothing a finished point read (arithmetic/data.py). Here only its size is checked, before any job.
ARITH_POOL = ARITH["n_numbers"] ** 2 - ARITH["n_numbers"] - ARITH["data"]["eval_rows"] - ARITH["data"]["test_rows"]
if max(ARITH["transfer"]["disambiguation_rows"]) > ARITH_POOL:
    raise ValueError(
        f"config arithmetic.transfer.disambiguation_rows: {max(ARITH['transfer']['disambiguation_rows'])} "
        f"rows exceed the {ARITH_POOL} a!=b pairs of {ARITH['n_numbers']} numbers that are not eval or test "
        f"pairs; lower it or raise arithmetic.n_numbers"
    )


def arith_data_settings(wildcards):
    data = ARITH["data"]
    rows = {} if wildcards.purpose == "transfer" else {"train_rows": data[wildcards.purpose]["train_rows"]}
    return as_json(
        {
            "n_numbers": ARITH["n_numbers"],
            "modulus": ARITH["modulus"],
            "seed": ARITH["seed"],
            "eval_rows": data["eval_rows"],
            "test_rows": data["test_rows"],
            **rows,
        }
    )


def arith_stage_settings(stage, chain, **extra):
    """Base steps take their optimiser settings under "training"; discovery takes them flat. The chain is
    the seed of the base's initialisation and of both stages' batch order.

    The λ list is left out: each discovery job gets its λ from the wildcard, so adding a λ value
    must not change (and rerun) the jobs already done.
    """
    section = {key: value for key, value in ARITH[stage].items() if key not in ("l0_weights", "floor")}
    return as_json(
        {
            "seed": int(chain),
            "chain": int(chain),
            **extra,
            **({"training": section} if stage != "discovery" else section),
        }
    )


ARITH_OVERLAP = ARITH.get("overlap") or {"layers": [], "runs": []}
ARITH_OVERLAP_RUNS = {run["name"]: run for run in ARITH_OVERLAP["runs"]}
_overlap_names = [run["name"] for run in ARITH_OVERLAP["runs"]]
if len(set(_overlap_names)) != len(_overlap_names) or "default" in _overlap_names:
    raise ValueError(f"config arithmetic.overlap.runs: names must be unique and not 'default', got {_overlap_names}")
if set(ARITH_OVERLAP["layers"]) - set(ARITH["layers"]):
    raise ValueError(f"config arithmetic.overlap.layers: {ARITH_OVERLAP['layers']} not all in arithmetic.layers")


# The overlap runs vary the first chain's default discovery (its base, the λ its selection chose).
ARITH_OVERLAP_CHAIN = ARITH_CHAINS[0]


def arith_overlap_settings(wildcards):
    """The default discovery (first chain, the selected λ) with one run's changes: seed, λ, mask method or mask_init."""
    run = ARITH_OVERLAP_RUNS[wildcards.run]
    section = {key: value for key, value in ARITH["discovery"].items() if key not in ("l0_weights", "floor")}
    section.update({key: value for key, value in run.items() if key in ("mask", "mask_init", "lr", "epochs")})
    return as_json({"seed": run.get("seed", ARITH_OVERLAP_CHAIN), "chain": ARITH_OVERLAP_CHAIN, **section})


def arith_overlap_l0(wildcards):
    """The run's own λ, else the one the selection chose for the overlap chain (a checkpoint: the rule lists
    that choice as an input first)."""
    run = ARITH_OVERLAP_RUNS[wildcards.run]
    if "l0_weight" in run:
        return run["l0_weight"]
    chosen = arith_selected_subnetwork(ARITH_OVERLAP_CHAIN, wildcards.base, wildcards.subtask, wildcards.layers)
    return Path(chosen).parent.name.removeprefix("lambda")


def arith_overlap_selected(wildcards):
    """The subnetworks the overlap compares against: the selection's choice per (base, subtask, depth)."""
    return sorted(
        {
            arith_selected_subnetwork(ARITH_OVERLAP_CHAIN, experiment["base"], experiment["subtask"], layers)
            for experiment in ARITH["experiments"]
            for layers in ARITH_OVERLAP["layers"]
            if layers in experiment.get("layers", ARITH["layers"])
            and ARITH_OVERLAP_CHAIN in experiment.get("chains", ARITH_CHAINS)
        }
    )


def arith_overlap_targets():
    if not ARITH_OVERLAP["runs"]:
        return []
    return [
        f"{ARITH_DIR}/summary/overlap.csv",
        f"{ARITH_DIR}/summary/overlap.md",
        f"{ARITH_DIR}/figures/overlap.png",
        f"{ARITH_DIR}/figures/overlap.pdf",
    ]


ARITH_CHAIN_DIR = f"{ARITH_DIR}/chain{{chain}}"
ARITH_TRANSFER_PATH = (
    f"{ARITH_CHAIN_DIR}/transfer/{{base}}/{{subtask}}/{{target}}/layers{{layers}}/{{variant}}/"
    f"n{{n}}/seed{{seed}}/metrics.json"
)
# The transfer seeds of chain c are 100 c + arithmetic.transfer.seeds: chain 0's are the seeds as listed.
ARITH_CHAIN_SEED_STRIDE = 100


def arith_transfer_training():
    """The transfer settings every point shares (not the sweep lists, not the pack size: neither changes
    a point's numbers, so changing them must not retrain finished points)."""
    training = {
        k: v for k, v in ARITH["transfer"].items() if k not in ("disambiguation_rows", "seeds", "variants", "pack_size")
    }
    return {"training": training}


# Points to train again although a finished record exists (--config retrain_points=[PATH]): their pack's
# params change, so Snakemake reruns that pack alone, which restores the other members.
ARITH_RETRAIN = {str(Path(path)) for path in config.get("retrain_points", [])}


def selected_subnetwork(selection):
    """The subnetwork file a selection checkpoint chose (its selected.json names it). Raises Snakemake's
    IncompleteCheckpointException until the selection has run; the DAG is completed after it."""
    return json.loads(Path(selection.output[0]).read_text())["subnetwork"]


ARITH_BUDGET_PATH = f"{ARITH_CHAIN_DIR}/discovery_budget/{{base}}/{{subtask}}/layers{{layers}}/rows{{rows}}"


def arith_selected_subnetwork(chain, base, subtask, layers):
    """The every-row subnetwork the selection chose for one (chain, base, subtask, depth)."""
    return selected_subnetwork(
        checkpoints.arithmetic_select_subnetwork.get(chain=int(chain), base=base, subtask=subtask, layers=layers)
    )


def arith_point_subnetwork(point):
    """The subnetwork a point transfers: the selection's choice (a checkpoint), or for a label-budget variant
    (discovery_rows) the discovery from that many subtask rows."""
    rows = ARITH["transfer"]["variants"][point["variant"]].get("discovery_rows")
    if rows:
        return f"{ARITH_BUDGET_PATH.format(rows=rows, **point)}/subnetwork.pt"
    return arith_selected_subnetwork(point["chain"], point["base"], point["subtask"], point["layers"])


def arith_point_args(point):
    """One point as the transfer step reads it (--points); `subnetwork` is the chosen λ's own file."""
    out = ARITH_TRANSFER_PATH.format(**point)
    chain = int(point["chain"])
    return {
        "variant": point["variant"],
        "variant_settings": ARITH["transfer"]["variants"][point["variant"]],
        "n": int(point["n"]),
        "chain": chain,
        "seed": ARITH_CHAIN_SEED_STRIDE * chain + int(point["seed"]),
        "base": f"{ARITH_DIR}/chain{chain}/base/{point['base']}/layers{point['layers']}/model.pt",
        "subnetwork": arith_point_subnetwork(point),
        "data": f"{ARITH_DIR}/data/transfer/{point['target']}.pt",
        **({"subtask_data": f"{ARITH_DIR}/data/discovery/{point['subtask']}.pt"} if point["with"] else {}),
        "out": out,
        **({"retrain": True} if out in ARITH_RETRAIN else {}),
    }


def arith_pack_inputs(members, wildcards):
    """A pack's inputs: its bases, data and the chosen subnetworks (once the selections have run)."""
    return sorted(
        {
            path
            for point in members
            for key, path in arith_point_args(point).items()
            if key in ("base", "subnetwork", "data", "subtask_data")
        }
    )


def arith_pack_selections(members):
    """The selection records (checkpoint outputs) a pack's points depend on (not the label-budget points)."""
    return sorted(
        {
            f"{ARITH_DIR}/chain{point['chain']}/discovery/{point['base']}/{point['subtask']}/"
            f"layers{point['layers']}/selected.json"
            for point in members
            if not ARITH["transfer"]["variants"][point["variant"]].get("discovery_rows")
        }
    )


def arith_pack_points(wildcards):
    """The pack's points as its step reads them (the points file's content: a change reruns the pack)."""
    return as_json([arith_point_args(point) for point in ARITH_PACK_MEMBERS[wildcards.pack]])


def arith_pack_points_inputs(wildcards):
    """The selections a pack's points read (ancient: a selection rerun that keeps its choice, a λ added that
    loses, must not rewrite the points). Raises until the selections have run (checkpoints)."""
    members = ARITH_PACK_MEMBERS[wildcards.pack]
    for point in members:
        arith_point_subnetwork(point)
    return [ancient(path) for path in arith_pack_selections(members)]


def arith_transfer_point_list():
    """Every sweep point as a dict; an experiment may run a subset of the variants, depths, chains and
    transfer seeds (its own lists)."""
    points = {}
    for experiment in ARITH["experiments"]:
        for chain in experiment.get("chains", ARITH_CHAINS):
            for target in experiment["targets"]:
                for layers in experiment.get("layers", ARITH["layers"]):
                    for variant in experiment.get("variants", list(ARITH["transfer"]["variants"])):
                        for n in experiment.get("n", ARITH["transfer"]["disambiguation_rows"]):
                            for seed in experiment.get("seeds", ARITH["transfer"]["seeds"]):
                                point = {
                                    "chain": chain,
                                    "base": experiment["base"],
                                    "subtask": experiment["subtask"],
                                    "target": target,
                                    "layers": layers,
                                    "variant": variant,
                                    "n": n,
                                    "seed": seed,
                                    # points that also train on subtask rows pack apart: their batches differ
                                    "with": ARITH["transfer"]["variants"][variant].get("subtask_rows", ""),
                                }
                                points[ARITH_TRANSFER_PATH.format(**point)] = point
    return [points[path] for path in sorted(points)]


ARITH_POINTS = arith_transfer_point_list()
_unknown_points = sorted(ARITH_RETRAIN - {ARITH_TRANSFER_PATH.format(**point) for point in ARITH_POINTS})
if _unknown_points:
    raise ValueError(f"config retrain_points: {_unknown_points} are not transfer points of this config")
# Points of one depth and one n train as one stacked model (docs/running.md, "Packs"); the packs depend on the
# config alone, so a compute node re-reading this file forms the same ones.
ARITH_PACKS = form_packs(
    ARITH_POINTS,
    ARITH["transfer"].get("pack_size", 1),
    shape=("layers", "n", "with"),
    order=("chain", "seed", "base", "subtask", "target", "variant"),
)
ARITH_PACK_MEMBERS = dict(ARITH_PACKS)


def arith_transfer_shell():
    return (
        train_step("arithmetic_transfer") + " --points {input.points:q} --settings {params.settings:q} "
        "--manifest {output.manifest:q} "
        "--checkpoint {params.checkpoint:q} --threads {threads} --device {params.device} "
        "> {log:q} 2>&1 && rm -f {params.checkpoint:q}"
    )  # the checkpoint goes once the step has returned


def arith_pack_resources(members):
    """SLURM runtime (growing with the attempt, so a retry after a time limit gets more) and memory of a pack,
    from config resources.transfer_pack: attempt * (base + P * (per_point + per_1000_rows * n / 1000) * layers / 2).
    A pack is one depth and one n: a point's cost grows with its disambiguation rows and about linearly with
    depth (per_point and per_1000_rows are a 2-layer point's; docs/results.md, "At the paper's own scale")."""
    pack, size = config["resources"]["transfer_pack"], len(members)
    minutes = pack["minutes"]
    point = (minutes["per_point"] + minutes.get("per_1000_rows", 0) * members[0]["n"] / 1000) * members[0]["layers"] / 2
    return {
        "runtime": lambda wildcards, attempt: math.ceil(attempt * (minutes["base"] + size * point)),
        "mem_mb": int(pack["mem_mb"]["base"] + size * pack["mem_mb"]["per_point"]),
        **training_resources(),
    }


def arith_experiment_paths(pattern, only_layers=None, only_chains=None, **extra):
    """expand() over the experiments list, each with its own base and subtask, depths and chains (or only
    those of them in only_layers, only_chains)."""
    paths = []
    for experiment in ARITH["experiments"]:
        layers = experiment.get("layers", ARITH["layers"])
        chains = experiment.get("chains", ARITH_CHAINS)
        if only_layers is not None:
            layers = [depth for depth in layers if depth in only_layers]
        if only_chains is not None:
            chains = [chain for chain in chains if chain in only_chains]
        paths += expand(
            pattern, base=experiment["base"], subtask=experiment["subtask"], layers=layers, chain=chains, **extra
        )
    return sorted(set(paths))


def arith_pack_manifest(pack):
    """What a pack writes last: its points, and which it trained or restored."""
    return f"{ARITH_DIR}/transfer/packs/{pack}.json"


ARITH_PACK_POINTS = f"{ARITH_DIR}/transfer/packs/{{pack}}.points.json"


def arith_discovery_metrics():
    return arith_experiment_paths(
        f"{ARITH_CHAIN_DIR}/discovery/{{base}}/{{subtask}}/layers{{layers}}/lambda{{l0}}/metrics.json",
        l0=[number_tag(x) for x in ARITH["discovery"]["l0_weights"]],
    )


def arith_base_metrics():
    return arith_experiment_paths(f"{ARITH_CHAIN_DIR}/base/{{base}}/layers{{layers}}/metrics.json")


# The label budget (variants with discovery_rows): which discoveries from fewer rows run, where.
ARITH_BUDGET = sorted(
    {
        (
            point["chain"],
            point["base"],
            point["subtask"],
            point["layers"],
            ARITH["transfer"]["variants"][point["variant"]]["discovery_rows"],
        )
        for point in ARITH_POINTS
        if ARITH["transfer"]["variants"][point["variant"]].get("discovery_rows")
    }
)
ARITH_BUDGET_VARIANTS = {
    name: {"rows": variant["discovery_rows"], "method": variant["method"]}
    for name, variant in ARITH["transfer"]["variants"].items()
    if variant.get("discovery_rows")
}


def arith_budget_files():
    """The label-budget discoveries and the discovery data (its training rows)."""
    budget = [
        f"{ARITH_BUDGET_PATH.format(chain=c, base=b, subtask=s, layers=l, rows=r)}/subnetwork.pt"
        for c, b, s, l, r in ARITH_BUDGET
    ]
    data = sorted({f"{ARITH_DIR}/data/discovery/{s}.pt" for _, _, s, _, _ in ARITH_BUDGET})
    return {"budget": budget, "data": data}


def arith_budget_full():
    """The every-row subnetworks the selections chose, which the budget discoveries are compared with (they
    use the same λ; variant si transfers them). Raises until the selections have run (checkpoints)."""
    return sorted({arith_selected_subnetwork(c, b, s, l) for c, b, s, l, _ in ARITH_BUDGET})


def arith_budget_targets():
    if not ARITH_BUDGET:
        return []
    return [
        f"{ARITH_DIR}/summary/budget.csv",
        f"{ARITH_DIR}/summary/budget.md",
        f"{ARITH_DIR}/figures/budget.png",
        f"{ARITH_DIR}/figures/budget.pdf",
    ]


def arith_final_targets():
    return (
        expand(f"{ARITH_DIR}/summary/{{table}}", table=ARITH_TABLES)
        + expand(f"{ARITH_DIR}/figures/{{figure}}.{{ext}}", figure=ARITH_FIGURES, ext=["png", "pdf"])
        + arith_overlap_targets()
        + arith_budget_targets()
    )


# ---- vision family -----------------------------------------------------------------------------------
VIS = config["vision"]
VIS_DIR = "results/vision"
VIS_SOURCE = VIS["data"]["source"]
# The rule that builds the source's image folders; its output is results/vision/data/<its name without vision_>.
VIS_BUILDER = {"world": "vision_world", "imagenet": "vision_imagenet16", "folder": "vision_folder"}[VIS_SOURCE]
VIS_FOLDER = VIS["data"].get("folder") or {}
# A folder source's classes are its sorted class folders (read while the DAG is built); the world and ImageNet
# have Geirhos' 16. Steps get them in their settings only for a folder, so no other run's settings change.
VIS_CLASSES = (
    class_folders(Path(VIS_FOLDER["root"]) / "train")
    if VIS_SOURCE == "folder" and VIS_FOLDER.get("root") and not folder_tree_problems(VIS_FOLDER["root"])
    else None
)


def vis_classes_setting():
    return {"classes": VIS_CLASSES} if VIS_SOURCE == "folder" else {}


VIS_POOLED_SPLITS = ["discovery", "eval", "test"]
VIS_TABLES = [
    "table1.csv",
    "table1.md",
    "table2.csv",
    "table2.md",
    "chains.csv",
    "chains.md",
    "comparisons.md",
    "per_class.csv",
    "curves.csv",
    "discovery_curves.csv",
]
VIS_CHAINS = VIS["chains"]
# A chain is one seed for the whole chain base -> discovery -> transfer (the world and pooling are shared):
# Table 1 reports mean ± std over chains, so the spread includes the base and discovery runs.
VIS_CHAIN_DIR = f"{VIS_DIR}/chain{{chain}}"
VIS_FIGURES = ["fig5", "fig11", "per_class"]


def vis_check_paths():
    """Local files named in the config must exist, and a user's folders must hold what the run reads by name
    (every member WNID folder of ImageNet-16, cue-conflict file names): checked while building the DAG, every
    problem once, in one message, before any job. Image contents are checked by jobs (they decode)."""
    problems = []

    def require_path(key, path, what):
        if not path:
            problems.append(f"config vision.{key}: {what} is required here and not set")
        elif not Path(path).exists():
            problems.append(f"config vision.{key}: {what} {path} does not exist")
        else:
            return True
        return False

    imagenet = VIS["data"]["imagenet"].get("root")
    cue_conflict = VIS["data"].get("cue_conflict")
    if VIS_SOURCE == "imagenet":
        if require_path("data.imagenet.root", imagenet, "ImageNet folder"):
            problems += [f"config vision.data.imagenet.root: {problem}" for problem in member_folder_problems(imagenet)]
        if not cue_conflict:
            require_path(
                "data.cue_conflict",
                cue_conflict,
                "cue-conflict folder (the generated world's is used only with source: world)",
            )
        if not VIS["model"].get("weights"):
            require_path(
                "model.weights", None, "pretrained weight file (a base is trained only on the generated world)"
            )
    if VIS_SOURCE == "folder" and require_path("data.folder.root", VIS_FOLDER.get("root"), "class-per-folder tree"):
        problems += [
            f"config vision.data.folder.root: {problem}" for problem in folder_tree_problems(VIS_FOLDER["root"])
        ]
        outputs = VIS["model"]["num_outputs"]
        if VIS_CLASSES and outputs != len(VIS_CLASSES):
            problems.append(
                f"config vision.model.num_outputs: {outputs}, but vision.data.folder.root has "
                f"{len(VIS_CLASSES)} classes {VIS_CLASSES[:10]}; set num_outputs: {len(VIS_CLASSES)}"
            )
        if VIS_CLASSES and len(VIS_CLASSES) == 1000:
            problems.append("config vision.data.folder.root: 1,000 classes would be read as ImageNet-1k's outputs")
    elif VIS["model"]["num_outputs"] not in (16, 1000):
        problems.append(
            f"config vision.model.num_outputs: {VIS['model']['num_outputs']}; the world and ImageNet-16 "
            "need 16 outputs (or 1000 ImageNet classes, read as the 16 categories)"
        )
    if cue_conflict and require_path("data.cue_conflict", cue_conflict, "cue-conflict folder"):
        problems += [
            f"config vision.data.cue_conflict: {problem}"
            for problem in cue_conflict_problems(cue_conflict, tuple(VIS_CLASSES or CATEGORIES))[1][:20]
        ]
    if VIS["model"].get("weights"):
        require_path("model.weights", VIS["model"]["weights"], "pretrained weight file")
    if VIS["pooling"]["segmenter"] == "sam":
        require_path("pooling.sam.checkpoint", VIS["pooling"]["sam"].get("checkpoint"), "SAM checkpoint")
    if problems:
        raise ValueError("\n".join(problems))


# The Table 1 models that run: vision.transfer.run (an overlay's shorter list), else every defined variant.
VIS_VARIANTS = list(VIS["transfer"].get("run") or VIS["transfer"]["variants"])
_unknown_variants = sorted(set(VIS_VARIANTS) - set(VIS["transfer"]["variants"]))
if _unknown_variants:
    raise ValueError(
        f"config vision.transfer.run: {_unknown_variants} are not defined in vision.transfer.variants "
        f"{sorted(VIS['transfer']['variants'])}"
    )


# The discoveries that run: the configured inits, plus the one each masked transfer variant reads (its
# `discovery`, pretrained unless it says label_free), so every schema-valid `inits` builds a DAG.
def vis_variant_discovery(name):
    """The discovery whose subnetwork variant `name` reads; None for a method without a mask."""
    variant = VIS["transfer"]["variants"][name]
    return variant.get("discovery", "pretrained") if variant["method"] in MASKED_METHODS else None


_vis_readers = {}
for _name in VIS_VARIANTS:
    if vis_variant_discovery(_name):
        _vis_readers.setdefault(vis_variant_discovery(_name), []).append(_name)
VIS_INITS = sorted(set(VIS["discovery"]["inits"]) | set(_vis_readers), reverse=True)
_vis_swap = [name for name in VIS_VARIANTS if VIS["transfer"]["variants"][name]["data"] == "texture_swap"]
if _vis_swap and VIS_SOURCE != "world":
    raise ValueError(
        f"config vision.transfer.variants {_vis_swap}: data texture_swap re-renders the generated world's "
        f"images with textures no class uses; vision.data.source is {VIS_SOURCE}, not world"
    )

if "vision" in config["families"]:
    vis_check_paths()
    print(
        f"vision: discoveries {VIS_INITS} per chain ("
        + ", ".join(
            f"{init}: "
            + ("read by " + ", ".join(sorted(_vis_readers[init])) if init in _vis_readers else "vision.discovery.inits")
            for init in VIS_INITS
        )
        + ")",
        file=sys.stderr,
    )
# What the builder and the cue-conflict check read, tracked by content (walked only for a run of vision).
VIS_LISTINGS = {"imagenet": [], "folder": [], "cue_conflict": []}
_vis_root = {"imagenet": VIS["data"]["imagenet"].get("root"), "folder": VIS_FOLDER.get("root")}.get(VIS_SOURCE)
if "vision" in config["families"]:
    VIS_LISTINGS = {
        "imagenet": tracked(_vis_root if VIS_SOURCE == "imagenet" else None, "vision_imagenet"),
        "folder": tracked(_vis_root if VIS_SOURCE == "folder" else None, "vision_folder"),
        "cue_conflict": tracked(VIS["data"].get("cue_conflict"), "vision_cue_conflict"),
    }
elif _vis_root and Path(_vis_root).is_dir():
    print(
        f"warning: vision.data.{VIS_SOURCE}.root {_vis_root} exists, but `families` "
        f"{config['families']} leaves vision out: add it to run the vision family",
        file=sys.stderr,
    )


def vis_data_dir():
    return f"{VIS_DIR}/data/{VIS_BUILDER.removeprefix('vision_')}"


def vis_split(split):
    return f"{vis_data_dir()}/{split}"


def vis_cue_conflict():
    """The cue-conflict folder: the user's, else the generated world's; "" for a folder source without one (the
    steps then compute no cue-conflict metric: the shape-bias columns are absent, not zero)."""
    if VIS["data"].get("cue_conflict"):
        return VIS["data"]["cue_conflict"]
    return f"{vis_data_dir()}/cue_conflict" if VIS_SOURCE == "world" else ""


def vis_pooled(split):
    return expand(f"{VIS_DIR}/pooled/{split}/shard{{shard}}", shard=range(VIS["pooling"]["shards"][split]))


def vis_pooling_settings():
    """Only the chosen segmenter's settings: changing the other one's must not rerun the pooling."""
    pooling = VIS["pooling"]
    kind = pooling["segmenter"]
    return as_json(
        {
            "seed": VIS["seed"],
            "min_area": pooling["min_area"],
            "segmenter": {"kind": kind, **pooling[kind]},
            **vis_classes_setting(),
        }
    )


def vis_model_spec():
    model = VIS["model"]
    return {"arch": model["arch"], "num_outputs": model["num_outputs"], "model_kwargs": model.get("model_kwargs") or {}}


def vis_settings(seed, **sections):
    """What every vision training step gets: its chain's seed, data reading, model, eval batch size, plus its own sections."""
    return as_json(
        {
            "seed": int(seed),
            "data": VIS["data"]["reading"],
            "eval_batch_size": VIS["eval_batch_size"],
            **vis_classes_setting(),
            **sections,
        }
    )


def vis_selected_subnetwork(chain, init):
    """The subnetwork file chain `chain`'s selection for `init` chose (after that checkpoint has run)."""
    return selected_subnetwork(checkpoints.vision_select_subnetwork.get(chain=chain, init=init))


def vis_transfer_subnetwork(wildcards):
    """The chosen subnetwork for the transfer methods that use one; nothing for the baselines (scratch,
    finetune, mixture, linear), so they never wait on (or rerun after) discovery."""
    discovery = vis_variant_discovery(wildcards.model)
    return vis_selected_subnetwork(wildcards.chain, discovery) if discovery else []


VIS_TEXTURE_SWAP = f"{VIS_DIR}/data/texture_swap"


def vis_transfer_train(wildcards):
    """The folder variant `model` trains on: the original training images, or their texture swap."""
    return f"{VIS_TEXTURE_SWAP}/train" if wildcards.model in _vis_swap else vis_split("train")


def vis_transfer_swap_input(wildcards):
    """The texture-swap folder for a variant that trains on it (its rule's output); nothing for the others."""
    return VIS_TEXTURE_SWAP if wildcards.model in _vis_swap else []


def vis_transfer_settings(wildcards):
    training = {k: v for k, v in VIS["transfer"].items() if k != "variants"}
    return vis_settings(wildcards.chain, training=training, variant=VIS["transfer"]["variants"][wildcards.model])


def vis_inputs(*extra):
    """Inputs of a step that evaluates models: the data folder, the pooled test shards, extra pooled splits."""
    inputs = {"data": vis_data_dir(), "pooled_test": vis_pooled("test")}
    for split in extra:
        inputs[f"pooled_{split}"] = vis_pooled(split)
    if vis_cue_conflict():  # checked before any training; ancient: a changed or new folder retrains nothing
        inputs["cue_conflict_check"] = ancient(VIS_CUE_CONFLICT_CHECK)
    return inputs


VIS_CUE_CONFLICT_CHECK = f"{VIS_DIR}/data/cue_conflict_check.json"


def vis_cue_conflict_inputs():
    """What the cue-conflict images come from: a user's folder and its listing (a changed image reruns what
    reads them), or the generated world's folder (its images are inside it); nothing without cue-conflict images."""
    if VIS["data"].get("cue_conflict"):
        return {"cue_conflict": VIS["data"]["cue_conflict"], "cue_conflict_listing": VIS_LISTINGS["cue_conflict"]}
    return {"data": vis_data_dir()} if vis_cue_conflict() else {}


def vis_discovery_metrics():
    return expand(
        f"{VIS_DIR}/chain{{chain}}/discovery/{{init}}/lambda{{penalty}}/metrics.json",
        chain=VIS_CHAINS,
        init=VIS_INITS,
        penalty=[number_tag(x) for x in VIS["discovery"]["l0_weights"]],
    )


def vis_transfer_metrics():
    return expand(f"{VIS_DIR}/chain{{chain}}/transfer/{{model}}/metrics.json", chain=VIS_CHAINS, model=VIS_VARIANTS)


def vis_final_targets():
    return (
        expand(f"{VIS_DIR}/summary/{{table}}", table=VIS_TABLES)
        + expand(f"{VIS_DIR}/figures/{{figure}}.{{ext}}", figure=VIS_FIGURES, ext=["png", "pdf"])
        + [f"{VIS_DIR}/figures/samples.png"]
        + (expand(f"{VIS_DIR}/summary/diagnostics.{{ext}}", ext=["csv", "md"]) if "pretrained" in VIS_INITS else [])
    )


# ---- submasking family -------------------------------------------------------------------------------
SUB = config.get("submasking", {})
SUB_DIR = "results/submasking"
SUB_BACKBONES = {entry["name"]: entry for entry in SUB.get("backbones", [])}
SUB_TASKS = {entry["name"]: entry for entry in SUB.get("tasks", [])}
SUB_EMBEDDED = ("digits", "textures", "faces")
SUB_TABLES = [
    "points.csv",
    "accuracy.csv",
    "accuracy.md",
    "sparsity.csv",
    "sparsity_per_layer.csv",
    "knn.csv",
    "tables.md",
    "mask_similarity.csv",
    "mask_stability.csv",
]
SUB_FIGURES = ["sparsity_per_layer", "label_fractions", "mask_similarity"]


def sub_check():
    """Tasks and backbone files named in the config must exist: fail while building the DAG, naming key and path."""
    problems = [
        f"config submasking.{key}: the name '{name}' appears more than once"
        for key in ("backbones", "tasks")
        for name in {e["name"] for e in SUB[key]}
        if [e["name"] for e in SUB[key]].count(name) > 1
    ]
    for name, spec in SUB_TASKS.items():
        key, source = f"config submasking.tasks.{name}", spec["source"]
        if source in SUB_EMBEDDED or source == "vision_world":
            continue
        root = Path(spec.get("root") or "")
        if not spec.get("root"):
            problems.append(f"{key}.root: required for source '{source}'")
        elif not root.is_dir():
            problems.append(f"{key}.root: {root} does not exist")
        elif source == "folder":
            for split in ("train", "test"):
                folder = root / split
                if not folder.is_dir() or not any(p.is_dir() for p in folder.iterdir()):
                    problems.append(
                        f"{key}.root: {folder} is missing or has no class folders "
                        f"(expected {split}/<class>/<image>)"
                    )
        else:  # cifar10 / cifar100 python-pickle folders as downloaded
            files = ["data_batch_1", "test_batch", "batches.meta"] if source == "cifar10" else ["train", "test", "meta"]
            missing = [f for f in files if not (root / f).is_file()]
            if missing:
                problems.append(f"{key}.root: {root} lacks {missing} (the python-pickle {source} folder)")
    for name, spec in SUB_BACKBONES.items():
        if spec["source"] != "vision_base" and not Path(spec.get("weights") or "").is_file():
            problems.append(f"config submasking.backbones.{name}.weights: {spec.get('weights')} does not exist")
    if problems:
        raise ValueError("\n".join(problems))


if "submasking" in config["families"]:
    if not SUB:
        raise ValueError("config: families lists submasking, but there is no submasking section")
    sub_check()
elif any(task.get("root") and Path(task["root"]).is_dir() for task in SUB.get("tasks", [])):
    print(
        f"warning: a submasking task folder exists, but `families` {config['families']} leaves submasking "
        f"out: add it to run the submasking family",
        file=sys.stderr,
    )


def sub_task_root(task):
    spec = SUB_TASKS[task]
    if spec["source"] in SUB_EMBEDDED:
        return f"{SUB_DIR}/tasks/{task}"
    if spec["source"] == "vision_world":
        return f"{VIS_DIR}/data/world"
    return spec["root"]


def sub_task_check(task):
    """A user's image-folder task is opened once before any point trains on it (submasking_check_task)."""
    return [f"{SUB_DIR}/checks/{task}.json"] if SUB_TASKS[task]["source"] == "folder" else []


def sub_backbone_file(backbone):
    spec = SUB_BACKBONES[backbone]
    return f"{VIS_DIR}/chain{spec['chain']}/base/model.pt" if spec["source"] == "vision_base" else spec["weights"]


def sub_train_settings(backbone, task):
    """What every point of a (backbone, task) shares (not the lists of methods, fractions, seeds, nor the
    pack size: changing those must not retrain finished points)."""
    spec = SUB_BACKBONES[backbone]
    return as_json(
        {
            "backbone": spec,
            "task": SUB_TASKS[task],
            "image_size": spec["image_size"],
            "training": SUB["training"],
            "self_supervised": SUB["self_supervised"],
            "knn": SUB["knn"],
        }
    )


SUB_POINT = f"{SUB_DIR}/points/{{backbone}}/{{task}}/{{method}}/fraction{{fraction}}/seed{{seed}}"


def sub_point_list():
    """Every configured point as a dict (fraction as it looks in paths)."""
    grid = sub_grid()
    return [
        {"backbone": b, "task": t, "method": m, "fraction": f, "seed": s}
        for b in grid["backbones"]
        for t in grid["tasks"]
        for m in grid["methods"]
        for f in grid["fractions"]
        for s in grid["seeds"]
    ]


def sub_point_args(point):
    """One point as the submasking step reads it (--points)."""
    folder = SUB_POINT.format(**point)
    return {
        "method": point["method"],
        "fraction": float(point["fraction"]),
        "seed": int(point["seed"]),
        "metrics": f"{folder}/metrics.json",
        "mask": f"{folder}/mask.pt",
    }


def sub_pack_resources(size):
    """SLURM runtime (growing with the attempt) and memory of a submasking pack of `size` points, from config
    resources.submasking_pack (the pack rules are generated: a profile cannot name them)."""
    pack = config["resources"]["submasking_pack"]
    return {
        "runtime": lambda wildcards, attempt: int(
            attempt * (pack["minutes"]["base"] + size * pack["minutes"]["per_point"])
        ),
        "mem_mb": int(pack["mem_mb"]["base"] + size * pack["mem_mb"]["per_point"]),
        **training_resources(),
    }


def sub_grid():
    """The configured points, as the lists expand() crosses (the aggregate expands the same grid)."""
    return {
        "backbones": list(SUB_BACKBONES),
        "tasks": list(SUB_TASKS),
        "methods": SUB["methods"],
        "fractions": [number_tag(f) for f in SUB["label_fractions"]],
        "seeds": SUB["seeds"],
    }


def sub_points(name):
    if not SUB:
        return []
    grid = sub_grid()
    return expand(
        f"{SUB_POINT}/{name}",
        backbone=grid["backbones"],
        task=grid["tasks"],
        method=grid["methods"],
        fraction=grid["fractions"],
        seed=grid["seeds"],
    )


# Points of one backbone and one task train in one process, a pack of at most submasking.pack_size
# (records restore finished points when a pack is re-formed); packs follow from the config alone.
SUB_PACKS = (
    form_packs(
        sub_point_list(), SUB.get("pack_size", 10), shape=("backbone", "task"), order=("method", "fraction", "seed")
    )
    if SUB
    else []
)
SUB_PACK_MEMBERS = dict(SUB_PACKS)
SUB_PACK_POINTS = f"{SUB_DIR}/packs/{{pack}}.points.json"


def sub_pack_points(wildcards):
    """The pack's points as its step reads them (the points file's content: a change reruns the pack)."""
    return as_json([sub_point_args(point) for point in SUB_PACK_MEMBERS[wildcards.pack]])


def sub_final_targets():
    return expand(f"{SUB_DIR}/summary/{{table}}", table=SUB_TABLES) + expand(
        f"{SUB_DIR}/figures/{{figure}}.{{ext}}", figure=SUB_FIGURES, ext=["png", "pdf"]
    )
