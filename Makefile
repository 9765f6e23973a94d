# Set-up and main entry points. `make reproduce` and `make test` work on a fresh machine.
PYTHON ?= python3.11
# Snakemake's --cores for `make reproduce` and `make beyond`: every core unless given (`make reproduce CORES=2`)
CORES ?= all
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Rules call `python -m subtask_induction.steps...`: the venv's python must come first. The package is not
# installed: the rules put workflow/ on PYTHONPATH (as in a conda env or a cluster's Python), and the tests
# and benchmarks put it on sys.path.
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: reproduce replication decisive confirmatory decisive-cross-domain vision-causes vision-authors beyond beyond-magnitude beyond-blurpool beyond-cross-domain beyond-signs test test-paths test-all test-paper test-slurm dry-run lint benchmark lock config-doc docs results-doc clean

# The hashed lock (envs/requirements-test.txt: the runtime pins of envs/requirements.txt plus the test tools;
# written by `make lock`), the one source of every install; pip checks every file's hash. No download cache:
# torch's CUDA build is about 3 GB of wheels and 6 GB installed; a kept copy of the wheels only raises the
# install's peak disk use (a CI run once stopped here on "[Errno 28] No space left on device").
$(STAMP): envs/requirements.txt envs/requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --no-cache-dir --upgrade pip
	$(BIN)/pip install --quiet --no-cache-dir --require-hashes -r envs/requirements-test.txt
	touch $(STAMP)

# The package's byte code, written once before a run: where PYTHONDONTWRITEBYTECODE is set (as in many CI and
# container images) Python never writes it, and every step process would compile the package again.
BYTECODE = $(BIN)/python -m compileall -q workflow
# Every run of the workflow starts under the run folder's lock (subtask_induction/run_lock.py): the lock a killed run
# left (SIGKILL, a closed terminal) is removed when no process of a run of the folder holds the kernel's flock on
# .snakemake/run.lock, so the same command resumes; a live run's lock stays, and the target stops saying who holds it.
LOCKED = $(BIN)/python workflow/subtask_induction/run_lock.py --

reproduce: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES)

# The default again with chains of disjoint seeds (config/replication.yaml): a second record whose noise is independent
# of the first's, to see whether each verdict survives it. Run it in a folder of its own (a clone): its chains are
# other chains, and the default's tables would mix both.
replication: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --configfile config/config.yaml config/replication.yaml

# The default plus the experiments beyond the paper (config/beyond.yaml and the three questions of
# config/beyond/; what the default finished is reused, only the overlays' own jobs run), then the GroupNorm
# ResNet's vision family in its own folder (config/groupnorm.yaml; the ViT overlay, which answered nothing, is
# left to run by hand). One question alone, on the default: make beyond-magnitude | beyond-blurpool |
# beyond-cross-domain. The signs and mimetic rivals (config/beyond/signs.yaml) run by their own target alone:
# make beyond-signs.
BEYOND_QUESTIONS := magnitude blurpool cross_domain
beyond: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --configfile config/config.yaml config/beyond.yaml $(BEYOND_QUESTIONS:%=config/beyond/%.yaml)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --directory runs/groupnorm --configfile config/config.yaml config/groupnorm.yaml

beyond-magnitude beyond-blurpool beyond-cross-domain beyond-signs: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --configfile config/config.yaml config/beyond/$(subst -,_,$(@:beyond-%=%)).yaml

# The decisive record (config/decisive.yaml; docs/decisions.md, "The decisive record"): the default's headlines and the
# rivals on 24 arithmetic and 12 vision chains of their own, in batches of 8 chains per family (BATCHES=k runs the
# first k; a 2-core host takes a few hours a batch). Run it in a folder of its own (a clone), as the replication.
DECISIVE := config/config.yaml config/beyond/magnitude.yaml config/beyond/blurpool.yaml config/beyond/signs.yaml config/decisive.yaml
BATCHES ?=
decisive: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --configfile $(DECISIVE) $(if $(BATCHES),--config decisive_batches=$(BATCHES))

# Its cross-domain ViT (config/decisive_cross_domain.yaml: the decisive vision chains, 16-27), a record of its own in a
# folder of its own (runs/decisive_cross_domain: those chains' arithmetic bases and subnetworks again, and the ViTs).
decisive-cross-domain: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --directory runs/decisive_cross_domain --configfile config/config.yaml config/beyond/cross_domain.yaml config/decisive_cross_domain.yaml

# Why SI loses its subnetwork's shape (issue 82): the three causes' SI variants (config/causes/*.yaml, each one cause)
# on the decisive record's vision chains, beside SI, finetune and mixture, in a folder of its own (the record
# vision_causes; docs/decisions.md, "Why SI loses the shape").
CAUSES := config/config.yaml config/causes/batchnorm_kept.yaml config/causes/unit_scales.yaml config/causes/paper_size.yaml config/vision_causes.yaml
vision-causes: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --directory runs/vision_causes --configfile $(CAUSES)

# SI as the authors' code ran it (issue 88): `si_authors` (config/si_authors.yaml) beside every Table 1 arm on the
# decisive record's vision chains, in a folder of its own (the record vision_authors; docs/decisions.md, "SI as the
# authors' code ran it").
AUTHORS := config/config.yaml config/si_authors.yaml config/vision_authors.yaml
vision-authors: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --directory runs/vision_authors --configfile $(AUTHORS)

# The confirmatory record (issue 93; its plan: docs/decisions.md, "The confirmatory record: the plan", committed before
# its first job): the README's headline claims on chains no record has used, in a folder of its own; resumes.
CONFIRMATORY := config/config.yaml config/si_authors.yaml config/confirmatory.yaml
confirmatory: $(STAMP)
	$(BYTECODE)
	$(LOCKED) $(BIN)/snakemake --cores $(CORES) --directory runs/confirmatory --configfile $(CONFIRMATORY)

# The lints first (seconds): a rule file that drifts from Snakemake's conventions or from snakefmt's format
# fails the tests, hence CI. One pytest worker per core (pytest-xdist): most tests are one process on one thread;
# work-stealing, in the order tests/conftest.py gives (the smoke run built while the other worker runs the rest).
# The slowest tests are named at the end of every run: where the 10-minute budget goes.
# `make test`: the code checks, every unit test and the smoke workflow end to end (every family through the
# Snakemake CLI), within 10 minutes on 2 cores. `make test-paths`: the users' paths that each start a Snakemake
# run of their own (a config change and rerun, a grown sweep, a folder of one's own, kill and resume, ...), about
# as long again. `make test-all` runs both, as CI does (.ci/run). Run `make test` while changing code; `make
# test-all` before a change lands, or after touching the Snakefile, the rules or the steps.
PYTEST_MARKS := not paper_slice and not slow
test: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BYTECODE)
	$(BIN)/pytest -q -n auto --dist worksteal --durations=15 -m "$(PYTEST_MARKS) and not user_path"

test-paths: $(STAMP)
	$(BYTECODE)
	$(BIN)/pytest -q -n auto --dist worksteal --durations=15 -m "$(PYTEST_MARKS) and user_path"

test-all: test test-paths

# config/paper.yaml on generated user data (ImageNet-shaped tree, timm file, stimuli, tiny SAM, a folder task):
# the vision and submasking paper paths (arithmetic's reads no user data: `make dry-run`), bad data caught first;
# minutes, so not part of `make test`.
test-paper: $(STAMP)
	$(BIN)/pytest -q -m paper_slice

# The arithmetic smoke DAG through profiles/slurm on a one-node SLURM it installs and starts
# (tests/local_slurm.sh; root, Debian; minutes; README), then stops and uninstalls.
test-slurm: $(STAMP)
	$(BIN)/python tests/slurm_smoke.py

dry-run: $(STAMP)
	$(BIN)/snakemake -n --configfile config/paper.yaml --quiet rules

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow/rules

benchmark: $(STAMP)
	$(BIN)/python benchmarks/step_costs.py
	$(BIN)/python benchmarks/pack_throughput.py
	$(BIN)/python benchmarks/pack_checkpoint.py

# After changing pyproject.toml's dependencies: re-resolve the lock with uv, for every platform (markers) and
# with every wheel's hash; pins already in the files are kept unless `make lock UPGRADE=--upgrade`.
UV_COMPILE = $(BIN)/uv pip compile pyproject.toml --universal --generate-hashes --python-version 3.11 --quiet $(UPGRADE)
lock: $(STAMP)
	$(BIN)/pip install --quiet uv==0.13.9
	$(UV_COMPILE) -o envs/requirements.txt
	$(UV_COMPILE) --extra test -o envs/requirements-test.txt
	$(BIN)/python envs/conda_env.py

# After storing a run record (docs/data/) or changing a config file: render docs/results.md, its figures and the
# README's generated blocks (a test renders them again and compares).
docs: $(STAMP)
	PYTHONPATH=workflow $(BIN)/python -m subtask_induction.pages
results-doc: docs

# After changing the config schema or a config file: regenerate config/README.md (a test checks it).
config-doc: $(STAMP)
	PYTHONPATH=workflow $(BIN)/python -m subtask_induction.config_doc > config/README.md

clean:
	rm -rf results logs .snakemake
