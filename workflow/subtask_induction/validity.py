"""Chain validity (docs/decisions.md, "The rule's precedence, as data"): a chain counts only where its base learned its own task.

A base that never learned its task (a GPT-2 at chance on a+ab) has no subnetwork of the subtask to find, so its chain
measures nothing the claims are about. The threshold is fixed before the records it governs: the base's accuracy on
its own task at least 0.9 for arithmetic (chance 1/7: its eval accuracy, as base.csv keeps it) and 0.8 for vision
(chance 1/16: its accuracy on the original test images, the one its records keep). The workflow names a failed base
when it finishes (`report`, from the Snakefile's onsuccess); the pages name it with every verdict that differs
without it; a record planned after this rule replaces it from its plan's spare seeds before any transfer is judged.

No torch here: the Snakefile calls it when the run ends, and the pages read it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .rounding import percent

BASE_VALID = {"arithmetic": 0.9, "vision": 0.8}
# The accuracy each family's validity reads, as every page names it (a base's eval and test accuracies differ: the
# decisive record's arithmetic chain 24 reads eval 41.4 %, test 40.6 %)
READS = {"arithmetic": "eval accuracy", "vision": "accuracy on the original test images"}
# ... and the column (or metrics.json key) it is read from
COLUMN = {"arithmetic": "eval_accuracy", "vision": "original_accuracy"}


def base_accuracy(family: str, accuracy: float) -> str:
    """`base eval accuracy 41.4 %`: a failed base's accuracy as every page words it, in percent, naming which."""
    return f"base {READS[family]} {percent(accuracy, 1).removesuffix('%')} %"


def did_not_learn(family: str, accuracy: float) -> str:
    """`its base did not learn its task (base eval accuracy 41.4 %, under 90 %)`: a failed base as every line says it."""
    return (f"its base did not learn its task ({base_accuracy(family, accuracy)}, under "
            f"{percent(BASE_VALID[family]).removesuffix('%')} %)")


def failed(accuracy: pd.Series, family: str) -> pd.Series:
    """The chains (index) whose base accuracy (values, 0-1) is under the family's threshold."""
    accuracy = pd.Series(accuracy, dtype=float)
    return accuracy[accuracy < BASE_VALID[family]]


def arithmetic_bases(base: pd.DataFrame) -> pd.Series:
    """base.csv (one row per chain and depth) -> the lowest eval accuracy of each chain's bases, by chain."""
    return base.groupby("chain")[COLUMN["arithmetic"]].min()


def vision_bases(chains: pd.DataFrame) -> pd.Series:
    """vision chains.csv -> each chain's base accuracy on the original test images, by chain."""
    return chains[chains["model"] == "base"].set_index("chain")[COLUMN["vision"]]


def failed_bases(arithmetic_base: pd.DataFrame | None, vision_chains: pd.DataFrame | None) -> list[tuple]:
    """[(family, chain, accuracy)] of every failed base in a run's (or a record's) tables."""
    out = []
    if arithmetic_base is not None and not arithmetic_base.empty:
        out += [("arithmetic", chain, float(a)) for chain, a in failed(arithmetic_bases(arithmetic_base), "arithmetic").items()]
    if vision_chains is not None and not vision_chains.empty and COLUMN["vision"] in vision_chains:
        out += [("vision", chain, float(a)) for chain, a in failed(vision_bases(vision_chains), "vision").items()]
    return out


def line(family: str, chain, accuracy: float) -> str:
    return (f"{family} chain {chain}: {did_not_learn(family, accuracy)}; its verdicts count it, since the plan fixed it: "
            "see docs/results.md, \"Chain validity\"")


def report(results: Path = Path("results")) -> list[str]:
    """The lines the workflow prints when it finishes: one per failed base in results/<family>/summary/."""
    read = lambda path: pd.read_csv(path) if path.is_file() else None   # noqa: E731
    found = failed_bases(read(results / "arithmetic" / "summary" / "base.csv"),
                         read(results / "vision" / "summary" / "chains.csv"))
    return [line(*item) for item in found]


def main(argv=None) -> int:
    for text in report(Path((argv or sys.argv[1:] or ["results"])[0])):
        print(f"failed base: {text}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
