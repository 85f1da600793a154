#!/bin/bash
# Time from `git clone` of a branch to the user's own forecast page (BENCHMARKS.md, issue 23).
# VENV_PYTHON is an existing environment's python (run through PYTHONPATH, no install) or the word
# `install`: then `make venv` runs in the clone first and is timed with the rest. Captures
# over loopback only (ping, iperf3 -s on 127.0.0.1) and fio on a scratch file, then builds only
# the user's run. Usage: benchmarks/own_pages_from_clone.sh REPO BRANCH VENV_PYTHON [REP]
set -euo pipefail
REPO=$1 BRANCH=$2 PY=$3 REP=${4:-1}
CLONE=/tmp/ownclone SCRATCH=/tmp/ownscratch PORT=5299
rm -rf "$CLONE" "$SCRATCH"; mkdir -p "$SCRATCH"
iperf3 -s -B 127.0.0.1 -p $PORT >/dev/null 2>&1 & SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
t0=$(date +%s.%N)
git clone -q --branch "$BRANCH" "$REPO" "$CLONE"
t1=$(date +%s.%N)
cd "$CLONE"
if [ "$PY" = install ]; then
  nice -n 5 make venv > /tmp/own_venv_$REP.log 2>&1
  PY=$CLONE/.venv/bin/python
else
  export PYTHONPATH=$CLONE/src
fi
tv=$(date +%s.%N)
nice -n 5 "$PY" -m iscsi_report.cli --root "$CLONE" capture data/raw/mine --host 127.0.0.1 --port $PORT \
  --filename "$SCRATCH/fio.dat" --size 64m --runtime 2 --bs 64k,256k,1m,2m --qd 1 \
  --ping-count 500 --iperf3-seconds 2 --network loopback --device scratch > /tmp/own_capture_$REP.log 2>&1
t2=$(date +%s.%N)
nice -n 5 "$PY" -m iscsi_report.cli --root "$CLONE" dataset check data/raw/mine >> /tmp/own_capture_$REP.log 2>&1
printf 'title: My machine\nshort_title: my machine\ndataset: mine\nnotebooks: [network, storage, model, upgrade]\n' \
  > params/mine.yaml
t3=$(date +%s.%N)
nice -n 5 "$PY" -m iscsi_report.cli --root "$CLONE" book mine --jobs 2 > /tmp/own_book_$REP.log 2>&1
t4=$(date +%s.%N)
python3 -c "
t = [$t0, $t1, $tv, $t2, $t3, $t4]
print('rep $REP: clone %.1f s, venv %.1f s, capture %.1f s, check and params %.1f s, book %.1f s, '
      'total %.1f s, without the capture %.1f s'
      % (t[1]-t[0], t[2]-t[1], t[3]-t[2], t[4]-t[3], t[5]-t[4], t[5]-t[0], t[5]-t[0]-(t[3]-t[2])))
"
