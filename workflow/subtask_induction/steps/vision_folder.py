"""Build the discovery, eval, train and test image folders from a user's class-per-folder tree (source `folder`)."""

from ..vision.imagenet16 import build_folder_splits
from .common import parser
from ..timing import run_step
from .vision_imagenet16 import build_splits_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--root", required=True, help="folder with train/<class>/ and val/<class>/")
    build_splits_step(p, build_folder_splits, "{classes} classes written to {out}", argv)


if __name__ == "__main__":
    run_step(main)
