# The two fresh-machine commands are `make run` and `make test` (see README).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-16)

.PHONY: run test check install lint typecheck fast-test sdks sdk-matrix bench bench-quick bench-check screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

## Install, migrate and start the server on http://127.0.0.1:8000 (SQLite under ./data).
run: install
	$(BIN)/tracebox migrate
	$(BIN)/tracebox serve

## Install everything the tests need (PostgreSQL, SDKs), then run every test.
test: install
	scripts/test.sh

## ruff + mypy --strict + the layering (import-linter) + the fast tests (no live servers, no SDK toolchains).
check: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -q -m "not slow and not postgres" -n 2

## Run every real SDK against a live server and write docs/sdk-compatibility.md from it.
sdk-matrix: install
	scripts/install-sdks.sh
	rm -f .cache/sdk-matrix-results.json
	TRACEBOX_SDK_RESULTS=.cache/sdk-matrix-results.json $(BIN)/pytest -q -p no:cacheprovider \
	  tests/sdk/test_sdk_matrix.py; status=$$?; \
	$(BIN)/python -m tests.sdk.render_matrix .cache/sdk-matrix-results.json \
	  docs/sdk-compatibility.md && exit $$status

bench: install
	$(BIN)/python bench/ingest_bench.py

## About a minute: events/s and CPU per event of the ingest benchmark (SQLite, 15,000 events).
bench-quick: install
	$(BIN)/python bench/ingest_bench.py --warmup 500 --events 15000 --rate 0 --max-seconds 60

## Fails when the server's CPU per event grew >15% against the build bench/cpu_baseline.json was
## recorded on, the two run in turns here (~3 min; not in make test: see bench/README.md).
bench-check: install
	$(BIN)/python bench/check_regression.py

## PNGs of the list, details, settings and releases pages into docs/screenshots/ (Debian's chromium).
screenshots: install
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(BIN)/python -m tests.browser.screenshots --out docs/screenshots

clean:
	rm -rf $(VENV) .cache data .pytest_cache .mypy_cache .ruff_cache
