#!/usr/bin/env bash
# One ABBA sequence (after, before, before, after) of a config overlay on fresh clones, on this host, back to back:
#   bash benchmarks/abba_overlay.sh AFTER_COMMIT BEFORE_COMMIT OVERLAY OUT_FOLDER
# Each run: a fresh clone of the commit in OUT_FOLDER/<i>_<after|before>_<commit>, this checkout's venv linked in (no
# install: the same libraries for both), `snakemake --cores 2` on config/config.yaml + OVERLAY, then
# benchmarks/time_to_figure.py of the after commit on the run (job-minutes, start-up, evaluation). Prints each run's
# job-minutes and the after/before ratio of the sums. Quiet hosts only: nothing else may train meanwhile.
set -euo pipefail
after=$1 before=$2 overlay=$(realpath "$3") out=$4
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
i=0
for kind in after before before after; do
  i=$((i + 1))
  commit=$([ "$kind" = after ] && echo "$after" || echo "$before")
  run="$out/${i}_${kind}_${commit}"
  rm -rf "$run" && git clone -q "$here" "$run" && git -C "$run" checkout -q "$commit"
  ln -s "$here/.venv" "$run/.venv"
  start=$(date +%s)
  (cd "$run" && PATH="$here/.venv/bin:$PATH" .venv/bin/python -m compileall -q workflow \
     && PATH="$here/.venv/bin:$PATH" .venv/bin/snakemake --cores 2 --configfile config/config.yaml "$overlay" \
        > snakemake.out 2>&1)
  wall=$(( $(date +%s) - start ))
  PYTHONPATH="$here/workflow" "$here/.venv/bin/python" "$here/benchmarks/time_to_figure.py" "$run" \
    --snakemake-args "--configfile config/config.yaml $overlay" --wall "$wall" --cores 2 \
    --out "$out/${i}_${kind}_${commit}.md" > /dev/null
  echo "run $i $kind $commit: wall ${wall} s; $(grep -m1 '^| all' "$out/${i}_${kind}_${commit}.md")"
done
