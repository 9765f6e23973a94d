"""The method: weight masks that find a subnetwork, and transfer that freezes it into a fresh network.

Knows nothing of Snakemake, arithmetic or images: it takes a torch.nn.Module and the names of the
weight tensors to mask (e.g. "transformer.h.0.attn.c_attn.weight").
"""
