#!/usr/bin/env bash
# Mutation testing of the verdict rule (issue 70): mutmut over workflow/subtask_induction/claims.py with the rule's
# tests, on a copy of the tree with the package under src/ (mutmut 3 maps modules from ./ or src/). Prints mutmut's
# counts and the surviving mutants; each survivor is killed by a test or explained in docs/decisions.md.
#   bash benchmarks/mutate_claims.sh [WORKDIR] [MUTANT-GLOB ...]   (the venv of `make test`; an hour or more on 2
#   cores for the whole file: the globs, e.g. '*x_judge_means*', run the mutants of those functions only; mutmut
#   resumes in the same WORKDIR)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
shift || true
mkdir -p "$work/src" "$work/tests"
cp -r "$repo/workflow/subtask_induction" "$work/src/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
# the rule's tests, and what they read: the tests' helpers and the stored records (test_evidence_as_data.py)
for test in conftest.py test_verdict_rule.py test_verdict_lines.py test_evidence.py test_evidence_as_data.py test_claims_mutants.py \
    test_claims_batch.py independent_rule.py test_floors_and_claims.py test_precedence.py test_equivalence.py test_decisive.py harness.py record.py legacy_record.py; do
  cp "$repo/tests/$test" "$work/tests/"
done
cp -r "$repo/docs" "$repo/config" "$work/"   # the records, the pages the precedence test renders, the configs
mkdir -p "$work/workflow" && cp -r "$repo/workflow/schemas" "$work/workflow/"   # the config schema the plans are read with
cat > "$work/pyproject.toml" <<'TOML'
[tool.mutmut]
source_paths = ["src/"]
only_mutate = ["src/subtask_induction/claims.py"]
also_copy = ["docs/", "config/", "workflow/schemas/"]
# the smoke run's tests build a whole workflow, and the store's tests copy the tree: neither is the rule's
pytest_add_cli_args_test_selection = ["tests/", "-m", "not workflow and not slow and not paper_slice",
                                      "-k", "not stored_record and not store_refuses and not earlier_config and not same_tables_as"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "--hypothesis-seed=0"]   # the same examples for every mutant

[tool.pytest.ini_options]
testpaths = ["tests"]
markers = ["slow: a full sweep", "paper_slice: the paper configuration"]
TOML
cd "$work"
PYTHONPATH="$work/src" "$repo/.venv/bin/mutmut" run --max-children "${MUTMUT_CHILDREN:-2}" "$@" || true
"$repo/.venv/bin/mutmut" results --all true > "$work/results.txt" 2>&1 || "$repo/.venv/bin/mutmut" results > "$work/results.txt" 2>&1 || true
echo "workdir: $work"
echo "mutants: $(grep -c ': ' "$work/results.txt"), killed: $(grep -c ': killed' "$work/results.txt"), survived: $(grep -c ': survived' "$work/results.txt")"
grep -v ": killed" "$work/results.txt" || true
# every survivor must be explained in benchmarks/mutate_claims_equivalent.md
unexplained=$(grep ": survived" "$work/results.txt" | sed 's/.*claims\.\(x[^:]*\):.*/\1/' | while read -r name; do
  grep -q -- "- $name:" "$repo/benchmarks/mutate_claims_equivalent.md" || echo "$name"; done)
echo "unexplained survivors: ${unexplained:-none}"
