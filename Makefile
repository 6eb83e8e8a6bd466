# Two commands for a fresh machine (Python 3.11 present):
#   make run   - set up .venv, build the database and engine from the bundled corpus
#   make test  - set up .venv with the test tools and run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test test-fast test-slow setup setup-test bench clean card-ruling-candidates

$(BIN)/rulings: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

setup: $(BIN)/rulings

$(VENV)/.test-deps: $(BIN)/rulings
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

setup-test: $(VENV)/.test-deps

run: setup
	$(BIN)/rulings build

# Tests: tests/stages/<stage>/ (one stage each, no build of the bundled
# corpus) and tests/e2e/ (builds, refreshes, the commands end to end).
# One test process per core; a test file's tests stay in one process, so a
# module's fixture (a build) is made once. The bundled corpus is built once
# per run and shared by the processes (tests/conftest.py).
test: setup-test
	$(BIN)/python -m pytest -q -m "not slow" -n auto --dist loadfile

# The stage tests alone (tests/stages, the extract passes' fixture files among them), in one process:
# no bundled build, no subprocess; the whole-codebase architecture checks are in tests/e2e.
test-fast: setup-test
	$(BIN)/python -m pytest -q -m "not slow" tests/stages

# The slow tests (the benchmark, the wheel, killed builds, the data-safety suites), one process per core;
# CI runs them after `make test`.
test-slow: setup-test
	$(BIN)/python -m pytest -q -m slow -n auto --dist loadfile

bench: setup
	$(BIN)/python -m bench

# Suggestions for corpus/data/card-ruling-names.tsv (checked by hand before a row goes in): the
# unlinked card mentions of a build, most frequent first, with the nearest cards' names.
DB ?= build/rulings.duckdb
card-ruling-candidates: setup
	$(BIN)/python corpus/data/card_ruling_candidates.py --db $(DB) --limit 100

clean:
	rm -rf build engine/ocg_rules.py engine/ocg_rules.json engine/ocg_rules.mjs engine/ocg_rules.d.mts .pytest_cache
