"""Which sweep points train together in one process (a pack; docs/running.md, "Packs").

Torch-free: the Snakefile imports this to build the DAG. Packs are a function of the config alone (the
list of points and the pack size), never of which results already exist, so a compute node that re-reads
the Snakefile forms the same packs as the head node that submitted them.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .jobs import BENCH_DIR


def form_packs(points: list, size: int, shape: Callable[[object], dict], order: Callable[[object], tuple]) -> list[tuple[str, list]]:
    """Group `points` by their `shape` (a dict of what must be equal for points to train as one stacked model,
    named as the pack's name says it), sort each group by `order` (a tuple per point, unique within a group),
    and cut it into the fewest packs of at most `size` points, of near-equal sizes.

    Returns [(name, members)], sorted by name; a name reads like `layers2_n250_1of2_3f9c2a1b`, the last part
    a digest of the members' orders: a pack whose membership changes (a replicate added) gets a new name, so
    its manifest (what the tables read) is new and the pack runs, training the new points and restoring the
    others.
    """
    if size < 1:
        raise ValueError(f"pack size must be >= 1, got {size}")
    groups: dict[tuple, list] = {}
    for point in points:
        groups.setdefault(tuple(shape(point).items()), []).append(point)
    packs = []
    for key in sorted(groups):
        members = sorted(groups[key], key=order)
        if len({order(point) for point in members}) != len(members):
            raise ValueError(f"two sweep points share their order within {dict(key)}")
        count = math.ceil(len(members) / size)
        stem = "_".join(f"{name}{value}" for name, value in key if value != "")  # "": no such kind
        for index in range(count):
            chunk = members[index * len(members) // count:(index + 1) * len(members) // count]
            digest = hashlib.sha1(repr([order(point) for point in chunk]).encode()).hexdigest()
            packs.append((f"{stem + '_' if stem else ''}{index + 1}of{count}_{digest[:8]}", chunk))
    return sorted(packs, key=lambda pack: pack[0])


def pack_minutes(costs: dict, size: int, attempt: int = 1, rows: int = 0, layers: int = 2) -> int:
    """A pack job's time limit in minutes, from config resources.<family>_pack.minutes: attempt * (base + size *
    (per_point + per_1000_rows * rows / 1000) * layers / 2), rounded up (a retry after a time limit gets more).
    per_point and per_1000_rows are a 2-layer point's; a point's cost grows about linearly with depth. The rules
    and the SLURM harness (tests/slurm_smoke.py) both compute it here."""
    return math.ceil(attempt * (costs["base"] + pack_work(costs, size, rows, layers)))


def pack_work(costs: dict, size: int, rows: int = 0, layers: int = 2) -> float:
    """A pack's training minutes as config resources.<family>_pack.minutes estimates them (without the base):
    its limit's core, and the order in which the packs start (the longest first, so that none starts last
    and leaves the other cores idle while it runs)."""
    return size * (costs["per_point"] + costs.get("per_1000_rows", 0) * rows / 1000) * layers / 2


def pack_mem_mb(costs: dict, size: int) -> int:
    """A pack job's memory in MB: base + size * per_point (config resources.<family>_pack.mem_mb)."""
    return math.ceil(costs["base"] + size * costs["per_point"])


# The one-point steps that run in packs (steps/point_pack.py): config pack_sizes names them by their rule.
PACKED_STEPS = ("arithmetic_base", "arithmetic_discover", "vision_base", "vision_discover", "vision_transfer",
                "vision_cue_conflict")


def _order_key(value: str) -> tuple:
    """A wildcard's place in a pack's order: numbers by value (chain 10 after chain 2), words by their letters."""
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


@dataclass
class PackedStep:
    """The packs of a one-point step (`rule`, e.g. vision_transfer): its points (each a dict of the wildcards its
    one-point rule had, strings as Snakemake gives them) cut into packs of at most `size` by `shape` (form_packs),
    and each pack's files. The rule files wire each pack as the rule `<rule>_pack_<name>` (point_packs.smk)."""

    rule: str
    family: str
    folder: str                                   # the family's results folder
    points: list[dict]
    size: int
    shape: Callable[[dict], dict] = lambda point: {}
    packs: list[tuple[str, list[dict]]] = field(init=False)

    def __post_init__(self):
        self.packs = form_packs(self.points, self.size, self.shape,
                                lambda point: tuple(_order_key(str(value)) for value in point.values()))
        self.members = dict(self.packs)

    def points_file(self, pack: str) -> str:
        return f"{self.folder}/packs/{self.rule}/{pack}.points.json"

    def manifest(self, pack: str) -> str:
        """What a pack writes last: its points, and which it trained or restored."""
        return f"{self.folder}/packs/{self.rule}/{pack}.json"

    def log(self, pack: str) -> str:
        return f"logs/{self.family}/packs/{self.rule}/{pack}.log"

    def benchmark(self, pack: str) -> str:
        return f"{BENCH_DIR}/{self.family}/packs/{self.rule}/{pack}.jsonl"

    def benchmark_files(self) -> list[str]:
        return [self.benchmark(pack) for pack, _ in self.packs]
