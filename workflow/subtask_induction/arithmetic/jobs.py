"""The arithmetic family's jobs as workflow/rules/arithmetic.smk wires them: the sweep (experiments, transfer
points and their packs, the label budget), the settings string each step gets, the paths of its files, its
final targets and benchmark records. Built once from the checked config (workflow_config.normalise);
torch-free.

What needs Snakemake itself stays in the rule files: a selection's choice (a checkpoint) and `ancient`. A
function here that needs a selection's choice takes the chosen subnetwork's path as an argument.
"""

from __future__ import annotations

from pathlib import Path

from ..jobs import BENCH_DIR, FamilyJobs, as_json, expand
from ..method.kinds import KINDS, batch_rows
from ..packs import PackedStep, form_packs
from ..points import RESULTS, ArithmeticPoint, arithmetic_experiments, arithmetic_points, number_tag

DIR = RESULTS["arithmetic"]
CHAIN_DIR = f"{DIR}/chain{{chain}}"
BUDGET_PATH = f"{CHAIN_DIR}/discovery_budget/{{base}}/{{subtask}}/layers{{layers}}/rows{{rows}}"
PACK_POINTS = f"{DIR}/transfer/packs/{{pack}}.points.json"
ROSTER = f"{DIR}/summary/roster.csv"   # with spare chains: the chains that count (roster.py)

FIGURES = ["fig3", "fig6", "fig7", "protocols", "inheritance", "dial", "sparsity_dial", "discovery_curves"]
TABLES = ["base.csv", "discovery.csv", "transfer.csv", "table3.csv", "table3.md", "discovery_curves.csv",
          "transfer.md", "chains.csv", "chains.md", "sparsity_dial.md", "same_labels.md", "paper_comparison.md",
          "chains.tables.csv", "paper_comparison.tables.csv"]   # the tables the pages quote, as data (page_tables.py)
# Report captions by file name (workflow/report/<caption>.rst): every figure (its PNG) and summary table.
CAPTIONS = {
    "transfer.csv": "arithmetic/transfer_table",
    "table3.csv": "arithmetic/table3",
    "paper_comparison.md": "arithmetic/paper_comparison",
    "chains.md": "arithmetic/chains",
    "sparsity_dial.md": "arithmetic/sparsity_dial_table",
    "same_labels.md": "arithmetic/same_labels_table",
    "budget.csv": "arithmetic/budget_table",
    "budget.png": "arithmetic/budget",
    "base.csv": "arithmetic/base_table",
    "discovery.csv": "arithmetic/discovery_table",
    "discovery_curves.csv": "arithmetic/discovery_curves_table",
    "overlap.csv": "arithmetic/overlap_table",
    "overlap.png": "arithmetic/overlap",
    **{f"{figure}.png": f"arithmetic/{figure}" for figure in FIGURES},
}
# Discovery settings the jobs do not get: each discovery job takes its λ from its wildcard, so adding a λ must
# not change (and rerun) the jobs already done; the floor is the selection's.
NOT_A_DISCOVERY_SETTING = ("l0_weights", "floor")
# Transfer settings no point's numbers depend on (the sweep lists, the pack size): changing them must not
# retrain finished points.
NOT_A_TRANSFER_SETTING = ("disambiguation_rows", "replicates", "variants", "pack_size")


def batches_label(variant: dict) -> str:
    """kinds.batch_rows as a pack's name says it: "" (nothing besides the target rows), the subtask_rows,
    "_marked" added when those rows carry the task marker (a vocabulary of its own)."""
    rows, marked = batch_rows(variant)
    return f"{rows}_marked" if rows and marked else rows or ""


class ArithmeticJobs(FamilyJobs):
    """The arithmetic section of a checked config (the schema and check_config passed) as its rules read it."""

    DIR, TABLES, FIGURES = DIR, TABLES, FIGURES

    def __init__(self, arith: dict, retrain: list[str] = (), per_chain_packs: bool | None = None,
                 pack_sizes: dict | None = None):
        self.config = arith
        self.pack_sizes = dict(pack_sizes or {})
        self.variants = arith["transfer"]["variants"]
        self.chains = arith["chains"]
        # The plan's spares (roster.py): every rule exists for them too, and the jobs the roster asks for run.
        self.spares = list(arith.get("spare_chains") or [])
        self.candidates = self.chains + self.spares
        self.experiments = arithmetic_experiments(arith)
        self.points = arithmetic_points({**arith, "chains": self.candidates})
        # Points of one depth, one n and one kind of batch train as one stacked model (docs/running.md, "Packs");
        # the packs depend on the config alone, so a compute node re-reading the Snakefile forms the same ones.
        # With spares a pack holds one chain's points, so that the roster's packs are a subset of these and a
        # replaced chain's points sit in packs nothing asks for.
        self.per_chain_packs = bool(self.spares) if per_chain_packs is None else per_chain_packs
        self.packs = form_packs(
            self.points, arith["transfer"]["pack_size"],
            shape=lambda p: {**({"chain": p.chain} if self.per_chain_packs else {}), "layers": p.layers, "n": p.n,
                             "with": batches_label(self.variants[p.variant])},
            order=lambda p: (p.chain, p.replicate, p.base, p.subtask, p.target, p.variant),
        )
        self.members = dict(self.packs)
        # the label-budget discoveries (variants with discovery_rows): (chain, base, subtask, layers, rows)
        self.budget = sorted({(p.chain, p.base, p.subtask, p.layers, self.variants[p.variant]["discovery_rows"])
                              for p in self.points if self.variants[p.variant].get("discovery_rows")})
        self.computations = sorted({e["base"] for e in self.experiments} | {e["subtask"] for e in self.experiments}
                                   | {t for e in self.experiments for t in e["targets"]})
        # the complement control is checked when the subnetwork is selected, not hours later at transfer time
        self.uses_complement = any(KINDS[self.variants[name]["kind"]].outside_subnetwork
                                   for e in self.experiments for name in e.get("variants", self.variants))
        self.l0_tags = [number_tag(x) for x in arith["discovery"]["l0_weights"]]
        self.overlap = arith.get("overlap") or {"layers": [], "runs": []}
        self.overlap_runs = {run["name"]: run for run in self.overlap["runs"]}
        # the overlap runs vary the first chain's default discovery (its base, the λ its selection chose)
        self.overlap_chain = self.chains[0]
        # points to train again although a finished record exists (config retrain_points): their pack's points
        # change, so Snakemake reruns that pack alone, which restores the other members
        self.retrain = {str(Path(path)) for path in retrain}
        # the bases and discoveries, several to a process (config pack_sizes); with spares a discovery pack holds one
        # chain's points, as the transfer packs do
        by_chain = (lambda point: {"chain": point["chain"]}) if self.per_chain_packs else (lambda point: {})
        self.packed = {
            "arithmetic_base": PackedStep(
                "arithmetic_base", "arithmetic", DIR,
                self.experiment_points(("chain", "base", "layers"), chains=self.candidates),
                self.pack_sizes.get("arithmetic_base", 1)),
            "arithmetic_discover": PackedStep(
                "arithmetic_discover", "arithmetic", DIR,
                self.experiment_points(("chain", "base", "subtask", "layers", "l0"), chains=self.candidates,
                                       l0=self.l0_tags),
                self.pack_sizes.get("arithmetic_discover", 1), by_chain),
        }

    def on_roster(self, chains: list[int]) -> ArithmeticJobs:
        """The jobs of the roster's chains (roster.py): the same packs, less those of the chains it leaves out."""
        return ArithmeticJobs({**self.config, "chains": list(chains), "spare_chains": []}, self.retrain,
                              per_chain_packs=self.per_chain_packs, pack_sizes=self.pack_sizes)

    # --- the settings each step gets -------------------------------------------------------------------------

    def data_settings(self, purpose: str) -> str:
        data = self.config["data"]
        rows = {} if purpose == "transfer" else {"train_rows": data[purpose]["train_rows"]}
        if purpose == "transfer" and "transfer" in data:   # absent: the paper's uniform pool (settings unchanged)
            rows = dict(data["transfer"])
        return as_json({"n_numbers": self.config["n_numbers"], "modulus": self.config["modulus"],
                        "seed": self.config["seed"], "eval_rows": data["eval_rows"], "test_rows": data["test_rows"],
                        **rows})

    def _discovery_section(self) -> dict:
        return {key: value for key, value in self.config["discovery"].items() if key not in NOT_A_DISCOVERY_SETTING}

    def base_settings(self, chain) -> str:
        """A base's: its optimiser settings under "training", its model; the chain seeds its initialisation and
        batch order."""
        return as_json({"seed": int(chain), "chain": int(chain), "model": self.config["model"],
                        "training": self.config["base"]})

    def discovery_settings(self, chain) -> str:
        """A discovery's (the every-row ones and the label budget's): its optimiser settings flat."""
        return as_json({"seed": int(chain), "chain": int(chain), **self._discovery_section()})

    def overlap_settings(self, run: str) -> str:
        """The default discovery (first chain, the selected λ) with one run's changes: seed, λ, mask method or
        mask_init."""
        spec = self.overlap_runs[run]
        section = self._discovery_section()
        section.update({key: value for key, value in spec.items() if key in ("mask", "mask_init", "lr", "epochs")})
        return as_json({"seed": spec.get("seed", self.overlap_chain), "chain": self.overlap_chain, **section})

    # --- what each base and discovery is (its metrics.json's identity, as points.py gives a point's) -----------

    @staticmethod
    def base_identity(chain, base: str, layers) -> str:
        return as_json({"family": "arithmetic", "stage": "base", "chain": int(chain), "base": base,
                        "layers": int(layers)})

    @staticmethod
    def discovery_identity(chain, base: str, subtask: str, layers, l0: str) -> str:
        return as_json({"family": "arithmetic", "stage": "discovery", "chain": int(chain), "base": base,
                        "subtask": subtask, "layers": int(layers), "l0_weight": float(l0)})

    @staticmethod
    def budget_identity(chain, base: str, subtask: str, layers, rows) -> str:
        """A label-budget discovery (at the λ the every-row selection chose): its rows name it."""
        return as_json({"family": "arithmetic", "stage": "discovery_budget", "chain": int(chain), "base": base,
                        "subtask": subtask, "layers": int(layers), "rows": int(rows)})

    def overlap_identity(self, base: str, subtask: str, layers, run: str) -> str:
        """An overlap run: the overlap chain's default discovery with one change, named by the run."""
        return as_json({"family": "arithmetic", "stage": "overlap", "chain": self.overlap_chain, "base": base,
                        "subtask": subtask, "layers": int(layers), "run": run})

    def transfer_training(self) -> dict:
        """The transfer settings every point shares."""
        return {k: v for k, v in self.config["transfer"].items() if k not in NOT_A_TRANSFER_SETTING}

    def transfer_settings(self) -> str:
        return as_json({"training": self.transfer_training()})

    def select_check(self) -> str:
        """The selection's flags: the complement control's check when a variant uses it, the floor unless off."""
        return (("--check-complement " if self.uses_complement else "")
                + ("--floor" if self.config["discovery"].get("floor", True) else ""))

    def budget_variants(self) -> str:
        return as_json({name: {"rows": variant["discovery_rows"], "kind": variant["kind"]}
                        for name, variant in self.variants.items() if variant.get("discovery_rows")})

    def budget_n(self) -> int:
        return self.config["report"].get("budget_n", max(self.config["transfer"]["disambiguation_rows"]))

    # --- the transfer points ---------------------------------------------------------------------------------

    def budget_subnetwork(self, point: ArithmeticPoint) -> str | None:
        """The subnetwork a label-budget variant (discovery_rows) transfers: the discovery from that many subtask
        rows; None for a variant that transfers the selection's choice."""
        rows = self.variants[point.variant].get("discovery_rows")
        if not rows:
            return None
        return BUDGET_PATH.format(chain=point.chain, base=point.base, subtask=point.subtask, layers=point.layers,
                                  rows=rows) + "/subnetwork.pt"

    def point_args(self, point: ArithmeticPoint, subnetwork: str) -> dict:
        """One point as the transfer step reads it (--points): its identity, its variant's settings, the files it
        reads (`subnetwork`: the file it transfers, the chosen λ's own) and writes."""
        variant = self.variants[point.variant]
        return {
            "identity": point.identity(),
            "variant_settings": variant,
            "base": self.base_model(point.chain, point.base, point.layers),
            "subnetwork": subnetwork,
            "data": f"{DIR}/data/transfer/{point.target}.pt",
            **({"subtask_data": f"{DIR}/data/discovery/{point.subtask}.pt"} if batch_rows(variant)[0] else {}),
            "out": point.metrics,
            **({"retrain": True} if point.metrics in self.retrain else {}),
        }

    def pack_selections(self, pack: str) -> list[str]:
        """The selection records (checkpoint outputs) a pack's points depend on (not the label-budget points)."""
        return sorted({self.selection(point.chain, point.base, point.subtask, point.layers)
                       for point in self.members[pack] if not self.variants[point.variant].get("discovery_rows")})

    def retrain_check(self) -> tuple[set[str], set[str], dict]:
        """What data_checks.retrain_problems compares: the points to retrain, the config's points, the settings."""
        return self.retrain, {point.metrics for point in self.points}, self.transfer_training()

    # --- paths -------------------------------------------------------------------------------------------------

    @staticmethod
    def base_model(chain, base: str, layers) -> str:
        return f"{DIR}/chain{chain}/base/{base}/layers{layers}/model.pt"

    @staticmethod
    def selection(chain, base: str, subtask: str, layers) -> str:
        return f"{DIR}/chain{chain}/discovery/{base}/{subtask}/layers{layers}/selected.json"

    @staticmethod
    def pack_manifest(pack: str) -> str:
        """What a pack writes last: its points, and which it trained or restored."""
        return f"{DIR}/transfer/packs/{pack}.json"

    def experiment_paths(self, pattern: str, only_layers=None, chains=None, **grid) -> list[str]:
        """`pattern` over the experiments list, each with its own base and subtask, depths and chains (only
        those depths in only_layers, if given; `chains` in place of the family's), crossed with `grid`."""
        paths = []
        for experiment in self.experiments:
            layers = experiment.get("layers", self.config["layers"])
            if only_layers is not None:
                layers = [depth for depth in layers if depth in only_layers]
            paths += expand(pattern, base=[experiment["base"]], subtask=[experiment["subtask"]], layers=layers,
                            chain=experiment.get("chains", self.chains if chains is None else chains), **grid)
        return sorted(set(paths))

    def experiment_points(self, fields: tuple[str, ...], chains=None, **grid) -> list[dict]:
        """experiment_paths' grid as wildcards (every value a string, as Snakemake gives them): one dict per
        distinct combination of `fields`, in the order of their paths."""
        pattern = "\0".join(f"{{{name}}}" for name in fields)
        return [dict(zip(fields, key.split("\0"))) for key in self.experiment_paths(pattern, chains=chains, **grid)]

    def overlap_experiments(self) -> list[tuple[str, str, int]]:
        """(base, subtask, depth) of every discovery the overlap runs compare against (the overlap chain's)."""
        return sorted({(e["base"], e["subtask"], layers) for e in self.experiments
                       for layers in self.overlap["layers"]
                       if layers in e.get("layers", self.config["layers"])
                       and self.overlap_chain in e.get("chains", self.chains)})

    def chains_of(self, base: str, subtask: str, layers) -> list[int]:
        """The chains that discover `subtask` of `base` at `layers` (any experiment of the config)."""
        return sorted({chain for e in self.experiments if (e["base"], e["subtask"]) == (base, subtask)
                       and int(layers) in e.get("layers", self.config["layers"])
                       for chain in e.get("chains", self.chains)})

    def overlap_subnetworks(self) -> list[str]:
        return self.experiment_paths(f"{DIR}/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}/subnetwork.pt",
                                     only_layers=self.overlap["layers"], run=list(self.overlap_runs))

    def base_metrics(self, chains=None) -> list[str]:
        return self.experiment_paths(f"{CHAIN_DIR}/base/{{base}}/layers{{layers}}/metrics.json", chains=chains)

    def discovery_metrics(self) -> list[str]:
        return self.experiment_paths(
            f"{CHAIN_DIR}/discovery/{{base}}/{{subtask}}/layers{{layers}}/lambda{{l0}}/metrics.json", l0=self.l0_tags)

    def budget_subnetworks(self) -> list[str]:
        """The label-budget discoveries."""
        return [BUDGET_PATH.format(chain=c, base=b, subtask=s, layers=l, rows=r) + "/subnetwork.pt"
                for c, b, s, l, r in self.budget]

    def budget_data(self) -> list[str]:
        """The discovery data of the label budget (its training rows)."""
        return sorted({f"{DIR}/data/discovery/{s}.pt" for _, _, s, _, _ in self.budget})

    def overlap_targets(self) -> list[str]:
        if not self.overlap["runs"]:
            return []
        return [f"{DIR}/summary/overlap.csv", f"{DIR}/summary/overlap.md", f"{DIR}/figures/overlap.png",
                f"{DIR}/figures/overlap.pdf"]

    def budget_targets(self) -> list[str]:
        if not self.budget:
            return []
        return [f"{DIR}/summary/budget.csv", f"{DIR}/summary/budget.md", f"{DIR}/figures/budget.png",
                f"{DIR}/figures/budget.pdf"]

    def final_targets(self) -> list[str]:
        return (self.tables() + self.figures() + self.overlap_targets() + self.budget_targets()
                + ([ROSTER] if self.spares else []))

    def benchmark_files(self):
        """(rule, benchmark records) of every arithmetic job (the packs under one name)."""
        bench = f"{BENCH_DIR}/arithmetic"
        for rule, packed in self.packed.items():
            yield f"{rule}_pack", packed.benchmark_files()
        yield "arithmetic_overlap_discover", self.experiment_paths(
            f"{bench}/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}.jsonl", run=list(self.overlap_runs),
            only_layers=self.overlap["layers"])
        yield "arithmetic_transfer_pack", [f"{bench}/transfer/packs/{pack}.jsonl" for pack, _ in self.packs]
        yield "arithmetic_discover_budget", [
            f"{bench}/chain{c}/discovery_budget/{b}/{s}/layers{l}/rows{r}.jsonl" for c, b, s, l, r in self.budget]
