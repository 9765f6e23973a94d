"""The transfer kinds by name. Torch-free: the Snakefile reads it to build the DAG (which transfer jobs
wait on a discovered subnetwork)."""

TRANSFER_KINDS = ("subnetwork", "sampled", "complement", "random", "full", "sampled_authors", "complement_authors", "magnitude")
# the kinds that read a discovered subnetwork. sampled_authors: the authors' code's sampled control, which
# freezes the N-k weights outside a count-matched random draw instead of k (DESIGN: their bug, kept as an option
# to test what it does to their curve); complement_authors: their complement control, the same with the draw taken
# outside the subnetwork
# outside the subnetwork; magnitude: the base's largest-|w| weights of each tensor, as many as the subnetwork keeps there
# (PAC-Net's pruning rival: does the discovery buy anything over the largest weights?)
MASKED_KINDS = ("subnetwork", "sampled", "complement", "sampled_authors", "complement_authors", "magnitude")


def reads_subnetwork(variant: dict) -> bool:
    """Whether a transfer variant (its config settings) reads a discovered subnetwork: a masked kind, or
    `random` with inherit_unmasked, whose fresh network takes the base's tensors that no mask covers (the
    subnetwork's masks say which those are)."""
    return variant["kind"] in MASKED_KINDS or (variant["kind"] == "random" and bool(variant["inherit_unmasked"]))


def batch_rows(variant: dict) -> tuple[str | None, bool]:
    """What a point's batches hold besides its target rows (arithmetic/subtask_rows.py): (its subtask_rows,
    mixture or distill, or None; whether those rows carry the task marker). Points whose batches hold the same
    train together: the Snakefile names packs by it, the transfer step checks it."""
    return variant.get("subtask_rows"), bool(variant.get("task_marker", False))
