# Vision family: the helpers of workflow/rules/vision.smk (settings passed to its steps, target
# lists, constants), and the family's checks of its data while the DAG is built.
# Report captions by file name: every figure (its PNG) and summary table.
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
VIS = config["vision"]
VIS_DIR = RESULTS["vision"]
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
    """The vision config's files and folders (data_checks.vision_data_problems), every problem at once."""
    problems = vision_data_problems(VIS, VIS_CLASSES)
    if problems:
        raise ValueError("\n".join(problems))


# The Table 1 variants that run and the discoveries they read (workflow_config.py): the configured inits plus
# the one each masked transfer variant reads (its `discovery`, pretrained unless it says label_free), so every
# schema-valid `inits` builds a DAG.
VIS_SWEEP = SWEEP.vision
VIS_VARIANTS = VIS_SWEEP.variants
VIS_INITS = VIS_SWEEP.inits
_vis_readers = VIS_SWEEP.readers
_vis_swap = VIS_SWEEP.texture_swap


def vis_variant_discovery(name):
    """The discovery whose subnetwork variant `name` reads (workflow_config.variant_discovery); None if none."""
    return variant_discovery(VIS["transfer"]["variants"][name])


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


# The user trees a builder splits (source imagenet or folder), each with its config section and its listing.
VIS_USER_TREES = {
    "imagenet16": {
        "section": VIS["data"]["imagenet"],
        "root": VIS["data"]["imagenet"].get("root") or [],
        "listing": VIS_LISTINGS["imagenet"],
    },
    "folder": {"section": VIS_FOLDER, "root": VIS_FOLDER.get("root") or [], "listing": VIS_LISTINGS["folder"]},
}


def vis_tree_settings(tree):
    """What a builder's splits depend on (the gates apart: they decide only whether a build may stand)."""
    section = VIS_USER_TREES[tree]["section"]
    return as_json(
        {"seed": VIS["seed"], **{k: v for k, v in section.items() if k not in ("root", "skip_unreadable", "min_fill")}}
    )


def vis_tree_check(tree):
    """The check record of the tree's current content (vision_check_user_tree): a changed image is a new record,
    which reruns the builder; content put back finds its old record."""
    return f"{VIS_DIR}/data/checks/{tree}/{folder_digest(VIS_USER_TREES[tree]['listing'])}.json"


def vis_warn_skipped(tree):
    """The images a finished check left out (skip_unreadable: true), on the console at every run, not only in
    the job log and manifest."""
    record = Path(vis_tree_check(tree))
    skipped = json.loads(record.read_text()).get("unreadable_skipped", []) if record.is_file() else []
    if skipped:
        key = "imagenet" if tree == "imagenet16" else tree
        print(
            f"warning: {len(skipped)} unreadable image(s) left out (vision.data.{key}.skip_unreadable: true), e.g. "
            + ", ".join(skipped[:3])
            + f"; all of them: {record}",
            file=sys.stderr,
        )


def vis_tree_gates(tree):
    section = VIS_USER_TREES[tree]["section"]
    return (
        "--skip-unreadable " if section.get("skip_unreadable") else ""
    ) + f"--min-fill {section.get('min_fill', 0.5)}"


if "vision" in config["families"] and VIS_SOURCE in ("imagenet", "folder"):
    vis_warn_skipped(VIS_BUILDER.removeprefix("vision_"))


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


def vis_benchmark_files():
    """(rule, benchmark records) of every vision job."""
    yield (VIS_BUILDER, [f"{BENCH_DIR}/vision/data/{Path(vis_data_dir()).name}.jsonl"])
    yield (
        "vision_mean_pool",
        [
            f"{BENCH_DIR}/vision/pooled/{split}/shard{shard}.jsonl"
            for split in VIS_POOLED_SPLITS
            for shard in range(VIS["pooling"]["shards"][split])
        ],
    )
    yield ("vision_base", expand(f"{BENCH_DIR}/vision/chain{{chain}}/base.jsonl", chain=VIS_CHAINS))
    yield (
        "vision_discover",
        expand(
            f"{BENCH_DIR}/vision/chain{{chain}}/discovery/{{init}}/lambda{{penalty}}.jsonl",
            chain=VIS_CHAINS,
            init=VIS_INITS,
            penalty=[number_tag(x) for x in VIS["discovery"]["l0_weights"]],
        ),
    )
    yield (
        "vision_transfer",
        expand(f"{BENCH_DIR}/vision/chain{{chain}}/transfer/{{model}}.jsonl", chain=VIS_CHAINS, model=VIS_VARIANTS),
    )
    if "pretrained" in VIS_INITS:
        yield ("vision_diagnostics", [f"{BENCH_DIR}/vision/diagnostics.jsonl"])
    if _vis_swap:
        yield ("vision_texture_swap", [f"{BENCH_DIR}/vision/data/texture_swap.jsonl"])


register_family("vision", vis_final_targets, vis_benchmark_files)
