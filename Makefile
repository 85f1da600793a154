# Two commands on a fresh machine (Python 3.11 + pip): `make book` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Debian packages: the tools the fixtures were captured with, and Chromium for the browser test.
SYSTEM_PACKAGES := chromium datamash

.PHONY: book test lint check-site publish clean sysdeps

book: $(VENV)/.book-installed
	$(BIN)/iscsi-report book --jobs $(JOBS)

test: $(VENV)/.test-installed sysdeps
	$(BIN)/ruff check src tests
	$(BIN)/pytest -n $(JOBS) --dist loadgroup

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

# The browser checks (tests/browser) run against this project's live site instead of a lab copy.
# SITE: the exact folder to check (default: _build/html resolved).
CHECK_SITE = ISCSI_REPORT_SITE_ROOT="$(CURDIR)" $(BIN)/pytest -q -p no:cacheprovider -m browser tests/browser

check-site: $(VENV)/.test-installed sysdeps
	ISCSI_REPORT_SITE="$(SITE)" $(CHECK_SITE)

# Push the live site to the gh-pages branch. _build/html is a symlink to the live site's folder:
# it is resolved once, that folder is checked in the browser, and that same folder is pushed.
publish: book $(VENV)/.test-installed $(VENV)/.publish-installed sysdeps
	@site="$$(readlink -f _build/html)"; \
	echo "publishing $$site"; \
	ISCSI_REPORT_SITE="$$site" $(CHECK_SITE) && \
	$(BIN)/ghp-import --no-jekyll --push --force --branch gh-pages \
	  --message "Site built by make book from $$(git rev-parse --short HEAD 2>/dev/null || echo 'a non-git tree')" "$$site"

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.book-installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[book]"
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.book-installed

$(VENV)/.publish-installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[publish]"
	touch $@

# Installs missing Debian packages when run as root with apt-get; otherwise says what is missing.
sysdeps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v datamash >/dev/null || missing="$$missing datamash"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (browser/datamash tests will fail in CI)"; fi; \
	fi

clean:
	rm -rf _build results .cache book/runs
