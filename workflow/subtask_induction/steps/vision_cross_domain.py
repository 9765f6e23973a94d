"""Arithmetic -> vision (issue 48): the bases the cross-domain variants transfer from. A world ViT whose blocks
have the GPT-2 base's shapes, holding the GPT-2's four matrices of every layer, with the arithmetic subnetwork's
masks under the ViT's names; and a second fresh ViT of the same spec, whose weights the fresh-frozen control
freezes (vision/cross_domain.py lays out the copy). The transfer step trains every cross-domain variant from these
as it trains any variant from a vision base."""

from ..rounding import percent
from ..arithmetic.model import load_gpt2
from ..method.masks import kept_fraction, load_subnetwork, save_subnetwork
from ..runtime import configure, save_json, save_torch
from ..seeds import vision_seeds
from ..records import provenance
from ..vision.cross_domain import cross_domain_base, vit_spec
from ..vision.models import build_classifier, save_classifier
from .common import parser, require
from ..timing import run_step


def parse_arguments(argv=None):
    p = parser(__doc__)
    p.add_argument("--gpt2", required=True, help="the arithmetic base's model.pt")
    p.add_argument("--subnetwork", required=True, help="the arithmetic subnetwork the selection chose")
    p.add_argument("--out-gpt2", required=True, help="model.pt: the ViT holding the GPT-2's matrices")
    p.add_argument("--out-fresh", required=True, help="model.pt: a fresh ViT of the same spec")
    p.add_argument("--out-subnetwork", required=True, help="the subnetwork's masks under the ViT's names")
    p.add_argument("--out", required=True, help="metrics.json: what was copied")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    s = args.settings
    require(s, "chain", "image_size", "num_outputs")
    seeds = vision_seeds("cross_domain", s["chain"])
    configure(args.threads, seeds["init"])
    gpt2, meta = load_gpt2(args.gpt2)
    subnetwork = load_subnetwork(args.subnetwork)
    spec = vit_spec(gpt2.config, s["image_size"], s["num_outputs"])
    base, masks = cross_domain_base(gpt2.state_dict(), subnetwork["masks"], build_classifier(spec, seeds["init"]))
    save_torch(save_classifier(base, spec), args.out_gpt2)
    save_torch(save_classifier(build_classifier(spec, seeds["fresh"]), spec), args.out_fresh)
    save_subnetwork(args.out_subnetwork, masks, source=str(args.subnetwork))
    kept = kept_fraction(masks)
    save_json({"spec": spec, "kept_fraction": kept, "matrices": sorted(masks),
               "gpt2": {"layers": meta["layers"], "model_settings": meta["model_settings"]}, "seeds": seeds,
               "settings": s, "provenance": provenance()}, args.out)
    print(f"cross-domain chain={s['chain']}: {len(masks)} ViT matrices from the GPT-2, "
          f"{percent(kept['overall'], 2)} of their entries in the subnetwork")


if __name__ == "__main__":
    run_step(main)
