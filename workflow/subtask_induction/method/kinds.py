"""The transfer methods by name. Torch-free: the Snakefile reads it to build the DAG (which transfer jobs
wait on a discovered subnetwork)."""

METHODS = ("subnetwork", "sampled", "complement", "random", "full")
MASKED_METHODS = ("subnetwork", "sampled", "complement")  # the methods that read a discovered subnetwork
