"""Generate the shape/texture world: natural splits as class folders of PNGs, plus a cue-conflict folder."""

from ..runtime import configure, save_json
from ..vision.world import generate_world
from ..records import provenance
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--out", required=True, help="folder to write (<split>/<category>/*.png, cue_conflict/)")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "image_size", "per_class", "texture_match", "conflict_per_texture", "seed")
    configure(args.threads, s["seed"])
    counts = generate_world(args.out, image_size=s["image_size"], per_class=s["per_class"],
                            texture_match=s["texture_match"], conflict_per_texture=s["conflict_per_texture"],
                            seed=s["seed"], max_rotation_deg=s.get("max_rotation_deg", 15.0), min_scale=s.get("min_scale", 0.75),
                            texture_scale=s.get("texture_scale", 1),
                            texture_contrast=s.get("texture_contrast", 0.45))
    save_json({"counts": counts, "config": s, "provenance": provenance()}, f"{args.out}/manifest.json")
    print(f"world written to {args.out}: {counts}")


if __name__ == "__main__":
    run_step(main)
