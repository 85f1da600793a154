#!/usr/bin/env bash
# CPU and wall of the e2e files that run notebooks through `iscsi-report` subprocesses, for one checkout.
# Issue 28: before (main) and after (one fork server named for the whole test run); run alternately.
#   benchmarks/e2e_named_zygote.sh CHECKOUT LABEL OUTDIR
# Each run gets a fresh parse cache and basetemp, so neither side reuses the other's parses.
# Prints one line: label, wall s, user s, sys s, load average before, the machine's CPU seconds at
# nice 0 (user: not this run, which runs at nice 10) and idle meanwhile (/proc/stat), pytest's last line.
set -euo pipefail
checkout=$(cd "$1" && pwd)
label=$2
out=$3
mkdir -p "$out"
venv=/work/main/.venv/bin
files=(tests/e2e/test_pipeline.py tests/e2e/test_run_selection.py tests/e2e/test_safety.py
  tests/e2e/test_provenance.py tests/e2e/test_partial_runs.py tests/e2e/test_fleet_staleness.py
  tests/e2e/test_own_capture.py)
stamp=$(date -u +%H%M%S)
work=$(mktemp -d "/tmp/e2e-zyg-$label-XXXX")
load=$(cut -d' ' -f1 /proc/loadavg)
cpu() { awk '/^cpu / {print $2, $3, $5}' /proc/stat; }  # user, nice, idle (USER_HZ ticks)
read -r user0 _ idle0 < <(cpu)
cd "$checkout"
set +e
ISCSI_REPORT_PARSE_CACHE="$work/parsed" PYTHONPATH="$checkout/src" env -u PYTHONDONTWRITEBYTECODE \
  /usr/bin/time -v -o "$out/$label-$stamp.time" nice -n 10 "$venv/pytest" -n 2 --dist loadfile \
  -p no:cacheprovider -q --basetemp="$work/tmp" --durations=15 "${files[@]}" >"$out/$label-$stamp.log" 2>&1
set -e
read -r user1 _ idle1 < <(cpu)
hz=$(getconf CLK_TCK)
others=$(( (user1 - user0) / hz ))
idle=$(( (idle1 - idle0) / hz ))
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out/$label-$stamp.time")
user=$(awk -F': ' '/User time/ {print $2}' "$out/$label-$stamp.time")
sys=$(awk -F': ' '/System time/ {print $2}' "$out/$label-$stamp.time")
echo "$label $stamp wall=$wall user=${user}s sys=${sys}s load_before=$load others_user=${others}s idle=${idle}s $(tail -1 "$out/$label-$stamp.log")"
rm -rf "$work"
