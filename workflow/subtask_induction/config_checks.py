"""The config's cross-field checks, which its JSON schema cannot state: run once by the Snakefile, after the
schema and before any family's rules are read, so that a wrong config stops with every problem named and
before any job. Checks of the data a config names (folders, weight files) stand with each family's helpers.
Torch-free: the Snakefile imports it."""

from __future__ import annotations

from .method.kinds import KINDS, kinds_of
from .points import arithmetic_experiments
from .vision.layers import BATCHNORM_ARCHS, BATCHNORM_STARTS, HEAD_STARTS, LAYER_ARGUMENTS, UNKEPT_STARTS
from .vision.sources import SOURCES


def config_problems(config: dict) -> list[str]:
    """Every problem of the config, as `config KEY: what is wrong` lines. The arithmetic and vision sections
    are checked whether or not their family runs (the DAG is built from both); submasking's when it runs."""
    return (arithmetic_problems(config["arithmetic"]) + vision_problems(config["vision"])
            + cross_domain_problems(config) + spare_problems(config)
            + submasking_problems(config.get("submasking") or {}, config.get("families", [])))


def check_config(config: dict) -> None:
    problems = config_problems(config)
    if problems:
        raise ValueError("\n".join(problems))


def arithmetic_problems(arith: dict) -> list[str]:
    problems = []
    transfer = arith["transfer"]
    sizes = transfer["disambiguation_rows"]
    for experiment in arithmetic_experiments(arith):
        for key, allowed, where in (("chains", arith["chains"], f"arithmetic.chains {arith['chains']}"),
                                    ("layers", arith["layers"], f"arithmetic.layers {arith['layers']}"),
                                    ("n", sizes, f"arithmetic.transfer.disambiguation_rows {sizes}")):
            unknown = sorted(set(experiment.get(key, [])) - set(allowed))
            if unknown:
                problems.append(f"config arithmetic.experiments: {key} {unknown} are not in {where}")
        unknown = sorted(set(experiment.get("variants", [])) - set(transfer["variants"]))
        if unknown:
            problems.append(f"config arithmetic.experiments: variants {unknown} are not defined in "
                            "arithmetic.transfer.variants")
    for name, variant in transfer["variants"].items():
        problems += kind_problems("arithmetic", name, variant)
        problems += same_labels_problems(name, variant)
        if "masked_init_std" in variant and variant["kind"] in KINDS and not KINDS[variant["kind"]].masked:
            problems.append(f"config arithmetic.transfer.variants.{name}: masked_init_std draws the fresh weights of a "
                            f"masked kind again; kind {variant['kind']} has none (choose one of "
                            f"{list(kinds_of('arithmetic', masked=True))})")
    model = arith["model"]
    if model["n_embd"] % model["n_head"]:
        problems.append(f"config arithmetic.model: n_embd {model['n_embd']} is not divisible by n_head {model['n_head']}")
    if arith["report"]["dial_n"] not in sizes:
        problems.append(f"config arithmetic.report.dial_n: {arith['report']['dial_n']} is not one of "
                        f"arithmetic.transfer.disambiguation_rows {sizes}")
    if arith["report"]["protocol"] == "train_holdout" and not arith["transfer"]["holdout_fraction"]:
        problems.append("config arithmetic.report.protocol: train_holdout selects on a held-out slice of each point's "
                        "rows, but arithmetic.transfer.holdout_fraction is 0 (the paper's rows, nothing held out); "
                        "choose last or eval, or set a holdout_fraction (a run on fewer rows than the paper's)")
    # The transfer pool holds every a!=b pair that is not held out, whatever the largest n (arithmetic/data.py).
    pool = arith["n_numbers"] ** 2 - arith["n_numbers"] - arith["data"]["eval_rows"] - arith["data"]["test_rows"]
    if max(sizes) > pool:
        problems.append(f"config arithmetic.transfer.disambiguation_rows: {max(sizes)} rows exceed the {pool} a!=b "
                        f"pairs of {arith['n_numbers']} numbers that are not eval or test pairs; lower it or raise "
                        "arithmetic.n_numbers")
    overlap = arith.get("overlap") or {"layers": [], "runs": []}
    names = [run["name"] for run in overlap["runs"]]
    if len(set(names)) != len(names) or "default" in names:
        problems.append(f"config arithmetic.overlap.runs: names must be unique and not 'default', got {names}")
    if overlap["runs"] and not overlap["layers"]:
        problems.append(f"config arithmetic.overlap.layers: empty, but arithmetic.overlap.runs lists "
                        f"{len(overlap['runs'])} runs; name the depths to run them at, or set runs: [] to turn the "
                        "overlap off")
    if set(overlap["layers"]) - set(arith["layers"]):
        problems.append(f"config arithmetic.overlap.layers: {overlap['layers']} not all in arithmetic.layers")
    return problems


def same_labels_problems(name: str, variant: dict) -> list[str]:
    """A variant trained beside the subtask rows (subtask_rows) is a fresh or inherited network without a mask,
    and says whether those rows carry the task marker; a marker marks nothing without them."""
    where = f"config arithmetic.transfer.variants.{name}"
    if "subtask_rows" not in variant:
        return [f"{where}: task_marker marks the subtask rows, but the variant trains on none (no subtask_rows)"] \
            if "task_marker" in variant else []
    problems = []
    if variant["kind"] != "random":
        problems.append(f"{where}: subtask_rows trains the labels without a mask, so its kind is random "
                        f"(inherit_unmasked true: the base's unmasked tensors, as SI starts), not {variant['kind']}")
    if "task_marker" not in variant:
        problems.append(f"{where}: say task_marker: true (the subtask rows get a separator of their own, "
                        "`a b SEP2 c`) or false (the target's own format: one input, two answers)")
    return problems


def kind_problems(family: str, name: str, variant: dict) -> list[str]:
    """A variant's kind must be one of the transfer kinds (method/kinds.py) its family accepts."""
    if variant["kind"] in kinds_of(family):
        return []
    return [f"config {family}.transfer.variants.{name}: kind {variant['kind']!r} is not a transfer kind of the {family} "
            f"family (choose one of {list(kinds_of(family))}; method/kinds.py)"]


def vision_problems(vision: dict) -> list[str]:
    variants = vision["transfer"]["variants"]
    problems = [problem for name, variant in variants.items() for problem in kind_problems("vision", name, variant)]
    run = list(vision["transfer"].get("run") or variants)
    unknown = sorted(set(run) - set(variants))
    if unknown:
        problems.append(f"config vision.transfer.run: {unknown} are not defined in vision.transfer.variants "
                        f"{sorted(variants)}")
    for name in run:
        if variants.get(name, {}).get("top_k") and not KINDS[variants[name]["kind"]].masked:
            problems.append(f"config vision.transfer.variants.{name}.top_k: kind {variants[name]['kind']} transfers "
                            "no mask to take the top of; top_k needs a masked kind (subnetwork, sampled, complement)")
        if variants.get(name, {}).get("unkept") and not KINDS[variants[name]["kind"]].masked:
            unkept = variants[name]["unkept"]
            problems.append(f"config vision.transfer.variants.{name}.unkept ({unkept}: {UNKEPT_STARTS[unkept]}): kind "
                            f"{variants[name]['kind']} transfers no mask, so no weight is unkept; unkept needs a masked "
                            "kind (subnetwork, sampled, complement)")
        if variants.get(name, {}).get("head") and variants[name].get("trainable") == "head":
            head = variants[name]["head"]
            problems.append(f"config vision.transfer.variants.{name}.head ({head}: {HEAD_STARTS[head]}): trainable "
                            "head trains only the head, which this freezes; drop one of the two")
        kwargs = variants.get(name, {}).get("model_kwargs")
        if kwargs and variants[name]["kind"] != "random":
            problems.append(f"config vision.transfer.variants.{name}: model_kwargs changes the architecture, so "
                            f"nothing of the base fits it: kind must be random, not {variants[name]['kind']}")
        for key, names in LAYER_ARGUMENTS.items():
            if kwargs and isinstance(kwargs.get(key), str) and kwargs[key] not in names:
                problems.append(f"config vision.transfer.variants.{name}.model_kwargs.{key}: '{kwargs[key]}' is not "
                                f"one of {sorted(names)}")
        size = vision["data"]["reading"]["image_size"]
        if kwargs and kwargs.get("aa_layer") and size < 32:
            problems.append(f"config vision.transfer.variants.{name}.model_kwargs.aa_layer: the blur pads by "
                            f"reflection, which needs 2 px or more before each of a ResNet's five strides: "
                            f"vision.data.reading.image_size {size} is below 32")
    problems += batchnorm_problems(vision, run)
    swap = [name for name in run if name in variants and variants[name]["data"] == "texture_swap"]
    source = vision["data"]["source"]
    if swap and SOURCES[source].user_tree:
        problems.append(f"config vision.transfer.variants {swap}: data texture_swap re-renders the generated world's "
                        f"images with textures no class uses; vision.data.source is {source}, not world")
    return problems


def batchnorm_problems(vision: dict, run: list[str]) -> list[str]:
    """A variant's `batchnorm` start needs BatchNorm layers to start (a ResNet whose norm_layer is BatchNorm), and
    unit_scales a fresh BatchNorm: not kind full, not inherit_unmasked (those take the base's)."""
    variants, model = vision["transfer"]["variants"], vision["model"]
    problems = []
    for name in run:
        variant = variants.get(name, {})
        start = variant.get("batchnorm")
        if start is None:
            continue
        where = f"config vision.transfer.variants.{name}.batchnorm ({start}: {BATCHNORM_STARTS[start]})"
        norm = (model.get("model_kwargs") or {}).get("norm_layer")
        if not model["arch"].startswith(BATCHNORM_ARCHS) or norm not in (None, "batchnorm"):
            problems.append(f"{where}: vision.model {model['arch']!r}"
                            + (f" with norm_layer {norm!r}" if norm else "")
                            + f" has no BatchNorm to start; the starts need one of {list(BATCHNORM_ARCHS)} with its "
                              "default BatchNorm")
        if start == "unit_scales" and (variant["kind"] == "full" or variant["inherit_unmasked"]):
            problems.append(f"{where}: kind {variant['kind']} with inherit_unmasked {variant['inherit_unmasked']} "
                            "takes the base's BatchNorm, so no fresh one starts: use kind subnetwork, sampled or "
                            "random without inherit_unmasked")
    return problems


def cross_domain_problems(config: dict) -> list[str]:
    """Cross-domain variants (vision.transfer.variants.*.cross_domain) copy arithmetic chain c's subnetwork into
    vision chain c's ViT: the arithmetic family must run, at that depth, on those chains; the ViT is trained from
    the copied matrices only (nothing else of the GPT-2 fits it)."""
    vision = config["vision"]
    variants = vision["transfer"]["variants"]
    names = [name for name in (vision["transfer"].get("run") or variants)
             if name in variants and variants[name].get("cross_domain")]
    if not names:
        return []
    problems, arith, where = [], config["arithmetic"], vision.get("cross_domain") or {}
    if "arithmetic" not in config.get("families", []):
        problems.append(f"config vision.transfer.variants {names}: cross-domain variants copy an arithmetic "
                        f"subnetwork, but `families` {config.get('families')} leaves arithmetic out")
    if where.get("layers", 2) not in arith["layers"]:
        problems.append(f"config vision.cross_domain.layers: {where.get('layers', 2)} is not in arithmetic.layers "
                        f"{arith['layers']}")
    missing = sorted(set(vision["chains"]) - set(arith["chains"]))
    if missing:
        problems.append(f"config vision.chains: {missing} have no arithmetic chain to copy from (arithmetic.chains "
                        f"{arith['chains']})")
    for name in names:
        variant = variants[name]
        allowed = ("subnetwork", "sampled", "random") if variant["cross_domain"] == "gpt2" else ("sampled",)
        if variant["kind"] not in allowed or variant["inherit_unmasked"]:
            problems.append(f"config vision.transfer.variants.{name}: cross_domain {variant['cross_domain']} takes "
                            f"kind {' | '.join(allowed)} with inherit_unmasked: false (the ViT's other tensors "
                            f"are its own), not {variant['kind']} / {variant['inherit_unmasked']}")
    return problems


def spare_problems(config: dict) -> list[str]:
    """Spare chains (roster.py) replace a planned chain in the family's chains list: whatever names chains of its own
    (an experiment's chains, the overlap runs on the first chain, a label-budget discovery, the cross-domain ViT that
    pairs vision chain c with arithmetic chain c, a submasking backbone on a vision chain's base, a decisive batch's
    cut) would go on running a replaced chain, so it does not go with spares."""
    problems = []
    for family in ("arithmetic", "vision"):
        section = config[family]
        spares = section.get("spare_chains") or []
        if not spares:
            continue
        both = sorted(set(spares) & set(section["chains"]))
        if both:
            problems.append(f"config {family}.spare_chains: {both} are in {family}.chains too (a spare is a chain the "
                            "plan does not run unless a planned chain's base fails)")
        if config.get("decisive_batches"):
            problems.append(f"config {family}.spare_chains: decisive_batches cuts the chains list, which would cut the "
                            "roster's spares apart from the chains they replace; run the whole plan")
    arith = config["arithmetic"]
    if arith.get("spare_chains"):
        own = [index for index, e in enumerate(arithmetic_experiments(arith)) if "chains" in e]
        if own:
            problems.append(f"config arithmetic.experiments {own}: an experiment's own chains are not replaced by "
                            "arithmetic.spare_chains; leave `chains` out of them")
        if (arith.get("overlap") or {}).get("runs"):
            problems.append("config arithmetic.overlap.runs: the overlap runs read the first chain, which a spare may "
                            "replace; run them without arithmetic.spare_chains")
        budget = sorted(name for name, v in arith["transfer"]["variants"].items() if v.get("discovery_rows"))
        if budget:
            problems.append(f"config arithmetic.transfer.variants {budget}: label-budget variants (discovery_rows) are "
                            "not run with arithmetic.spare_chains")
    vision = config["vision"]
    if vision.get("spare_chains") and "submasking" in config.get("families", []):
        on_chains = sorted(b["name"] for b in (config.get("submasking") or {}).get("backbones", [])
                           if b.get("source") == "vision_base")
        if on_chains:
            problems.append(f"config submasking.backbones {on_chains}: a vision_base backbone names its vision chain, "
                            "which vision.spare_chains may replace; leave submasking out of `families` for a plan with "
                            "vision spares")
    if vision.get("spare_chains") or (arith.get("spare_chains") and "vision" in config.get("families", [])):
        variants = vision["transfer"]["variants"]
        crossing = sorted(name for name in (vision["transfer"].get("run") or variants)
                          if name in variants and variants[name].get("cross_domain"))
        if crossing:
            problems.append(f"config vision.transfer.variants {crossing}: a cross-domain variant pairs vision chain c "
                            "with arithmetic chain c, which spare chains may replace apart; run it without spares")
    return problems


def submasking_problems(sub: dict, families: list[str]) -> list[str]:
    if "submasking" not in families:
        return []
    if not sub:
        return ["config: families lists submasking, but there is no submasking section"]
    return [f"config submasking.{key}: the name '{name}' appears more than once"
            for key in ("backbones", "tasks")
            for name in sorted({entry["name"] for entry in sub[key]})
            if [entry["name"] for entry in sub[key]].count(name) > 1] + [
        f"config submasking.backbones '{entry['name']}': adaptations {sorted(set(entry['adaptations']) - set(sub['adaptations']))} "
        f"are not in submasking.adaptations {sub['adaptations']} (a backbone's list is a subset of the family's)"
        for entry in sub["backbones"] if set(entry.get("adaptations") or ()) - set(sub["adaptations"])]
