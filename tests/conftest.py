"""Shared fixtures: tiny models and data the tests build themselves, and one smoke run of the whole DAG; and the
`workflow` marker, set on every test that runs Snakemake, so `pytest -m "not workflow"` is the fast inner loop."""

import inspect
import re
import shutil
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
    config.addinivalue_line("markers", "user_path: runs a Snakemake workflow of its own (a user's path: a config "
                                       "change, a folder, a resume), not the shared smoke run; `make test-paths`")
    config.addinivalue_line("markers", "workflow: runs Snakemake (set by conftest on every test that calls the "
                                       "harness's snakemake/run_workflow or uses a fixture that does)")


# A call of the harness that starts Snakemake, or the session's smoke run.
RUNS_SNAKEMAKE = re.compile(r"\b(snakemake|run_workflow|run_smoke|slurm_smoke)\(|\bsmoke_run\b")


# A Snakemake run of the test's own (not the shared smoke run it may read or clone): a user's path
OWN_RUN = re.compile(r"\b(snakemake|run_workflow|run_smoke|slurm_smoke)\(")


def _runs_snakemake(function, seen: set, pattern: re.Pattern = RUNS_SNAKEMAKE) -> bool:
    if function in seen:
        return False
    seen.add(function)
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    if pattern.search(source):
        return True
    # a helper of the test's module that the test calls (e.g. a module-level `finished_run(...)`)
    module = inspect.getmodule(function)
    return any(_runs_snakemake(getattr(module, name), seen, pattern)
               for name in re.findall(r"\b([a-z_][a-z0-9_]*)\(", source)
               if inspect.isfunction(getattr(module, name, None)) and getattr(module, name).__module__ == module.__name__)


def pytest_collection_modifyitems(items):
    """Mark `workflow` every test whose function, module helpers or fixtures start Snakemake; then order them for
    two workers (`make test` runs `-n auto`, whose scheduler hands tests out in this order)."""
    for item in items:
        functions = [getattr(item, "function", None)]
        for definitions in getattr(item, "_fixtureinfo", None).name2fixturedefs.values() if hasattr(item, "_fixtureinfo") else []:
            functions += [definition.func for definition in definitions]
        seen: set = set()
        if any(_runs_snakemake(function, seen) for function in functions if function is not None):
            item.add_marker(pytest.mark.workflow)
            own: set = set()
            if any(_runs_snakemake(function, own, OWN_RUN) for function in functions
                   if function is not None and getattr(function, "__name__", "") != "smoke_run"):
                item.add_marker(pytest.mark.user_path)   # a Snakemake run of its own: `make test-paths`
    items[:] = scheduled(items)


def scheduled(items: list) -> list:
    """For `--dist worksteal`, which hands the first half to one worker and the second half to the other, and lets an
    idle worker steal the tail of the other's queue: the smoke-run tests first (the first worker builds the run, then
    reads it), the tests with runs of their own next, the short tests last; the second worker starts on tests that
    need no smoke run and can only steal a smoke-run test once the first has built it. Within a group, collection
    order."""
    def smoke(item):
        return "smoke_run" in getattr(item, "fixturenames", ())

    def workflow(item):
        return item.get_closest_marker("workflow") is not None

    smoke_tests = [item for item in items if smoke(item)]
    own_runs = [item for item in items if workflow(item) and not smoke(item)]
    short = [item for item in items if not workflow(item) and not smoke(item)]
    return smoke_tests + own_runs + short


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
    yield
    # runtime.configure flushes denormals for the whole process; a later test in the same worker (Hypothesis's
    # float strategies refuse to run without subnormals) must not inherit it
    torch.set_flush_denormal(False)


@pytest.fixture
def tiny_gpt2():
    from subtask_induction.arithmetic.model import build_gpt2

    def make(seed=0, layers=1, n_numbers=20):
        return build_gpt2(n_numbers, layers, {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}, seed)

    return make


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, worker_id):
    """tests/smoke_config.yaml (every family, two vision chains) run once through the Snakemake CLI in a
    temporary copy of the workflow. Read it freely; to change anything, work on harness.clone_run(...).

    Once for the whole session, also under pytest-xdist (`make test` runs `-n auto`): the first worker that needs
    it runs it under a file lock in the folder the workers share, the others wait and read the same run."""
    from filelock import FileLock
    from harness import run_workflow

    if worker_id == "master":  # a run without xdist
        return run_workflow(tmp_path_factory.mktemp("smoke"))
    shared = tmp_path_factory.getbasetemp().parent
    run, finished = shared / "smoke", shared / "smoke.finished"
    with FileLock(str(shared / "smoke.lock")):
        if not finished.exists():
            if run.exists():  # a worker that failed half-way: start again, do not read a broken run
                shutil.rmtree(run)
            run_workflow(run)
            finished.touch()
    return run
