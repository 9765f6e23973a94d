# Submasking family: the helpers of workflow/rules/submasking.smk (settings passed to its steps, target
# lists, constants), and the family's checks of its data while the DAG is built.
# Report captions by file name: every figure (its PNG) and summary table.
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
SUB = config.get("submasking", {})
SUB_DIR = RESULTS["submasking"]
SUB_BACKBONES = {entry["name"]: entry for entry in SUB.get("backbones", [])}
SUB_TASKS = {entry["name"]: entry for entry in SUB.get("tasks", [])}
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
    """Tasks and backbone files named in the config must exist (data_checks.submasking_data_problems)."""
    problems = submasking_data_problems(SUB)
    if problems:
        raise ValueError("\n".join(problems))


if "submasking" in config["families"]:
    sub_check()
elif any(task.get("root") and Path(task["root"]).is_dir() for task in SUB.get("tasks", [])):
    print(
        f"warning: a submasking task folder exists, but `families` {config['families']} leaves submasking "
        f"out: add it to run the submasking family",
        file=sys.stderr,
    )


def sub_task_root(task):
    spec = SUB_TASKS[task]
    if spec["source"] in EMBEDDED_TASKS:
        return f"{SUB_DIR}/tasks/{task}"
    if spec["source"] == "vision_world":
        return f"{RESULTS['vision']}/data/world"
    return spec["root"]


def sub_task_check(task):
    """A user's image-folder task is opened once before any point trains on it (submasking_check_task)."""
    return [f"{SUB_DIR}/checks/{task}.json"] if SUB_TASKS[task]["source"] == "folder" else []


def sub_backbone_file(backbone):
    spec = SUB_BACKBONES[backbone]
    if spec["source"] == "vision_base":
        return f"{RESULTS['vision']}/chain{spec['chain']}/base/model.pt"
    return spec["weights"]


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


def sub_point_args(point):
    """One point as the submasking step reads it (--points)."""
    return {"identity": point.identity(), "metrics": point.metrics, "mask": f"{point.folder}/mask.pt"}


def sub_grid():
    """What the aggregate crosses into the configured points (points.submasking_points), names only."""
    return {
        "backbones": [{"name": name} for name in SUB_BACKBONES],
        "tasks": [{"name": name} for name in SUB_TASKS],
        **{key: SUB[key] for key in ("methods", "label_fractions", "replicates")},
    }


# Points of one backbone and one task train in one process, a pack of at most submasking.pack_size
# (records restore finished points when a pack is re-formed); packs follow from the config alone.
SUB_POINTS = SWEEP.submasking.points
SUB_PACKS = SWEEP.submasking.packs
SUB_PACK_MEMBERS = SWEEP.submasking.members
SUB_PACK_POINTS = f"{SUB_DIR}/packs/{{pack}}.points.json"


def sub_pack_points(wildcards):
    """The pack's points as its step reads them (the points file's content: a change reruns the pack)."""
    return as_json([sub_point_args(point) for point in SUB_PACK_MEMBERS[wildcards.pack]])


def sub_final_targets():
    return expand(f"{SUB_DIR}/summary/{{table}}", table=SUB_TABLES) + expand(
        f"{SUB_DIR}/figures/{{figure}}.{{ext}}", figure=SUB_FIGURES, ext=["png", "pdf"]
    )


def sub_benchmark_files():
    """(rule, benchmark records) of every submasking job (the packs under one name)."""
    yield (
        "submasking_task",
        [
            f"{BENCH_DIR}/submasking/tasks/{task}.jsonl"
            for task, spec in SUB_TASKS.items()
            if spec["source"] in EMBEDDED_TASKS
        ],
    )
    yield ("submasking_pack", [f"{BENCH_DIR}/submasking/packs/{pack}.jsonl" for pack, _ in SUB_PACKS])
    if "vision" not in config["families"]:  # the backbones the submasking family trains through the DAG
        chains = sorted({spec["chain"] for spec in SUB_BACKBONES.values() if spec["source"] == "vision_base"})
        yield ("vision_base", [f"{BENCH_DIR}/vision/chain{chain}/base.jsonl" for chain in chains])
        if chains:
            yield ("vision_world", [f"{BENCH_DIR}/vision/data/world.jsonl"])


register_family("submasking", sub_final_targets, sub_benchmark_files)
