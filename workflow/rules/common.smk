# Helpers for the workflow: settings passed to steps, target lists, per-family constants.
import json
import re
from pathlib import Path


def as_json(settings):
    """Settings for a step, as a deterministic JSON string (params changes trigger reruns)."""
    return json.dumps(settings, sort_keys=True)


def number_tag(value):
    """1e-06 for 1.0e-6: how a float looks in a path."""
    return f"{value:g}"


def one_of(values):
    return "|".join(re.escape(str(value)) for value in values)



def training_resources():
    return {"gpu": config["resources"]["gpu_per_training_job"]}


def final_targets():
    """The final targets: summary tables and figures of each configured family."""
    targets = []
    if "arithmetic" in config["families"]:
        targets += arith_final_targets()
    return targets


# ---- arithmetic family -------------------------------------------------------------------------------
ARITH = config["arithmetic"]
ARITH_DIR = "results/arithmetic"
ARITH_COMPUTATIONS = sorted(
    {e["base"] for e in ARITH["experiments"]}
    | {e["subtask"] for e in ARITH["experiments"]}
    | {t for e in ARITH["experiments"] for t in e["targets"]}
)
for _experiment in ARITH["experiments"]:
    _unknown = sorted(set(_experiment.get("variants", [])) - set(ARITH["transfer"]["variants"]))
    if _unknown:
        raise ValueError(f"config arithmetic.experiments: variants {_unknown} are not defined in arithmetic.transfer.variants")
ARITH_FIGURES = ["fig3", "fig6", "fig7", "discovery_curves"]
ARITH_TABLES = ["base.csv", "discovery.csv", "transfer.csv", "table3.csv", "table3.md", "discovery_curves.csv"]


def arith_data_settings(wildcards):
    rows = dict(ARITH["data"][wildcards.purpose])
    if wildcards.purpose == "transfer":
        rows["train_rows"] = max(ARITH["transfer"]["disambiguation_rows"])
    return as_json({"n_numbers": ARITH["n_numbers"], "modulus": ARITH["modulus"], "seed": ARITH["seed"], **rows})


def arith_stage_settings(stage, **extra):
    """Base steps take their optimiser settings under "training"; discovery takes them flat.

    The λ list is left out: each discovery job gets its λ from the wildcard, so adding a λ value
    must not change (and rerun) the jobs already done.
    """
    section = {key: value for key, value in ARITH[stage].items() if key != "l0_weights"}
    return as_json({"seed": ARITH["seed"], "checkpoint_interval_s": config["checkpoint_interval_s"], **extra,
                    **({"training": section} if stage != "discovery" else section)})


def arith_transfer_settings(wildcards):
    training = {k: v for k, v in ARITH["transfer"].items() if k not in ("disambiguation_rows", "seeds", "variants")}
    return as_json({"training": training, "variant": ARITH["transfer"]["variants"][wildcards.variant],
                    "checkpoint_interval_s": config["checkpoint_interval_s"]})


def arith_experiment_paths(pattern, **extra):
    """expand() over the experiments list, each with its own base and subtask."""
    paths = []
    for experiment in ARITH["experiments"]:
        paths += expand(pattern, base=experiment["base"], subtask=experiment["subtask"], layers=ARITH["layers"],
                        **extra)
    return sorted(set(paths))


def arith_transfer_points():
    """Every sweep point; an experiment may run a subset of the variants (its `variants` list)."""
    paths = []
    for experiment in ARITH["experiments"]:
        paths += expand(
            f"{ARITH_DIR}/transfer/{{base}}/{{subtask}}/{{target}}/layers{{layers}}/{{variant}}/n{{n}}/seed{{seed}}/metrics.json",
            base=experiment["base"], subtask=experiment["subtask"], target=experiment["targets"],
            layers=ARITH["layers"], variant=experiment.get("variants", list(ARITH["transfer"]["variants"])),
            n=ARITH["transfer"]["disambiguation_rows"], seed=ARITH["transfer"]["seeds"],
        )
    return sorted(set(paths))


def arith_discovery_metrics():
    return arith_experiment_paths(
        f"{ARITH_DIR}/discovery/{{base}}/{{subtask}}/layers{{layers}}/lambda{{l0}}/metrics.json",
        l0=[number_tag(x) for x in ARITH["discovery"]["l0_weights"]],
    )


def arith_base_metrics():
    return arith_experiment_paths(f"{ARITH_DIR}/base/{{base}}/layers{{layers}}/metrics.json")


def arith_final_targets():
    return (expand(f"{ARITH_DIR}/summary/{{table}}", table=ARITH_TABLES)
            + expand(f"{ARITH_DIR}/figures/{{figure}}.{{ext}}", figure=ARITH_FIGURES, ext=["png", "pdf"]))
