# Vision family: what its rules need of Snakemake itself (a selection's choice is a checkpoint's output; a user
# folder's listing is written while the DAG is built) beside the family's jobs (SWEEP.vision, vision/jobs.py:
# the variants and discoveries, the source's folders, each step's settings and targets), and the family's checks
# of its data while the DAG is built.
from subtask_induction.vision import jobs as vis_jobs
from subtask_induction.vision.sources import USER_TREES as VIS_USER_TREES

VIS = config["vision"]
VIS_JOBS = SWEEP.vision
VIS_DIR = vis_jobs.DIR
VIS_CHAIN_DIR = vis_jobs.CHAIN_DIR

if "vision" in config["families"]:
    _vis_problems = vision_data_problems(VIS, VIS_JOBS.classes)
    if _vis_problems:
        raise ValueError("\n".join(_vis_problems))
    print(VIS_JOBS.discoveries_line(), file=sys.stderr)

# What the builder and the cue-conflict check read, tracked by content (walked only for a run of vision).
VIS_LISTINGS = {**{tree: [] for tree in VIS_USER_TREES}, "cue_conflict": []}
_vis_root = VIS_JOBS.source_root()
if "vision" in config["families"]:
    VIS_LISTINGS = {
        **{
            tree: tracked(_vis_root if source is VIS_JOBS.source else None, source.listing)
            for tree, source in VIS_USER_TREES.items()
        },
        "cue_conflict": tracked(VIS["data"].get("cue_conflict"), "vision_cue_conflict"),
    }
elif _vis_root and Path(_vis_root).is_dir():
    print(
        f"warning: vision.data.{VIS_JOBS.source.name}.root {_vis_root} exists, but `families` "
        f"{config['families']} leaves vision out: add it to run the vision family",
        file=sys.stderr,
    )


def vis_tree_check(tree):
    """The check record of the tree's current content (vision_check_user_tree): a changed image is a new record,
    which reruns the builder; content put back finds its old record."""
    return f"{VIS_DIR}/data/checks/{tree}/{folder_digest(VIS_LISTINGS[tree])}.json"


def vis_warn_skipped(tree):
    """The images a finished check left out (skip_unreadable: true), on the console at every run, not only in
    the job log and manifest."""
    record = Path(vis_tree_check(tree))
    skipped = json.loads(record.read_text()).get("unreadable_skipped", []) if record.is_file() else []
    if skipped:
        print(
            f"warning: {len(skipped)} unreadable image(s) left out (vision.data.{VIS_USER_TREES[tree].name}."
            "skip_unreadable: true), e.g. " + ", ".join(skipped[:3]) + f"; all of them: {record}",
            file=sys.stderr,
        )


if "vision" in config["families"] and VIS_JOBS.source.user_tree:
    vis_warn_skipped(VIS_JOBS.source.tree)


def vis_selected_subnetwork(chain, init):
    """The subnetwork file chain `chain`'s selection for `init` chose (after that checkpoint has run)."""
    return selected_subnetwork(checkpoints.vision_select_subnetwork.get(chain=chain, init=init))


def vis_transfer_subnetwork(wildcards):
    """The chosen subnetwork for the transfer kinds that use one; nothing for the baselines (scratch,
    finetune, mixture, linear), so they never wait on (or rerun after) discovery."""
    discovery = VIS_JOBS.discovery_of(wildcards.variant)
    if discovery:
        return vis_selected_subnetwork(wildcards.chain, discovery)
    return VIS_JOBS.cross_domain_subnetwork(wildcards.chain, wildcards.variant)


def vis_inputs(*extra):
    """Inputs of a step that evaluates models: the data folder, the pooled test shards, extra pooled splits."""
    inputs = {"data": VIS_JOBS.data_dir(), "pooled_test": VIS_JOBS.pooled("test")}
    for split in extra:
        inputs[f"pooled_{split}"] = VIS_JOBS.pooled(split)
    if VIS_JOBS.cue_conflict():  # checked before any training; ancient: a changed or new folder retrains nothing
        inputs["cue_conflict_check"] = ancient(vis_jobs.CUE_CONFLICT_CHECK)
    return inputs


def vis_cue_conflict_inputs():
    """What the cue-conflict images come from: a user's folder and its listing (a changed image reruns what
    reads them), or the generated world's folder (its images are inside it); nothing without cue-conflict images."""
    if VIS["data"].get("cue_conflict"):
        return {"cue_conflict": VIS["data"]["cue_conflict"], "cue_conflict_listing": VIS_LISTINGS["cue_conflict"]}
    return {"data": VIS_JOBS.data_dir()} if VIS_JOBS.cue_conflict() else {}


def vis_on_roster():
    """The vision jobs of the chains that count: VIS_JOBS, or with spare chains its roster's (roster.py)."""
    return on_roster(VIS_JOBS, "vision", lambda: checkpoints.vision_roster.get())


def vis_aggregate_input(what):
    """One of the tables' inputs, of the chains that count; one function each, so that the input keeps its name while
    the roster is not in."""

    def paths(jobs):
        if what == "selected":
            return expand(f"{VIS_CHAIN_DIR}/discovery/{{init}}/selected.json", chain=jobs.chains, init=jobs.inits)
        if what == "cue_conflict":
            return (
                expand(f"{VIS_DIR}/chain{{chain}}/cue_conflict.json", chain=jobs.chains) if jobs.cue_conflict() else []
            )
        return {"base": jobs.base_metrics, "discovery": jobs.discovery_metrics, "transfer": jobs.transfer_metrics}[
            what
        ]()

    return lambda wildcards: paths(vis_on_roster())


def vis_discovery_folder(w):
    return f"{VIS_DIR}/chain{w.chain}/discovery/{w.init}/lambda{w.l0}"


def vis_transfer_inputs(w):
    return {
        **vis_inputs("discovery", "eval"),
        "base": VIS_JOBS.transfer_base(w.chain, w.variant),
        "subnetwork": vis_transfer_subnetwork(w),  # none for the baselines: they never wait on discovery
        "texture_swap": vis_jobs.TEXTURE_SWAP if w.variant in VIS_JOBS.texture_swap else [],
    }


def vis_transfer_folder(w):
    return f"{VIS_DIR}/chain{w.chain}/transfer/{w.variant}"


def vis_cue_conflict_point_inputs(w):
    chain = f"{VIS_DIR}/chain{w.chain}"
    return {
        **vis_cue_conflict_inputs(),
        "check": vis_jobs.CUE_CONFLICT_CHECK,
        "base": f"{chain}/base/model.pt",
        "subnetworks": expand(
            f"{chain}/discovery/{{init}}/lambda{{l0}}/subnetwork.pt", init=VIS_JOBS.inits, l0=VIS_JOBS.l0_tags
        ),
        "transfers": expand(f"{chain}/transfer/{{variant}}/model.pt", variant=VIS_JOBS.variants),
    }
