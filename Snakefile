# Subtask Induction (arXiv 2310.10899) as a Snakemake workflow. See README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"


# The run folder's lock, held shared by this Snakemake for its whole life (subtask_induction/run_lock.py): a make
# target started meanwhile sees a live run here, whoever started it and however, and removes nothing.
RUN_LOCK = hold_for_workflow(workflow)


# A user's config keys renamed since (a deprecation note each), the schema, a decisive batch's cut, the cross-field
# checks the schema cannot state; then the config normalised once (workflow_config.py): the points and packs every family's rules
# read. All before any family's rules are read.
for _note in upgrade_keys(config):
    print(f"warning: {_note}", file=sys.stderr)
validate(config, "workflow/schemas/config.schema.yaml")
take_batches(config)
check_config(config)
SWEEP = normalise(config)


report: "workflow/report/workflow.rst"


# Tiny CPU steps run in the Snakemake process itself; on a cluster each would otherwise cost a job
# submission and a polling cycle.
localrules:
    all,
    arithmetic_data,
    arithmetic_pack_points,
    packed_points,
    arithmetic_roster,
    arithmetic_select_subnetwork,
    arithmetic_aggregate,
    arithmetic_plots,
    arithmetic_overlap,
    arithmetic_budget,
    vision_select_subnetwork,
    vision_roster,
    vision_aggregate,
    vision_plots,
    vision_samples,
    submasking_pack_points,
    submasking_aggregate,
    resources_report,


include: "workflow/rules/wildcards.smk"
include: "workflow/rules/arithmetic.smk"
include: "workflow/rules/vision.smk"
include: "workflow/rules/submasking.smk"
include: "workflow/rules/point_packs.smk"
include: "workflow/rules/resources.smk"


# When the run ends, a chain whose base did not learn its task is named (docs/decisions.md, "The rule's precedence, as data"): its
# verdicts still count it where the plan fixed it, and a reader should know.
onsuccess:
    from subtask_induction import validity
    from subtask_induction.roster import report as roster_report

    for text in validity.report(Path(ARITH_DIR).parent):
        print(f"failed base: {text}", file=sys.stderr)
    for text in roster_report(
        Path(ARITH_DIR).parent,
        [f for f in ("arithmetic", "vision") if f in config["families"] and getattr(SWEEP, f).spares],
    ):
        print(f"roster: {text}", file=sys.stderr)


rule all:
    default_target: True
    input:
        final_targets(),
    message:
        JOB_LINE
