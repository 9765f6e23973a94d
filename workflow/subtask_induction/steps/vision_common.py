"""Arguments and inputs the vision steps share: the evaluation sets behind Table 1."""

from __future__ import annotations

from pathlib import Path

from ..vision.classes import CATEGORIES
from ..vision.tasks import evaluate, open_cue_conflict, open_split


def add_evaluation_arguments(p) -> None:
    p.add_argument("--test", required=True, help="folder of original test images (<category>/<image>)")
    p.add_argument("--pooled-test", nargs="+", required=True, help="folders of mean-pooled test images (shards)")
    # given without a value (the rule's empty path for a folder source without stimuli): no cue-conflict metrics
    p.add_argument("--cue-conflict", nargs="?", help="folder in Geirhos' cue-conflict layout (none: no cue-conflict metrics)")


def _stems(images) -> list[str]:
    return [str(Path(item.relative).with_suffix("")) for item in images.items]


def same_images(originals, pooled, what: str) -> None:
    """Stop unless `pooled` holds exactly the pooled versions of `originals`, in the same order."""
    if _stems(originals) != _stems(pooled):
        raise SystemExit(f"error: {what} ({len(pooled)}) are not the {originals.name} images ({len(originals)}) "
                         f"pooled; rerun the pooling rule")


class EvaluationSets:
    """Original test, pooled test and cue-conflict images, opened once per step."""

    def __init__(self, args, data: dict, classes=CATEGORIES):
        self.classes = classes
        self.test = open_split(args.test, data, "test", classes)
        self.pooled_test = open_split(args.pooled_test, data, "pooled test", classes)
        self.conflict = open_cue_conflict(args.cue_conflict, data, classes) if args.cue_conflict else None
        same_images(self.test, self.pooled_test, "the pooled test images")

    def __call__(self, model, batch_size: int, device) -> dict:
        return evaluate(model, self.test, self.pooled_test, self.conflict, batch_size, device, self.classes)


def shape_bias_text(metrics: dict) -> str:
    return f"shape bias {metrics['shape_bias']:.3f}" if "shape_bias" in metrics else "no cue-conflict images"
