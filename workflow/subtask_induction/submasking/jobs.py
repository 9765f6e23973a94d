"""The submasking family's jobs as workflow/rules/submasking.smk wires them: its points and their packs, where
each task and backbone comes from, the settings string each step gets, its final targets and benchmark records.
Built once from the checked config (workflow_config.normalise); torch-free."""

from __future__ import annotations

import json

from ..data_checks import EMBEDDED_TASKS
from ..jobs import BENCH_DIR, FamilyJobs, as_json
from ..packs import form_packs
from ..points import RESULTS, SubmaskingPoint, submasking_points

DIR = RESULTS["submasking"]
PACK_POINTS = f"{DIR}/packs/{{pack}}.points.json"
TABLES = ["points.csv", "accuracy.csv", "accuracy.md", "sparsity.csv", "sparsity_per_layer.csv", "knn.csv",
          "tables.md", "mask_similarity.csv", "mask_stability.csv"]
FIGURES = ["sparsity_per_layer", "label_fractions", "mask_similarity"]
# Report captions by file name (workflow/report/<caption>.rst): every figure (its PNG) and summary table.
CAPTIONS = {
    "points.csv": "submasking/points",
    "accuracy.csv": "submasking/accuracy",
    "sparsity.csv": "submasking/sparsity",
    "sparsity_per_layer.csv": "submasking/sparsity_per_layer_table",
    "knn.csv": "submasking/knn",
    "mask_similarity.csv": "submasking/mask_similarity_table",
    "mask_stability.csv": "submasking/mask_stability",
    **{f"{figure}.png": f"submasking/{figure}" for figure in FIGURES},
}


class SubmaskingJobs(FamilyJobs):
    """The submasking section of a checked config as its rules read it ({} when the config has none)."""

    DIR, TABLES, FIGURES = DIR, TABLES, FIGURES

    def __init__(self, sub: dict, families: list[str] = (), vision_bases=None):
        self.config = sub
        self.vision_bases = vision_bases  # the vision family's base packs (packs.PackedStep), which train its backbones
        self.families = list(families)  # the configured families: a vision base it needs may run for it alone
        self.backbones = {entry["name"]: entry for entry in sub.get("backbones", [])}
        self.tasks = {entry["name"]: entry for entry in sub.get("tasks", [])}
        self.points = submasking_points(sub) if sub else []
        # Points of one task (read once) train in one process, each with its own backbone, a pack of at most
        # submasking.pack_size (records restore finished points when a pack is re-formed); packs follow from the
        # config alone.
        self.packs = form_packs(self.points, sub["pack_size"],
                                shape=lambda p: {"task": p.task, "size": self.backbones[p.backbone]["image_size"]},
                                order=lambda p: (p.backbone, p.adaptation, p.fraction, p.replicate))
        self.members = dict(self.packs)

    # --- where a pack's task and backbone come from -------------------------------------------------------------

    def task_root(self, task: str) -> str:
        spec = self.tasks[task]
        if spec["source"] in EMBEDDED_TASKS:
            return f"{DIR}/tasks/{task}"
        if spec["source"] == "vision_world":
            return f"{RESULTS['vision']}/data/world"
        return spec["root"]

    def task_check(self, task: str) -> list[str]:
        """A user's image-folder task is opened once before any point trains on it (submasking_check_task)."""
        return [f"{DIR}/checks/{task}.json"] if self.tasks[task]["source"] == "folder" else []

    def backbone_file(self, backbone: str) -> str:
        spec = self.backbones[backbone]
        if spec["source"] == "vision_base":
            return f"{RESULTS['vision']}/chain{spec['chain']}/base/model.pt"
        return spec["weights"]

    def backbone_arg(self, backbone: str) -> str | None:
        """The backbone file of a backbone the workflow trains (a vision base); a weights file is in the settings."""
        return self.backbone_file(backbone) if self.backbones[backbone]["source"] == "vision_base" else None

    def pack_backbones(self, pack: str) -> list[str]:
        """The backbone files a pack's points read."""
        return sorted({self.backbone_file(point.backbone) for point in self.members[pack]})

    # --- the settings each step gets -----------------------------------------------------------------------------

    def task_settings(self) -> str:
        """What an embedded task's images are built from."""
        return as_json({"seed": self.config["seed"], "image_size": self.config["task_image_size"],
                        **self.config.get("embedded", {})})

    def train_settings(self, backbone: str, task: str) -> str:
        """What every point of a (backbone, task) shares (not the lists of adaptations, fractions, replicates, nor
        the pack size, nor a backbone's own list of adaptations: changing those must not retrain finished points)."""
        spec = {k: v for k, v in self.backbones[backbone].items() if k != "adaptations"}
        return as_json({"backbone": spec, "task": self.tasks[task], "image_size": spec["image_size"],
                        "training": self.config["training"], "self_supervised": self.config["self_supervised"],
                        "knn": self.config["knn"]})

    def pack_points(self, pack: str) -> str:
        """The pack's points as its step reads them (--points; the points file's content: a change reruns the
        pack)."""
        return as_json([self.point_args(point) for point in self.members[pack]])

    def point_args(self, point: SubmaskingPoint) -> dict:
        """A point as the step reads it: its settings (its backbone's and task's) and backbone file with it."""
        return {"identity": point.identity(), "metrics": point.metrics, "mask": point.mask,
                "settings": json.loads(self.train_settings(point.backbone, point.task)),
                "backbone": self.backbone_arg(point.backbone)}

    def grid(self) -> str:
        """What the aggregate crosses into the configured points (points.submasking_points): names, and a backbone's
        own adaptations where it has them."""
        return as_json({"backbones": [{"name": name, **({"adaptations": spec["adaptations"]} if spec.get("adaptations")
                                                         else {})} for name, spec in self.backbones.items()],
                        "tasks": [{"name": name} for name in self.tasks],
                        **{key: self.config[key] for key in ("adaptations", "label_fractions", "replicates")}})

    # --- what the run makes ------------------------------------------------------------------------------------

    def final_targets(self) -> list[str]:
        return self.tables() + self.figures()

    def benchmark_files(self):
        """(rule, benchmark records) of every submasking job (the packs under one name), and of the vision
        bases it trains as backbones when the vision family does not run."""
        bench = f"{BENCH_DIR}/submasking"
        yield "submasking_task", [f"{bench}/tasks/{task}.jsonl" for task, spec in self.tasks.items()
                                  if spec["source"] in EMBEDDED_TASKS]
        yield "submasking_pack", [f"{bench}/packs/{pack}.jsonl" for pack, _ in self.packs]
        if "vision" not in self.families:
            chains = sorted({spec["chain"] for spec in self.backbones.values() if spec["source"] == "vision_base"})
            if self.vision_bases is not None:  # the packs that hold those chains' bases
                yield "vision_base_pack", [self.vision_bases.benchmark(pack) for pack, members in self.vision_bases.packs
                                           if any(int(point["chain"]) in chains for point in members)]
            if chains:
                yield "vision_world", [f"{BENCH_DIR}/vision/data/world.jsonl"]
