"""The sections of docs/results.md, one module per section title, in the page's order: arithmetic_default,
paper_scale, vision_default, submasking_default, beyond (and the signs), groupnorm, gpu, provenance."""
