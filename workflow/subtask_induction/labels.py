"""The one vocabulary of the figures and pages: what each transfer kind, vision model and submasking adaptation is
called and what it is, in a few words. Figures draw `Label.word` (no markup) and, in their keys, `Label.key()`;
pages write `Label.markdown()`. The README's key and docs/glossary.md use the same words (tests/test_labels.py checks
that every kind, adaptation and default vision variant has a label, and that the figures draw only these words).
Torch-free.
"""

from __future__ import annotations

import re

from dataclasses import dataclass


@dataclass(frozen=True)
class Label:
    word: str          # what the README, the pages and the figures call it
    meaning: str       # what it is, in a few words (a figure's key, a page's legend)
    code: bool = True  # `word` is a config value: pages set it in backticks, figures plain
    classes: int | None = None   # a data set's class count (its chance line)

    def markdown(self) -> str:
        return f"`{self.word}`" if self.code else self.word

    def key(self) -> str:
        """For a figure: no markup."""
        return f"{self.word}: {self.meaning}".replace("`", "")


# The arithmetic transfer kinds (method/kinds.py KINDS), by kind; the authors' Fig 6 titles are theirs
# (arithmetic/paper.py AUTHORS_CURVES) and are used only to read their figure's data
TRANSFER = {
    "subnetwork": Label("SI", "the subnetwork's weights frozen in a fresh network, the rest trained on the new task "
                              "(the kind `subnetwork`)", code=False),
    "full": Label("full", "the whole trained base fine-tuned"),
    "sampled": Label("sampled", "as many random weights per tensor as the subnetwork keeps, frozen (count-matched)"),
    "complement": Label("complement", "as many weights per tensor, drawn outside the subnetwork, frozen"),
    "random": Label("random init", "a fresh network, nothing frozen (the kind `random`)", code=False),
    "sampled_authors": Label("sampled_authors",
                             "the authors' code's sampled control: every weight but k random ones frozen (N−k of N)"),
    "complement_authors": Label("complement_authors",
                                "the authors' code's complement control: N−k frozen, the k drawn outside the subnetwork"),
    "magnitude": Label("magnitude", "each tensor's largest weights of the base, count-matched, frozen"),
    "signs": Label("signs", "the subnetwork's positions with the base's signs and fresh magnitudes"),
}

# The vision family's models: the base, its subnetwork, and the transfer variants of config/config.yaml and the
# beyond overlays that the figures and comparisons show
VISION = {
    "base": Label("base", "the model the subnetwork is found in, trained on images whose texture goes with the class",
                  code=False),
    "subnetwork": Label("subnetwork", "the base masked to the weights that classify pooled images", code=False),
    "si": Label("SI", "the subnetwork frozen in a fresh ResNet, the rest trained on the original images", code=False),
    "scratch": Label("scratch", "a fresh ResNet trained on the original images"),
    "mixture": Label("mixture", "the mixture with pooled images: the base fine-tuned on original and pooled images, as "
                                "the paper's text describes its data mixture"),
    "finetune": Label("finetune", "the mixture as the authors' code ran it: the base fine-tuned on the original images "
                                  "only"),
    "si_authors": Label("si_authors", "SI as the authors' code ran it: the subnetwork's weights trained from the base's "
                                      "values, the base's BatchNorm and head frozen, the other weights a frozen draw"),
    "linear": Label("linear", "the base's frozen features with a new head"),
    "scratch_blurpool": Label("blur-pooled scratch", "`scratch_blurpool`: scratch with a blur before every stride (anti-aliased)",
                              code=False),
    "texture_swap": Label("texture_swap", "scratch trained on images whose textures are swapped between classes"),
    "texture_swap_finetune": Label("texture_swap_finetune", "the base fine-tuned on texture-swapped images"),
}

# The submasking family's adaptations (submasking/adaptations.py ADAPTATIONS)
SUBMASKING = {
    "lp": Label("lp", "linear probe: a new head on the frozen backbone"),
    "fs": Label("fs", "full submasking: a binary mask over the frozen backbone's weights, trained with labels"),
    "fft": Label("fft", "full fine-tuning of the backbone"),
    "ss_fs": Label("ss_fs", "the mask trained by self-supervised rotation prediction, then a linear probe"),
    "ss_fft": Label("ss_fft", "the weights trained by self-supervised rotation prediction, then a linear probe"),
}

# The data sets and backbones the default's figures name (a user's own is called by its config name)
DATA = {
    "world": Label("generated world", "16 shape classes drawn with class-typical textures, made by the pipeline",
                   code=False, classes=16),
    "digits": Label("digits", "scikit-learn's UCI handwritten digits: 1,797 real 8×8 scans, 10 classes", classes=10),
    "textures": Label("textures", "crops of scikit-image's photographs of brick, grass and gravel: 3 classes",
                      classes=3),
    "faces": Label("faces", "scikit-image's LFW faces against non-face patches: 2 classes", classes=2),
    "world_base": Label("world_base", "the vision family's base of chain 0, a ResNet trained on the generated world"),
    # one submasking backbone per vision chain (issue 72): the default's 1-7, the replication's 8-15, the decisive's 16-27
    **{f"world_base{k}": Label(f"world_base{k}", f"the vision family's base of chain {k}") for k in range(1, 28)},
}
NUMBERED_BACKBONE = "world_base"   # world_base<k>: said once in the glossary

GROUPS = {"transfer": TRANSFER, "vision": VISION, "submasking": SUBMASKING, "data": DATA}


def label(group: str, name: str) -> Label:
    """A name's label; a name the registry does not hold (a user's own variant) is called by its config name."""
    return GROUPS[group].get(name) or Label(name, "a variant of the run's config")


def glossary() -> str:
    """docs/glossary.md's list of the names, generated from this registry."""
    groups = (("Transfer kinds", TRANSFER), ("Vision models", VISION), ("Submasking adaptations", SUBMASKING),
              ("Data sets and backbones", DATA))
    def said(group: dict) -> list[str]:
        items = [f"{item.markdown()}: {item.meaning}" for name, item in group.items()
                 if not re.fullmatch(NUMBERED_BACKBONE + r"\d+", name)]
        numbered = [name for name in group if re.fullmatch(NUMBERED_BACKBONE + r"\d+", name)]
        if numbered:
            items.append(f"{group[numbered[0]].markdown()} … {group[numbered[-1]].markdown()}: the vision family's "
                         "base of chain k, one submasking backbone per vision chain")
        return items

    return "\n".join(f"- *{title}*: " + "; ".join(said(group)) + "." for title, group in groups)
