# Subtask Induction (arXiv 2310.10899) as a Snakemake workflow. See README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/arithmetic.smk"
include: "workflow/rules/vision.smk"
include: "workflow/rules/submasking.smk"


rule all:
    input:
        final_targets(),
    default_target: True
