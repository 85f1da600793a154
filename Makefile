# Two commands on a fresh machine (Python 3.11 + pip): `make book` and `make test`.
# Both install exactly requirements.lock.txt (hash-checked) into .venv first.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
LOCK := requirements.lock.txt
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Debian packages: the tools the fixtures and captures use, and Chromium for the browser test.
SYSTEM_PACKAGES := chromium datamash fio sysstat iperf3 iputils-ping
LOCK_EXTRAS := --extra test --extra publish --extra build-backend
LINT_PATHS := src tests tools benchmarks scripts

# The project's own modules (src/, and the copies the end-to-end tests make) are compiled once and
# kept in __pycache__ (git-ignored) even where the environment sets PYTHONDONTWRITEBYTECODE: every
# kernel, papermill and jupyter-book process imports them again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: book test lint lock test-latest check-site publish release clean sysdeps venv bytecode labsetup native

book: venv bytecode native
	$(BIN)/iscsi-report book --jobs $(JOBS)

# Whole files per worker (a module's build fixtures run once), heaviest files first (tests/conftest.py).
# The lab's tools build while the packages' bytecode compiles: both use both cores, and neither needs the other.
test: venv sysdeps
	$(MAKE) --no-print-directory -j 2 labsetup bytecode native
	$(BIN)/pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder

# The same gates as .pre-commit-config.yaml: lint, format, types, import contracts.
lint: venv
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/mypy
	$(BIN)/lint-imports

# A release a reviewer can cite, archive and verify: the book (RUN: one run only), then one
# deterministic archive in dist/ (code, lock, data/raw, site, results, MANIFEST.sha256, CHANGES-numbers.md).
# Check it with: .venv/bin/iscsi-report release verify dist/iscsi-report-$(VERSION).tar.gz
release: venv bytecode native
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x [RUN=name]" >&2; exit 2; }
	$(BIN)/iscsi-report book $(RUN) --jobs $(JOBS)
	$(BIN)/iscsi-report release build --version "$(VERSION)" $(if $(RUN),--run $(RUN))

venv: $(VENV)/.installed

# The ping parser's fast path compiled (scripts/build_pingscan.py; once per source). Without a C
# compiler it says so, and ping logs parse with the numpy scanner: the same results, more slowly.
native: venv
	@$(BIN)/python scripts/build_pingscan.py

# Bytecode for the installed packages (scripts/compile_venv.sh), deferred by the install so that
# `make test` compiles it while the lab's tools build.
bytecode: $(VENV)/.compiled

$(VENV)/.compiled: $(VENV)/.installed scripts/compile_venv.sh
	@scripts/compile_venv.sh $(VENV)

$(VENV)/.installed: $(LOCK) pyproject.toml scripts/install_venv.sh scripts/uv.lock.txt
	DEFER_BYTECODE=1 scripts/install_venv.sh $(VENV) $(LOCK) $(PYTHON)

# Regenerate the lock from pyproject.toml: every platform (universal), Python 3.11, with hashes.
lock:
	$(PYTHON) -m venv .cache/uv-venv && .cache/uv-venv/bin/pip install --quiet --require-hashes -r scripts/uv.lock.txt
	.cache/uv-venv/bin/uv pip compile pyproject.toml $(LOCK_EXTRAS) --universal \
	  --python-version 3.11 --generate-hashes --no-header --quiet -o $(LOCK)

# The test suite against the newest releases pyproject.toml allows (not the lock): drift seen early.
test-latest: sysdeps
	rm -rf .venv-latest
	$(PYTHON) -m venv .venv-latest
	.venv-latest/bin/pip install --quiet --upgrade pip
	.venv-latest/bin/pip install --quiet --upgrade -e ".[test,publish]"
	.venv-latest/bin/pip list --format=freeze > .cache/latest-versions.txt
	.venv-latest/bin/python scripts/build_pingscan.py
	.venv-latest/bin/pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder -p no:cacheprovider

# The browser checks (tests/browser) run against this project's live site instead of a lab copy.
# SITE: the exact folder to check (default: _build/html resolved).
CHECK_SITE = ISCSI_REPORT_SITE_ROOT="$(CURDIR)" $(BIN)/pytest -q -p no:cacheprovider -m browser tests/browser

check-site: venv sysdeps
	ISCSI_REPORT_SITE="$(SITE)" $(CHECK_SITE)

# Push the live site to the gh-pages branch. _build/html is a symlink to the live site's folder:
# it is resolved once, that folder is checked in the browser, and that same folder is pushed.
publish: book sysdeps
	@site="$$(readlink -f _build/html)"; \
	echo "publishing $$site"; \
	ISCSI_REPORT_SITE="$$site" $(CHECK_SITE) && \
	$(BIN)/ghp-import --no-jekyll --push --force --branch gh-pages \
	  --message "Site built by make book from $$(git rev-parse --short HEAD 2>/dev/null || echo 'a non-git tree')" "$$site"

# The iSCSI lab's tools (libiscsi fio, patched tgt; cached in .cache/lab), so `make test` runs the
# live lab smoke test as root. Not root, or a failed setup: the lab tests skip and say why.
labsetup: venv
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  $(BIN)/iscsi-report lab setup >/dev/null || echo "lab setup FAILED (see .cache/lab/setup.log): the live lab tests will skip" >&2; \
	else echo "not root: the live lab tests will skip" >&2; fi

# Installs missing Debian packages when run as root with apt-get; otherwise says what is missing.
sysdeps:
	@missing=""; \
	for pkg in $(SYSTEM_PACKAGES); do \
	  case $$pkg in sysstat) cmd=iostat;; iputils-ping) cmd=ping;; *) cmd=$$pkg;; esac; \
	  command -v $$cmd >/dev/null || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (browser/datamash tests will fail in CI)"; fi; \
	fi

clean:
	rm -rf _build results .cache book/runs .venv-latest
