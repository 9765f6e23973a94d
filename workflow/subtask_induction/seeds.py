"""One seed per role: every random start of the pipeline, derived from what it starts and where.

A role names what the randomness starts: a base network's initialisation, a transfer network's, a sampled
control mask, a held-out split, a batch order. Coordinates say which one (family, chain, depth, transfer
seed, ...). Seeds come from `derive_seed(role, *coordinates)`, so two roles or two chains never share one:
a transfer network built with the base's own seed would start from the base's initial weights (the
lottery-ticket "rewind"), not from the fresh network the paper describes. Rewinding is a variant of its own
(`init: rewind`), which reads the base's recorded init seed on purpose.

Every step records the seeds it used, by role, in its metrics.json (`seeds`).
"""

from __future__ import annotations

from .points import replicate_number
from .runtime import derive_seed

ROLES = (
    "base init",            # the base network's initial weights
    "base batches",         # the base's batch order (and dropout)
    "discovery init",       # a random-init discovery's network (the Fig 11 control)
    "discovery batches",    # a discovery's batch order (and hard-concrete noise)
    "transfer init",        # the transfer network's fresh weights
    "sampled mask",         # a count-matched random control mask (sampled, complement)
    "holdout split",        # the slice of a transfer point's own rows held out for selection
    "transfer batches",     # a transfer point's batch order (and dropout)
    "subtask batches",      # the order of the subtask rows a mixture or distillation point trains beside its own
    "task marker",          # the embedding row of the token that marks those subtask rows (a fresh weight)
    "masked init",          # the fresh masked weights drawn again as the authors' code does: arithmetic's N(0, std)
                            # option, vision's unkept weights uniform in ±1/√fan_in (unkept: authors_frozen)
    "transfer train subset",  # the smaller training set of a vision variant's train_per_class (one per chain)
    "cross-domain init",    # the world ViT the arithmetic GPT-2's matrices are copied into
    "cross-domain fresh frozen",  # the fresh ViT whose weights the cross-domain fresh-frozen control freezes
    "mimetic init",         # the targets a mimetic initialisation's attention is set to (init: mimetic)
)


def role_seed(role: str, family: str, *coordinates) -> int:
    """The seed of one random start: `role` (one of ROLES) of `family` at `coordinates` (chain, ...)."""
    if role not in ROLES:
        raise ValueError(f"unknown seed role {role!r}; roles: {list(ROLES)}")
    return derive_seed(family, role, *coordinates)


def arithmetic_base_seeds(chain: int, computation: str, layers: int) -> dict[str, int]:
    """The base of one chain, computation and depth."""
    where = (chain, computation, layers)
    return {"init": role_seed("base init", "arithmetic", *where),
            "batches": role_seed("base batches", "arithmetic", *where)}


def arithmetic_discovery_seeds(seed: int, base: str, subtask: str, layers: int) -> dict[str, int]:
    """A discovery of `subtask` in one base: `seed` is its chain (or an overlap run's own seed)."""
    return {"batches": role_seed("discovery batches", "arithmetic", seed, base, subtask, layers)}


def arithmetic_transfer_seeds(chain: int, replicate: int, task_marker: bool = False,
                              masked_init: bool = False, mimetic: bool = False) -> dict[str, int]:
    """A transfer point of `chain`, replicate `replicate`, from the replicate's number across chains
    (points.replicate_number: 100 chain + replicate, as every earlier record derived them). Every variant and n
    of one (chain, replicate) shares these: the comparisons between variants are paired on one fresh network. A
    point whose subtask rows carry a task marker also draws the marker's embedding row (its own role); one with
    the authors' init of the masked weights (masked_init_std) draws them again (its own role), one with the mimetic
    init draws its attention targets (its own role)."""
    where = (chain, replicate_number(chain, replicate))
    return {"init": role_seed("transfer init", "arithmetic", *where),
            "mask": role_seed("sampled mask", "arithmetic", *where),
            "holdout": role_seed("holdout split", "arithmetic", *where),
            "batches": role_seed("transfer batches", "arithmetic", *where),
            "subtask_batches": role_seed("subtask batches", "arithmetic", *where),
            **({"marker": role_seed("task marker", "arithmetic", *where)} if task_marker else {}),
            **({"masked_init": role_seed("masked init", "arithmetic", *where)} if masked_init else {}),
            **({"mimetic": role_seed("mimetic init", "arithmetic", *where)} if mimetic else {})}


def vision_train_subset_seed(chain: int) -> int:
    """The draw of a smaller training set (a variant's train_per_class): one per chain, so every variant of a
    size trains on the same images and the comparisons stay paired."""
    return role_seed("transfer train subset", "vision", chain)


def vision_seeds(stage: str, chain: int, masked_init: bool = False) -> dict[str, int]:
    """A vision stage of one chain: base, discovery (random init: its own network) or transfer (`masked_init`: a
    variant that draws its unkept weights as the authors' code does, unkept: authors_frozen, draws them by a role of
    their own; the others' seeds are the same with or without it)."""
    if stage == "base":
        return {"init": role_seed("base init", "vision", chain), "batches": role_seed("base batches", "vision", chain)}
    if stage == "discovery":
        return {"init": role_seed("discovery init", "vision", chain),
                "batches": role_seed("discovery batches", "vision", chain)}
    if stage == "transfer":
        return {"init": role_seed("transfer init", "vision", chain), "mask": role_seed("sampled mask", "vision", chain),
                "batches": role_seed("transfer batches", "vision", chain),
                **({"masked_init": role_seed("masked init", "vision", chain)} if masked_init else {})}
    if stage == "cross_domain":   # the ViT the GPT-2's matrices go into, and the one the fresh-frozen control freezes
        return {"init": role_seed("cross-domain init", "vision", chain),
                "fresh": role_seed("cross-domain fresh frozen", "vision", chain)}
    raise ValueError(f"unknown vision stage {stage!r}")
