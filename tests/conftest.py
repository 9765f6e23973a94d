"""Shared fixtures: tiny models and data the tests build themselves."""

import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def tiny_gpt2():
    from subtask_induction.arithmetic.model import build_gpt2

    def make(seed=0, layers=1, n_numbers=20):
        return build_gpt2(n_numbers, layers, {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}, seed)

    return make
