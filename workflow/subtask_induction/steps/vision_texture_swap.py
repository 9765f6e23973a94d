"""Re-render the world's training images with textures no class uses (the texture-swap baseline's data):
the same shapes, poses and backgrounds, labels following the shape, no cue-conflict combination."""

from collections import Counter

from ..runtime import configure, save_json
from ..vision.world import generate_texture_swap
from ..records import provenance
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--world", required=True, help="the generated world (its images are checked against the replay)")
    p.add_argument("--out", required=True, help="folder to write (<split>/<category>/*.png)")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "image_size", "per_class", "texture_match", "seed", "split")
    configure(args.threads, s["seed"])
    textures = generate_texture_swap(args.out, args.world, **s)
    save_json({"images": len(textures), "pool_textures": textures, "config": s, "provenance": provenance()},
              f"{args.out}/manifest.json")
    print(f"texture swap of {len(textures)} {s['split']} images written to {args.out}; pool textures used "
          f"{dict(sorted(Counter(textures.values()).items()))}")


if __name__ == "__main__":
    run_step(main)
