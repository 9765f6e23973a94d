"""Choose the subnetwork to transfer among the L0 weights: best eval accuracy, ties -> fewest kept.

Writes a small JSON record naming the chosen discovery output (its path, λ and scores) and every
candidate's scores. Transfer reads the chosen subnetwork file itself, so adding a λ that loses changes
this record but no file a transfer job reads (the Snakemake rule is a checkpoint; README, Reruns).
"""

import argparse

from ..rounding import fixed
from ..method.discovery import check_floor
from ..protocols import selection_key
from ..method.masks import load_subnetwork
from ..method.transfer import check_complement_possible
from ..runtime import save_json
from ..timing import run_step

# Scalar metadata of the chosen subnetwork carried into the record (the aggregates read chain and init).
CARRIED = ("l0_weight", "eval_accuracy", "test_accuracy", "chance_accuracy", "mask_method", "subtask", "chain", "init")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--subnetworks", nargs="+", required=True)
    p.add_argument("--out", required=True, help="selected.json")
    p.add_argument("--check-complement", action="store_true",
                   help="fail now if the complement control cannot be drawn from the chosen subnetwork")
    p.add_argument("--floor", action="store_true",
                   help="fail if the chosen subnetwork keeps nothing or is no better than chance on its subtask "
                        "(it is transferred: an empty one must not pass as a result)")
    args = p.parse_args(argv)
    try:
        lines = select(args.subnetworks, args.out, args.check_complement, args.floor)
    except ValueError as error:
        raise SystemExit(f"error: {error}") from error
    print("\n".join(lines))


def select(subnetworks: list[str], out: str, check_complement: bool = False, floor: bool = False) -> list[str]:
    """Write the selection record `out` of `subnetworks`; returns what to log. A floor or complement failure raises
    ValueError, naming the file (the rules run this in Snakemake's own process: a selection is a local job)."""
    candidates = [(load_subnetwork(path, ("kept", "eval_accuracy", "l0_weight")), path) for path in subnetworks]
    chosen, path = max(candidates, key=lambda c: selection_key(c[0]["eval_accuracy"], c[0]["kept"]["overall"]))
    below_floor, lines = None, []
    try:
        check_floor(chosen["kept"]["overall"], chosen["eval_accuracy"], chosen.get("chance_accuracy"),
                    f"the best subnetwork of {len(candidates)} λ value(s), {path},")
    except ValueError as error:
        if floor:
            raise
        below_floor = str(error)  # floor off: transferred all the same, but never silently
        lines.append(f"warning: discovery.floor is off, and {error}")
    if check_complement:
        try:
            check_complement_possible(chosen["masks"])
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from error
    save_json({"subnetwork": path, "kept": chosen["kept"]["overall"], "below_floor": below_floor,
               **{key: chosen[key] for key in CARRIED if key in chosen},
               "candidates": {p: {"l0_weight": c["l0_weight"], "eval_accuracy": c["eval_accuracy"],
                                  "kept": c["kept"]["overall"]} for c, p in candidates}}, out)
    lines.append(f"selected {path}: lambda {chosen['l0_weight']:g}, eval {fixed(chosen['eval_accuracy'], 4)}, "
                 f"kept {fixed(100 * chosen['kept']['overall'], 2)}%")
    return lines


if __name__ == "__main__":
    run_step(main)
