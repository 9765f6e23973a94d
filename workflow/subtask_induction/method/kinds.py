"""The transfer methods by name. Torch-free: the Snakefile reads it to build the DAG (which transfer jobs
wait on a discovered subnetwork)."""

METHODS = ("subnetwork", "sampled", "complement", "random", "full", "sampled_authors")
# the methods that read a discovered subnetwork. sampled_authors: the authors' code's sampled control, which
# freezes the N-k weights outside a count-matched random draw instead of k (DESIGN: their bug, kept as an option
# to test what it does to their curve)
MASKED_METHODS = ("subnetwork", "sampled", "complement", "sampled_authors")
