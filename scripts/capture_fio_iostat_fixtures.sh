#!/usr/bin/env bash
# Capture the fio and iostat fixtures under tests/fixtures/{fio,iostat} with the real tools
# (fio 3.33, sysstat 12.6.1 iostat) on this machine. Run as root from the repository root:
#   bash scripts/capture_fio_iostat_fixtures.sh
# fio writes to files under $WORK (default /tmp/fio-fixtures); iostat samples while fio writes.
set -euo pipefail

WORK=${WORK:-/tmp/fio-fixtures}
FIO_OUT=tests/fixtures/fio
IOSTAT_OUT=tests/fixtures/iostat
mkdir -p "$WORK" "$FIO_OUT" "$IOSTAT_OUT"
export LC_ALL=C

# Options common to every fio job: small files, short time-based runs, no fsync tricks.
COMMON=(--directory="$WORK" --size=32M --runtime=2 --time_based --direct=1)

# 1. Sequential write, 64 KiB, psync: fio 3.x JSON.
fio --name=seqwrite-64k "${COMMON[@]}" --rw=write --bs=64k --ioengine=psync \
    --output-format=json --output="$FIO_OUT/fio-3.33_seqwrite_64k_psync.json"

# 2. Sequential write, 2 MiB, libaio iodepth 4: json+ (per-job clat_ns latency bins); xz-compressed.
fio --name=seqwrite-2m "${COMMON[@]}" --rw=write --bs=2M --ioengine=libaio --iodepth=4 \
    --output-format=json+ --output="$FIO_OUT/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json"
xz -9 -f "$FIO_OUT/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json"

# 3. numjobs=2 without group_reporting (two job entries), options in "global options".
fio --output-format=json --output="$FIO_OUT/fio-3.33_numjobs2_no_group.json" - <<JOB
[global]
directory=$WORK
size=32M
runtime=2
time_based
direct=1
ioengine=libaio
iodepth=4
bs=64k
rw=write
[nj2]
numjobs=2
JOB

# 4. numjobs=2 with group_reporting (one aggregated job entry); gzip-compressed.
fio --name=nj2-grouped "${COMMON[@]}" --rw=write --bs=64k --ioengine=libaio --iodepth=4 \
    --numjobs=2 --group_reporting --output-format=json \
    --output="$FIO_OUT/fio-3.33_numjobs2_group_reporting.json"
gzip -9 -f -n "$FIO_OUT/fio-3.33_numjobs2_group_reporting.json"

# 5. A read job and a random read/write job in one run (two job sections), json+.
fio --output-format=json --output="$FIO_OUT/fio-3.33_read_and_randrw.json" - <<JOB
[global]
directory=$WORK
size=32M
runtime=2
time_based
direct=1
ioengine=libaio
iodepth=4
[seqread-64k]
rw=read
bs=64k
filename=read.dat
[randrw-4k]
stonewall
rw=randrw
rwmixread=70
bs=4k
filename=randrw.dat
JOB

# 6. Normal text output followed by JSON in one file.
fio --name=normal-then-json "${COMMON[@]}" --rw=write --bs=64k --ioengine=psync \
    --output-format=normal,json --output="$FIO_OUT/fio-3.33_normal_then_json.txt"

# 7. A job that fails: writing 8 MiB to a 1 MiB tmpfs gives ENOSPC (err=28) and fio reports
#    the error on stderr (captured before the JSON, as `fio ... >out 2>&1` would save it).
mkdir -p "$WORK/tiny"
mountpoint -q "$WORK/tiny" || mount -t tmpfs -o size=1M tmpfs "$WORK/tiny"
fio --name=enospc --directory="$WORK/tiny" --size=8M --rw=write --bs=64k --ioengine=psync \
    --output-format=json > "$FIO_OUT/fio-3.33_error_enospc.json" 2>&1 || true
umount "$WORK/tiny"

# 8. A job whose filename is a directory: fio refuses it.
fio --name=dir-as-file --filename="$WORK" --size=8M --rw=write --bs=64k --ioengine=psync \
    --output-format=json > "$FIO_OUT/fio-3.33_error_directory.json" 2>&1 || true

# iostat while a 12-second fio write runs in the background.
fio --name=background "${COMMON[@]}" --runtime=16 --rw=write --bs=64k --ioengine=libaio \
    --iodepth=4 --output-format=terse --output=/dev/null &
FIO_PID=$!
sleep 1
iostat -x > "$IOSTAT_OUT/iostat-12.6.1_x.txt"
iostat -x -t 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_t.txt"
iostat -x -k 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_k.txt"
iostat -x -m 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_m.txt"
iostat -o JSON -x 1 2 > "$IOSTAT_OUT/iostat-12.6.1_json_x.json"
iostat -x 1 3 > "$IOSTAT_OUT/iostat-12.6.1_x_1_3.txt"
gzip -9 -f -n "$IOSTAT_OUT/iostat-12.6.1_x_1_3.txt"
# Interrupted JSON runs: SIGINT lets iostat close the JSON; SIGTERM kills it mid-document,
# leaving the JSON unclosed after the last complete report.
timeout -s INT 2.5 iostat -o JSON -x -t 1 > "$IOSTAT_OUT/iostat-12.6.1_json_t_sigint.json" || true
timeout -s TERM 2.5 iostat -o JSON -x -t 1 > "$IOSTAT_OUT/iostat-12.6.1_json_t_unclosed.json" || true
# Timestamps in a 12-hour AM/PM locale format (en_US) and comma decimals (de_DE).
LOCPATH="$WORK/locale"
mkdir -p "$LOCPATH"
localedef -i en_US -f UTF-8 "$LOCPATH/en_US.UTF-8" 2>/dev/null || true
localedef -i de_DE -f UTF-8 "$LOCPATH/de_DE.UTF-8" 2>/dev/null || true
LOCPATH="$LOCPATH" LC_ALL=en_US.UTF-8 iostat -x -t 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_t_en_US.txt"
LOCPATH="$LOCPATH" LC_ALL=de_DE.UTF-8 iostat -x -t 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_t_de_DE.txt"
iostat -x -h 1 2 > "$IOSTAT_OUT/iostat-12.6.1_x_h.txt"
wait "$FIO_PID"
rm -rf "$WORK"
ls -l "$FIO_OUT" "$IOSTAT_OUT"
