"""What decides which numbers a CPU computes, beyond the code: the kernel pins (config `cpu_kernels`) and the
libraries whose versions change results. One home for the rule command that sets the pins, the fingerprint that
covers them (runtime.code_hash) and the provenance that names them (records.provenance). Torch-free: the rule
files read it while the DAG is built."""

from __future__ import annotations

# cpu_kernels: avx2 pins the kernels torch dispatches to on x86-64 (ATen's vectorised code, MKL's GEMM code path,
# oneDNN's ISA) to AVX2, so AVX2 and AVX-512 machines compute the same numbers; native lets each CPU use its best.
# Each is read once when torch loads, so the rule's command line sets them, never Python after `import torch`.
KERNEL_PINS = {"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
               "native": {}}
PIN_VARIABLES = tuple(KERNEL_PINS["avx2"])
# Thread counts split reductions differently; the rule command sets them from the rule's `threads:`.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Libraries whose version changes a step's numbers (a fingerprint covers them; a record names them).
NUMERIC_LIBRARIES = ("torch", "transformers", "timm", "numpy", "scikit-learn", "segment-anything")


def pin_prefix(cpu_kernels: str) -> str:
    """The shell assignments of a `cpu_kernels` setting, to go before `python` on a rule's command line."""
    return "".join(f"{name}={value} " for name, value in KERNEL_PINS[cpu_kernels].items())
