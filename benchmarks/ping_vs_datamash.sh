#!/usr/bin/env bash
# Summarizing a 15-minute, 2 ms-interval ping log (450,000 replies): `iscsi-report summarize`
# vs the grep | datamash pipeline, as whole processes, side by side in one hyperfine run;
# then the peak RSS of the summarize process (GNU time -v).
#
# Usage: benchmarks/ping_vs_datamash.sh [WORKDIR] [RUNS]   (needs hyperfine, datamash, /usr/bin/time)
# The machine has 2 cores shared with other work: run it at a quiet moment and repeat it when
# the standard deviations are large (hyperfine warns about outliers).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$(mktemp -d)}
RUNS=${2:-30}
mkdir -p "$WORK"
LOG=$WORK/ping_450k.txt
PY=$ROOT/.venv/bin/python
CLI=$ROOT/.venv/bin/iscsi-report
N_SENT=450000
DATAMASH_OPS="mean 1 perc:50 1 perc:99 1 max 1 sstdev 1"
PIPELINE="grep -oP 'time=\\K[0-9.]+' $LOG | datamash $DATAMASH_OPS"

command -v hyperfine datamash > /dev/null
[[ -x /usr/bin/time ]] || { echo "install the Debian package 'time'" >&2; exit 1; }

"$PY" "$ROOT/benchmarks/gen_ping_log.py" "$LOG" "$N_SENT"
echo "log: $LOG ($(wc -l < "$LOG") lines, $(du -h "$LOG" | cut -f1))"

echo "--- results (must agree) ---"
"$CLI" summarize --json "$LOG" > "$WORK/summary.json"
bash -c "$PIPELINE" > "$WORK/datamash.txt"
"$PY" - "$WORK/summary.json" "$WORK/datamash.txt" <<'PYEOF'
import json, math, sys
rtt = json.load(open(sys.argv[1]))["rtt_ms"]
ours = [rtt[k] for k in ("mean", "p50", "p99", "max", "sstdev")]
theirs = [float(x) for x in open(sys.argv[2]).read().split()]
print("summarize    ", " ".join(f"{v:.14g}" for v in ours))
print("grep|datamash", " ".join(f"{v:.14g}" for v in theirs))
# datamash prints 14 significant digits of a long double computation
if not all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(ours, theirs, strict=True)):
    sys.exit("summarize and datamash disagree")
PYEOF

# -N: no intermediate shell for summarize; the pipeline needs its own bash (counted in its time)
hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$WORK/hyperfine.json" \
    -n summarize "$CLI summarize --json $LOG" \
    -n grep+datamash "bash -c \"$PIPELINE\""

"$PY" - "$WORK/hyperfine.json" <<'PYEOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
a, b = res["summarize"], res["grep+datamash"]
print(
    f"summarize {a['mean'] * 1e3:.1f} ± {a['stddev'] * 1e3:.1f} ms, "
    f"grep+datamash {b['mean'] * 1e3:.1f} ± {b['stddev'] * 1e3:.1f} ms, "
    f"ratio summarize/datamash {a['mean'] / b['mean']:.2f}"
)
PYEOF

/usr/bin/time -v "$CLI" summarize --json "$LOG" 2> "$WORK/time.txt" > /dev/null
grep "Maximum resident set size" "$WORK/time.txt"
