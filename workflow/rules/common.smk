# What every family's rules share: the step command, resources, report flags, the final targets. Each family's
# jobs (settings, points, paths, targets) are the package's <family>/jobs.py, built once by the Snakefile
# (SWEEP); what a family's rules need of Snakemake itself (checkpoints, listings, data checks) stands beside
# its rules, in <family>_helpers.smk.
import json
import os
import re
import shlex
import sys
from functools import partial
from pathlib import Path

from snakemake.exceptions import WorkflowError

# The package's folder, found from this file's own location (not the working directory, not the main
# Snakefile's): steps reach the package through PYTHONPATH, in a venv, a conda env or a cluster's Python
# alike, installed or not, and also when another workflow imports this one as a module.
PACKAGE_ROOT = Path(workflow.current_basedir).parent
# Torch-free helpers of the package (pack forming) for building the DAG.
sys.path.insert(0, str(PACKAGE_ROOT))
from subtask_induction.config_checks import check_config
from subtask_induction.data_checks import retrain_problems, submasking_data_problems, vision_data_problems
from subtask_induction.jobs import BENCH_DIR, as_json
from subtask_induction.job_python import job_python_problem
from subtask_induction.kernels import pin_prefix
from subtask_induction.files import write_text
from subtask_induction.listing import folder_digest, track_folder
from subtask_induction.packs import pack_mem_mb, pack_minutes, pack_work
from subtask_induction.run_lock import hold_for_workflow
from subtask_induction.upgrade import pending as upgrade_pending
from subtask_induction.workflow_config import normalise, take_batches, upgrade_keys

# The jobs run the first `python` on PATH: unless a software deployment method gives them their own (conda), it
# must have the dependencies, or every job would fail on `import torch` in its log alone. Checked when a run
# starts (onstart: before any job; a dry run or a lint runs no job and is not stopped).
_DEPLOYMENT = {str(m).lower().rsplit(".", 1)[-1] for m in workflow.deployment_settings.deployment_method}


# A run folder of an earlier version (or an interrupted upgrade) must be upgraded before a run, or finished points
# would train again: a run stops before any job (onstart), a dry run (which runs no onstart) warns here.
_UPGRADE_NEEDED = upgrade_pending(Path("."))
if _UPGRADE_NEEDED:
    print(f"warning: {_UPGRADE_NEEDED}", file=sys.stderr)


onstart:
    _problem = None if "conda" in _DEPLOYMENT else job_python_problem()
    if _problem:
        raise WorkflowError(_problem)
    if _UPGRADE_NEEDED:
        raise WorkflowError(_UPGRADE_NEEDED)


def write_points(path, points, log):
    """A pack's points file (the *_pack_points rules: a JSON list, as the pack's step reads it), atomically;
    the log says how many."""
    write_text(Path(path), points)
    Path(log).write_text(f"{len(json.loads(points))} points -> {path}\n")


def select_in_process(subnetworks, out, flags, log):
    """A selection (the checkpoints *_select_subnetwork; steps/select_subnetwork.py) in Snakemake's own process: it
    reads a few small files, and a process of its own would spend seconds importing torch for it. A floor or
    complement failure fails the job, naming the file, in its log too."""
    from subtask_induction.steps.select_subnetwork import select

    try:
        lines = select(list(subnetworks), out, "--check-complement" in flags, "--floor" in flags)
    except ValueError as error:
        Path(log).write_text(f"error: {error}\n")
        raise WorkflowError(f"error: {error}") from None
    Path(log).write_text("\n".join(lines) + "\n")


def write_roster(family, planned, spares, metrics, out, log):
    """A family's roster (the checkpoints *_roster; roster.py): its planned chains, each whose base failed replaced by
    the next spare that passed, from every planned and spare base's metrics.json."""
    from subtask_induction.roster import write_from_bases

    write_from_bases(family, list(planned), list(spares), list(metrics), out, log)


def roster_threshold(family):
    """The validity criterion a roster judges the bases by (a param of the roster checkpoints: a changed criterion
    judges them again); read only where a plan has spares, so that building a DAG imports no pandas."""
    from subtask_induction.validity import BASE_VALID

    return BASE_VALID[family]


_ON_ROSTER = {}


def on_roster(jobs, family, roster_checkpoint):
    """`jobs` (a family's, SWEEP's), or where its plan names spare chains the jobs of its roster's chains, read from the
    family's roster checkpoint (`roster_checkpoint()` returns its job: raises until it has run, and the DAG is
    completed after it). Built once per roster."""
    if not jobs.spares:
        return jobs
    from subtask_induction.roster import read as read_roster

    chains = tuple(read_roster(Path(roster_checkpoint().output[0]), family).chains)
    if (family, chains) not in _ON_ROSTER:
        _ON_ROSTER[family, chains] = jobs.on_roster(list(chains))
    return _ON_ROSTER[family, chains]


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


def step(module):
    """The shell prefix that runs a step module. OMP_NUM_THREADS must be set before torch is imported to
    bound its thread pool, so it is set here, on the command line, from the rule's `threads:`; so are the
    kernel pins (config cpu_kernels), which change numbers: changing them changes the rules' code and reruns.
    The package comes first on PYTHONPATH: this checkout's code runs, whatever else the Python has installed."""
    return (
        'PYTHONPATH="$SUBTASK_INDUCTION_PACKAGE${{PYTHONPATH:+:$PYTHONPATH}}" OMP_NUM_THREADS={threads} '
        f"MKL_NUM_THREADS={{threads}} {pin_prefix(config['cpu_kernels'])}"
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
    job killed at its limit is retried with more), mem_mb, cpus_per_task, and for a rule that needs no GPU
    (cpu: true) the partition resources.cpu_partition. They live in the rules, not the profile, because
    `--set-resources RULE:KEY=VALUE` on the command line replaces a profile's whole set-resources mapping
    (every other rule's entry with it) but changes only RULE:KEY of a rule's own."""
    spec = config["resources"].get("rules", {}).get(rule, {})
    requests = {}
    if "minutes" in spec:
        requests["runtime"] = lambda wildcards, attempt, minutes=spec["minutes"]: minutes * attempt
    requests.update({key: spec[key] for key in ("mem_mb", "cpus_per_task") if key in spec})
    if spec.get("cpu") and config["resources"].get("cpu_partition"):
        requests["slurm_partition"] = config["resources"]["cpu_partition"]
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


def pack_resources(costs, members):
    """SLURM runtime (growing with the attempt, so a retry after a time limit gets more) and memory of a pack of
    `members`, from config resources.<costs> (transfer_pack, submasking_pack; packs.pack_minutes): a point's cost
    grows with its disambiguation rows (arithmetic: a pack is one n) and about linearly with depth (the paper-scale
    run records, docs/data/paper_depth*). One rule for both families that train in packs."""
    pack, size = config["resources"][costs], len(members)
    rows, layers = getattr(members[0], "n", 0), getattr(members[0], "layers", 2)
    return {
        "runtime": lambda wildcards, attempt: pack_minutes(pack["minutes"], size, attempt, rows, layers),
        "mem_mb": pack_mem_mb(pack["mem_mb"], size),
        **training_resources(),
    }


# The one-point steps that run in packs (config pack_sizes): each family's rule file says here what one point of such a
# step reads, is given and writes, and point_packs.smk, included after the families, makes each pack a job.
class PointSpec:
    """What one point of a packed step is, as its one-point rule had it. Each function takes the point's wildcards
    (a namespace of strings, as Snakemake gives them):
    - inputs(w): the rule's inputs by name (a path or a list; ancient() ones are read for the DAG alone);
    - argv(w, i): the step's arguments but --threads, --device and --checkpoint-interval-s, with `i` the inputs;
    - outputs(w): the point's outputs, its metrics JSON first; checkpoints(w): its resume checkpoints."""

    def __init__(self, inputs, argv, outputs, checkpoints=lambda w: [], priority=0):
        self.inputs, self.argv, self.outputs, self.checkpoints = inputs, argv, outputs, checkpoints
        self.priority = priority


POINT_SPECS = {}


def pack_priority(costs, members):
    """Snakemake's priority of a pack job: its estimated work in tenths of a minute (packs.pack_work), so that among
    the jobs ready to start the longest pack goes first and the short ones fill the cores at the end."""
    return round(
        10
        * pack_work(
            config["resources"][costs]["minutes"],
            len(members),
            getattr(members[0], "n", 0),
            getattr(members[0], "layers", 2),
        )
    )


def tracked(folder, name):
    """A user's folder as an input that changes exactly when an image in it is added, replaced or removed
    (results/listings/<name>.json), rewritten while the DAG is built only when the folder's listing (relative
    paths, sizes, content hashes) changes (listing.py). [] for a folder the config does not name."""
    if not folder or not Path(folder).is_dir():
        return []
    return track_folder(folder, f"results/listings/{name}.json")


def selected_subnetwork(selection):
    """The subnetwork file a selection checkpoint chose (its selected.json names it). Raises Snakemake's
    IncompleteCheckpointException until the selection has run; the DAG is completed after it."""
    return json.loads(Path(selection.output[0]).read_text())["subnetwork"]


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


RESOURCES_REPORT = ["results/resources.md", "results/resources.csv"]


# Each family's jobs (SWEEP, made by the Snakefile) say its final targets and the benchmark records of its jobs;
# common.smk names no family, so it depends neither on which family files are included nor on their order.
def final_targets():
    """The final targets: summary tables and figures of each configured family, and the resources report."""
    return [path for family in config["families"] for path in getattr(SWEEP, family).final_targets()] + (
        RESOURCES_REPORT
    )


def benchmark_files():
    """The benchmark record of every job of the configured families (the rules' `benchmark` paths), each
    with the name of its rule (the packs of a family under one name)."""
    files = {}
    for family in config["families"]:
        for rule, paths in getattr(SWEEP, family).benchmark_files():
            files.update({path: rule for path in paths})
    return dict(sorted(files.items()))
