"""The transfer kinds, one record each: what a kind freezes, whether it reads a discovered subnetwork, how its frozen
values are made, which families accept it, and what the pages call it. The DAG (which transfer jobs wait on a
subnetwork), `method.transfer.control_masks`, the config's schema (tests/test_kinds.py checks its enums against
KINDS) and the pages read these records, so a new kind is one record (`register`) plus, if its mask or its values
are new, one function in method/transfer.py's MASK_RULES or VALUE_RULES. vision/sources.py is the model.
Torch-free: the Snakefile reads it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TransferKind:
    name: str
    freezes: str              # in words: which weights come frozen from the base
    mask: str | None = None   # the rule that draws its mask (method/transfer.py MASK_RULES); None: no mask
    values: str = "base"      # how the frozen positions get their values (VALUE_RULES): the base's weights, ...
    families: tuple = ("arithmetic", "vision")
    curve: str | None = None  # the authors' Fig 6 curve it is drawn beside (arithmetic/paper.py AUTHORS_CURVES)
    option: str | None = None  # for an authors'-code option: what it does differently (the pages' label)

    @property
    def masked(self) -> bool:
        """Whether weights of the base come into the fresh network through a mask."""
        return self.mask is not None

    @property
    def outside_subnetwork(self) -> bool:
        """Whether its mask is drawn outside the subnetwork (which must leave room for it: checked at selection)."""
        return self.mask in ("complement", "complement_inverted")


KINDS: dict[str, TransferKind] = {}


def register(kind: TransferKind) -> TransferKind:
    if kind.name in KINDS and KINDS[kind.name] != kind:
        raise ValueError(f"a transfer kind {kind.name!r} is registered already")
    KINDS[kind.name] = kind
    return kind


for _kind in (
    TransferKind("subnetwork", "the discovered subnetwork (SI)", "discovered", curve="subnetwork"),
    TransferKind("sampled", "a random draw of as many weights per tensor as the subnetwork keeps", "matched",
                 curve="sampled"),
    TransferKind("complement", "as many weights per tensor, drawn outside the subnetwork", "complement",
                 curve="complement"),
    TransferKind("random", "nothing (a fresh network; with inherit_unmasked, the base's unmasked tensors)",
                 curve="random"),
    TransferKind("full", "nothing: the whole base is fine-tuned", curve="full"),
    # the authors' code's sampled control zeroes k random positions of an all-ones mask, so it freezes the N-k
    # weights outside a count-matched draw instead of k (DESIGN: their bug, kept as an option to test what it does to
    # their curve); their complement control, the same with the draw taken outside the subnetwork
    TransferKind("sampled_authors", "every weight but a count-matched random draw (N−k)", "matched_inverted",
                 families=("arithmetic",), curve="sampled", option="N−k of the base's weights frozen"),
    TransferKind("complement_authors", "every weight but a count-matched draw outside the subnetwork (N−k)",
                 "complement_inverted", families=("arithmetic",), curve="complement",
                 option="N−k frozen, the k drawn outside the subnetwork"),
    # PAC-Net's pruning rival: does the discovery buy anything over the largest weights?
    TransferKind("magnitude", "each tensor's largest-|w| weights of the base, as many as the subnetwork keeps there",
                 "magnitude", families=("arithmetic",)),
    # AWS ("Find A Winning Sign", ICLR 2025): is it the sign pattern that carries the bias, not the values?
    TransferKind("signs", "the subnetwork's positions, with the base's signs and the fresh network's magnitudes",
                 "discovered", values="signs", families=("arithmetic",)),
):
    register(_kind)

def kinds_of(family: str, masked: bool | None = None) -> tuple[str, ...]:
    """The kinds a family accepts (masked=True: only those that freeze weights through a mask), read from the
    records when asked, so a kind registered later is one of them."""
    return tuple(name for name, kind in KINDS.items()
                 if family in kind.families and (masked is None or kind.masked == masked))


def reads_subnetwork(variant: dict) -> bool:
    """Whether a transfer variant (its config settings) reads a discovered subnetwork: a masked kind, or
    `random` with inherit_unmasked, whose fresh network takes the base's tensors that no mask covers (the
    subnetwork's masks say which those are)."""
    return KINDS[variant["kind"]].masked or (variant["kind"] == "random" and bool(variant["inherit_unmasked"]))


def batch_rows(variant: dict) -> tuple[str | None, bool]:
    """What a point's batches hold besides its target rows (arithmetic/subtask_rows.py): (its subtask_rows,
    mixture or distill, or None; whether those rows carry the task marker). Points whose batches hold the same
    train together: the Snakefile names packs by it, the transfer step checks it."""
    return variant.get("subtask_rows"), bool(variant.get("task_marker", False))
