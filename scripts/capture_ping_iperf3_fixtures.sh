#!/usr/bin/env bash
# Recapture the real ping and iperf3 outputs committed under tests/fixtures/{ping,iperf3}.
#
# Needs root (network namespaces, tc tbf, nftables, raw ICMP sockets) and the Debian packages
# iputils-ping, iperf3, busybox, nftables; GNU inetutils ping is installed temporarily (it replaces
# iputils-ping) and iputils-ping is reinstalled at the end.  Traffic stays on loopback and on a
# veth pair into a namespace this script creates (isr_peer) and deletes again.
#
# Usage: sudo scripts/capture_ping_iperf3_fixtures.sh [REPO_ROOT]
set -euo pipefail

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
PING_DIR=$ROOT/tests/fixtures/ping
IPERF_DIR=$ROOT/tests/fixtures/iperf3
NS=isr_peer
HOST_IF=isr-h0
PEER_IF=isr-p0
HOST_IP=10.231.7.1
PEER_IP=10.231.7.2
IPERF_PORT=5299
NO_SERVER_PORT=5298
RATE=200mbit           # tbf shaping rate on the namespace link for iperf3 runs
PIDFILE=$(mktemp)

mkdir -p "$PING_DIR" "$IPERF_DIR"

cleanup() {
    if [[ -s $PIDFILE ]]; then kill "$(cat "$PIDFILE")" 2>/dev/null || true; fi
    rm -f "$PIDFILE"
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT

# This machine's kernel has no sch_netem, so impairments are made with what it has:
#   delay       -> tbf shaping at a low rate with large ping payloads (serialisation delay)
#   loss        -> nftables in the namespace dropping a random share of echo requests
#   duplicates  -> nftables `dup to` cloning a random share of echo replies back to the host
SLOW_RATE=2mbit        # with 1000-byte payloads: about 4 ms per reply on the wire
BIG_PAYLOAD=1000

peer_qdisc() {  # peer_qdisc <tbf args...>: replace the root qdisc on the namespace side
    ip netns exec "$NS" tc qdisc replace dev "$PEER_IF" root "$@"
}

peer_nft() {  # peer_nft '<rule>': reset the namespace's nftables table to one rule in one hook
    local hook=$1 rule=$2
    ip netns exec "$NS" nft flush ruleset
    ip netns exec "$NS" nft add table ip isr
    ip netns exec "$NS" nft add chain ip isr c "{ type filter hook $hook priority 0 ; }"
    ip netns exec "$NS" nft add rule ip isr c "$rule"
}

# --- namespace with a veth link --------------------------------------------------------------
ip netns del "$NS" 2>/dev/null || true
ip netns add "$NS"
ip link add "$HOST_IF" type veth peer name "$PEER_IF" netns "$NS"
ip addr add "$HOST_IP/24" dev "$HOST_IF"
ip link set "$HOST_IF" up
ip netns exec "$NS" ip addr add "$PEER_IP/24" dev "$PEER_IF"
ip netns exec "$NS" ip link set "$PEER_IF" up
ip netns exec "$NS" ip link set lo up

# --- iputils ping ----------------------------------------------------------------------------
ping -V | grep -q iputils || { echo "ping is not iputils" >&2; exit 1; }
ping -D -c 8 -i 0.2 127.0.0.1 > "$PING_DIR/iputils_loopback_D.txt"
ping -q -c 20 -i 0.05 127.0.0.1 > "$PING_DIR/iputils_loopback_quiet.txt"
ping -6 -c 6 -i 0.2 ::1 > "$PING_DIR/iputils_ipv6_loopback.txt"
peer_qdisc tbf rate "$SLOW_RATE" burst 4kb latency 100ms
ping -c 12 -i 0.2 -s "$BIG_PAYLOAD" "$PEER_IP" > "$PING_DIR/iputils_netns_tbf2mbit.txt"
gzip -9 -n -f "$PING_DIR/iputils_netns_tbf2mbit.txt"
ip netns exec "$NS" tc qdisc del dev "$PEER_IF" root
peer_nft input 'icmp type echo-request numgen random mod 100 < 30 drop'
ping -O -D -c 25 -i 0.2 -W 0.15 "$PEER_IP" > "$PING_DIR/iputils_netns_loss30_O_D.txt" || true
peer_nft input 'icmp type echo-request drop'
ping -c 5 -i 0.2 -W 0.5 "$PEER_IP" > "$PING_DIR/iputils_netns_loss100.txt" || true
peer_nft output "icmp type echo-reply numgen random mod 100 < 40 dup to $HOST_IP device $PEER_IF"
ping -c 15 -i 0.2 "$PEER_IP" > "$PING_DIR/iputils_netns_dup40.txt"
xz -9 -f "$PING_DIR/iputils_netns_dup40.txt"
ip netns exec "$NS" nft flush ruleset

# --- BusyBox ping ----------------------------------------------------------------------------
peer_qdisc tbf rate "$SLOW_RATE" burst 4kb latency 100ms
busybox ping -c 6 -s "$BIG_PAYLOAD" "$PEER_IP" > "$PING_DIR/busybox_netns_tbf2mbit.txt"
ip netns exec "$NS" tc qdisc del dev "$PEER_IF" root

# --- GNU inetutils ping (replaces iputils-ping for the duration) -----------------------------
apt-get install -y -qq inetutils-ping > /dev/null
ping --version | head -1 | grep -q inetutils
ping -c 8 -i 0.2 127.0.0.1 > "$PING_DIR/inetutils_loopback.txt"
peer_nft input 'icmp type echo-request numgen random mod 100 < 25 drop'
ping -c 16 -i 0.2 -s "$BIG_PAYLOAD" "$PEER_IP" > "$PING_DIR/inetutils_netns_loss25.txt" || true
ip netns exec "$NS" nft flush ruleset
apt-get install -y -qq iputils-ping > /dev/null
ping -V | grep -q iputils

# --- iperf3 -J -------------------------------------------------------------------------------
peer_qdisc tbf rate "$RATE" burst 64kb latency 20ms
tc qdisc replace dev "$HOST_IF" root tbf rate "$RATE" burst 64kb latency 20ms
ip netns exec "$NS" iperf3 -s -D -p "$IPERF_PORT" --pidfile "$PIDFILE"
sleep 0.5
client() { iperf3 -c "$PEER_IP" -p "$IPERF_PORT" -J -t 2 "$@"; }
client > "$IPERF_DIR/tcp_netns_tbf.json"
client -R > "$IPERF_DIR/tcp_reverse.json"
client -P 4 > "$IPERF_DIR/tcp_P4.json"
client --bidir > "$IPERF_DIR/tcp_bidir.json"
client -u -b 100M > "$IPERF_DIR/udp_100M.json"
gzip -9 -n -f "$IPERF_DIR/udp_100M.json"
iperf3 -c 127.0.0.1 -p "$NO_SERVER_PORT" -J -t 2 > "$IPERF_DIR/error_no_server.json" || true
ls -l "$PING_DIR" "$IPERF_DIR"
