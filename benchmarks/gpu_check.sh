#!/usr/bin/env bash
# The GPU check (issue 47, item 5): on the first machine with a CUDA device, from the repository root,
#
#     bash benchmarks/gpu_check.sh            # about 4 minutes on one H100 (estimated); at most 8 (time caps)
#     bash benchmarks/gpu_check.sh --quick    # packs of 1, 8, 32 and K = 4 only: about 2 minutes
#
# 1. refuses (exit 2, one line on stderr) unless `python -c "import torch; assert torch.cuda.is_available()"`
#    holds, or when a package below is missing (exit 2, naming it);
# 2. prints the GPU (nvidia-smi) and the torch / CUDA / cuDNN versions;
# 3. runs `pytest -q -m cuda tests/test_cuda.py` (capped at 200 s): pack against points alone, resume, device
#    auto, a vision and a submasking step, on the GPU; each test prints what it measured ("[gpu-check] ...");
# 4. runs `benchmarks/pack_throughput.py --device cuda` with packs of 1, 8, 32, 128 and 256 points (capped at
#    230 s): ms per step, points per hour against one process per point and K processes sharing the GPU, and
#    the paper grid's estimated GPU-hours.
# Writes env.txt, pytest_cuda.log, pack_throughput.md, pack_estimate.csv and summary.txt to $OUT when set (a folder), else to
# ./gpu_check_out/. Exit 0 when the tests and the benchmark ran through, 1 when either failed, 2 when refused.
#
# Python: ${PYTHON:-python}, the machine's own, with PYTHONPATH=workflow (nothing is installed from the
# repository). No internet: Hugging Face is set offline; nothing downloads weights.
# Packages: torch with CUDA (and torchvision) must be there; besides them numpy, pyyaml, pillow, tqdm, pandas,
# scipy, scikit-learn, transformers, timm and pytest (benchmarks/gpu_check_requirements.txt, pinned as
# envs/requirements*.txt). Missing ones can be carried as wheels in a folder: WHEELS=folder installs those
# that fail to import with `pip install --no-index --find-links "$WHEELS" -r <the missing lines>`. The
# pure-Python ones (transformers, timm, pytest, tqdm and their pure dependencies) are small; scipy, pandas and
# scikit-learn wheels are tens of MB each.
set -euo pipefail

PY="${PYTHON:-python}"
QUICK=0
for argument in "$@"; do
    case "$argument" in
        --quick) QUICK=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_check: unknown argument '$argument' (use --quick or --help)" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PYTHONPATH="$REPO/workflow${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1  # no internet: never wait on it

# 1. refuse without a CUDA device (one line: what is wrong)
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "gpu_check: refused: no Python at '$PY' (set PYTHON=/path/to/python)" >&2
    exit 2
fi
# The reason goes to stdout and the exit status says whether there is one (torch's own warnings on stderr do not).
if ! problem="$("$PY" - 2>/dev/null <<'EOF'
import sys
try:
    import torch
except Exception as error:  # one line saying why, not a traceback
    print(f"torch cannot be imported by {sys.executable} ({type(error).__name__}: {error})")
    sys.exit(1)
if not torch.cuda.is_available():
    print(f"no CUDA device: torch {torch.__version__} (CUDA build {torch.version.cuda}) says "
          "torch.cuda.is_available() is False")
    sys.exit(1)
EOF
)"; then
    echo "gpu_check: refused: ${problem:-$PY could not run the torch check}" >&2
    exit 2
fi

OUTDIR="${OUT:-$REPO/gpu_check_out}"
mkdir -p "$OUTDIR"
started=$SECONDS

missing_requirements() {  # the lines of the list whose module does not import (one Python for them all)
    "$PY" - benchmarks/gpu_check_requirements.txt 2>/dev/null <<'EOF'
import importlib, sys
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        requirement, module = (part.strip() for part in line.split("#", 1))
        try:
            importlib.import_module(module)
        except Exception:  # not installed, or built for another torch / numpy: either way, carry it
            print(f"{requirement}  # {module}")
EOF
}
missing="$(missing_requirements || true)"
if [ -n "$missing" ] && [ -n "${WHEELS:-}" ]; then
    printf '%s\n' "$missing" > "$OUTDIR/missing_requirements.txt"
    echo "installing from $WHEELS (offline): $(printf '%s\n' "$missing" | sed 's/ .*//' | paste -sd ' ')"
    "$PY" -m pip install --no-index --find-links "$WHEELS" -r "$OUTDIR/missing_requirements.txt" \
        || echo "gpu_check: pip could not install them all from $WHEELS" >&2
    missing="$(missing_requirements || true)"
fi
if [ -n "$missing" ]; then
    echo "gpu_check: refused: missing Python packages: $(printf '%s\n' "$missing" | sed 's/ .*//' | paste -sd ' ')" \
         "(carry their wheels in a folder and rerun with WHEELS=folder)" >&2
    exit 2
fi

# 2. the machine
{
    echo "# GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git') $(git status --porcelain 2>/dev/null | grep -q . && echo '(uncommitted changes)')"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used,utilization.gpu,compute_mode \
            --format=csv || nvidia-smi || true
    else
        echo "nvidia-smi: not on PATH"
    fi
    "$PY" - <<'EOF' || echo "(the versions could not be read)"
import platform, sys
import torch, transformers, timm
props = torch.cuda.get_device_properties(0)
print(f"python {platform.python_version()} ({sys.executable}); torch {torch.__version__}, CUDA build {torch.version.cuda}, "
      f"cuDNN {torch.backends.cudnn.version()}; transformers {transformers.__version__}; timm {timm.__version__}")
print(f"device 0: {props.name}, compute capability {props.major}.{props.minor}, {props.total_memory / 2**30:.1f} GiB, "
      f"{torch.cuda.device_count()} device(s) visible")
print(f"TF32: cuDNN convolutions {torch.backends.cudnn.allow_tf32}, matmul {torch.backends.cuda.matmul.allow_tf32} "
      "(the workflow leaves torch's defaults)")
EOF
} 2>&1 | tee "$OUTDIR/env.txt"

# 3. the CUDA tests (deterministic cuBLAS for the resume tests: set before cuBLAS starts)
tests_rc=0
CUBLAS_WORKSPACE_CONFIG=:4096:8 timeout -k 10 200 "$PY" -m pytest -q -m cuda tests/test_cuda.py -s -rs \
    -p no:cacheprovider 2>&1 | tee "$OUTDIR/pytest_cuda.log" || tests_rc=$?

# 4. throughput and the paper grid's GPU-hours
if [ "$QUICK" = 1 ]; then
    bench=(--sizes 1 8 32 --concurrent 4 --steps 10)
else
    bench=(--sizes 1 8 32 128 256 --concurrent 4 8 16)
fi
bench_rc=0
timeout -k 10 230 "$PY" benchmarks/pack_throughput.py --device cuda "${bench[@]}" \
    --estimate-csv "$OUTDIR/pack_estimate.csv" 2>&1 \
    | tee "$OUTDIR/pack_throughput.md" || bench_rc=$?

status() { case "$1" in 0) echo "ok" ;; 124|137) echo "stopped at its time cap (exit $1)" ;; *) echo "failed (exit $1)" ;; esac; }
{
    echo "gpu_check: tests $(status $tests_rc); pack_throughput $(status $bench_rc); $((SECONDS - started)) s; figures in $OUTDIR"
    grep -o '\[gpu-check\].*' "$OUTDIR/pytest_cuda.log" || true
    tail -n 1 "$OUTDIR/pytest_cuda.log"
} | tee "$OUTDIR/summary.txt"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
