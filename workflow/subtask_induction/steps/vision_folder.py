"""Build the discovery, eval, train and test image folders from a user's class-per-folder tree (source `folder`)."""

from ..vision.imagenet16 import build_folder_splits
from .common import parser, require
from .vision_imagenet16 import report


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--root", required=True, help="folder with train/<class>/ and val/<class>/")
    p.add_argument("--out", required=True)
    # gates, as for ImageNet-16: they decide whether a build may stand, never which images it holds
    p.add_argument("--skip-unreadable", action="store_true", help="leave unreadable images out (listed) instead of failing")
    p.add_argument("--min-fill", type=float, default=0.5,
                   help="fail when a class's split gets less than this share of the images asked for")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "discovery_per_class", "eval_per_class", "seed", "link")
    try:
        summary = build_folder_splits(args.root, args.out, discovery_per_class=s["discovery_per_class"],
                                      eval_per_class=s["eval_per_class"], seed=s["seed"], link=s["link"],
                                      skip_unreadable=args.skip_unreadable, min_fill=args.min_fill, workers=args.threads)
    except (ValueError, FileNotFoundError) as error:  # the user's tree, not the code: the message alone
        raise SystemExit(f"error: {error}") from error
    report(summary, f"{len(summary['class_order'])} classes written to {args.out}")


if __name__ == "__main__":
    main()
