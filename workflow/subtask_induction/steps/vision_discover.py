"""Discover the subnetwork of a vision model that classifies mean-pooled images, for one L0 weight.

Masks go on every layer's weights except the classifier's. --init random runs the same discovery on a
freshly initialised network of the base's architecture (the control of Fig 11). --init label_free needs no
class label: the subnetwork's answer distribution on a pooled image is matched to the base's on the original
image (cross-entropy to the base's probabilities), and the epoch is selected by agreement with the base's
answers on the original eval images (settings `originals`: the discovery and eval folders). Labels are read
only to report test accuracy, as for every discovery."""

from ..rounding import fixed
from ..method.discovery import MaskSearch, discover_subnetwork, majority_share, mask_settings
from ..method.masks import find_masks, hard_masks_on, kept_fraction, mask_scores, save_subnetwork
from ..runtime import configure, resolve_device, save_json
from ..vision.classes import run_classes
from ..vision.models import masked_weight_names
from ..vision.tasks import (answer_distribution, answers_as_targets, nll_loss, open_split, predict,
                            shuffled_batches, soft_target_loss)
from ..seeds import vision_seeds
from ..training import Checkpointing, EpochRun
from ..records import fingerprint, provenance
from .common import add_identity, parser, require
from .vision_common import EvaluationSets, add_evaluation_arguments, discovery_network, same_images
from ..timing import run_step


def parse_arguments(argv=None):
    p = parser(__doc__)
    p.add_argument("--base", required=True, help="base model.pt")
    p.add_argument("--init", choices=["pretrained", "random", "label_free"], default="pretrained")
    p.add_argument("--pooled-train", nargs="+", required=True, help="folders of pooled discovery images")
    p.add_argument("--pooled-eval", nargs="+", required=True, help="folders of pooled eval images (selection)")
    add_evaluation_arguments(p)
    p.add_argument("--l0-weight", type=float, required=True, help="lambda")
    p.add_argument("--out-subnetwork", required=True)
    p.add_argument("--out-metrics", required=True)
    add_identity(p)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    s = args.settings
    require(s, "chain", "data", "discovery", "eval_batch_size")
    d = s["discovery"]
    require(d, "epochs", "batch_size", "lr", "beta_final", "mask_init", where="discovery settings")
    seeds = vision_seeds("discovery", s["chain"])
    configure(args.threads, seeds["batches"])
    device = resolve_device(args.device)
    model, _ = discovery_network(args.base, args.init, s["chain"])
    model.to(device)
    classes = run_classes(s)
    train = open_split(args.pooled_train, s["data"], "pooled discovery", classes)
    eval_set = open_split(args.pooled_eval, s["data"], "pooled eval", classes)
    evaluation = EvaluationSets(args, s["data"], classes)
    batch = s["eval_batch_size"]
    whole_model = evaluation(model, batch, device)
    task_loss, eval_targets = nll_loss(), eval_set.labels
    if args.init == "label_free":  # targets: the base's answers on the originals; the labels are never read
        require(s, "originals")
        require(s["originals"], "discovery", "eval", where="settings originals")
        originals = {split: open_split(s["originals"][split], s["data"], f"original {split}", classes)
                     for split in ("discovery", "eval")}
        same_images(originals["discovery"], train, "the pooled discovery images")
        same_images(originals["eval"], eval_set, "the pooled eval images")
        task_loss = soft_target_loss(answer_distribution(model, originals["discovery"], batch, device))
        train = answers_as_targets(train)
        eval_targets = predict(model, originals["eval"], batch, device)
    checkpoint = args.out_subnetwork + ".ckpt"
    method, options = mask_settings(d)
    masks, result = discover_subnetwork(
        model, masked_weight_names(model), task_loss, shuffled_batches(train, d["batch_size"], seeds["batches"], device),
        lambda net: {"eval_accuracy": (predict(net, eval_set, batch, device) == eval_targets).float().mean().item()},
        MaskSearch(d["epochs"], d["lr"], args.l0_weight, beta_final=d["beta_final"], mask_init=d["mask_init"],
                   mask_method=method, mask_options=options, weight_decay=d.get("weight_decay", 0.0)),
        Checkpointing(checkpoint, args.checkpoint_interval_s,
                      fingerprint(s, args.init, args.l0_weight, inputs=[args.base, *args.pooled_train, *args.pooled_eval,
                                                                        *(s.get("originals") or {}).values()])),
        EpochRun(desc=f"discover {args.init} lambda={args.l0_weight:g}", settings={**s, "l0_weight": args.l0_weight}),
    )
    with hard_masks_on(find_masks(model)):
        subnetwork = evaluation(model, batch, device)
    kept = kept_fraction(masks)
    chance = majority_share(eval_targets)
    # eval accuracy: against the eval targets, the labels or (label_free) the base's answers on the originals
    targets = "base answers on the originals" if args.init == "label_free" else "labels"
    save_subnetwork(args.out_subnetwork, masks, kept=kept, l0_weight=args.l0_weight, init=args.init, chain=s["chain"],
                    mask_method=method, eval_accuracy=result.best_metrics["eval_accuracy"], chance_accuracy=chance,
                    subtask="mean-pooled", eval_targets=targets,
                    scores=mask_scores(find_masks(model)))   # the order a top_k variant reads (the paper's size)
    save_json({"identity": args.identity,
               "metrics": {"eval_accuracy": result.best_metrics["eval_accuracy"], "kept_fraction": kept["overall"],
                           "chance_accuracy": chance, "eval_targets": targets,
                           **{k: v for k, v in subnetwork.items() if k != "per_class"}},
               "whole_model": whole_model, "subnetwork": subnetwork, "kept_per_tensor": kept["per_tensor"],
               "best_epoch": result.best_epoch, "curve": result.history, "init": args.init,
               "l0_weight": args.l0_weight, "seeds": seeds if args.init == "random" else {"batches": seeds["batches"]},
               "config": s, "provenance": provenance()}, args.out_metrics)
    print(f"subnetwork ({args.init}, lambda {args.l0_weight:g}): kept {fixed(100 * kept['overall'], 2)}%, pooled test "
          f"{fixed(whole_model['pooled_accuracy'], 3)} -> {fixed(subnetwork['pooled_accuracy'], 3)}")


if __name__ == "__main__":
    run_step(main)
