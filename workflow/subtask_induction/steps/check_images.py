"""Decode every image of a user's folder once (a cue-conflict folder, a downstream task) before any training
reads it: an unreadable or truncated file stops the run here, named by its own path, instead of failing every
job that reads the folder hours later. Writes the folder's image counts."""

import argparse

from ..images import check_folder
from ..runtime import save_json
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--root", required=True, help="the folder to check (every image below it)")
    p.add_argument("--what", default="image folder", help="what the folder is, for the error message")
    p.add_argument("--out", required=True, help="a JSON file with the counts")
    p.add_argument("--threads", type=int, default=1, help="images decoded at once")
    args = p.parse_args(argv)
    try:
        counts = check_folder(args.root, args.what, args.threads)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"error: {error}") from error
    save_json(counts, args.out)
    print(f"{args.what} {args.root}: {counts['images']} images, all readable")


if __name__ == "__main__":
    run_step(main)
