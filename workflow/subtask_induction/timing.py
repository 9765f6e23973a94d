"""Where a job's time goes, said by the job itself: one `[job time]` line at the end of its log.

    [job time] wall 52.31 s; start-up 4.90 s (to the first training step); evaluation 8.21 s; CPU 51.88 s on 1 thread

- start-up: from the process's start (the kernel's clock, not an import timed apart) to its first training step
  (`fit`), or for a step that trains nothing to the start of its main: imports, reading inputs, building models;
- evaluation: the seconds spent scoring models, per epoch (`fit`) and after training (`evaluating()`);
- CPU: the process's own user + system seconds (getrusage). Snakemake's benchmark records sample a job's CPU
  time every 0.5 s for its first 15 s, then every 30 s, and keep the last sample: a job that ends between two
  samples loses up to 30 CPU-seconds there, so a 100 s job at full CPU reads as 75% (docs/decisions.md).

benchmarks/time_to_figure.py reads these lines. Nothing here changes a number: it only reads clocks.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time

from . import run_lock
from .rounding import fixed

LINE = "[job time]"


def process_start() -> float:
    """When this process started (seconds since the epoch), from the kernel's record of it."""
    try:
        import psutil  # Snakemake's own dependency: in every environment that runs the workflow

        return psutil.Process(os.getpid()).create_time()
    except Exception:  # noqa: BLE001 (no psutil: count from this module's import, later than the true start)
        return _IMPORTED


_IMPORTED = time.time()


class JobClock:
    """The clocks of one job's process: where start-up ended, and the seconds spent evaluating."""

    def __init__(self):
        self.started = process_start()
        self.start_up: float | None = None
        self.start_up_until = ""
        self.evaluation = 0.0

    def mark_start_up(self, until: str) -> None:
        """Start-up ends at the first of its marks that counts: the first training step overrides the start of
        main (a training step's start-up includes reading its inputs and building its models)."""
        if self.start_up is None or (until == "first training step" and self.start_up_until != until):
            self.start_up, self.start_up_until = time.time() - self.started, until

    def line(self) -> str:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime
        start_up = (f"start-up {fixed(self.start_up, 2)} s (to the {self.start_up_until})" if self.start_up is not None
                    else "start-up unmarked")
        return (f"{LINE} wall {fixed(time.time() - self.started, 2)} s; {start_up}; evaluation {fixed(self.evaluation, 2)} s; "
                f"CPU {fixed(cpu, 2)} s on {_threads()} thread(s)")


def _threads() -> int:
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else 1


CLOCK = JobClock()


def first_training_step() -> None:
    CLOCK.mark_start_up("first training step")


@contextlib.contextmanager
def evaluating():
    """Count the block's seconds as evaluation."""
    began = time.perf_counter()
    try:
        yield
    finally:
        CLOCK.evaluation += time.perf_counter() - began


def run_step(main) -> None:
    """A step's entry point (`python -m subtask_induction.steps.X`): its imports are done, so start-up ends here
    unless it trains; the `[job time]` line is printed when it ends, also when it fails."""
    CLOCK.mark_start_up("start of main")
    # the run folder's lock, shared, for the job's whole life: a make target never takes a live job's run for dead,
    # even where its Snakemake was killed (run_lock.py; nothing outside a run folder)
    run_lock.hold_shared(job=True)
    try:
        main()
    finally:
        print(CLOCK.line(), flush=True)
