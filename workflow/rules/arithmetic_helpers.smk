# Arithmetic family: the helpers of workflow/rules/arithmetic.smk (settings passed to its steps, target
# lists, constants), and the family's checks of its data while the DAG is built.
# Report captions by file name: every figure (its PNG) and summary table.
ARITH_CAPTIONS = {
    "transfer.csv": "arithmetic/transfer_table",
    "table3.csv": "arithmetic/table3",
    "paper_comparison.md": "arithmetic/paper_comparison",
    "chains.md": "arithmetic/chains",
    "sparsity_dial.md": "arithmetic/sparsity_dial_table",
    "same_labels.md": "arithmetic/same_labels_table",
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
ARITH = config["arithmetic"]
# The config's derived lists, points and packs (workflow_config.py): the experiments that run (the config's
# list and those overlays add), the computations, the transfer points and their packs, the label budget.
ARITH_SWEEP = SWEEP.arithmetic
ARITH_EXPERIMENTS = ARITH_SWEEP.experiments
ARITH_DIR = RESULTS["arithmetic"]
ARITH_COMPUTATIONS = ARITH_SWEEP.computations
# A chain is one seed for the whole chain base -> discovery -> transfer (the data and the held-out split are
# shared): tables give mean ± std over chains, so the spread includes the base and the discovery.
ARITH_CHAINS = ARITH["chains"]
# The complement control is checked when the subnetwork is selected, not hours later at transfer time.
ARITH_USES_COMPLEMENT = ARITH_SWEEP.uses_complement
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
    "same_labels.md",
    "paper_comparison.md",
]


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
            for experiment in ARITH_EXPERIMENTS
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


def arith_transfer_training():
    """The transfer settings every point shares (not the sweep lists, not the pack size: neither changes
    a point's numbers, so changing them must not retrain finished points)."""
    training = {
        k: v
        for k, v in ARITH["transfer"].items()
        if k not in ("disambiguation_rows", "replicates", "variants", "pack_size")
    }
    return {"training": training}


# Points to train again although a finished record exists (--config retrain_points=[PATH]): their pack's
# params change, so Snakemake reruns that pack alone, which restores the other members.
ARITH_RETRAIN = {str(Path(path)) for path in config.get("retrain_points", [])}


ARITH_BUDGET_PATH = f"{ARITH_CHAIN_DIR}/discovery_budget/{{base}}/{{subtask}}/layers{{layers}}/rows{{rows}}"


def arith_selected_subnetwork(chain, base, subtask, layers):
    """The every-row subnetwork the selection chose for one (chain, base, subtask, depth)."""
    return selected_subnetwork(
        checkpoints.arithmetic_select_subnetwork.get(chain=int(chain), base=base, subtask=subtask, layers=layers)
    )


def arith_point_subnetwork(point):
    """The subnetwork a point transfers: the selection's choice (a checkpoint), or for a label-budget variant
    (discovery_rows) the discovery from that many subtask rows."""
    rows = ARITH["transfer"]["variants"][point.variant].get("discovery_rows")
    if rows:
        return f"{ARITH_BUDGET_PATH.format(chain=point.chain, base=point.base, subtask=point.subtask, layers=point.layers, rows=rows)}/subnetwork.pt"
    return arith_selected_subnetwork(point.chain, point.base, point.subtask, point.layers)


def arith_point_args(point):
    """One point as the transfer step reads it (--points): its identity, its variant's settings, the files it
    reads (`subnetwork` is the chosen λ's own file) and writes."""
    variant = ARITH["transfer"]["variants"][point.variant]
    return {
        "identity": point.identity(),
        "variant_settings": variant,
        "base": f"{ARITH_DIR}/chain{point.chain}/base/{point.base}/layers{point.layers}/model.pt",
        "subnetwork": arith_point_subnetwork(point),
        "data": f"{ARITH_DIR}/data/transfer/{point.target}.pt",
        **({"subtask_data": f"{ARITH_DIR}/data/discovery/{point.subtask}.pt"} if batch_kind(variant)[0] else {}),
        "out": point.metrics,
        **({"retrain": True} if point.metrics in ARITH_RETRAIN else {}),
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
            f"{ARITH_DIR}/chain{point.chain}/discovery/{point.base}/{point.subtask}/layers{point.layers}/selected.json"
            for point in members
            if not ARITH["transfer"]["variants"][point.variant].get("discovery_rows")
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


ARITH_POINTS = ARITH_SWEEP.points


def arith_retrain_problems():
    """retrain_points (data_checks.retrain_problems), named with the config files in force and how to repeat the
    run's --configfile."""
    known = {point.metrics for point in ARITH_POINTS}
    problems = retrain_problems(ARITH_RETRAIN, known, arith_transfer_training()["training"])
    if not problems:
        return None
    return (
        "config retrain_points:\n  "
        + "\n  ".join(problems)
        + f"\nThe config in force comes from {list(map(str, workflow.configfiles))}. Repeat the --configfile of the run "
        "that made the point, e.g. snakemake P --configfile config/config.yaml MY_OVERLAY.yaml --config retrain_points=[P]"
    )


_retrain_problems = arith_retrain_problems()
if _retrain_problems:
    raise ValueError(_retrain_problems)
# Points of one depth, one n and one kind of batch train as one stacked model (docs/running.md, "Packs").
ARITH_PACKS = ARITH_SWEEP.packs
ARITH_PACK_MEMBERS = ARITH_SWEEP.members


def arith_transfer_shell():
    return (
        train_step("arithmetic_transfer") + " --points {input.points:q} --settings {params.settings:q} "
        "--manifest {output.manifest:q} "
        "--checkpoint {params.checkpoint:q} --threads {threads} --device {params.device} "
        "> {log:q} 2>&1 && rm -f {params.checkpoint:q}"
    )  # the checkpoint goes once the step has returned


def arith_experiment_paths(pattern, only_layers=None, only_chains=None, **extra):
    """expand() over the experiments list, each with its own base and subtask, depths and chains (or only
    those of them in only_layers, only_chains)."""
    paths = []
    for experiment in ARITH_EXPERIMENTS:
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
ARITH_BUDGET = ARITH_SWEEP.budget
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


def arith_benchmark_files():
    """(rule, benchmark records) of every arithmetic job (the packs under one name)."""
    yield (
        "arithmetic_base",
        arith_experiment_paths(f"{BENCH_DIR}/arithmetic/chain{{chain}}/base/{{base}}/layers{{layers}}.jsonl"),
    )
    yield (
        "arithmetic_discover",
        arith_experiment_paths(
            f"{BENCH_DIR}/arithmetic/chain{{chain}}/discovery/{{base}}/{{subtask}}/layers{{layers}}/lambda{{l0}}.jsonl",
            l0=[number_tag(x) for x in ARITH["discovery"]["l0_weights"]],
        ),
    )
    yield (
        "arithmetic_overlap_discover",
        arith_experiment_paths(
            f"{BENCH_DIR}/arithmetic/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}.jsonl",
            run=list(ARITH_OVERLAP_RUNS),
            only_layers=ARITH_OVERLAP["layers"],
        ),
    )
    yield (
        "arithmetic_transfer_pack",
        [f"{BENCH_DIR}/arithmetic/transfer/packs/{pack}.jsonl" for pack, _ in ARITH_PACKS],
    )
    yield (
        "arithmetic_discover_budget",
        [
            f"{BENCH_DIR}/arithmetic/chain{c}/discovery_budget/{b}/{s}/layers{l}/rows{r}.jsonl"
            for c, b, s, l, r in ARITH_BUDGET
        ],
    )


register_family("arithmetic", arith_final_targets, arith_benchmark_files)
