"""Write an embedded downstream task (digits, textures, faces) as train/<class>/ and test/<class>/ PNGs."""

from ..runtime import configure, save_json
from ..submasking.tasks import build_embedded_task
from ..records import provenance
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="digits | textures | faces")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    s = args.settings
    require(s, "image_size", "seed")
    configure(args.threads, s["seed"])
    counts = build_embedded_task(args.name, args.out, image_size=s["image_size"], seed=s["seed"],
                                 crops_per_class=s.get("crops_per_class", 300))
    save_json({"task": args.name, "counts": counts, "config": s, "provenance": provenance()},
              f"{args.out}/manifest.json")
    print(f"task {args.name} written to {args.out}: {counts}")


if __name__ == "__main__":
    run_step(main)
