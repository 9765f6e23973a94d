"""Shared fixtures: tiny models and data the tests build themselves, and one smoke run of the whole DAG."""

import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "tests"))


def pytest_configure(config):
    # Registered here, not in pyproject.toml: the marker belongs to tests/test_cuda.py alone.
    config.addinivalue_line("markers", "cuda: needs a CUDA device (tests/test_cuda.py; benchmarks/gpu_check.sh "
                                       "runs them); skipped where torch.cuda.is_available() is False")


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def tiny_gpt2():
    from subtask_induction.arithmetic.model import build_gpt2

    def make(seed=0, layers=1, n_numbers=20):
        return build_gpt2(n_numbers, layers, {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}, seed)

    return make


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """tests/smoke_config.yaml (every family, two vision chains) run once through the Snakemake CLI in a
    temporary copy of the workflow. Read it freely; to change anything, work on harness.clone_run(...)."""
    from harness import run_workflow

    return run_workflow(tmp_path_factory.mktemp("smoke"))
