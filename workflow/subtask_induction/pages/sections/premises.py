"""The vision verdicts read against the paper's premises (issue 82): what the paper's Table 1 rests on, in the paper
and in a record's generated world, side by side, every number read from the record or from the paper's numbers
shipped with the package (vision/data/paper_numbers.csv)."""

from __future__ import annotations

from ...rounding import fixed, percent
from ...vision import paper
from ..run_records import RunRecord


def world(record: RunRecord) -> dict | None:
    """The record's numbers the premises need (percent), or None where it lacks them."""
    if not (record.has("vision/table1.csv") and record.has("vision/table2.csv")):
        return None
    table = record.csv("vision/table1.csv").set_index("model")
    kept = record.csv("vision/table2.csv").set_index("init")
    if not {"base", "si", "finetune", "mixture"} <= set(table.index) or "pretrained" not in kept.index:
        return None
    at = lambda model, metric: 100 * float(table.loc[model, metric])   # noqa: E731
    return {"base_original": at("base", "original_accuracy"), "base_pooled": at("base", "pooled_accuracy"),
            "subnetwork_pooled": 100 * float(kept.loc["pretrained", "subnetwork_pooled_accuracy"]),
            "kept": float(kept.loc["pretrained", "kept_percent"]), "si_pooled": at("si", "pooled_accuracy"),
            "finetune_pooled": at("finetune", "pooled_accuracy"), "mixture_pooled": at("mixture", "pooled_accuracy"),
            "chains": int(table.loc["si", "pooled_accuracy_count"])}


def theirs() -> dict:
    return {"base_original": paper.value("linear", "original_accuracy"),
            "base_pooled": paper.value("linear", "pooled_accuracy"),
            "subnetwork_pooled": paper.value("subnetwork", "pooled_accuracy"),
            "kept": paper.value("subnetwork", "kept_percent"), "si_pooled": paper.value("si", "pooled_accuracy"),
            "finetune_pooled": paper.value("mixture", "pooled_accuracy")}


def kept_share(numbers: dict) -> float:
    """How much of its subnetwork's pooled accuracy SI keeps (a share)."""
    return numbers["si_pooled"] / numbers["subnetwork_pooled"]


def table(record: RunRecord) -> list[str]:
    ours = world(record)
    if ours is None:
        return []
    them = theirs()
    rows = [
        ("base: original / pooled accuracy",
         f"{fixed(them['base_original'], 1)} / {fixed(them['base_pooled'], 1)} % (pooled {fixed(them['base_pooled'] / them['base_original'], 2)} of original)",
         f"{fixed(ours['base_original'], 1)} / {fixed(ours['base_pooled'], 1)} % ({fixed(ours['base_pooled'] / ours['base_original'], 2)})"),
        ("subnetwork on pooled images (over the base); kept",
         f"{fixed(them['subnetwork_pooled'], 1)} % ({fixed(them['subnetwork_pooled'] - them['base_pooled'], 1, sign=True)}); {fixed(them['kept'], 1)} %",
         f"{fixed(ours['subnetwork_pooled'], 1)} % ({fixed(ours['subnetwork_pooled'] - ours['base_pooled'], 1, sign=True)}); {fixed(ours['kept'], 1)} %"),
        ("SI on pooled images: of the subnetwork's",
         f"{fixed(them['si_pooled'], 1)} %: keeps {percent(kept_share(them), 0)}", f"{fixed(ours['si_pooled'], 1)} %: keeps {percent(kept_share(ours), 0)}"),
        ("the mixture as the authors' code ran it (`finetune`): pooled gain over the base",
         f"{fixed(them['finetune_pooled'] - them['base_pooled'], 1, sign=True)}", f"{fixed(ours['finetune_pooled'] - ours['base_pooled'], 1, sign=True)}"),
        ("the mixture with pooled images (the paper's text; our `mixture`): pooled gain over the base",
         "described, not run (its code)", f"{fixed(ours['mixture_pooled'] - ours['base_pooled'], 1, sign=True)}"),
    ]
    return ([f"### The paper's premises in this world (`{record.name}`, {ours['chains']} chains)", "",
             f"What Table 1 rests on, in the paper ({paper.CITATION}: Tables 1-2, ResNet18 on ImageNet-16) and in the "
             "generated world. The premise that fails here is SI's: the paper's SI keeps most of its subnetwork's "
             "pooled accuracy, ours loses most of it; the mixture as the authors' code ran it gains little in both.",
             "", "| (ResNet18) | the paper | the world |", "|---|---|---|"]
            + [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""])


def sentence(record: RunRecord, why: str = "", like: str = "") -> str:
    """The README's one sentence of it; `why`: what the causes' record says of the lost shape (its own line); `like`:
    what the record of SI as the authors' code ran it says of the disagreements (authors.sentence), which then replaces
    the sentence that puts them down to the world."""
    ours = world(record)
    if ours is None:
        return ""
    premises = f"([premises](docs/results.md#the-papers-premises-in-this-world-{record.name}-{ours['chains']}-chains))"
    lead = (f"In this world (`{record.name}`, {ours['chains']} chains) SI keeps {percent(kept_share(ours), 0)} of its "
            "subnetwork's pooled accuracy "
            f"({fixed(ours['si_pooled'], 1)} of {fixed(ours['subnetwork_pooled'], 1)} %), the paper's {percent(kept_share(theirs()), 0)}:")
    world_s = "the vision verdicts are the [generated world](docs/glossary.md#generated-world)'s"
    if like:
        return f"{lead[:-1]} {premises}.\n{like}" + (f"\nThe subnetwork's shape is lost in the transfer: {why}" if why else "")
    if why:
        return f"{lead} {world_s} {premises}.\nThe subnetwork's shape is lost in the transfer: {why}"
    return f"{lead}\n{world_s}, where the subnetwork's shape does not survive the transfer {premises}."
