#!/usr/bin/env bash
# CPU (user+sys, the build and its jupyter-book child) of `iscsi-report build --force` on one built
# project, before and after a change, alternating (issue 28). Each build's html tree is compared with
# the first one's (benchmarks/book_build_cpu.py compare): the output must stay byte-identical.
# Usage: benchmarks/book_build_pairs.sh PROJECT BEFORE_SRC AFTER_SRC PAIRS
# (PARSE_CACHE: the parse cache folder both sides read, default PROJECT/.cache/parsed). Not `book`:
# the run cache is keyed by the package code, so `book` with the other side's src executes every
# notebook again.
set -euo pipefail
project=$1 before=$2 after=$3 pairs=${4:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
export ISCSI_REPORT_PARSE_CACHE=${PARSE_CACHE:-$project/.cache/parsed}
first=""
for i in $(seq 1 "$pairs"); do
  for side in before after; do
    src=$before; [ "$side" = after ] && src=$after
    load=$(cut -d' ' -f1 /proc/loadavg)
    args=(build --force)
    times=$(PYTHONPATH=$src /usr/bin/time -f "%e %U %S" nice -n 10 "$python" -m iscsi_report.cli \
      --root "$project" "${args[@]}" 2>&1 >/dev/null | tail -1)
    read -r wall user sys <<<"$times"
    html=$(readlink -f "$project/_build/html")
    if [ -z "$first" ]; then first=/tmp/book_build_pairs_first.$$; rm -rf "$first"; cp -a "$html" "$first"; fi
    same=$("$python" "$here/benchmarks/book_build_cpu.py" compare "$first" "$html" | tail -1)
    cpu=$(echo "$user + $sys" | bc)
    echo "pair $i $side: wall ${wall} s, CPU ${cpu} s (user $user, sys $sys), load before $load; $same"
  done
done
rm -rf "$first"
