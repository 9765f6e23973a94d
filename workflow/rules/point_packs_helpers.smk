# What point_packs.smk's rules need: the configured packed steps (SWEEP's, with the POINT_SPECS of the families'
# rule files), each point as its pack's step reads it, a pack's inputs and cluster requests, the retrain_points check.
from types import SimpleNamespace

from snakemake.io import is_flagged


def _flat(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def packed_point(spec, point):
    """One point as its pack's step reads it (steps/point_pack.py)."""
    w = SimpleNamespace(**point)
    inputs = spec.inputs(w)
    outputs = spec.outputs(w)
    argv = [str(arg) for arg in spec.argv(w, SimpleNamespace(**inputs))]
    return {
        "name": outputs[0],
        "argv": argv,
        "outputs": outputs,
        "reads": point_reads(inputs, argv),
        "checkpoints": spec.checkpoints(w),
        **({"retrain": True} if outputs[0] in RETRAIN_POINTS else {}),
    }


def point_reads(inputs, argv):
    """What a point's numbers depend on, hashed into its fingerprint: each input but the ancient ones (checks, read
    for the DAG alone), or where the point is given paths inside an input folder (a split of the data folder), those
    paths alone (a point reads its splits, not the whole folder)."""
    reads = set()
    for value in inputs.values():
        for path in map(str, (p for p in _flat(value) if not is_flagged(p, "ancient"))):
            inside = [arg for arg in argv if Path(path) in Path(arg).parents]
            reads.update(inside or [path])
    return sorted(reads)


def packed_inputs(step_name, pack, wildcards=None):
    """A pack's inputs: every input of its points (raises until the checkpoints they read have run)."""
    spec, packed = POINT_SPECS[step_name], PACKED[step_name]
    paths = {}
    for point in packed.members[pack]:
        for value in spec.inputs(SimpleNamespace(**point)).values():
            for path in _flat(value):
                paths.setdefault(str(path), path)
    return [paths[key] for key in sorted(paths)]


def packed_points(wildcards):
    """The pack's points file's content (a change, a subnetwork chosen anew, retrain_points, rewrites it and reruns the
    pack)."""
    return as_json(
        [packed_point(POINT_SPECS[wildcards.step], point) for point in PACKED[wildcards.step].members[wildcards.pack]]
    )


def packed_resources(step_name, size):
    """What a pack of `size` points asks a cluster for: its rule's one-point request (resources.rules[rule]) with the
    runtime `size` times a point's (points run one after another; memory and CPUs are one point's)."""
    requests = training_resources(step_name)
    if "runtime" in requests:
        minutes = config["resources"]["rules"][step_name]["minutes"]
        requests["runtime"] = lambda wildcards, attempt, minutes=minutes, size=size: minutes * size * attempt
    return requests


# the packed steps, by rule (the families' rule files, included before this one, say their points)
PACKED = {
    step_name: packed
    for family in ("arithmetic", "vision")  # every family's, as every family's rules are read (a submasking-only run
    for step_name, packed in getattr(SWEEP, family).packed.items()  # trains vision bases)
    if step_name in POINT_SPECS
}
RETRAIN_POINTS = {str(Path(path)) for path in config.get("retrain_points", [])}

# config retrain_points never does nothing silently (data_checks.retrain_problems), named with the config files in force
# and how to repeat the run's --configfile.
_retrain_problems = retrain_problems(
    *ARITH_JOBS.retrain_check(),
    packed={
        POINT_SPECS[step_name].outputs(SimpleNamespace(**point))[0]
        for step_name, packed in PACKED.items()
        for point in packed.points
    },
)
if _retrain_problems:
    raise ValueError(
        "config retrain_points:\n  "
        + "\n  ".join(_retrain_problems)
        + f"\nThe config in force comes from {list(map(str, workflow.configfiles))}. Repeat the --configfile of the run "
        "that made the point, e.g. snakemake P --configfile config/config.yaml MY_OVERLAY.yaml --config retrain_points=[P]"
    )
