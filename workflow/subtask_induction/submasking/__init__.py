"""Submasking: a binary mask over a frozen pretrained backbone (plus a new head) instead of fine-tuning."""
