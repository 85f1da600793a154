#!/usr/bin/env bash
# Summarizing a 15-minute, 2 ms-interval ping log (450,000 replies): `iscsi-report summarize`
# vs the grep | datamash pipeline, as whole processes, side by side in one hyperfine run;
# then the peak RSS of the summarize process (GNU time -v).
#
# Usage: benchmarks/ping_vs_datamash.sh [WORKDIR]   (needs hyperfine, datamash, /usr/bin/time)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK"
LOG=$WORK/ping_450k.txt
PY=$ROOT/.venv/bin/python
CLI=$ROOT/.venv/bin/iscsi-report
N_SENT=450000

command -v hyperfine datamash > /dev/null
[[ -x /usr/bin/time ]] || { echo "install the Debian package 'time'" >&2; exit 1; }

"$PY" "$ROOT/benchmarks/gen_ping_log.py" "$LOG" "$N_SENT"
echo "log: $LOG ($(wc -l < "$LOG") lines, $(du -h "$LOG" | cut -f1))"

echo "--- results (must agree) ---"
"$CLI" summarize --json "$LOG"
grep -oP 'time=\K[0-9.]+' "$LOG" | datamash mean 1 perc:50 1 perc:99 1 max 1 sstdev 1

hyperfine --warmup 3 --runs 20 --export-json "$WORK/hyperfine.json" \
    -n summarize "$CLI summarize --json $LOG" \
    -n grep+datamash "grep -oP 'time=\\K[0-9.]+' $LOG | datamash mean 1 perc:50 1 perc:99 1 max 1 sstdev 1"

"$PY" - "$WORK/hyperfine.json" <<'PYEOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
a, b = res["summarize"]["mean"], res["grep+datamash"]["mean"]
print(f"summarize {a * 1e3:.1f} ms, grep+datamash {b * 1e3:.1f} ms, ratio summarize/datamash {a / b:.2f}")
PYEOF

/usr/bin/time -v "$CLI" summarize --json "$LOG" 2> "$WORK/time.txt" > /dev/null
grep "Maximum resident set size" "$WORK/time.txt"
