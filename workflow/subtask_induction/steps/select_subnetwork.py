"""Choose the subnetwork to transfer among the L0 weights: best eval accuracy, ties -> fewest kept."""

import argparse

from ..method.discovery import selection_key
from ..method.masks import load_subnetwork, save_subnetwork
from ..method.transfer import check_complement_possible


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--subnetworks", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--check-complement", action="store_true",
                   help="fail now if the complement control cannot be drawn from the chosen subnetwork")
    args = p.parse_args(argv)
    candidates = [(load_subnetwork(path, ("kept", "eval_accuracy", "l0_weight")), path)
                  for path in args.subnetworks]
    chosen, path = max(candidates, key=lambda c: selection_key(c[0]["eval_accuracy"], c[0]["kept"]["overall"]))
    if args.check_complement:
        try:
            check_complement_possible(chosen["masks"])
        except ValueError as error:
            raise SystemExit(f"error: {path}: {error}") from error
    chosen["selected_from"] = {p: {"eval_accuracy": c["eval_accuracy"], "kept": c["kept"]["overall"]}
                               for c, p in candidates}
    save_subnetwork(args.out, chosen.pop("masks"), **chosen)
    print(f"selected {path}: lambda {chosen['l0_weight']:g}, eval {chosen['eval_accuracy']:.4f}, "
          f"kept {100 * chosen['kept']['overall']:.2f}%")


if __name__ == "__main__":
    main()
