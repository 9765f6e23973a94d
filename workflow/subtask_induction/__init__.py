"""Subtask Induction: find a subnetwork that performs a subtask, then transfer it as an inductive bias.

Method library (`method/`), one training loop (`training.py`), experiment families (`arithmetic/`,
`vision/`) and one thin command-line step per Snakemake rule (`steps/`).
"""

__version__ = "0.5.0"
