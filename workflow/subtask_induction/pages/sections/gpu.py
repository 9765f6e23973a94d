"""## On a GPU: the check and the paper grid's GPU-hours."""

from __future__ import annotations

from ..page import embed, provenance_line
from ..run_records import RunRecord


def gpu_section(record: RunRecord) -> list[str]:
    """What the GPU check measured: the CUDA tests' gaps to the CPU and to points alone, then its throughput page
    (with the paper grid's GPU-hours) as the benchmark wrote it."""
    summary = record.text("summary.txt").splitlines()
    outcome = summary[0].removeprefix("gpu_check: ").split("; figures in")[0]
    throughput = []
    for line in embed(record.text("pack_throughput.md"), 3):  # a table opens a block of its own in Markdown
        if line.startswith("|") and throughput and throughput[-1] and not throughput[-1].startswith("|"):
            throughput.append("")
        throughput.append(line)
    measured = [line.removeprefix("[gpu-check] ") for line in summary if line.startswith("[gpu-check] ")]
    return (["## On a GPU: the check and the paper grid's GPU-hours", "", provenance_line(record), "",
             f"{record.provenance['title']}. Outcome: {outcome}; "
             f"{summary[-1].strip()}. What the CUDA tests measured (`tests/test_cuda.py`; each test bounds its gap):", ""]
            + [f"- {line}" for line in measured] + [""] + throughput)
