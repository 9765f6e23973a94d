"""Mean-pool one shard of a split: segment each image (SAM, or the weights-free segmenter) and fill every
segment with the mean colour of its original pixels. Writes <out>/<category>/<image stem>.png."""

from pathlib import Path

import numpy as np
from PIL import Image

from ..rounding import fixed
from ..images import list_images, read_rgb
from ..runtime import configure, resolve_device, save_json
from ..vision.classes import run_classes
from ..vision.segmentation import make_segmenter, pool_image
from ..records import provenance
from .common import parser, require
from ..timing import run_step


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--images", required=True, help="folder of the split's original images (<category>/<image>)")
    p.add_argument("--shard", type=int, required=True, help="this shard's number, 0-based")
    p.add_argument("--shards", type=int, required=True, help="how many shards the split is cut into")
    p.add_argument("--out", required=True, help="folder of this shard's pooled images")
    args = p.parse_args(argv)
    s = args.settings
    require(s, "segmenter", "min_area")
    if not 0 <= args.shard < args.shards:
        raise SystemExit(f"error: shard {args.shard} is not in 0..{args.shards - 1}")
    configure(args.threads, s.get("seed", 0))
    device = resolve_device(args.device)
    segmenter = make_segmenter(s["segmenter"], device=str(device), seed=s.get("seed", 0))
    items = list_images(args.images, run_classes(s), what="images to pool")[args.shard::args.shards]
    out = Path(args.out)
    segments, fallbacks = [], {"no crops": [], "whole image": []}
    for item in items:
        image = np.asarray(read_rgb(item.path))
        try:
            pooled, segment_map = pool_image(image, segmenter, s["min_area"])
        except Exception as error:  # keep the traceback, name the image
            raise RuntimeError(f"pooling {item.path} failed: {error}") from error
        if getattr(segmenter, "last_fallback", None):  # SAM found no mask: segmented without crops, or one region
            fallbacks[segmenter.last_fallback].append(str(item.relative))
        target = out / item.relative
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pooled).save(target.with_suffix(".png"), format="PNG")
        segments.append(int(segment_map.max()) + 1)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"images": len(items), "mean_segments": float(np.mean(segments)) if segments else 0.0,
               "sam_found_no_mask": fallbacks,
               "shard": args.shard, "shards": args.shards, "config": s, "provenance": provenance()}
    save_json(summary, out / "pooling.json")
    print(f"pooled {len(items)} images of {args.images} (shard {args.shard + 1}/{args.shards}), "
          f"{fixed(summary['mean_segments'], 1)} segments per image; SAM found no mask in "
          f"{len(fallbacks['no crops']) + len(fallbacks['whole image'])} (retried without crops: "
          f"{len(fallbacks['no crops'])}, pooled as one region: {len(fallbacks['whole image'])})")


if __name__ == "__main__":
    run_step(main)
