"""The sweep's points: what one configured run of a family trains, as a small record with one identity and
its folder. The Snakefile builds its DAG from these (via workflow_config.py), the steps record each point's
identity in its metrics.json, and the tables read the identity back (docs/decisions.md, "One vocabulary").

Torch-free: the Snakefile imports it.

The words, one per concept:
  chain      one seed for a whole chain base -> discovery -> transfer (its data are shared by every chain)
  replicate  a configured transfer seed within a chain (config `replicates`): repeats of one point
  variant    a named transfer setting of the config (`arithmetic.transfer.variants`, `vision.transfer.variants`)
  kind       which of the base's weights a variant's fresh network takes (subnetwork, sampled, random, full, ...)
  plan       what a variant's kind does to a network (method/transfer.py's TransferPlan)
  adaptation how a submasking point adapts its frozen backbone (lp, fs, fft, ss_fs, ss_fft)
  mask method how a discovery trains its mask (discovery.mask.method); `method/` is the paper's method itself

A point's folder ends in `replicate{r}` (0.5.0; `seed{r}` before): a finished run of the old layout moves with
`python -m subtask_induction.upgrade FOLDER` (upgrade.py), which keeps every finished point.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# The global number of replicate r of chain c, which its seeds are derived from (seeds.arithmetic_transfer_seeds)
# and which earlier records call `seed`: 100 c + r. Replicates stay below it (the config's schema).
REPLICATE_STRIDE = 100

RESULTS = {family: f"results/{family}" for family in ("arithmetic", "vision", "submasking")}


def replicate_number(chain: int, replicate: int) -> int:
    """Replicate `replicate` of chain `chain` as one number, distinct across chains: 100 chain + replicate."""
    if not 0 <= replicate < REPLICATE_STRIDE:
        raise ValueError(f"replicate {replicate} is not in [0, {REPLICATE_STRIDE})")
    return REPLICATE_STRIDE * chain + replicate


class _Point:
    """What every point has: a folder (its subclass says where), its metrics.json in it, and its identity."""

    family = ""

    @property
    def folder(self) -> str:
        raise NotImplementedError

    @property
    def metrics(self) -> str:
        return f"{self.folder}/metrics.json"

    def identity(self) -> dict:
        return {"family": self.family, **asdict(self)}


@dataclass(frozen=True)
class ArithmeticPoint(_Point):
    """One arithmetic transfer point: variant `variant` trained on `target` with `n` disambiguation rows, from
    the `subtask` subnetwork of chain `chain`'s `base` network of `layers` layers, replicate `replicate`."""

    chain: int
    base: str
    subtask: str
    target: str
    layers: int
    variant: str
    n: int
    replicate: int

    family = "arithmetic"

    @property
    def folder(self) -> str:
        return (f"{RESULTS['arithmetic']}/chain{self.chain}/transfer/{self.base}/{self.subtask}/{self.target}/"
                f"layers{self.layers}/{self.variant}/n{self.n}/replicate{self.replicate}")


@dataclass(frozen=True)
class SubmaskingPoint(_Point):
    """One submasking point: `adaptation` over `backbone` on `task` with a label fraction (as paths write it)."""

    backbone: str
    task: str
    adaptation: str
    fraction: str
    replicate: int

    family = "submasking"

    @property
    def folder(self) -> str:
        return (f"{RESULTS['submasking']}/points/{self.backbone}/{self.task}/{self.adaptation}/fraction{self.fraction}/"
                f"replicate{self.replicate}")

    @property
    def mask(self) -> str:
        return f"{self.folder}/mask.pt"

    def identity(self) -> dict:
        return {**super().identity(), "fraction": float(self.fraction)}


@dataclass(frozen=True)
class VisionPoint(_Point):
    """One vision transfer point: variant `variant` of chain `chain` (the chain is its only replicate)."""

    chain: int
    variant: str

    family = "vision"

    @property
    def folder(self) -> str:
        return f"{RESULTS['vision']}/chain{self.chain}/transfer/{self.variant}"


# The vision tables' rows that are not transfer points: the base, and the selected subnetworks by discovery init
# (the random-init control is not one)
SUBNETWORK_ROWS = {"pretrained": "subnetwork", "label_free": "subnetwork_label_free"}
VISION_MODEL_ROWS = ("base", *SUBNETWORK_ROWS.values())


def number_tag(value) -> str:
    """How a float looks in a path: 1e-06 for 1.0e-6, 0.5 for 0.5."""
    return f"{value:g}"


def arithmetic_experiments(arith: dict) -> list[dict]:
    """The experiments that run: the config's list, then those overlays add under names of their own
    (arithmetic.added_experiments, by name; config/beyond.yaml), so a change to the default's list reaches every
    overlay. A new list: the config is not changed."""
    added = arith.get("added_experiments") or {}
    return list(arith["experiments"]) + [experiment for name in sorted(added) for experiment in added[name]]


def arithmetic_points(arith: dict) -> list[ArithmeticPoint]:
    """Every arithmetic transfer point of the config, sorted by folder, each once; an experiment may run a subset
    of the chains, depths, variants, n and replicates (its own lists)."""
    transfer = arith["transfer"]
    points = {}
    for experiment in arithmetic_experiments(arith):
        for chain in experiment.get("chains", arith["chains"]):
            for target in experiment["targets"]:
                for layers in experiment.get("layers", arith["layers"]):
                    for variant in experiment.get("variants", list(transfer["variants"])):
                        for n in experiment.get("n", transfer["disambiguation_rows"]):
                            for replicate in experiment.get("replicates", transfer["replicates"]):
                                point = ArithmeticPoint(chain, experiment["base"], experiment["subtask"], target,
                                                        layers, variant, n, replicate)
                                points[point.folder] = point
    return [points[folder] for folder in sorted(points)]


def submasking_points(sub: dict) -> list[SubmaskingPoint]:
    """Every submasking point of the config: backbones x tasks x adaptations x label fractions x replicates, where a
    backbone's own `adaptations` (a subset) replaces the family's list for it."""
    return [SubmaskingPoint(backbone["name"], task["name"], adaptation, number_tag(fraction), replicate)
            for backbone in sub["backbones"]
            for task in sub["tasks"]
            for adaptation in backbone.get("adaptations") or sub["adaptations"]
            for fraction in sub["label_fractions"]
            for replicate in sub["replicates"]]


def vision_points(vision: dict) -> list[VisionPoint]:
    """Every vision transfer point: each chain x the variants that run (vision.transfer.run, else every one)."""
    variants = list(vision["transfer"].get("run") or vision["transfer"]["variants"])
    return [VisionPoint(chain, variant) for chain in vision["chains"] for variant in variants]
