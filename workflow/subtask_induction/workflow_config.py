"""The config, normalised once: what the Snakefile's rules read besides the config's own values (the merged
experiment list, derived lists, the sweep's points and packs). The Snakefile calls `upgrade_keys` before its
schema validation and `normalise` after it and check_config; the rule files only wire what this returns to
the steps. Torch-free: the Snakefile imports it.

Nothing here changes the config: a value the rules derive lives on the returned `Sweep`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .method.kinds import batch_kind, reads_subnetwork
from .packs import form_packs
from .points import (ArithmeticPoint, SubmaskingPoint, VisionPoint, arithmetic_experiments, arithmetic_points,
                     submasking_points, vision_points)

# Config keys renamed in 0.5.0 (docs/decisions.md, "One vocabulary"): a transfer seed is a replicate.
# (section path, old key, new key); every experiment of arithmetic.experiments and added_experiments too.
RENAMED_KEYS = (
    (("arithmetic", "transfer"), "seeds", "replicates"),
    (("submasking",), "seeds", "replicates"),
)


def upgrade_keys(config: dict) -> list[str]:
    """Rename a user's old config keys in place (before schema validation), returning one deprecation note per
    key renamed. The project's own config files use the new keys only, so an old key in the merged config
    comes from a user's file: it wins over the new key (an overlay's `seeds` over the default's `replicates`)."""
    notes = []

    def rename(section, where: str, old: str, new: str):
        if not isinstance(section, dict) or old not in section:
            return
        section[new] = section.pop(old)
        notes.append(f"config {where}.{old} is read as {where}.{new} (renamed in 0.5.0; the old key goes in 0.6.0)")

    for path, old, new in RENAMED_KEYS:
        section = config
        for key in path:
            section = section.get(key) if isinstance(section, dict) else None
        rename(section, ".".join(path), old, new)
    arith = config.get("arithmetic") if isinstance(config.get("arithmetic"), dict) else {}
    for index, experiment in enumerate(arith.get("experiments") or []):
        rename(experiment, f"arithmetic.experiments[{index}]", "seeds", "replicates")
    for name, experiments in sorted((arith.get("added_experiments") or {}).items()):
        for index, experiment in enumerate(experiments or []):
            rename(experiment, f"arithmetic.added_experiments.{name}[{index}]", "seeds", "replicates")
    return notes


def batches_label(variant: dict) -> str:
    """kinds.batch_kind as a pack's name says it: "" (nothing besides the target rows), the subtask_rows kind,
    "_marked" added when those rows carry the task marker (a vocabulary of its own)."""
    kind, marked = batch_kind(variant)
    return f"{kind}_marked" if kind and marked else kind or ""


@dataclass
class ArithmeticSweep:
    experiments: list[dict]
    computations: list[str]  # every computation a dataset is built for: bases, subtasks, targets
    points: list[ArithmeticPoint]
    packs: list[tuple[str, list[ArithmeticPoint]]]
    # the label-budget discoveries (variants with discovery_rows): (chain, base, subtask, layers, rows)
    budget: list[tuple]
    uses_complement: bool  # the complement control is checked when the subnetwork is selected
    members: dict = field(init=False)

    def __post_init__(self):
        self.members = dict(self.packs)


@dataclass
class VisionSweep:
    variants: list[str]  # the Table 1 variants that run (vision.transfer.run, else every defined one)
    inits: list[str]  # the discoveries that run per chain: the configured ones and those a variant reads
    readers: dict[str, list[str]]  # discovery init -> the variants that read its subnetwork
    texture_swap: list[str]  # the variants that train on the texture-swapped images
    points: list[VisionPoint]


@dataclass
class SubmaskingSweep:
    points: list[SubmaskingPoint]
    packs: list[tuple[str, list[SubmaskingPoint]]]
    members: dict = field(init=False)

    def __post_init__(self):
        self.members = dict(self.packs)


@dataclass
class Sweep:
    arithmetic: ArithmeticSweep
    vision: VisionSweep
    submasking: SubmaskingSweep


def normalise(config: dict) -> Sweep:
    """The config's derived lists, points and packs (a checked config: the schema and check_config passed)."""
    return Sweep(arithmetic_sweep(config["arithmetic"]), vision_sweep(config["vision"]),
                 submasking_sweep(config.get("submasking") or {}))


def arithmetic_sweep(arith: dict) -> ArithmeticSweep:
    experiments = arithmetic_experiments(arith)
    variants = arith["transfer"]["variants"]
    points = arithmetic_points(arith)
    # Points of one depth, one n and one kind of batch train as one stacked model (docs/running.md, "Packs");
    # the packs depend on the config alone, so a compute node re-reading the Snakefile forms the same ones.
    packs = form_packs(
        points, arith["transfer"].get("pack_size", 1),
        shape=lambda p: {"layers": p.layers, "n": p.n, "with": batches_label(variants[p.variant])},
        order=lambda p: (p.chain, p.replicate, p.base, p.subtask, p.target, p.variant),
    )
    budget = sorted({(p.chain, p.base, p.subtask, p.layers, variants[p.variant]["discovery_rows"])
                     for p in points if variants[p.variant].get("discovery_rows")})
    computations = sorted({e["base"] for e in experiments} | {e["subtask"] for e in experiments}
                          | {t for e in experiments for t in e["targets"]})
    uses_complement = any(variants[name]["method"] == "complement"
                          for experiment in experiments for name in experiment.get("variants", variants))
    return ArithmeticSweep(experiments, computations, points, packs, budget, uses_complement)


def variant_discovery(variant: dict) -> str | None:
    """The discovery whose subnetwork a vision variant (its settings) reads: its `discovery`, pretrained unless it
    says label_free; None if it reads none (kinds.reads_subnetwork)."""
    return variant.get("discovery", "pretrained") if reads_subnetwork(variant) else None


def vision_sweep(vision: dict) -> VisionSweep:
    definitions = vision["transfer"]["variants"]
    variants = list(vision["transfer"].get("run") or definitions)
    readers: dict[str, list[str]] = {}
    for name in variants:
        if variant_discovery(definitions[name]):
            readers.setdefault(variant_discovery(definitions[name]), []).append(name)
    inits = sorted(set(vision["discovery"]["inits"]) | set(readers), reverse=True)
    swap = [name for name in variants if definitions[name]["data"] == "texture_swap"]
    return VisionSweep(variants, inits, readers, swap, vision_points(vision))


def submasking_sweep(sub: dict) -> SubmaskingSweep:
    if not sub:
        return SubmaskingSweep([], [])
    points = submasking_points(sub)
    # Points of one backbone and one task train in one process, a pack of at most submasking.pack_size
    packs = form_packs(points, sub.get("pack_size", 10), shape=lambda p: {"backbone": p.backbone, "task": p.task},
                       order=lambda p: (p.method, p.fraction, p.replicate))
    return SubmaskingSweep(points, packs)
