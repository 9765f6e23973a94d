"""The vision family's data sources as data: one record per value of `vision.data.source`, which the jobs, the rule
helpers, the builder rules, the config and data checks and the settings table read instead of comparing the
source's name. Torch-free (the Snakefile and the checks read it).

A new source is one builder step (`steps/vision_<tree>.py`, writing the splits into results/vision/data/<tree>), one
record here and its section in the schema (`vision.data.<name>`); the rules, listings and checks follow from the
record (tests/test_vision_sources.py adds a hypothetical one and counts what else changes: nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .classes import folder_tree_problems, member_folder_problems


@dataclass(frozen=True)
class Source:
    name: str            # the value of vision.data.source, and the config section (vision.data.<name>) of a user tree
    tree: str            # results/vision/data/<tree>: its splits; the builder rule and step are `vision_<tree>`
    what: str            # what the checks and the README's settings table call it
    base_split: str      # the split a base is trained on (world: its own pretraining split)
    classes: str         # "categories": Geirhos' 16 (or ImageNet-1k's 1000, read as them); "folders": its own
    cue_conflict: str    # "own": it makes its cue-conflict images; "required": vision.data.cue_conflict must name
    #                      a folder; "optional": without one, no shape-bias metric is computed
    needs_weights: bool  # the base cannot be trained here (vision.model.weights must name a file)
    tree_problems: Callable[[str], list[str]] | None = None   # a user tree's layout, checked before any job

    @property
    def builder(self) -> str:
        return f"vision_{self.tree}"

    @property
    def user_tree(self) -> bool:
        """A user's folder the builder splits (vision.data.<name>.root), tracked by content; else generated."""
        return self.tree_problems is not None

    @property
    def listing(self) -> str:
        """The name of the listing (results/listings/<listing>.json) that tracks the user's tree by content."""
        return f"vision_{self.name}"


SOURCES = {
    "world": Source("world", tree="world", what="generated world", base_split="pretrain", classes="categories",
                    cue_conflict="own", needs_weights=False),
    "imagenet": Source("imagenet", tree="imagenet16", what="ImageNet folder", base_split="train",
                       classes="categories", cue_conflict="required", needs_weights=True,
                       tree_problems=member_folder_problems),
    "folder": Source("folder", tree="folder", what="class-per-folder tree", base_split="train",
                     classes="folders", cue_conflict="optional", needs_weights=False,
                     tree_problems=folder_tree_problems),
}
# the sources that split a user's tree, by tree: each gets a builder rule and the content check
USER_TREES = {source.tree: source for source in SOURCES.values() if source.user_tree}


def source_of(vision: dict) -> Source:
    """The record of a (schema-checked) vision section's source."""
    return SOURCES[vision["data"]["source"]]
