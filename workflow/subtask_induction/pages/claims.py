"""The claims table (docs/results.md's summary, the README's headline): one row per claim, what it is judged on,
whether it holds, and the numbers, every cell read from a run record.

Each row is judged on one of three things (JUDGED_ON), and says which:
- the chains: the verdict rule (claims.judge; docs/decisions.md, "The verdict rule") over the runs the record's
  configs planned (planned/): replicates averaged inside their chain, an exact sign-flip test over the chain means,
  Holm over the claim's sizes; holds / reversed / no evidence either way / too few chains to decide. A planned run
  that is missing, NaN or listed twice makes the claim "incomplete (k of m runs)", with the runs named; it never
  reads as a verdict. The runs' own differences, `*` where beyond noise on the same test items, stay in the numbers.
- the mean: the paper's text states a threshold on a mean; ours is the mean over the record's runs, with its spread.
- a band: our curve against the authors' plotted curve (one run of theirs), less than curves.CURVE_BAND away."""

from __future__ import annotations

import re
import functools
from dataclasses import dataclass, field, replace

import pandas as pd

from ..rounding import fixed
from ..arithmetic.paper import MAIN_EXPERIMENT
from ..arithmetic.tables import arithmetic_headroom, mean_std, plain_variants, run_accuracy
from ..claims import Evidence, chain_of, headroom, paired_by_run, smallest_effect
from ..labels import label
from ..points import VISION_MODEL_ROWS
from ..vision import paper as vision_paper
from ..vision.tables import vision_headroom
from .curves import (CURVE_BAND, NEAR_PERFECT, PAPER_TEXT, beside_authors, on_their_curve, our_curves,
                     rival_beside_si, text_claims)
from .planned import matching
from .record_schemas import RecordError
from .wording import holds_text, lean_counts, per_chain_text, reasons, verdict_pairs
from .run_records import RunRecord

# The default run's arithmetic questions: (first, second) as chains.md names them, and how the claim reads.
ARITHMETIC_CLAIMS = [("si", "sampled", "SI beats the count-matched random mask (`sampled`)"),
                     ("si", "random", "SI beats random initialisation"),
                     ("si", "full", "SI beats fine-tuning the whole base (`full`)")]
# The default run's vision questions: (comparison, metric) as comparisons.md names them, how the claim reads,
# whether the README shows it, and the paper's numbers for the two models (ResNet18 on ImageNet-16, percent; read from
# vision/data/paper_numbers.csv, with its source) or None. The README's are the paper's own Table 1 claims; its
# "pretrained model with a new classifier" is our base, which already classifies the world's 16 classes. The paper's
# "data mixture" numbers come from its code, which fine-tuned on the original images only (docs/decisions.md, "Data
# mixture"): that is our `finetune`, so Table 1's mixture claims are judged against it; our `mixture`, which adds the
# pooled images as the paper's text describes, is an added control with no paper number. The subnetwork against the
# base is its Table 2 (before transfer); shape bias is ours (Table 1 gives cue-conflict accuracy and robustness).
PAPER_SOURCE = "the paper: ResNet18, ImageNet-16"
MIXTURE_AS_RUN = "the mixture as the authors' code ran it (`finetune`: original images only)"


def _paper(first: str, second: str, metric: str) -> tuple | None:
    """The paper's numbers for two of our models (ours named as the paper's: base = linear, finetune = mixture)."""
    theirs = {"base": "linear", "finetune": "mixture"}
    pair = tuple(vision_paper.value(theirs.get(model, model), metric) for model in (first, second))
    return pair if None not in pair else None


VISION_CLAIMS = [
    ("si vs base", "pooled_accuracy", "SI beats the base (the pretrained model with a new classifier) on pooled images",
     True, _paper("si", "base", "pooled_accuracy")),
    ("si vs finetune", "pooled_accuracy", f"SI beats {MIXTURE_AS_RUN} on pooled images", True,
     _paper("si", "finetune", "pooled_accuracy")),
    ("si vs scratch", "original_accuracy", "SI beats training from scratch on the original images (sample efficiency)",
     True, _paper("si", "scratch", "original_accuracy")),
    ("si vs finetune", "cue_shape_accuracy", f"SI beats {MIXTURE_AS_RUN} on cue-conflict shape accuracy", True,
     _paper("si", "finetune", "cue_shape_accuracy")),
    ("si vs finetune", "cue_robustness", f"SI beats {MIXTURE_AS_RUN} on cue-conflict robustness", True,
     _paper("si", "finetune", "cue_robustness")),
    ("si vs mixture", "pooled_accuracy", "SI beats the mixture with pooled images (the paper's text, run by us: "
                                         "`mixture`) on pooled images", False, None),
    ("si vs mixture", "cue_shape_accuracy", "SI beats the mixture with pooled images on cue-conflict shape "
                                            "accuracy", False, None),
    ("si vs mixture", "cue_robustness", "SI beats the mixture with pooled images on cue-conflict robustness",
     False, None),
    ("subnetwork vs base", "pooled_accuracy", "The subnetwork beats the base on pooled images", False,
     (vision_paper.value("subnetwork", "pooled_accuracy"), vision_paper.value("linear", "pooled_accuracy"))),
    ("subnetwork vs base", "shape_bias", "The subnetwork has more shape bias than the base", False, None),
    ("si vs scratch", "pooled_accuracy", "SI beats training from scratch on pooled images", False,
     _paper("si", "scratch", "pooled_accuracy")),
    ("si vs scratch", "shape_bias", "SI has more shape bias than training from scratch", False, None)]
# Beyond the paper (config/beyond.yaml, issue 48): the rivals a reviewer names next, answered by the same paired
# tests on the default's chains. Is the discovery needed (the base's largest weights instead)?
BEYOND_ARITHMETIC = [("si", "magnitude", "SI beats the base's largest weights, count-matched per tensor (`magnitude`)")]
# An architectural route to shape bias (anti-aliased downsampling, trained as scratch) beside SI
BEYOND_VISION = [
    ("si vs scratch_blurpool", "shape_bias",
     "SI has more shape bias than blur-pooled scratch (an architectural route: anti-aliased downsampling)", True),
    ("si vs scratch_blurpool", "pooled_accuracy", "SI beats blur-pooled scratch on pooled images", False),
    ("si vs scratch_blurpool", "cue_shape_accuracy", "SI beats blur-pooled scratch on cue-conflict shape accuracy",
     False),
    ("scratch_blurpool vs scratch", "shape_bias", "Blur-pooled downsampling gives scratch more shape bias", False),
    ("scratch_blurpool vs texture_swap", "shape_bias",
     "Blur-pooled scratch has more shape bias than the texture-swap augmentation", False),
]
# Arithmetic -> vision: the GPT-2's ab subnetwork frozen in a world ViT (vit_gpt2_si_<images per class>) against
# each control of the same size, on the world's own test images (the sample-efficiency question; pooled images
# in the numbers): (rival's stem, how the claim reads, in the README)
CROSS_DOMAIN = [
    ("vit_gpt2_sampled", "The arithmetic subnetwork, frozen in a world ViT, beats a count-matched random draw of the "
                         "GPT-2's weights on the world's test images", True),
    ("vit_fresh_frozen", "The arithmetic subnetwork, frozen in a world ViT, beats as many fresh weights frozen on "
                         "the world's test images", False),
    ("vit_scratch", "The arithmetic subnetwork, frozen in a world ViT, beats the ViT from scratch on the world's test "
                    "images", False),
]
# The questions this project answered beyond the paper before issue 48 (config/beyond.yaml), as claims of the same
# rules: rewinding and the same labels given as data (arithmetic, every 2-layer run of the default) ...
OLDER_ARITHMETIC = [
    ("si", "si_rewind", "SI (fresh unkept weights) beats SI whose unkept weights rewind to the base's initial values"),
    ("si", "mixture_inherit", "SI beats the same subtask labels given as data (multi-task, the base's unmasked weights)"),
    ("si", "distill_inherit", "SI beats the subnetwork distilled into the new model (the base's unmasked weights)"),
]
# ... label-free discovery and the texture-swap augmentation (vision)
OLDER_VISION = [
    ("subnetwork_label_free vs base", "pooled_accuracy",
     "A discovery without labels finds a subnetwork that beats the base on pooled images", False),
    ("subnetwork_label_free vs subnetwork", "pooled_accuracy",
     "The label-free subnetwork beats the labelled one on pooled images", False),
    ("si_label_free vs si", "shape_bias", "SI from the label-free subnetwork has more shape bias than SI", False),
    ("si vs texture_swap", "shape_bias",
     "SI has more shape bias than the texture-swap augmentation (shapes drawn with unseen textures)", False),
]
# The BatchNorm question (config/groupnorm.yaml, the record `groupnorm`): the default's vision claims on a ResNet whose
# normalisation stores no statistics
GROUPNORM_VISION = [
    ("subnetwork vs base", "pooled_accuracy", "With GroupNorm (no stored statistics), the subnetwork beats the base on "
                                              "pooled images", False),
    ("si vs scratch", "pooled_accuracy", "With GroupNorm, SI beats training from scratch on pooled images", False),
    ("si vs scratch", "shape_bias", "With GroupNorm, SI has more shape bias than training from scratch", False),
]
# Why SI loses its subnetwork's shape (issue 82; config/causes/, the record `vision_causes`; the plan in docs/decisions.md,
# "Why SI loses the shape"): each cause a variant of SI, judged against SI and against the mixture as the authors' code ran it
CAUSES = {"si_bn_kept": "the base's BatchNorm kept (frozen)", "si_unit_scales": "no zeroed residual scales",
          "si_top15": "the paper's size (the top 14.9 % of the scores)"}
CAUSES_VISION = [question for variant, words in CAUSES.items() for question in (
    (f"{variant} vs si", "pooled_accuracy", f"SI with {words} keeps more of the subnetwork's pooled accuracy than SI",
     False, None),
    (f"{variant} vs finetune", "pooled_accuracy", f"SI with {words} beats {MIXTURE_AS_RUN} on pooled images", False,
     _paper("si", "finetune", "pooled_accuracy")))]
# SI as the authors' code ran it (issue 88; config/si_authors.yaml, the record `vision_authors`; the plan in
# docs/decisions.md, "SI as the authors' code ran it"): `si_authors` against each Table 1 rival the README judges SI
# against (VISION_CLAIMS' headlines, the paper's numbers beside), then against our paper-text SI
SI_AUTHORS = "si_authors"
AUTHORS_VISION = [(comparison.replace("si vs ", f"{SI_AUTHORS} vs ", 1), metric,
                   text.replace("SI beats", "SI as the authors' code ran it (`si_authors`) beats", 1), False, paper)
                  for comparison, metric, text, headline, paper in VISION_CLAIMS if headline] + [
    (f"{SI_AUTHORS} vs si", "pooled_accuracy", "SI as the authors' code ran it beats SI as the paper's text describes "
                                               "it (ours, `si`) on pooled images", False, None)]
# The two rivals of issue 59 (config/beyond/signs.yaml, the record `beyond_signs`), every 2-layer run of the default
SIGNS_CLAIMS = [
    ("si", "signs", "SI beats the signs alone: the subnetwork's positions with the base's signs and fresh magnitudes "
                    "(`signs`)"),
    ("signs", "sampled", "The signs alone beat the count-matched random mask"),
    ("si", "mimetic_inherit", "SI beats a data-free mimetic initialisation of the attention (with the base's unmasked "
                              "tensors, as SI; `mimetic_inherit`)"),
    ("si_fresh_unmasked", "mimetic", "SI without the base's unmasked tensors beats the mimetic initialisation "
                                     "(`mimetic`)"),
    ("mimetic", "random", "The mimetic initialisation beats random initialisation"),
]
CURVE_NAMES = {"subnetwork": "SI", "full": "full", "sampled": "sampled", "complement": "complement",
               "random": "random init"}


# What a row is judged on (the table's column and the README's legend)
PER_RUN = "the chains (the verdict rule)"
MEAN = "the mean (the paper's threshold)"
BAND = f"a band (< {CURVE_BAND} from the authors' figure)"


@dataclass(frozen=True)
class Claim:
    family: str
    scale: str
    claim: str
    holds: str
    numbers: str
    record: str
    headline: bool = True   # in the README's table too
    judged_on: str = PER_RUN
    verdicts: tuple = ()    # the rule's (where, verdict) pairs ("incomplete" where a run is missing); () for a mean or band
    reasons: str = ""       # the rule's reasons in a few words (reasons()): the mean over chains, how many lean each way
    leans: tuple = ()       # per size (where, chains higher, chains lower, chains, 90% interval or None): the reason as data
    second_leans: tuple = ()   # the same in the default's second record, where the claim is judged in both
    beside: str = ""        # a decisive claim: what the smaller records said and the chance they had to say it
    evidence: Evidence | None = field(default=None, compare=False)   # what the rule judged: per-run differences, full precision
    id: str = ""            # stable within a record and across records of one question (claim_id): pages pair by it


def claim_id(family: str, first: str, second: str, metric: str = "", layers: int = 2, protocol: str = "last",
             scale: str = "") -> str:
    """A claim's stable id from what it compares, never from its words: `arithmetic/si-sampled`,
    `vision/si-mixture/pooled_accuracy`, `arithmetic/si-magnitude/paper/12 layers/eval`. A text can be reworded; the
    pages pair a claim across records (and the verdict files across rule versions) by this id."""
    parts = [family, f"{first}-{second}"] + [part for part in (metric, scale) if part]
    if family == "arithmetic" and (layers != 2 or protocol != "last" or scale):
        parts += [f"{layers} layers", protocol]
    return "/".join(parts)


def first_by_id(found: list) -> dict:
    """{claim id: the first claim of that id among `found` judged by the rule}: the claim the pages answer with (the
    found list is ordered best record first, so the first is the one that counts)."""
    by_id: dict = {}
    for claim in found:
        if claim.evidence is not None:
            by_id.setdefault(claim.id, claim)
    return by_id


_MADE: dict = {}


def by_record(function):
    """A claim maker's claims remembered in this process by the record's bytes (RunRecord.digest, from load's
    checked read) and the maker's arguments: a page and the tests that render it again ask the same claims of the same
    records many times, and each claim's judgement (its fragility, its exact tests) is the costly part. A record
    loaded without its digest is judged afresh every time."""
    @functools.wraps(function)
    def made(record, *args, **kwargs):
        if getattr(record, "digest", None) is None:
            return function(record, *args, **kwargs)
        key = (function.__name__, record.name, record.digest, repr(args), repr(sorted(kwargs.items())))
        if key not in _MADE:
            _MADE[key] = function(record, *args, **kwargs)
        return list(_MADE[key])
    return made


def planned_runs(record: RunRecord, family: str, **where) -> list:
    """The runs the record's configs planned for the points matching `where` (column: value or list): arithmetic
    `chain/replicate`, vision the chain, submasking `backbone/replicate` (a backbone is its chain: its training seeds
    are averaged inside it); in order, each once."""
    points = record.planned.get(family)
    if points is None:
        return []
    points = points[matching(points, where)]
    if family == "arithmetic":
        runs = [f"{c}/{r}" for c, r in zip(points["chain"], points["replicate"])]
    elif family == "submasking":
        runs = [f"{b}/{r}" for b, r in zip(points["backbone"], points["replicate"])]
    else:
        runs = list(points["chain"])
    return list(dict.fromkeys(sorted(runs, key=str)))


def run_means(transfer: pd.DataFrame, layers: int, protocol: str) -> pd.DataFrame:
    rows = transfer[(transfer["layers"] == layers) & (transfer["protocol"] == protocol)]
    per_run = rows.groupby(["variant", "n", "chain", "replicate"])["test_accuracy"].mean().reset_index()
    return per_run.groupby(["variant", "n"])["test_accuracy"].agg(["mean", "std", "count"])


MAIN = dict(zip(("base", "subtask", "target"), MAIN_EXPERIMENT))


def _planned_n(record: RunRecord, variants: list[str], layers: int) -> list[int]:
    points = record.planned.get("arithmetic")
    if points is None:
        return []
    sets = [set(points[matching(points, {"variant": v, "layers": layers, **MAIN})]["n"]) for v in variants]
    return sorted(set.intersection(*sets)) if sets else []


def arithmetic_differences(record: RunRecord, rows: pd.DataFrame, first: str, second: str, layers: int,
                           n: int) -> tuple[list, pd.Series]:
    """One n's comparison: the runs the record planned for both variants there, and each run's difference in points
    from the record's transfer rows (`rows`: transfer_rows) at full precision (arithmetic.tables.run_accuracy, as
    chains.md's are), indexed by run."""
    runs = planned_runs(record, "arithmetic", variant=[first, second], layers=layers, n=n, **MAIN)
    rows = rows[rows["n"] == n]
    return runs, 100 * paired_by_run(run_accuracy(rows, first), run_accuracy(rows, second))


def transfer_rows(transfer: pd.DataFrame, layers: int, protocol: str) -> pd.DataFrame:
    """A record's transfer rows of the main experiment at one depth and protocol, less the kept-% dial's and the
    label budget's variants (chains.md's rows: arithmetic.tables.plain_variants)."""
    transfer = plain_variants(transfer)
    keep = (transfer["layers"] == layers) & (transfer["protocol"] == protocol)
    for column, value in MAIN.items():
        keep &= transfer[column] == value
    return transfer[keep]


@by_record
def arithmetic_default(record: RunRecord, layers: int = 2, protocol: str = "last",
                       questions=ARITHMETIC_CLAIMS) -> list[Claim]:
    if not record.has("arithmetic/transfer.csv"):
        return []
    transfer = record.csv("arithmetic/transfer.csv")   # read once for every claim and n
    means, rows = run_means(transfer, layers, protocol), transfer_rows(transfer, layers, protocol)
    claims = []
    for first, second, text in questions:
        sizes = _planned_n(record, [first, second], layers)
        if not sizes:
            continue
        measured = {f"n = {n}": arithmetic_differences(record, rows, first, second, layers, n) for n in sizes}
        headroom = {f"n = {n}": arithmetic_headroom(rows[rows["n"] == n], first, second) for n in sizes}
        evidence = Evidence({where: difference for where, (_, difference) in measured.items()},
                            {where: runs for where, (runs, _) in measured.items()}, smallest_effect(), headroom)
        judged = evidence.judge()
        runs = max(len(j.tally.runs) for j in judged.values())
        chains = max(len({chain_of(run) for run in j.tally.runs}) for j in judged.values())
        numbers = "; ".join(f"n = {n}: {_mean(means, first, n)} vs {_mean(means, second, n)}" for n in sizes)
        claims.append(Claim("arithmetic", f"default, {layers} layers, {chains} chains ({runs} runs), `{protocol}`",
                            text, holds_text(judged), f"{numbers}; {first} − {second} over chains: {reasons(judged)}",
                            record.name, verdicts=verdict_pairs(judged), leans=lean_counts(judged), reasons=reasons(judged),
                            evidence=evidence, id=claim_id("arithmetic", first, second, layers=layers, protocol=protocol)))
    return claims


def vision_chance_classes(record: RunRecord) -> int | None:
    """The record's image classes (per_class.csv): what a vision accuracy's chance is one of."""
    if record.has("vision/per_class.csv"):
        return record.csv("vision/per_class.csv")["category"].nunique() or None
    return None


def vision_room(record: RunRecord, per_chain: pd.DataFrame, comparison: str, metric: str) -> float | None:
    """vision.tables.vision_headroom on the record's chains.csv: the lower model's mean less chance (points)."""
    if metric not in per_chain.columns:
        return None
    arms = [per_chain[per_chain["model"] == model][metric] for model in comparison.split(" vs ")]
    return vision_headroom(*arms, metric, vision_chance_classes(record))


def _mean(means: pd.DataFrame, variant: str, n: int) -> str:
    return f"{fixed(means.loc[(variant, n), 'mean'], 3)}" if (variant, n) in means.index else "—"


def chain_differences(record: RunRecord, per_chain: pd.DataFrame, comparison: str, metric: str) -> tuple[list, pd.Series]:
    """One vision comparison: the chains the record planned, and each chain's difference in points from the
    record's chains.csv (`per_chain`) at full precision (as comparisons.md's are: vision.tables.paired_chain_difference),
    indexed by chain."""
    first, second = comparison.split(" vs ")
    variants = [v for v in (first, second) if v not in VISION_MODEL_ROWS]
    runs = planned_runs(record, "vision", **({"variant": variants} if variants else {}))
    if metric not in per_chain.columns:
        raise RecordError(f"run record {record.name}: vision/chains.csv has no {metric} column (made before it was "
                          f"kept); remake the record with `{record.provenance.get('command', 'its command')}` and store "
                          "it again (python -m subtask_induction.pages.run_records)")
    one, other = (per_chain[per_chain["model"] == model].set_index("chain")[metric] for model in (first, second))
    return runs, 100 * paired_by_run(one, other)


@by_record
def vision_default(record: RunRecord, questions=VISION_CLAIMS) -> list[Claim]:
    table = record.csv("vision/table1.csv").set_index("model")
    per_chain = record.csv("vision/chains.csv")
    claims = []
    for comparison, metric, text, headline, *paper in questions:
        first, second = comparison.split(" vs ")
        if first not in table.index or second not in table.index:
            continue
        runs, difference = chain_differences(record, per_chain, comparison, metric)
        room = vision_room(record, per_chain, comparison, metric)
        evidence = Evidence({"": difference}, {"": runs}, smallest_effect(metric), None if room is None else {"": room})
        judged = evidence.judge()
        theirs = f"; {PAPER_SOURCE}: {paper[0][0]} vs {paper[0][1]} %" if paper and paper[0] else ""
        numbers = (f"{fixed(100 * table.loc[first, metric], 1)} vs {fixed(100 * table.loc[second, metric], 1)} %{theirs} "
                   f"(per chain: {per_chain_text(judged[''])} percentage points; {reasons(judged)})")
        claims.append(Claim("vision", f"default (generated world), {len(runs)} chains", text, holds_text(judged),
                            numbers, record.name, headline, verdicts=verdict_pairs(judged), leans=lean_counts(judged),
                            reasons=reasons(judged), evidence=evidence, id=claim_id("vision", first, second, metric)))
    return claims


@by_record
def cross_domain(record: RunRecord) -> list[Claim]:
    """Per training-set size, the transferred ViT against each control on the world's test images (paired, chain by
    chain): the sample-efficiency curve; the numbers give pooled accuracy too."""
    if not record.has("vision/chains.csv"):
        return []
    table = record.csv("vision/table1.csv").set_index("model")
    per_chain = record.csv("vision/chains.csv")
    planned = record.planned.get("vision", pd.DataFrame(columns=["variant"]))
    sizes = sorted(int(name.rsplit("_", 1)[1]) for name in set(planned["variant"])
                   if re.fullmatch(r"vit_gpt2_si_\d+", name))
    claims = []
    for rival, text, headline in CROSS_DOMAIN:
        measured, numbers, headroom = {}, [], {}
        for size in sizes:
            first, second = f"vit_gpt2_si_{size}", f"{rival}_{size}"
            if second not in set(planned["variant"]):
                continue
            measured[f"{size}/class"] = chain_differences(record, per_chain, f"{first} vs {second}",
                                                          "original_accuracy")
            headroom[f"{size}/class"] = vision_room(record, per_chain, f"{first} vs {second}", "original_accuracy")
            if first in table.index and second in table.index:
                numbers.append(f"{size}/class: {fixed(100 * table.loc[first, 'original_accuracy'], 1)} vs "
                               f"{fixed(100 * table.loc[second, 'original_accuracy'], 1)} % (pooled "
                               f"{fixed(100 * table.loc[first, 'pooled_accuracy'], 1)} vs "
                               f"{fixed(100 * table.loc[second, 'pooled_accuracy'], 1)})")
        if measured:
            evidence = Evidence({where: d for where, (_, d) in measured.items()},
                                {where: r for where, (r, _) in measured.items()}, smallest_effect(), headroom)
            judged = evidence.judge()
            chains = max(len(j.tally.runs) for j in judged.values())
            claims.append(Claim("vision", f"beyond: generated world, ViT of the 2-layer GPT-2's blocks, {chains} chains",
                                text, holds_text(judged), "; ".join(numbers), record.name, headline,
                                verdicts=verdict_pairs(judged), leans=lean_counts(judged), evidence=evidence,
                                id=claim_id("cross-domain", "vit_gpt2_si", rival)))
    return claims


def beyond(record: RunRecord) -> list[Claim]:
    """The record of `make beyond` (the default with config/beyond.yaml): only the questions it adds, the three of
    issue 48 first, then the older ones (rewinding, the same labels, the kept-% dial, the label budget, label-free
    discovery, the texture swap)."""
    older = [replace(claim, headline=False) for claim in arithmetic_default(record, questions=OLDER_ARITHMETIC)]
    default_shaped = (arithmetic_default(record, questions=BEYOND_ARITHMETIC) + vision_default(record, BEYOND_VISION)
                      + older + vision_default(record, OLDER_VISION))
    return ([replace(claim, scale=claim.scale.replace("default", "beyond", 1)) for claim in default_shaped]
            + cross_domain(record) + sparsity_dial(record) + label_budget(record))


SIGNS_HEADLINES = ("SI beats the signs", "SI beats a data-free")   # the README's two of SIGNS_CLAIMS


def signs(record: RunRecord) -> list[Claim]:
    """The record of `make beyond-signs`: the signs alone and the mimetic initialisation, paired run by run."""
    return [replace(claim, scale=claim.scale.replace("default", "beyond (signs, mimetic)", 1),
                    headline=claim.claim.startswith(SIGNS_HEADLINES))
            for claim in arithmetic_default(record, questions=SIGNS_CLAIMS)]


def decisive(record: RunRecord) -> list[Claim]:
    """The decisive record (config/decisive.yaml over the default and the rivals' overlays; issue 73): the default's
    claims and the rivals' of `make beyond`, each judged over the record's own chains, the same questions as the
    smaller records ask so a page can set their verdicts side by side."""
    rivals = (arithmetic_default(record, questions=BEYOND_ARITHMETIC)
              + [replace(claim, headline=claim.claim.startswith(SIGNS_HEADLINES))
                 for claim in arithmetic_default(record, questions=SIGNS_CLAIMS)]
              + vision_default(record, BEYOND_VISION))
    made = arithmetic_default(record) + vision_default(record) + submasking_default(record) + rivals
    return [replace(claim, scale=claim.scale.replace("default", "decisive", 1)) for claim in made]


# The confirmatory record's claims, as its plan names them (docs/decisions.md, "The confirmatory record: the plan"): the
# arithmetic headlines, Table 1's five rows for our SI and for si_authors; no other comparison of its variants is judged
# on it (unplanned, and the shape-bias rows, ratios of counts, lie on no grid past 44 chains)
CONFIRMATORY_VISION = [question for question in VISION_CLAIMS if question[3]]
CONFIRMATORY_AUTHORS = [question for question in AUTHORS_VISION if question[0] != f"{SI_AUTHORS} vs si"]


def confirmatory(record: RunRecord) -> list[Claim]:
    """The confirmatory record (config/confirmatory.yaml over config/si_authors.yaml; issue 93): the 13 claims its plan
    fixed before its first job, each judged over the record's own chains, with the ids the exploratory records' claims
    of the same questions carry so a page can set their verdicts side by side."""
    made = (arithmetic_default(record) + vision_default(record, CONFIRMATORY_VISION)
            + vision_default(record, CONFIRMATORY_AUTHORS))
    return [replace(claim, scale=claim.scale.replace("default", "confirmatory", 1)) for claim in made]


def decisive_cross_domain(record: RunRecord) -> list[Claim]:
    """The decisive record's cross-domain ViT (config/decisive_cross_domain.yaml, a record of its own): the questions
    `make beyond` asks of it, over the record's own chains."""
    return [replace(claim, scale=claim.scale.replace("beyond:", "decisive:", 1)) for claim in cross_domain(record)]


def groupnorm(record: RunRecord) -> list[Claim]:
    """The BatchNorm question on a GroupNorm ResNet: the default's vision comparisons on another network, so other
    questions (their ids say so: a decisive record's claim of the same comparison is not theirs)."""
    return [replace(claim, scale=claim.scale.replace("default (generated world)", "GroupNorm ResNet, generated world"),
                    id=f"groupnorm/{claim.id}")
            for claim in vision_default(record, GROUPNORM_VISION)]


def vision_causes(record: RunRecord) -> list[Claim]:
    """The causes of SI's lost shape, each a variant of SI (the record `vision_causes`), on the decisive vision chains."""
    return [replace(claim, scale=claim.scale.replace("default (generated world)", "the causes of SI's lost shape "
                                                     "(generated world)"))
            for claim in vision_default(record, CAUSES_VISION)]


def vision_authors(record: RunRecord) -> list[Claim]:
    """SI as the authors' code ran it (the record `vision_authors`) against Table 1's rivals and our SI, on the decisive
    vision chains."""
    return [replace(claim, scale=claim.scale.replace("default (generated world)", "SI as the authors' code ran it "
                                                     "(generated world)"))
            for claim in vision_default(record, AUTHORS_VISION)]


@by_record
def sparsity_dial(record: RunRecord, protocol: str = "last") -> list[Claim]:
    """The bias's strength by kept fraction: SI from the top k % of the discovery's scores against the random mask of
    its own per-tensor counts, run by run at each k and n (sparsity_dial.md's paired differences)."""
    if not record.has("arithmetic/transfer.csv"):
        return []
    transfer = record.csv("arithmetic/transfer.csv")
    if "top_k" not in transfer or transfer["top_k"].isna().all():
        return []
    rows = transfer[(transfer["protocol"] == protocol) & transfer["top_k"].notna()]
    for column, value in MAIN.items():
        rows = rows[rows[column] == value]
    differences, planned, numbers = {}, {}, []
    largest = rows["n"].max()
    for (layers, n, k), at_k in rows.groupby(["layers", "n", "top_k"]):
        # the dial's variants by their kinds, as sparsity_dial.md pairs them
        names = [at_k[at_k["kind"] == kind]["variant"].iloc[0] if (at_k["kind"] == kind).any() else None
                 for kind in ("subnetwork", "sampled")]
        if None in names:
            continue
        where = f"top {100 * k:g}% (n = {int(n)})"
        planned[where] = planned_runs(record, "arithmetic", variant=names, layers=int(layers), n=int(n), **MAIN)
        differences[where] = 100 * paired_by_run(run_accuracy(at_k, names[0]), run_accuracy(at_k, names[1]))
        if n == largest:
            accuracy = [at_k[at_k["variant"] == name].groupby(["chain", "replicate"])["test_accuracy"].mean()
                        for name in names]
            numbers.append(f"top {100 * k:g}%: " + " vs ".join(mean_std(a.mean(), a.std(ddof=1), len(a)) for a in accuracy))
    if not differences:
        return []
    evidence = Evidence(differences, planned, smallest_effect())
    judged = evidence.judge()
    runs = max(len(j.tally.runs) for j in judged.values())
    return [Claim("arithmetic", f"beyond, 2 layers, {runs} runs, `{protocol}`",
                  "The bias's strength by kept fraction: SI from the top k % of the discovery's scores beats the random "
                  "mask of its own per-tensor counts", holds_text(judged),
                  f"largest n ({int(largest):,}): " + "; ".join(numbers), record.name, headline=False,
                  verdicts=verdict_pairs(judged), leans=lean_counts(judged), evidence=evidence,
                  id=claim_id("arithmetic", "si_top_k", "sampled_top_k", protocol=protocol))]


@by_record
def label_budget(record: RunRecord) -> list[Claim]:
    """How many labels a discovery needs: SI from a discovery on the first r subtask rows against the random mask of its
    own counts, chain by chain (budget.csv), under the verdict rule."""
    if not record.has("arithmetic/budget.csv"):
        return []
    budget = record.csv("arithmetic/budget.csv")
    differences, planned, numbers = {}, {}, []
    for rows_used, rows in budget.groupby("rows"):
        variant = rows["variant"].iloc[0]
        runs = sorted({int(run.split("/")[0]) for run in planned_runs(record, "arithmetic", variant=variant)})
        where = f"{int(rows_used):,} rows"
        differences[where] = pd.Series(100 * (rows["si_test_accuracy"] - rows["sampled_test_accuracy"]).to_numpy(),
                                       index=rows["chain"].to_numpy(), dtype=float)
        planned[where] = runs
        labelled = int(rows_used) + int(rows["selection_rows"].iloc[0])
        numbers.append(f"{int(rows_used):,} rows ({labelled:,} labelled): SI {fixed(rows['si_test_accuracy'].mean(), 3)} vs "
                       f"{fixed(rows['sampled_test_accuracy'].mean(), 3)}, Jaccard with the every-row subnetwork "
                       f"{fixed(rows['jaccard_vs_every_row'].mean(), 2)} (chance {fixed(rows['chance_vs_every_row'].mean(), 2)})")
    evidence = Evidence(differences, planned, smallest_effect())
    judged = evidence.judge()
    chains = max(len(j.tally.runs) for j in judged.values())
    return [Claim("arithmetic", f"beyond, 2 layers, {chains} chains, `last`, n = 750",
                  "How many labels a discovery needs: SI from a discovery on the first r subtask rows beats the random "
                  "mask of its own counts", holds_text(judged), "; ".join(numbers), record.name, headline=False,
                  verdicts=verdict_pairs(judged), leans=lean_counts(judged), evidence=evidence,
                  id=claim_id("arithmetic", "si_budget", "sampled_budget"))]


# The default's submasking questions: (the rival adaptation, how the claim reads); `fs` against each
SUBMASKING_CLAIMS = [("lp", "A mask over the frozen backbone (`fs`) beats a linear probe (`lp`)"),
                     ("fft", "A mask over the frozen backbone (`fs`) beats fine-tuning (`fft`)")]


def default_questions() -> set[str]:
    """The ids of the default's claims (arithmetic, vision, submasking), as against the rivals beyond the paper."""
    return ({claim_id("arithmetic", first, second) for first, second, _ in ARITHMETIC_CLAIMS}
            | {claim_id("vision", *question[0].split(" vs "), question[1]) for question in VISION_CLAIMS}
            | {claim_id("submasking", "fs", rival) for rival, _ in SUBMASKING_CLAIMS})


@by_record
def submasking_default(record: RunRecord) -> list[Claim]:
    """A mask over the frozen backbone against the linear probe and fine-tuning, per task, at full labels: each
    run's test accuracy, its training seeds averaged inside its backbone, judged over the backbones (independent
    bases, as the other families judge over chains)."""
    points = record.csv("submasking/points.csv")
    planned = record.planned.get("submasking")
    if planned is None or planned.empty:
        return []
    fraction = planned["fraction"].max()
    points = points[points["fraction"] == fraction]
    claims = []
    for rival, text in SUBMASKING_CLAIMS:
        differences, planned_runs_of, numbers, rooms = {}, {}, [], {}
        for task in sorted(planned["task"].unique()):
            # a pair is judged where both were planned: a backbone's own adaptations may leave the rival out
            rivals = set(planned_runs(record, "submasking", task=task, adaptation=rival, fraction=fraction))
            runs = [run for run in planned_runs(record, "submasking", task=task, adaptation="fs", fraction=fraction)
                    if run in rivals]
            if not runs:
                continue
            rows = points[points["task"] == task]
            mine, theirs = (rows[rows["adaptation"] == a].assign(run=lambda r: r["backbone"] + "/" + r["replicate"].astype(str))
                            .set_index("run")["test_accuracy"] for a in ("fs", rival))
            mine, theirs = (side[side.index.isin(runs)] for side in (mine, theirs))   # the means over the same runs
            differences[task], planned_runs_of[task] = 100 * paired_by_run(mine, theirs), runs
            classes = label("data", task).classes
            if classes:
                rooms[task] = headroom(100 * mine, 100 * theirs, 100 / classes)
            numbers.append(f"{task}: {fixed(100 * mine.mean(), 1)} vs {fixed(100 * theirs.mean(), 1)} %")
        if differences:
            evidence = Evidence(differences, planned_runs_of, smallest_effect(), rooms or None)
            judged = evidence.judge()
            runs = max(len(j.tally.runs) for j in judged.values())
            backbones = max(len({chain_of(run) for run in j.tally.runs}) for j in judged.values())
            word = "backbones" if backbones > 1 else "backbone's runs"
            claims.append(Claim("submasking", f"default, {backbones} backbone{'s' * (backbones > 1)} ({runs} runs: "
                                "training seeds averaged inside a backbone), every label",
                                text, holds_text(judged), "; ".join(numbers) + f"; fs − {rival}: {reasons(judged, word=word)}",
                                record.name, headline=rival == "lp", verdicts=verdict_pairs(judged), leans=lean_counts(judged),
                                reasons=reasons(judged, word=word), evidence=evidence,
                                id=claim_id("submasking", "fs", rival)))
    return claims


@by_record
def paper_scale(record: RunRecord, layers: int) -> list[Claim]:
    compared = beside_authors(our_curves(record.csv("arithmetic/transfer.csv"), record.provenance.get("unplanned") or []))
    compared = compared[compared["layers"] == layers]
    if compared.empty:
        return []
    scale = f"paper scale, {layers} layers"
    claims = []
    for protocol in ("eval", "last"):
        text = text_claims(compared, layers, protocol)
        si = text["si"]
        if si is not None:
            claims.append(Claim("arithmetic", f"{scale}, `{protocol}`",
                                f"The paper's text: SI near-perfect (≥ {NEAR_PERFECT}) with {PAPER_TEXT['si_near_perfect_n']:,} rows",
                                "**yes**" if si["mean"] >= NEAR_PERFECT else "no",
                                f"ours {fixed(si['mean'], 3)}" + (f" ± {fixed(si['std'], 3)} ({int(si['count'])} runs)" if si["count"] > 1 else "")
                                + f"; the authors' figure {fixed(text['si_figure'], 3)}", record.name,
                                headline=protocol == "eval", judged_on=MEAN,
                                id=f"paper/{layers} layers/{protocol}/si near-perfect"))
    ours = text_claims(compared, layers, "eval")
    (si_first, si_max), (sampled_first, sampled_max) = ours["first"][("subnetwork", "ours")], ours["first"][("sampled", "ours")]
    (their_si, _), (their_sampled, _) = ours["first"][("subnetwork", "authors")], ours["first"][("sampled", "authors")]
    if si_first is not None:
        factor = f"{fixed(sampled_first / si_first, 1)}×" if sampled_first else f"sampled not by {sampled_max:,}"
        theirs = f"{fixed(their_sampled / their_si, 1)}×" if their_si and their_sampled else "—"
        holds = "no" if not sampled_first or sampled_first / si_first < PAPER_TEXT["sampled_factor"] / 2 else "**yes**"
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            f"The paper's text: the count-matched random mask needs about {PAPER_TEXT['sampled_factor']}× SI's rows to reach {NEAR_PERFECT}",
                            holds, f"ours {factor} (on our grid of n); the authors' figure {theirs}", record.name,
                            judged_on=MEAN, id=f"paper/{layers} layers/eval/sampled factor"))
    for curve, name in CURVE_NAMES.items():
        where = on_their_curve(compared, layers, curve, "eval")
        within, outside = where["within"], where["outside"]
        if within.empty and outside.empty:
            continue
        if outside.empty:
            holds, numbers = "**yes**", f"at n = {', '.join(f'{n:,}' for n in within['n'])}"
        else:
            worst = outside.loc[outside["difference"].abs().idxmax()]
            holds = "no" if within.empty else f"at {len(within)} of {len(within) + len(outside)} n"
            numbers = (f"off at n = {', '.join(f'{n:,}' for n in outside['n'])}; most {fixed(worst['mean'], 3)} against "
                       f"{fixed(worst['theirs'], 3)} at {int(worst['n']):,}")
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            f"Our {name} curve lies on the authors' Fig 6 (less than {CURVE_BAND} away at every n both ran)",
                            holds, numbers, record.name, headline=False, judged_on=BAND,
                            id=f"paper/{layers} layers/eval/curve {curve}"))
    option = compared[(compared["curve"] == "sampled") & compared["label"].str.contains("N−k", regex=False)
                      & (compared["protocol"] == "eval") & compared["theirs"].notna() & (compared["label"].str.startswith("sampled_authors:"))]
    if len(option):
        within = option["within"]
        claims.append(Claim("arithmetic", f"{scale}, `eval`",
                            "Their sampled curve is their code's control (N−k of the base's weights frozen), not the text's (k)",
                            "**yes**" if within.all() else ("no" if not within.any() else
                                                            f"at n = {', '.join(f'{n:,}' for n in option[within]['n'])} only"),
                            "; ".join(f"n = {int(r.n):,}: {fixed(r.mean, 3)} vs theirs {fixed(r.theirs, 3)}" for r in option.itertuples()),
                            record.name, headline=layers == 12, judged_on=BAND,
                            id=f"paper/{layers} layers/eval/authors' sampled is N-k"))
    gaps = [gap["why"] for gap in record.provenance.get("known_gaps") or [] if gap.get("family") == "arithmetic"]
    if gaps:   # a mean or a band over fewer points than planned is not the claim's
        claims = [replace(claim, holds=f"**incomplete** (known gaps: {'; '.join(gaps)})") for claim in claims]
    return claims


def magnitude_rival(records: dict[str, RunRecord], name: str, layers: int) -> list[Claim]:
    """SI against the base's largest weights (count-matched per tensor), run by run: the rival record's planned runs,
    each paired with the slice's SI run of the same chain, replicate and n on the same subnetwork (rival_beside_si)."""
    rival = records.get(f"{name}_magnitude")
    if rival is None or name not in records:
        return []
    pairing = rival_beside_si(records, name, "magnitude", layers)
    if isinstance(pairing, str):
        return [Claim("arithmetic", f"paper scale, {layers} layers", "SI beats the base's largest weights, count-matched "
                      "per tensor (`magnitude`)", f"**incomplete** (not paired: {pairing})", "—", rival.name,
                      headline=False, id=claim_id("arithmetic", "si", "magnitude", layers=layers, protocol="eval",
                                                  scale="paper"))]
    table = pairing
    differences, planned, numbers = {}, {}, []
    for n in _planned_n(rival, ["magnitude"], layers):
        runs = planned_runs(rival, "arithmetic", variant="magnitude", layers=layers, n=n, **MAIN)
        rows = table[table["n"] == n]
        run = [f"{c}/{r}" for c, r in zip(rows["chain"], rows["replicate"])]
        differences[f"n = {int(n):,}"] = pd.Series(100 * (rows["si"] - rows["magnitude"]).to_numpy(), index=run,
                                                   dtype=float)
        planned[f"n = {int(n):,}"] = runs
        numbers.append(f"n = {int(n):,}: SI {fixed(rows['si'].mean(), 3)} vs magnitude {fixed(rows['magnitude'].mean(), 3)}")
    overlap = f"; Jaccard with the subnetwork {fixed(table['overlap'].mean(), 3)} against chance {fixed(table['chance'].mean(), 3)}"
    evidence = Evidence(differences, planned, smallest_effect())
    judged = evidence.judge()
    runs = max((len(j.tally.runs) for j in judged.values()), default=0)
    return [Claim("arithmetic", f"paper scale, {layers} layers, {runs} runs, `eval`",
                  "SI beats the base's largest weights, count-matched per tensor (`magnitude`)", holds_text(judged),
                  "; ".join(numbers) + overlap, rival.name, headline=False, verdicts=verdict_pairs(judged),
                  leans=lean_counts(judged), evidence=evidence,
                  id=claim_id("arithmetic", "si", "magnitude", layers=layers, protocol="eval", scale="paper"))]


