"""Where the selected subnetwork's pooled accuracy lives (see vision/diagnostics.py): BatchNorm statistics
re-estimated without labels, and a linear probe of the model SI starts from. Trains no network; writes
diagnostics.csv and diagnostics.md."""

from pathlib import Path

import pandas as pd

from ..method.masks import load_subnetwork
from ..method.transfer import TransferPlan
from ..runtime import configure, resolve_device, save_text
from ..vision.diagnostics import diagnose, diagnostics_markdown
from ..vision.classes import run_classes
from ..vision.models import build_classifier, load_classifier, transfer_start
from ..vision.tasks import open_split
from ..seeds import vision_seeds
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--base", required=True)
    p.add_argument("--subnetwork", required=True, help="selected subnetwork .pt (pretrained init)")
    p.add_argument("--train", required=True, help="folder of original training images (statistics only)")
    p.add_argument("--pooled-discovery", nargs="+", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--pooled-test", nargs="+", required=True)
    p.add_argument("--outdir", required=True)
    args = p.parse_args(argv)
    s = args.settings
    require(s, "chain", "data", "eval_batch_size", "variants", "max_images")
    seeds = vision_seeds("transfer", s["chain"], masked_init=True)  # each start as its transfer run builds it
    configure(args.threads, s["chain"])
    device = resolve_device(args.device)
    base, spec = load_classifier(args.base)
    subnetwork = load_subnetwork(args.subnetwork)
    masks = subnetwork["masks"]
    classes = run_classes(s)
    sets = {"train": open_split(args.train, s["data"], "train", classes),
            "pooled_discovery": open_split(args.pooled_discovery, s["data"], "pooled discovery", classes),
            "test": open_split(args.test, s["data"], "test", classes),
            "pooled_test": open_split(args.pooled_test, s["data"], "pooled test", classes)}
    si_start = {}
    for name, variant in s["variants"].items():   # the subnetwork variants, as their transfer runs start
        require(variant, "kind", "lr_scale", "inherit_unmasked", where=f"variant '{name}'")
        plan = TransferPlan.from_settings(variant)
        try:   # a top_k variant needs the discovery's scores: said as the transfer step says it, no traceback
            masks_of_plan = plan.masks(subnetwork)
        except ValueError as error:
            raise SystemExit(f"error: variant '{name}', {args.subnetwork}: {error}") from error
        si_start[f"{name} at start"] = transfer_start(plan, variant, base, spec, masks_of_plan, seeds).to(device)
    rows = diagnose(base.to(device), masks, si_start, build_classifier(spec, seeds["init"]).to(device), **sets,
                    max_images=s["max_images"], batch_size=s["eval_batch_size"], seed=s["chain"], device=device,
                    classes=len(classes))
    out = Path(args.outdir)
    save_text(pd.DataFrame(rows).to_csv(index=False), out / "diagnostics.csv")
    save_text(diagnostics_markdown(rows), out / "diagnostics.md")
    print(diagnostics_markdown(rows))


if __name__ == "__main__":
    run_step(main)
