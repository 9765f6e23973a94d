# Arithmetic family: what its rules need of Snakemake itself (a selection's choice is a checkpoint's output)
# beside the family's jobs (SWEEP.arithmetic, arithmetic/jobs.py: the points and packs, each step's settings,
# paths and targets), and the check of retrain_points against the finished records.
from subtask_induction.arithmetic import jobs as arith_jobs

ARITH = config["arithmetic"]
ARITH_JOBS = SWEEP.arithmetic
ARITH_DIR = arith_jobs.DIR
ARITH_CHAIN_DIR = arith_jobs.CHAIN_DIR


def arith_on_roster():
    """The arithmetic jobs of the chains that count: ARITH_JOBS, or with spare chains its roster's (roster.py)."""
    return on_roster(ARITH_JOBS, "arithmetic", lambda: checkpoints.arithmetic_roster.get())


def arith_aggregate_input(what):
    """One of the tables' inputs (base, discovery, transfer: the pack manifests, each listing its points) of the chains
    that count; one function each, so that the input keeps its name while the roster is not in."""

    def paths(jobs):
        if what == "transfer":
            return [jobs.pack_manifest(pack) for pack, _ in jobs.packs]
        return {"base": jobs.base_metrics, "discovery": jobs.discovery_metrics}[what]()

    return lambda wildcards: paths(arith_on_roster())


def arith_selected_subnetwork(chain, base, subtask, layers):
    """The every-row subnetwork the selection chose for one (chain, base, subtask, depth)."""
    return selected_subnetwork(
        checkpoints.arithmetic_select_subnetwork.get(chain=int(chain), base=base, subtask=subtask, layers=layers)
    )


def arith_chosen_l0(chain, wildcards):
    """The λ the selection chose for chain `chain` and the wildcards' (base, subtask, depth), as its path says it."""
    chosen = arith_selected_subnetwork(chain, wildcards.base, wildcards.subtask, wildcards.layers)
    return Path(chosen).parent.name.removeprefix("lambda")


def arith_point_subnetwork(point):
    """The subnetwork a point transfers: a label-budget variant's discovery, else the selection's choice."""
    return ARITH_JOBS.budget_subnetwork(point) or arith_selected_subnetwork(
        point.chain, point.base, point.subtask, point.layers
    )


def arith_pack_points(wildcards):
    """The pack's points as its step reads them (the points file's content: a change reruns the pack)."""
    return as_json(
        [ARITH_JOBS.point_args(point, arith_point_subnetwork(point)) for point in ARITH_JOBS.members[wildcards.pack]]
    )


def arith_pack_inputs(pack, wildcards):
    """A pack's inputs: its bases, data and the chosen subnetworks (once the selections have run)."""
    return sorted(
        {
            path
            for point in ARITH_JOBS.members[pack]
            for key, path in ARITH_JOBS.point_args(point, arith_point_subnetwork(point)).items()
            if key in ("base", "subnetwork", "data", "subtask_data")
        }
    )


def arith_pack_points_inputs(wildcards):
    """The selections a pack's points read (ancient: a selection rerun that keeps its choice, a λ added that
    loses, must not rewrite the points). Raises until the selections have run (checkpoints)."""
    for point in ARITH_JOBS.members[wildcards.pack]:
        arith_point_subnetwork(point)
    return [ancient(path) for path in ARITH_JOBS.pack_selections(wildcards.pack)]


def arith_overlap_l0(wildcards):
    """An overlap run's own λ, else the one the selection chose for the overlap chain."""
    run = ARITH_JOBS.overlap_runs[wildcards.run]
    return run["l0_weight"] if "l0_weight" in run else arith_chosen_l0(ARITH_JOBS.overlap_chain, wildcards)


def arith_overlap_selected(wildcards):
    """The subnetworks the overlap compares against: the selection's choice per (base, subtask, depth)."""
    return sorted(
        {
            arith_selected_subnetwork(ARITH_JOBS.overlap_chain, *experiment)
            for experiment in ARITH_JOBS.overlap_experiments()
        }
    )


def arith_chain_subnetworks(wildcards):
    """Every other chain's selected subnetwork at the overlap's depths: which subnetworks the chains found, and how
    much they share, beside the claims that are judged over them (summary/overlap.csv, chain rows)."""
    return sorted(
        {
            arith_selected_subnetwork(chain, *experiment)
            for experiment in ARITH_JOBS.overlap_experiments()
            for chain in ARITH_JOBS.chains_of(*experiment)
            if chain != ARITH_JOBS.overlap_chain
        }
    )


def arith_budget_full():
    """The every-row subnetworks the selections chose, which the budget discoveries are compared with (they
    use the same λ; variant si transfers them). Raises until the selections have run (checkpoints)."""
    return sorted({arith_selected_subnetwork(c, b, s, l) for c, b, s, l, _ in ARITH_JOBS.budget})


def arith_base_folder(w):
    return f"{ARITH_DIR}/chain{w.chain}/base/{w.base}/layers{w.layers}"


def arith_discovery_folder(w):
    return f"{ARITH_DIR}/chain{w.chain}/discovery/{w.base}/{w.subtask}/layers{w.layers}/lambda{w.l0}"
