"""Write a tiny randomly initialised SAM checkpoint (`model_type: tiny`) for a dry trial of the SAM pooling
path on a machine without the 2.4 GB vit_h file:

    PYTHONPATH=workflow python -m subtask_induction.steps.tiny_sam results/tiny_sam.pth
    snakemake --configfile config/paper.yaml my_paths.yaml   # with vision.pooling.sam:
                                                             #   {model_type: tiny, checkpoint: results/tiny_sam.pth}

Random weights propose no confident mask, so every image pools to few segments: the numbers mean nothing,
the jobs, files and formats are the real ones.
"""

import argparse

import torch

from ..runtime import save_torch
from ..vision.segmentation import build_tiny_sam
from ..timing import run_step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="checkpoint path (a state dict)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    save_torch(build_tiny_sam().state_dict(), args.out)
    print(f"tiny SAM written to {args.out}: set vision.pooling.sam: {{model_type: tiny, checkpoint: {args.out}}}")


if __name__ == "__main__":
    run_step(main)
