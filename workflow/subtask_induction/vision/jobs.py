"""The vision family's jobs as workflow/rules/vision.smk wires them: the Table 1 variants that run and the
discoveries they read, the source's folders, the settings string each step gets, its final targets and
benchmark records. Built once from the checked config (workflow_config.normalise); torch-free.

What needs Snakemake itself stays in the rule files: a selection's choice (a checkpoint), `ancient`, and the
listings of a user's folders (written while the DAG is built).
"""

from __future__ import annotations

from pathlib import Path

from ..jobs import BENCH_DIR, FamilyJobs, as_json, expand
from ..packs import PackedStep
from ..arithmetic.jobs import ArithmeticJobs
from ..method.kinds import reads_subnetwork
from ..points import RESULTS, VisionPoint, number_tag, vision_points
from .classes import class_folders
from .sources import USER_TREES, source_of

DIR = RESULTS["vision"]
CHAIN_DIR = f"{DIR}/chain{{chain}}"
ROSTER = f"{DIR}/summary/roster.csv"   # with spare chains: the chains that count (roster.py)
TEXTURE_SWAP = f"{DIR}/data/texture_swap"
CUE_CONFLICT_CHECK = f"{DIR}/data/cue_conflict_check.json"
POOLED_SPLITS = ["discovery", "eval", "test"]
TABLES = ["table1.csv", "table1.md", "table2.csv", "table2.md", "chains.csv", "chains.md", "comparisons.md",
          "per_class.csv", "curves.csv", "discovery_curves.csv",
          "table1.tables.csv", "comparisons.tables.csv"]   # the tables the pages quote, as data (page_tables.py)
FIGURES = ["fig5", "fig11", "per_class"]
# Report captions by file name (workflow/report/<caption>.rst): every figure (its PNG) and summary table.
CAPTIONS = {
    "table1.csv": "vision/table1",
    "table2.csv": "vision/table2",
    "chains.csv": "vision/chains",
    "comparisons.md": "vision/comparisons",
    "per_class.csv": "vision/per_class_table",
    "curves.csv": "vision/curves",
    "discovery_curves.csv": "vision/discovery_curves",
    "diagnostics.csv": "vision/diagnostics",
    "samples.png": "vision/samples",
    **{f"{figure}.png": f"vision/{figure}" for figure in FIGURES},
}

CROSS_DOMAIN = f"{CHAIN_DIR}/cross_domain"   # the arithmetic -> vision bases (steps/vision_cross_domain.py)
CROSS_DOMAIN_BASES = {"gpt2": "gpt2.pt", "fresh": "fresh.pt"}   # a cross-domain variant's `cross_domain`


def variant_discovery(variant: dict) -> str | None:
    """The vision discovery whose subnetwork a vision variant (its settings) reads: its `discovery`, pretrained
    unless it says label_free; None if it reads none (kinds.reads_subnetwork) or reads the arithmetic one (a
    cross-domain variant)."""
    if variant.get("cross_domain"):
        return None
    return variant.get("discovery", "pretrained") if reads_subnetwork(variant) else None


class VisionJobs(FamilyJobs):
    """The vision section of a checked config as its rules read it."""

    DIR, TABLES, FIGURES = DIR, TABLES, FIGURES

    def __init__(self, vision: dict, pack_sizes: dict | None = None):
        self.config = vision
        self.pack_sizes = dict(pack_sizes or {})
        self.definitions = vision["transfer"]["variants"]
        self.chains = vision["chains"]
        # The plan's spares (roster.py): their bases train; the roster's chains run the rest (on_roster).
        self.spares = list(vision.get("spare_chains") or [])
        self.candidates = self.chains + self.spares
        # the Table 1 variants that run: vision.transfer.run, else every defined one
        self.variants = list(vision["transfer"].get("run") or self.definitions)
        # discovery init -> the variants that read its subnetwork
        self.readers: dict[str, list[str]] = {}
        for name in self.variants:
            if self.discovery_of(name):
                self.readers.setdefault(self.discovery_of(name), []).append(name)
        # the discoveries that run per chain: the configured inits plus the one each masked transfer variant
        # reads, so every schema-valid `inits` builds a DAG
        self.inits = sorted(set(vision["discovery"]["inits"]) | set(self.readers), reverse=True)
        self.texture_swap = [name for name in self.variants if self.definitions[name]["data"] == "texture_swap"]
        # arithmetic -> vision: the variants that train a world ViT from the arithmetic GPT-2's copied matrices
        self.cross_domain = [name for name in self.variants if self.definitions[name].get("cross_domain")]
        self.points = vision_points(vision)
        self.source = source_of(vision)   # vision/sources.py: what the source is and needs
        # A source with classes of its own has its sorted class folders (read while the DAG is built); the world
        # and ImageNet have Geirhos' 16. Steps get them in their settings only then, so no other run's settings
        # change.
        root = self.source_root()
        self.classes = (class_folders(Path(root) / "train") if self.source.classes == "folders" and root
                        and not self.source.tree_problems(root) else None)
        self.l0_tags = [number_tag(x) for x in vision["discovery"]["l0_weights"]]
        self.packed = self._packed_steps()

    def _packed_steps(self) -> dict[str, PackedStep]:
        """The one-point steps that run in packs (config pack_sizes), over every candidate chain. With spares a pack
        past the bases holds one chain's points, so that a replaced chain's sit in packs nothing asks for."""
        chains = [str(chain) for chain in self.candidates]
        by_chain = (lambda point: {"chain": point["chain"]}) if self.spares else (lambda point: {})
        grids = {
            "vision_base": ([{"chain": c} for c in chains], lambda point: {}),
            "vision_discover": ([{"chain": c, "init": i, "l0": l} for c in chains for i in self.inits
                                 for l in self.l0_tags], by_chain),
            # the baselines never wait on a discovery: they pack apart from the variants that read one
            "vision_transfer": ([{"chain": c, "variant": v} for c in chains for v in self.variants],
                                lambda point: {**by_chain(point), "after": self.discovery_of(point["variant"]) or "base"}),
            "vision_cue_conflict": ([{"chain": c} for c in chains], by_chain),
        }
        return {rule: PackedStep(rule, "vision", DIR, points, self.pack_sizes.get(rule, 1), shape)
                for rule, (points, shape) in grids.items()}

    def on_roster(self, chains: list[int]) -> VisionJobs:
        """The jobs of the roster's chains (roster.py)."""
        return VisionJobs({**self.config, "chains": list(chains), "spare_chains": []}, self.pack_sizes)

    def base_metrics(self, chains=None) -> list[str]:
        return expand(f"{CHAIN_DIR}/base/metrics.json", chain=self.chains if chains is None else chains)

    def discovery_of(self, name: str) -> str | None:
        """The discovery whose subnetwork variant `name` reads; None if none."""
        return variant_discovery(self.definitions[name])

    def discoveries_line(self) -> str:
        """What the console says of the discoveries that run, and why each."""
        return f"vision: discoveries {self.inits} per chain (" + ", ".join(
            f"{init}: " + ("read by " + ", ".join(sorted(self.readers[init])) if init in self.readers
                           else "vision.discovery.inits")
            for init in self.inits) + ")"

    # --- the source's folders ----------------------------------------------------------------------------------

    def source_root(self) -> str | None:
        """The user's tree the source's builder splits (None for a generated source)."""
        return self.tree_section(self.source.tree).get("root") if self.source.user_tree else None

    def tree_section(self, tree: str) -> dict:
        """The config section (vision.data.<source>) of the user tree `tree`."""
        return self.config["data"].get(USER_TREES[tree].name) or {}

    def tree_root(self, tree: str):
        return self.tree_section(tree).get("root") or []

    def data_dir(self) -> str:
        return f"{DIR}/data/{self.source.tree}"

    def split(self, split: str) -> str:
        return f"{self.data_dir()}/{split}"

    def base_train(self) -> str:
        """The world has its own pretraining split; ImageNet mode trains a base without weights on ImageNet-16
        train."""
        return self.split(self.source.base_split)

    def cue_conflict(self) -> str:
        """The cue-conflict folder: the user's, else the generated world's; "" for a folder source without one
        (the steps then compute no cue-conflict metric: the shape-bias columns are absent, not zero)."""
        if self.config["data"].get("cue_conflict"):
            return self.config["data"]["cue_conflict"]
        return f"{self.data_dir()}/cue_conflict" if self.source.cue_conflict == "own" else ""

    def pooled(self, split: str) -> list[str]:
        return expand(f"{DIR}/pooled/{split}/shard{{shard}}", shard=range(self.config["pooling"]["shards"][split]))

    def transfer_train(self, variant: str) -> str:
        """The folder variant `variant` trains on: the original training images, or their texture swap."""
        return f"{TEXTURE_SWAP}/train" if variant in self.texture_swap else self.split("train")

    def transfer_base(self, chain, variant: str) -> str:
        """The model a variant transfers from: the chain's base, or a cross-domain base (the ViT holding the
        GPT-2's matrices, or the fresh one)."""
        kind = self.definitions[variant].get("cross_domain")
        if kind:
            return f"{CROSS_DOMAIN}/{CROSS_DOMAIN_BASES[kind]}".format(chain=chain)
        return f"{CHAIN_DIR}/base/model.pt".format(chain=chain)

    def arithmetic_subnetwork(self) -> tuple[str, str, int]:
        """(base, subtask, layers) of the arithmetic subnetwork the cross-domain variants copy (vision.cross_domain)."""
        where = self.config["cross_domain"]
        return where["base"], where["subtask"], where["layers"]

    def arithmetic_base(self, chain) -> str:
        base, _, layers = self.arithmetic_subnetwork()
        return ArithmeticJobs.base_model(chain, base, layers)

    def cross_domain_subnetwork(self, chain, variant: str) -> str | list:
        """The arithmetic subnetwork under the ViT's names, for a cross-domain variant that reads one (else [],
        Snakemake's no input)."""
        if variant in self.cross_domain and reads_subnetwork(self.definitions[variant]):
            return f"{CROSS_DOMAIN}/subnetwork.pt".format(chain=chain)
        return []

    # --- the settings each step gets -----------------------------------------------------------------------------

    def report_settings(self) -> str:
        """vision.report, its comparisons joined by the cross-domain ones: at each training-set size, the
        GPT-2's subnetwork frozen in the ViT against every other cross-domain variant of that size (by what the
        variants are, not their names)."""
        report = dict(self.config["report"])
        by_size, originals = {}, []
        for name in self.cross_domain:
            by_size.setdefault(self.definitions[name].get("train_per_class"), []).append(name)
        for names in by_size.values():
            transferred = [name for name in names if self.definitions[name]["kind"] == "subnetwork"
                           and self.definitions[name]["cross_domain"] == "gpt2"]
            extra = [[first, second] for first in transferred for second in names if second != first]
            report["comparisons"] = [*report["comparisons"], *(pair for pair in extra
                                                               if pair not in report["comparisons"])]
            originals += extra
        if originals:
            # a sample-efficiency question is asked on the world's own test images too (the paper's claim), paired
            report["original_comparisons"] = originals
        return as_json(report)

    def cross_domain_settings(self, chain) -> str:
        return as_json({"chain": int(chain), "image_size": self.config["data"]["reading"]["image_size"],
                        "num_outputs": self.config["model"]["num_outputs"]})

    def classes_setting(self) -> dict:
        return {"classes": self.classes} if self.source.classes == "folders" else {}

    def world_settings(self, **extra) -> str:
        return as_json({"seed": self.config["seed"], **self.config["data"]["world"], **extra})

    def tree_settings(self, tree: str) -> str:
        """What a builder's splits depend on (the gates apart: they decide only whether a build may stand)."""
        section = self.tree_section(tree)
        return as_json({"seed": self.config["seed"],
                        **{k: v for k, v in section.items() if k not in ("root", "skip_unreadable", "min_fill")}})

    def tree_gates(self, tree: str) -> str:
        section = self.tree_section(tree)
        return ("--skip-unreadable " if section.get("skip_unreadable") else "") + \
            f"--min-fill {section.get('min_fill', 0.5)}"

    def pooling_settings(self) -> str:
        """Only the chosen segmenter's settings: changing the other one's must not rerun the pooling."""
        pooling = self.config["pooling"]
        kind = pooling["segmenter"]
        return as_json({"seed": self.config["seed"], "min_area": pooling["min_area"],
                        "segmenter": {"kind": kind, **pooling[kind]}, **self.classes_setting()})

    def settings(self, chain, **sections) -> str:
        """What every vision training step gets: its chain (its seeds: seeds.vision_seeds), data reading, model,
        eval batch size, plus its own sections."""
        return as_json({"chain": int(chain), "data": self.config["data"]["reading"],
                        "eval_batch_size": self.config["eval_batch_size"], **self.classes_setting(), **sections})

    def base_settings(self, chain) -> str:
        model = self.config["model"]
        spec = {"arch": model["arch"], "num_outputs": model["num_outputs"],
                "model_kwargs": model.get("model_kwargs") or {},
                # only when not NCHW: a config without the key keeps its bases' settings, so nothing reruns
                **({"memory_format": model["memory_format"]} if model.get("memory_format", "contiguous") != "contiguous"
                   else {})}
        return self.settings(chain, model={"spec": spec, "weights": model["weights"]}, training=self.config["base"])

    @staticmethod
    def base_identity(chain) -> str:
        """What a base's metrics.json is (as points.py gives a transfer point's identity)."""
        return as_json({"family": "vision", "stage": "base", "chain": int(chain)})

    @staticmethod
    def discovery_identity(chain, init: str, l0: str) -> str:
        return as_json({"family": "vision", "stage": "discovery", "chain": int(chain), "init": init,
                        "l0_weight": float(l0)})

    @staticmethod
    def transfer_identity(chain, variant: str) -> str:
        return as_json(VisionPoint(int(chain), variant).identity())

    def discovery_settings(self, chain, init: str) -> str:
        """A discovery's; a label-free one's targets are the base's answers on the pooled splits' originals."""
        discovery = {k: v for k, v in self.config["discovery"].items() if k not in ("l0_weights", "inits", "floor")}
        originals = ({"originals": {"discovery": self.split("discovery"), "eval": self.split("eval")}}
                     if init == "label_free" else {})
        return self.settings(chain, discovery=discovery, **originals)

    def transfer_settings(self, chain, variant: str) -> str:
        training = {k: v for k, v in self.config["transfer"].items() if k != "variants"}
        return self.settings(chain, training=training, variant=self.definitions[variant])

    def select_floor(self, init: str) -> str:
        """The pretrained subnetworks are transferred; the random-init one (Fig 11's control) is expected at
        chance."""
        return "--floor" if init != "random" and self.config["discovery"].get("floor", True) else ""

    def diagnostics_settings(self) -> str:
        """The first chain's, with the SI variants of the labelled subnetwork (not the label-free one's)."""
        variants = {name: self.definitions[name] for name in self.variants
                    if self.definitions[name]["kind"] == "subnetwork" and self.discovery_of(name) == "pretrained"}
        return self.settings(self.chains[0], max_images=self.config["diagnostics"]["bn_images"], variants=variants)

    def samples_settings(self) -> str:
        return as_json({"seed": self.config["seed"], "data": self.config["data"]["reading"],
                        **self.classes_setting()})

    # --- what the run makes ------------------------------------------------------------------------------------

    def discovery_paths(self, pattern: str) -> list[str]:
        return expand(pattern, chain=self.chains, init=self.inits, l0=self.l0_tags)

    def discovery_metrics(self) -> list[str]:
        return self.discovery_paths(f"{CHAIN_DIR}/discovery/{{init}}/lambda{{l0}}/metrics.json")

    def transfer_metrics(self) -> list[str]:
        return [point.metrics for point in self.points]

    def final_targets(self) -> list[str]:
        return (self.tables() + self.figures() + [f"{DIR}/figures/samples.png"]
                + (expand(f"{DIR}/summary/diagnostics.{{ext}}", ext=["csv", "md"]) if "pretrained" in self.inits
                   else []) + ([ROSTER] if self.spares else []))

    def benchmark_files(self):
        """(rule, benchmark records) of every vision job."""
        bench = f"{BENCH_DIR}/vision"
        yield self.source.builder, [f"{bench}/data/{Path(self.data_dir()).name}.jsonl"]
        yield "vision_mean_pool", [f"{bench}/pooled/{split}/shard{shard}.jsonl" for split in POOLED_SPLITS
                                   for shard in range(self.config["pooling"]["shards"][split])]
        # every candidate chain's packs (roster.py): a spare in a failed chain's place runs them; a record never
        # written is left out of the report
        for rule, packed in self.packed.items():
            yield f"{rule}_pack", packed.benchmark_files()
        if "pretrained" in self.inits:
            yield "vision_diagnostics", [f"{bench}/diagnostics.jsonl"]
        if self.cross_domain:
            yield "vision_cross_domain", expand(f"{bench}/chain{{chain}}/cross_domain.jsonl", chain=self.chains)
        if self.texture_swap:
            yield "vision_texture_swap", [f"{bench}/data/texture_swap.jsonl"]
