#!/usr/bin/env bash
# Post hoc (issue 21, reads): what the lab's target pays to read (or write) one block of its
# RAM-backed store, measured locally with fio (no network): psync at queue depth 1 on a 256 MiB
# file in /dev/shm, sparse (as the lab's LUN: holes read as zeros) and written (random bytes).
# tmpfs has no O_DIRECT, so these are page-cache copies, which is what tgt's rdwr store does.
# Usage: benchmarks/shm_read_probe.sh [REPS]   (prints one line per run: rep, file, rw, bs, mean ms)
set -euo pipefail
reps="${1:-2}"
sizes=(448k 1216k 2048k 3328k 4096k)
out="$(mktemp -d)"
sparse=/dev/shm/reads_probe_sparse
written=/dev/shm/reads_probe_written
trap 'rm -rf "$out" "$sparse" "$written"' EXIT
truncate -s 256M "$sparse"
head -c 256M /dev/urandom >"$written"
for rep in $(seq 1 "$reps"); do
  for rw in randread randwrite; do
    for kind in sparse written; do
      [[ "$rw" == randwrite && "$kind" == sparse ]] && continue  # a write fills the holes it hits
      file="$sparse"; [[ "$kind" == written ]] && file="$written"
      for bs in "${sizes[@]}"; do
        json="$out/$rep-$kind-$rw-$bs.json"
        nice -n 5 fio --name=probe --filename="$file" --rw="$rw" --bs="$bs" --ioengine=psync \
          --iodepth=1 --size=256M --number_ios=200 --output-format=json --output="$json" >/dev/null
        python3 - "$json" "$rep" "$kind" "$rw" "$bs" <<'PY'
import json, sys
path, rep, kind, rw, bs = sys.argv[1:]
job = json.load(open(path))["jobs"][0]
side = job["read"] if rw == "randread" else job["write"]
print(f"{rep} {kind:7s} {rw:9s} {bs:>6s} ios={side['total_ios']:3d} mean_ms={side['lat_ns']['mean'] / 1e6:.3f}")
PY
      done
    done
  done
done
