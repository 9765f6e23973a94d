"""Arguments and inputs the vision steps share: the test sets behind Table 1, and the network a discovery masks."""

from __future__ import annotations

from pathlib import Path

from ..seeds import vision_seeds
from ..timing import evaluating
from ..vision.classes import CATEGORIES
from ..vision.models import build_classifier, load_classifier
from ..vision.tasks import evaluate, open_split


def add_evaluation_arguments(p) -> None:
    p.add_argument("--test", required=True, help="folder of original test images (<category>/<image>)")
    p.add_argument("--pooled-test", nargs="+", required=True, help="folders of mean-pooled test images (shards)")


def _stems(images) -> list[str]:
    return [str(Path(item.relative).with_suffix("")) for item in images.items]


def same_images(originals, pooled, what: str) -> None:
    """Stop unless `pooled` holds exactly the pooled versions of `originals`, in the same order."""
    if _stems(originals) != _stems(pooled):
        raise SystemExit(f"error: {what} ({len(pooled)}) are not the {originals.name} images ({len(originals)}) "
                         f"pooled; rerun the pooling rule")


class EvaluationSets:
    """Original and pooled test images, opened once per step (the cue-conflict images are the cue-conflict
    step's: a new folder of them reruns that evaluation, no training)."""

    def __init__(self, args, data: dict, classes=CATEGORIES):
        self.classes = classes
        self.test = open_split(args.test, data, "test", classes)
        self.pooled_test = open_split(args.pooled_test, data, "pooled test", classes)
        same_images(self.test, self.pooled_test, "the pooled test images")

    def __call__(self, model, batch_size: int, device) -> dict:
        with evaluating():
            return evaluate(model, self.test, self.pooled_test, batch_size, device, self.classes)


def discovery_network(base_path, init: str, chain: int):
    """(the network a discovery masks, its spec): the base itself (pretrained, label_free) or, for the random-init
    control, a fresh network of the base's architecture from the chain's own discovery-init seed (seeds.py)."""
    model, spec = load_classifier(base_path)
    if init == "random":
        model = build_classifier(spec, vision_seeds("discovery", chain)["init"])
    return model, spec
