# Every wildcard's global constraint, in one place, read before any family's rules: Snakemake gives a rule the
# global constraints current when the rule is defined, so a block per family file made a rule's constraints depend
# on the order of `include:`. The values come from the config, normalised once (SWEEP). Every path starts with its
# family's folder, so a wildcard two families share (chain, variant, l0) may take the union of their values.
from subtask_induction.vision import jobs as vis_jobs


wildcard_constraints:
    purpose="base|discovery|transfer",
    computation=one_of(SWEEP.arithmetic.computations),
    base=one_of(SWEEP.arithmetic.computations),
    subtask=one_of(SWEEP.arithmetic.computations),
    target=one_of(SWEEP.arithmetic.computations),
    layers=r"\d+",
    l0=one_of(sorted(set(SWEEP.arithmetic.l0_tags) | set(SWEEP.vision.l0_tags))),
    n=r"\d+",
    seed=r"\d+",
    chain=r"\d+",
    variant=one_of(sorted(set(SWEEP.arithmetic.variants) | set(SWEEP.vision.definitions))),
    split=one_of(vis_jobs.POOLED_SPLITS),
    shard=r"\d+",
    init=one_of(SWEEP.vision.inits),
    task=one_of(SWEEP.submasking.tasks or ["-"]),
