"""What tracking a user's folder by content costs (listing.py), per 10,000 images.

    .venv/bin/python benchmarks/listing_cost.py [--images 10000] [--kib 110]

Writes IMAGES files of KIB KiB of random bytes (ImageNet's mean JPEG is about 110 KiB) into a temporary folder
and times track_folder, which runs while Snakemake builds the DAG: the first walk (every file read and hashed),
a walk of the unchanged tree (the (size, mtime) cache: no file read), and a walk after every file's time has
changed but not its bytes (`touch`, a copy without times: every file read again, nothing reruns).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction.listing import track_folder  # noqa: E402


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", type=int, default=10000)
    p.add_argument("--kib", type=int, default=110)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root, record = Path(folder) / "tree", Path(folder) / "listing.json"
        for i in range(args.images):
            path = root / f"class{i % 16:02d}" / f"{i:06d}.jpg"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(args.kib * 1024))
        first = timed(lambda: track_folder(root, record))
        unchanged = timed(lambda: track_folder(root, record))
        later = time.time() + 60
        for path in root.rglob("*.jpg"):
            os.utime(path, (later, later))
        digest = record.read_text()
        touched = timed(lambda: track_folder(root, record))
        assert record.read_text() == digest, "a touched tree changed the listing"
    per = 10000 / args.images
    print(f"{args.images} files of {args.kib} KiB: first walk {first:.2f} s, unchanged {unchanged:.2f} s, "
          f"every time changed {touched:.2f} s (the listing unchanged)")
    print(f"per 10,000 images: first {first * per:.2f} s, unchanged {unchanged * per:.2f} s, "
          f"changed times {touched * per:.2f} s")


if __name__ == "__main__":
    main()
