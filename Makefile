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

.PHONY: docs help bootstrap pyenv hostenv test lint sanity unit unit-fast browser promtool molecule build demo bench clean

help:
	@echo "make demo   - run the main job on the simulated-fabric lab"
	@echo "make test   - every test: lint, sanity, unit, promtool, molecule, build"
	@echo "make lint | sanity | unit | unit-fast | promtool | molecule | build | bench"
	@echo "  make unit PYTEST_ARGS='-k report -x'; make molecule SCENARIOS=lab"

bootstrap:
	@$(ROOT)/scripts/bootstrap.sh all

# the Python side only (venvs, collections path): lint, sanity, build
pyenv:
	@$(ROOT)/scripts/bootstrap.sh python

# pyenv + the Debian packages the unit tests run for real (no dockerd, no images)
hostenv:
	@$(ROOT)/scripts/bootstrap.sh host

test: bootstrap
	@$(ROOT)/scripts/timed.sh lint $(MAKE) --no-print-directory lint
	@$(ROOT)/scripts/timed.sh sanity $(MAKE) --no-print-directory sanity
	@$(ROOT)/scripts/timed.sh unit $(MAKE) --no-print-directory unit
	@$(ROOT)/scripts/timed.sh browser $(MAKE) --no-print-directory browser
	@$(ROOT)/scripts/timed.sh promtool $(MAKE) --no-print-directory promtool
	@$(ROOT)/scripts/timed.sh build $(MAKE) --no-print-directory build
	@$(ROOT)/scripts/timed.sh molecule $(MAKE) --no-print-directory molecule
	@cat $(ROOT)/build/timings.txt

lint: pyenv
	yamllint -s .
	ruff check .
	ruff format --check plugins tests bench
	$(BIN)/python scripts/check_argspecs.py
	$(BIN)/python scripts/argspec_docs.py --check
	antsibull-changelog lint
	ansible-lint --offline -q
	@for pb in playbooks/*.yml; do ansible-playbook -i inventories/example --syntax-check $$pb >/dev/null || exit 1; done
	@echo "syntax-check: playbooks/*.yml with inventories/example OK"

docs: pyenv
	$(BIN)/python scripts/argspec_docs.py

sanity: pyenv
	@$(ROOT)/scripts/sanity.sh

unit: hostenv
	cd $(ROOT) && $(BIN)/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) tests/unit $(PYTEST_ARGS)

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
	  echo "molecule $$s: $$(( $$(date +%s) - start ))s" >> $(ROOT)/build/timings.txt; \
	done

build: pyenv
	@$(ROOT)/scripts/build-check.sh

demo: bootstrap
	@$(ROOT)/scripts/with-lock.sh molecule-lab $(ROOT)/scripts/demo.sh

bench: bootstrap
	@for b in bench/bench_*.py; do echo "=== $$b"; $(BIN)/python $$b; done
	@bench/lab_bench.sh
	@bench/tune_ib_bench.sh

clean:
	rm -rf build .pytest_cache .ruff_cache .hypothesis
