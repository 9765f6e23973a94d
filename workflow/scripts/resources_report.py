# Runs the resources report on the rule's inputs, which can be thousands of benchmark files: more than a
# shell command line holds, so the list reaches the step in-process (`script:`), not as arguments.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - `snakemake` comes with `script:`

from subtask_induction.steps.resources_report import write  # noqa: E402

with open(snakemake.log[0], "w") as log:  # noqa: F821
    print(write(snakemake.params.rules, snakemake.output.csv, snakemake.output.markdown), file=log)  # noqa: F821
