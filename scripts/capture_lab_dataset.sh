#!/usr/bin/env bash
# Capture a small real dataset on this machine with the real tools (run as root):
#   ping and iperf3 across a veth pair into a private network namespace whose link is rate
#   limited with tbf (this kernel has no netem, so no delay is added: the latency is the real
#   veth round trip), and fio sequential direct writes on the local disk with iostat beside.
# Usage: scripts/capture_lab_dataset.sh OUTDIR   (then: iscsi-report manifest OUTDIR is written)
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
ns=isr-lab; host_if=isr-veth0; ns_if=isr-veth1
host_ip=10.203.0.1; ns_ip=10.203.0.2
rate=${RATE:-800mbit}
fio_dev_file=${FIO_FILE:-/var/tmp/isr-fio.dat}
ping -V 2>/dev/null | grep -q iputils || { echo "need iputils ping (apt-get install iputils-ping)" >&2; exit 1; }
mkdir -p "$out"/{ping,iperf3,fio,iostat}

cleanup() { ip netns del "$ns" 2>/dev/null || true; ip link del "$host_if" 2>/dev/null || true; rm -f "$fio_dev_file"; }
trap cleanup EXIT
cleanup
ip netns add "$ns"
ip link add "$host_if" type veth peer name "$ns_if"
ip link set "$ns_if" netns "$ns"
ip addr add "$host_ip/24" dev "$host_if"; ip link set "$host_if" up
ip netns exec "$ns" ip addr add "$ns_ip/24" dev "$ns_if"
ip netns exec "$ns" ip link set "$ns_if" up
ip netns exec "$ns" ip link set lo up
tc qdisc add dev "$host_if" root tbf rate "$rate" burst 256kb latency 50ms
ip netns exec "$ns" tc qdisc add dev "$ns_if" root tbf rate "$rate" burst 256kb latency 50ms

ping -D -i 0.2 -c 150 "$ns_ip" > "$out/ping/veth-200ms.txt"
ping -D -i 0.002 -c 3000 "$ns_ip" > "$out/ping/veth-2ms.txt"

ip netns exec "$ns" iperf3 -s -1 -D --pidfile /tmp/isr-iperf3.pid
sleep 0.5
iperf3 -J -c "$ns_ip" -t 3 > "$out/iperf3/veth-tcp.json"

dev=$(lsblk -no PKNAME "$(df --output=source /var/tmp | tail -1)" 2>/dev/null || true)
dev=${dev:-$(basename "$(df --output=source /var/tmp | tail -1)")}
for bs in 64k 128k 256k 512k 1M 2M; do
  iostat -x -t 1 5 "$dev" > "$out/iostat/local-$bs.txt" &
  iostat_pid=$!
  fio --name="seq-write-$bs" --filename="$fio_dev_file" --rw=write --bs="$bs" --direct=1 \
      --ioengine=psync --numjobs=1 --size=256M --time_based --runtime=3 \
      --output-format=json > "$out/fio/local-$bs.json"
  wait "$iostat_pid"
done
echo "captured into $out"
