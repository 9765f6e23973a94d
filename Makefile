# Set-up and main entry points. `make reproduce` and `make test` work on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Rules call `python -m subtask_induction.steps...`: the venv's python must come first.
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: reproduce test test-slurm dry-run lint benchmark clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

reproduce: $(STAMP)
	$(BIN)/snakemake --cores all

test: $(STAMP)
	$(BIN)/pytest -q

# The arithmetic smoke DAG through profiles/slurm on a one-node SLURM it starts (root; minutes; README).
test-slurm: $(STAMP)
	$(BIN)/python tests/slurm_smoke.py

dry-run: $(STAMP)
	$(BIN)/snakemake -n --configfile config/paper.yaml --quiet rules

lint: $(STAMP)
	$(BIN)/snakemake --lint

benchmark: $(STAMP)
	$(BIN)/python benchmarks/step_costs.py
	$(BIN)/python benchmarks/pack_throughput.py

clean:
	rm -rf results logs .snakemake
