#!/usr/bin/env bash
# Pipeline benchmarks for BENCHMARKS.md (run from the repository root after `make book` made .venv):
#   1. `make book` from no executed notebooks, no results and no site, with a warm .venv;
#   2. `make book` again with nothing changed (goal: re-executes nothing, under 10 s);
#   3. the whole batch forced with --jobs 1, then with --jobs 2.
set -euo pipefail
t() { local s e; s=$(date +%s%N); "$@" > /tmp/bench-pipeline.log 2>&1; e=$(date +%s%N); printf "%.1f" "$(( (e - s) / 1000000 ))e-3"; }
rm -rf .cache book/runs results _build
echo "make book, clean outputs, warm venv: $(t make book) s"
echo "make book, nothing changed:          $(t make book) s"
echo "runs re-executed on the no-change rebuild: $(grep -c '^queued' /tmp/bench-pipeline.log || true)"
echo "batch --force --jobs 1:              $(t .venv/bin/iscsi-report run --force --jobs 1) s"
echo "batch --force --jobs 2:              $(t .venv/bin/iscsi-report run --force --jobs 2) s"
echo "notebooks in the batch: $(grep -cE ' (ok|cached|FAILED)$' /tmp/bench-pipeline.log)"
