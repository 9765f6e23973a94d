"""One thin command-line entry point per Snakemake rule: `python -m subtask_induction.steps.<name> --help`."""
