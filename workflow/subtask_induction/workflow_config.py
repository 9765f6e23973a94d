"""The config, normalised once: what the Snakefile's rules read besides the config's own values. The Snakefile
calls `upgrade_keys` before its schema validation and `normalise` after it and check_config; `normalise` gives
each family's jobs (arithmetic/jobs.py, vision/jobs.py, submasking/jobs.py: the merged lists, points, packs,
each step's settings, paths and targets), and the rule files only wire what these return to the steps.
Torch-free: the Snakefile imports it.

Nothing here changes the config: a value the rules derive lives on the returned `Sweep`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from .arithmetic.jobs import ArithmeticJobs
from .submasking.jobs import SubmaskingJobs
from .vision.jobs import VisionJobs

# Config keys renamed in 0.5.0 (docs/decisions.md, "One vocabulary"): a transfer seed is a replicate; a
# submasking method is an adaptation. (section path, old key, new key); every experiment of
# arithmetic.experiments and added_experiments too.
RENAMED_KEYS = (
    (("arithmetic", "transfer"), "seeds", "replicates"),
    (("submasking",), "seeds", "replicates"),
    (("submasking",), "methods", "adaptations"),
)
# ... and in every transfer variant: its `method` is its transfer kind (a mask's method is discovery.mask.method).
VARIANT_SECTIONS = (("arithmetic", "transfer", "variants"), ("vision", "transfer", "variants"))
RENAMED_VARIANT_KEYS = (("method", "kind"),)


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

    def section(path):
        found = config
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        return found

    for path, old, new in RENAMED_KEYS:
        rename(section(path), ".".join(path), old, new)
    for path in VARIANT_SECTIONS:
        variants = section(path)  # not a dict: the schema names the problem next
        for name, variant in sorted(variants.items() if isinstance(variants, dict) else []):
            for old, new in RENAMED_VARIANT_KEYS:
                rename(variant, ".".join(path) + "." + str(name), old, new)
    arith = config.get("arithmetic") if isinstance(config.get("arithmetic"), dict) else {}
    for index, experiment in enumerate(arith.get("experiments") or []):
        rename(experiment, f"arithmetic.experiments[{index}]", "seeds", "replicates")
    for name, experiments in sorted((arith.get("added_experiments") or {}).items()):
        for index, experiment in enumerate(experiments or []):
            rename(experiment, f"arithmetic.added_experiments.{name}[{index}]", "seeds", "replicates")
    return notes


@dataclass(frozen=True)
class Sweep:
    """Every family's jobs, whether or not the config's `families` runs it (a family's rules are read either way)."""

    arithmetic: ArithmeticJobs
    vision: VisionJobs
    submasking: SubmaskingJobs


BATCH = 8   # chains per batch of the decisive record (docs/decisions.md, "The decisive record")


def take_batches(config: dict) -> dict:
    """The config cut to its first `decisive_batches` batches of BATCH chains per family, in place (before
    normalise, so the points, packs and tables hold exactly those): each family's chains, the arithmetic experiments'
    own chain lists, and the submasking backbones trained on a vision chain that is cut. None or absent: the config
    as it is. The record that stores a batch names the whole plan, so its missing chains read "incomplete" on every
    page until the last batch is in (pages/planned.py)."""
    batches = config.get("decisive_batches")
    if not batches:
        return config
    keep = BATCH * batches
    arithmetic, vision = config["arithmetic"], config["vision"]
    arithmetic["chains"] = arithmetic["chains"][:keep]
    arithmetic["experiments"] = _within(arithmetic.get("experiments", []), arithmetic["chains"])
    for name, experiments in (arithmetic.get("added_experiments") or {}).items():
        arithmetic["added_experiments"][name] = _within(experiments, arithmetic["chains"])
    vision["chains"] = vision["chains"][:keep]
    if config.get("submasking"):
        config["submasking"]["backbones"] = [
            b for b in config["submasking"]["backbones"]
            if b["source"] != "vision_base" or b["chain"] in vision["chains"]]
    return config


def later_batches(config: dict, batches: int) -> list[dict]:
    """The points of `config` (a whole plan) that its first `batches` batches leave out, as a record's `known_gaps`
    (pages/planned.py: each family's chains, the submasking backbones, as column filters): what a record of a part
    of the decisive plan names as still to run, so its pages read those claims "incomplete"."""
    cut = take_batches(copy.deepcopy({**config, "decisive_batches": batches}))
    why = (f"the decisive plan's later batches, not run yet: this part holds its first {batches} batch"
           f"{'es' if batches > 1 else ''} of {BATCH} chains a family (make decisive BATCHES=k resumes the plan)")
    gaps = []
    for family in ("arithmetic", "vision"):
        left = [c for c in config[family]["chains"] if c not in cut[family]["chains"]]
        if left:
            gaps.append({"family": family, "chain": left, "why": why})
    kept = {b["name"] for b in (cut.get("submasking") or {}).get("backbones", [])}
    left = [b["name"] for b in (config.get("submasking") or {}).get("backbones", []) if b["name"] not in kept]
    if left:
        gaps.append({"family": "submasking", "backbone": left, "why": why})
    return gaps


def _within(experiments: list[dict], chains: list) -> list[dict]:
    """The experiments with the chains they name cut to `chains` (one left naming none makes no point)."""
    for experiment in experiments:
        if "chains" in experiment:
            experiment["chains"] = [c for c in experiment["chains"] if c in chains]
    return experiments


def normalise(config: dict) -> Sweep:
    """Each family's jobs (a checked config: the schema and check_config passed)."""
    sizes = config.get("pack_sizes") or {}
    vision = VisionJobs(config["vision"], sizes)
    return Sweep(ArithmeticJobs(config["arithmetic"], config.get("retrain_points", []), pack_sizes=sizes), vision,
                 SubmaskingJobs(config.get("submasking") or {}, config["families"], vision.packed["vision_base"]))
