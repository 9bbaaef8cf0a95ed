# ibtune.fabric — every target bootstraps what it needs (idempotently) on Debian 12 as root.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
ROOT := $(CURDIR)
VENV := $(ROOT)/.venv
BIN := $(VENV)/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(ROOT)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(ROOT)/.collections
export ANSIBLE_PIPELINING := True
export ANSIBLE_FORCE_COLOR := False
export PY_COLORS := 0
# The shared corpus of real tool outputs sits beside the checkout (../shared/corpus).
export IBTUNE_CORPUS ?= $(abspath $(ROOT)/../shared/corpus)
# Molecule scenarios run by `make test`, in this order (foundation first, the lab last).
SCENARIOS ?= $(shell $(ROOT)/scripts/list-scenarios.sh)


# pytest arguments for `make unit`, e.g. PYTEST_ARGS='-m "not slow" -k report' (slow = runs ansible-playbook)
PYTEST_ARGS ?=
# parallel unit tests (pytest-xdist); most of their time is spent waiting on real processes
UNIT_WORKERS ?= 4

# The lowest ansible-core meta/runtime.yml claims (requirements/lowest.lock): unit and sanity run on it too.
LOWEST_VENV := $(ROOT)/.venv-lowest
LOWEST_SANITY_VENV := $(LOWEST_VENV)

.PHONY: docs help bootstrap pyenv hostenv lowestenv test lint sanity unit unit-fast unit-lowest sanity-lowest browser promtool molecule build demo bench bench-smoke release clean

help:
	@echo "make demo   - run the main job on the simulated-fabric lab"
	@echo "make test   - every test: lint, sanity, unit, promtool, build, Molecule, bench-smoke (two lanes side by side)"
	@echo "make lint | sanity | unit | unit-fast | unit-lowest | sanity-lowest | promtool | molecule | build | bench | bench-smoke"
	@echo "make release - turn changelogs/fragments into the release in galaxy.yml (CHANGELOG.md)"
	@echo "  make unit PYTEST_ARGS='-k report -x'; make molecule SCENARIOS=lab"

bootstrap:
	@$(ROOT)/scripts/bootstrap.sh all

# the Python side only (venvs, collections path): lint, sanity, build
pyenv:
	@$(ROOT)/scripts/bootstrap.sh python

# pyenv + the Debian packages the unit tests run for real (no dockerd, no images)
hostenv:
	@$(ROOT)/scripts/bootstrap.sh host

# the venvs of the lowest ansible-core the collection claims (unit tests; ansible-test's own sanity tools)
lowestenv: pyenv
	@$(ROOT)/scripts/bootstrap.sh lowest

# Every layer; lanes that share nothing run side by side (scripts/test.sh), each layer's time in build/timings.txt.
test:
	@bash $(ROOT)/scripts/test.sh

lint: pyenv
	yamllint -s .
	ruff check .
	ruff format --check plugins tests bench
	$(BIN)/python scripts/check_argspecs.py
	$(BIN)/python scripts/check_plugin_docs.py
	$(BIN)/python scripts/argspec_docs.py --check
	antsibull-changelog lint
	ansible-lint --offline -q
	@for pb in playbooks/*.yml; do ansible-playbook -i inventories/example --syntax-check $$pb >/dev/null || exit 1; done
	@echo "syntax-check: playbooks/*.yml with inventories/example OK"

docs: pyenv
	$(BIN)/python scripts/argspec_docs.py

sanity: pyenv
	@$(ROOT)/scripts/sanity.sh

sanity-lowest: lowestenv
	@SANITY_VENV=$(LOWEST_SANITY_VENV) $(ROOT)/scripts/sanity.sh

unit: hostenv
	cd $(ROOT) && $(BIN)/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) tests/unit $(PYTEST_ARGS)

unit-lowest: lowestenv hostenv
	cd $(ROOT) && PATH=$(LOWEST_VENV)/bin:$$PATH $(LOWEST_VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) tests/unit $(PYTEST_ARGS)

# the inner loop: every unit test that starts no ansible-playbook
unit-fast: hostenv
	cd $(ROOT) && $(BIN)/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) -m "not slow" tests/unit $(PYTEST_ARGS)

# report.html of a healthy and a faulty run (the real fabric_report code), checked in headless Chromium
browser: hostenv
	$(BIN)/python scripts/browser_reports.py $(ROOT)/build/browser
	$(BIN)/python scripts/browser_check.py $(ROOT)/build/browser/healthy $(ROOT)/build/browser/faulty

promtool: hostenv
	@$(ROOT)/scripts/promtool.sh

molecule: bootstrap
	@for s in $(SCENARIOS); do \
	  echo "=== molecule test -s $$s"; \
	  start=$$(date +%s); \
	  $(ROOT)/scripts/with-lock.sh molecule-$$s molecule test -s $$s || exit 1; \
	  echo "molecule $$s: $$(( $$(date +%s) - start ))s"; \
	done

build: pyenv
	@$(ROOT)/scripts/build-check.sh

demo: bootstrap
	@$(ROOT)/scripts/with-lock.sh molecule-lab $(ROOT)/scripts/demo.sh

# bench_sbatch.sh: one 2048-node pass through a real slurmctld (builds local/ibtune-slurm the first time); not in
# bench-smoke (make test's time budget)
bench: bootstrap
	@for b in bench/bench_*.py; do echo "=== $$b"; $(BIN)/python $$b; done
	@bench/lab_bench.sh
	@bench/tune_ib_bench.sh
	@echo "=== bench/bench_sbatch.sh"; bench/bench_sbatch.sh

# make bench on a small lab (2 nodes, 1 s tests): proves the benches run and print their figures (make test runs it)
bench-smoke: bootstrap
	@$(ROOT)/scripts/bench-smoke.sh

# The release: galaxy.yml's version, changelogs/fragments consumed into changelogs/changelog.yaml and CHANGELOG.md.
release: pyenv
	@$(ROOT)/scripts/release.sh

clean:
	rm -rf build .pytest_cache .ruff_cache .hypothesis
