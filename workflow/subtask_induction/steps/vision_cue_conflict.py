"""Score every model of one chain on the cue-conflict images, from the saved models: the base, each discovery's
whole network and hard-mask subnetwork, and each transfer. A rule of its own, so a new cue-conflict folder
reruns this evaluation and the tables, and no training.

Writes one JSON record: per model, the cue-conflict metrics, per class, and which conflict images it
classified as their shape and as their texture (the tables' paired tests), keyed as the tables name the
models: base, discovery/<init>/<λ>/whole|subnetwork, transfer/<variant>."""

from pathlib import Path

from ..rounding import fixed
from ..method.masks import apply_binary_masks, load_subnetwork
from ..runtime import configure, resolve_device, save_json
from ..vision.classes import run_classes
from ..vision.models import load_classifier
from ..vision.tasks import evaluate_cue_conflict, open_cue_conflict
from ..records import provenance
from .common import parser, require
from .vision_common import discovery_network
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--cue-conflict", required=True, help="folder in Geirhos' cue-conflict layout")
    p.add_argument("--base", required=True, help="the chain's base model.pt")
    p.add_argument("--subnetworks", nargs="*", default=[], help="the chain's discovery subnetwork.pt files")
    p.add_argument("--transfers", nargs="*", default=[], help="the chain's transfer model.pt files (<variant>/model.pt)")
    p.add_argument("--out", required=True, help="cue_conflict.json")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "chain", "data", "eval_batch_size")
    configure(args.threads, s["chain"])
    device = resolve_device(args.device)
    classes = run_classes(s)
    conflict = open_cue_conflict(args.cue_conflict, s["data"], classes)
    batch = s["eval_batch_size"]

    def score(model):
        return evaluate_cue_conflict(model.to(device), conflict, batch, device, classes)

    scores = {"base": score(load_classifier(args.base)[0])}
    for path in args.subnetworks:
        found = load_subnetwork(path, ("init", "l0_weight"))
        model, _ = discovery_network(args.base, found["init"], s["chain"])
        key = f"discovery/{found['init']}/{found['l0_weight']:g}"
        # the whole network a pretrained or label-free discovery masks is the base, scored above
        scores[f"{key}/whole"] = score(model) if found["init"] == "random" else scores["base"]
        scores[f"{key}/subnetwork"] = score(apply_binary_masks(model, found["masks"]))  # the hard-mask subnetwork
    for path in args.transfers:
        scores[f"transfer/{Path(path).parent.name}"] = score(load_classifier(path)[0])
    save_json({"chain": s["chain"], "scores": scores, "cue_conflict": args.cue_conflict, "config": s,
               "provenance": provenance()}, args.out)
    print(f"chain {s['chain']}: shape bias " + ", ".join(f"{name} {fixed(value['shape_bias'], 3)}"
                                                       for name, value in scores.items()))


if __name__ == "__main__":
    run_step(main)
