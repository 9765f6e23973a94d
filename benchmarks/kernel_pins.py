"""What pinning the CPU kernels changes (config `cpu_kernels`): a benchmark, not a test.

    PYTHONPATH=workflow python benchmarks/kernel_pins.py [SETTING ...]   (names or prefixes; default: all)

For each setting it starts a fresh Python with the setting's environment (the pins are read once, when
torch loads), and prints the ISA torch dispatches to, the ms per plain training step of a 2-layer GPT-2 at
batch 50 on one thread, and a digest of the weights after 20 AdamW steps from a fixed seed. Equal digests:
the same numbers. The settings: `native` (nothing pinned), each pin alone, and `avx2` (all three, what
`cpu_kernels: avx2` sets); `default` (ATen's scalar code) for contrast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SETTINGS = {
    "native": {},
    "ATEN_CPU_CAPABILITY=avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "MKL_CBWR=AVX2": {"MKL_CBWR": "AVX2"},
    "ONEDNN_MAX_CPU_ISA=AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx2 (all three: cpu_kernels: avx2)": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2",
                                           "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "ATEN_CPU_CAPABILITY=default": {"ATEN_CPU_CAPABILITY": "default"},
    # a candidate `portable` (issue 65, not shipped: docs/decisions.md): MKL's conditional-numerical-reproducibility
    # branch meant to agree across vendors (SSE2 code), with the ATen and oneDNN caps
    "portable (MKL_CBWR=COMPATIBLE + caps)": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE",
                                              "ONEDNN_MAX_CPU_ISA": "AVX2"},
}

PROBE = r"""
import hashlib, json, sys, time
import torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1])
from subtask_induction.arithmetic.model import build_gpt2, lm_loss
model = build_gpt2(1000, 2, {"n_embd": 128, "n_head": 4, "n_inner": 512, "dropout": 0.0}, seed=0)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
generator = torch.Generator().manual_seed(0)
batches = [torch.randint(0, 1000, (50, 4), generator=generator) for _ in range(20)]
for batch in batches:
    optimizer.zero_grad(); lm_loss(model, batch).backward(); optimizer.step()
digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()[:16]
for _ in range(5):
    optimizer.zero_grad(); lm_loss(model, batches[0]).backward(); optimizer.step()
began = time.perf_counter()
for _ in range(100):
    optimizer.zero_grad(); lm_loss(model, batches[0]).backward(); optimizer.step()
step = (time.perf_counter() - began) / 100
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "digest": digest, "ms": 1000 * step}))
"""


def main():
    rows = []
    chosen = sys.argv[1:] or list(SETTINGS)   # names (or unique prefixes) of the settings to run, in order
    for name, variables in ((n, SETTINGS[n]) for c in chosen for n in SETTINGS if n.startswith(c)):
        env = {key: value for key, value in os.environ.items() if key not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR",
                                                                               "ONEDNN_MAX_CPU_ISA")}
        env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **variables})
        out = subprocess.run([sys.executable, "-c", PROBE, str(REPO / "workflow")], env=env, capture_output=True,
                             text=True, check=True).stdout
        rows.append((name, json.loads(out.strip().splitlines()[-1])))
    native = next((row["digest"] for name, row in rows if name == "native"), rows[0][1]["digest"])
    print(f"{'setting':40s} {'ISA':8s} {'ms/step':>8s}  weights after 20 steps")
    for name, row in rows:
        same = "= native" if row["digest"] == native else "differs from native"
        print(f"{name:40s} {row['capability']:8s} {row['ms']:8.2f}  {row['digest']} ({same})")


if __name__ == "__main__":
    main()
