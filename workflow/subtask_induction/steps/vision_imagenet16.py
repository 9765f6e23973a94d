"""Build 16-class ImageNet image folders (discovery, eval, train, test) from a local ImageNet tree."""

from ..vision.imagenet16 import build_imagenet16
from ..runtime import save_json
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--root", required=True, help="ImageNet folder with train/<wnid>/ and val/<wnid>/")
    build_splits_step(p, build_imagenet16, "ImageNet-16 written to {out}", argv)


def build_splits_step(p, builder, written: str, argv=None) -> None:
    """The rest of a split builder's CLI (vision_imagenet16, vision_folder): the gates, the build, its report."""
    p.add_argument("--out", required=True, help="the split folders; with --check-only, a JSON file of the manifest")
    p.add_argument("--check-only", action="store_true",
                   help="run every check of the build and write only its manifest (the rule that runs before the "
                        "builder: a failing check never deletes a finished build)")
    # gates, not settings: they decide whether a build may stand, never which images a finished build holds,
    # so the rule passes them apart from --settings (changing one reruns nothing downstream)
    p.add_argument("--skip-unreadable", action="store_true", help="leave unreadable images out (listed) instead of failing")
    p.add_argument("--min-fill", type=float, default=0.5,
                   help="fail when a class's split gets less than this share of the images asked for")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "discovery_per_class", "eval_per_class", "seed", "link")
    try:
        summary = builder(args.root, args.out, discovery_per_class=s["discovery_per_class"],
                          eval_per_class=s["eval_per_class"], seed=s["seed"], link=s["link"],
                          skip_unreadable=args.skip_unreadable, min_fill=args.min_fill, workers=args.threads,
                          write=not args.check_only)
    except (ValueError, FileNotFoundError) as error:  # the user's tree, not the code: the message alone
        raise SystemExit(f"error: {error}") from error
    if args.check_only:
        save_json(summary, args.out)
    for path in summary["unreadable_skipped"]:
        print(f"skipped unreadable image {path}")
    for split, folders in summary["empty_wnid_folders"].items():
        for folder in folders:
            print(f"empty member folder ({split}): {folder}")
    for split, short in summary["under_filled"].items():
        for category, (got, asked) in short.items():
            print(f"under-filled {split} split, category {category}: {got} of {asked} images")
    if args.check_only:
        print(f"{len(summary['class_order'])} classes checked, nothing built: {summary['counts']}")
    else:
        print(f"{written.format(out=args.out, classes=len(summary['class_order']))}: {summary['counts']}")


if __name__ == "__main__":
    run_step(main)
