# Two commands matter: `make run` and `make test`. Everything else supports them.
PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PYTEST_ARGS ?=
# The suite runs in worker processes (pytest-xdist); docs/testing.md has the measurements
# behind these two and what keeps the workers' tests independent. TEST_WORKERS=0: in-process.
TEST_WORKERS ?= 4
TEST_DIST    ?= worksteal
XDIST        := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist $(TEST_DIST))

.PHONY: run test test-quick bench bench-deps lint install test-deps clean-var

$(BIN)/python:
	@command -v $(PY) >/dev/null 2>&1 || { echo "python3.11 is required"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python requirements.lock pyproject.toml
	$(BIN)/pip install --quiet -r requirements.lock
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/python -m hisadmin.launcher

# System packages (chromium's headless build for browser tests) and npm packages (the
# Cosmos-protocol server, axe-core for the accessibility test).
test-deps: install
	@command -v chromium-headless-shell >/dev/null 2>&1 || { \
	  echo "installing chromium-headless-shell (Debian) for browser tests"; \
	  apt-get update -qq >/dev/null; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null \
	  || command -v chromium >/dev/null 2>&1 || { \
	    echo "no chromium-headless-shell package: the whole chromium instead (slower)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; }
	@if [ -f tests/cosmos_wire/package.json ] && [ ! -d tests/cosmos_wire/node_modules ]; then \
	  (cd tests/cosmos_wire && npm ci --silent --no-audit --no-fund); fi
	@if [ -f tests/a11y/package.json ] && [ ! -d tests/a11y/node_modules ]; then \
	  (cd tests/a11y && npm ci --silent --no-audit --no-fund); fi

# The architecture contracts first: a broken one fails the run before any test starts.
# The 25 slowest tests are listed at the end, so that they stay in view.
test: test-deps
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/python -m pytest -m "not slow" $(XDIST) --durations=25 $(PYTEST_ARGS)

# The inner loop: unit and service tests (domain rules, use cases, the embedded store), no
# browser, no stack, no other process to wait for. `make test` stays the whole suite.
test-quick: install
	$(BIN)/python -m pytest -m "(unit or service) and not browser and not integration and not slow and not fuzz" \
	  $(XDIST) --durations=10 $(PYTEST_ARGS)

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(BIN)/pip install --quiet -r requirements-bench.txt
	touch $(BENCH_STAMP)

# PostgreSQL (Debian) for the relational baseline, and the plotting/driver packages.
bench-deps: $(BENCH_STAMP)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing postgresql (Debian) for the relational baseline"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null; }

# The report (docs/BENCHMARKS.md) comes from the last step: 1,000 and 100,000 patients, three
# rounds of sustained phases and the ward-shift mix per size; about 70 minutes on 2 cores.
# With COSMOS_ENDPOINT and COSMOS_KEY set it also measures request charges on that account.
bench: bench-deps
	$(BIN)/python -m bench.store_bench
	$(BIN)/python -m bench.worklists_bench --quick
	$(BIN)/python -m bench.compare --sizes 1000,100000 $(if $(COSMOS_ENDPOINT),--cosmos,)

# --no-cache: the graph takes a second to build, and no cache directory is left behind.
lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache --no-logo

clean-var:
	rm -rf var
