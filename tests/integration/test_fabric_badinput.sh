#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input for the matrix's bulk proof and path-MTU probe, on namespace clusters: an MTU changed
# again and again while the check runs, and a stale job on the master that accepts connections on
# MASTER_PORT and never reads them (the agent's question to the port's holder goes unanswered).
# Each is classified (every matrix row carries a known result, bulk and pmtu), within the check's
# deadline: nothing hangs. An agent listener's peer that answers and then never reads is covered
# by tests/unit/test_reach.c (stalled at the attempt's deadline, with and without the probe).
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fabric_badinput

PT=(--probe-timeout 1000)
BG_PID=""

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

# stop_bg: end the background process this file started, by its PID
stop_bg() {
	[ -n "$BG_PID" ] || return 0
	kill "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
	BG_PID=""
}

has() {
	local got
	got=$(jget "','.join(sorted(set(n for f in d['findings'] if f['id'] == '$1' for n in f['nodes'])))")
	expect_eq "$got" "$2" "nodes of finding $1"
}

# every_row_classified MAXPMTU: each matrix row has one of reach.h's results, a bulk verdict,
# and, where probed, a pmtu between 0 and MAXPMTU
every_row_classified() {
	expect_eq "$(jget "sorted(set(m['result'] in ('ok', 'refused', 'timeout', 'no-route', 'net-unreachable', 'wrong-peer', 'bad-answer', 'error', 'not-tested') for m in d['matrix']))")" \
		"[True]" "every row's result is a known one" || return 1
	expect_eq "$(jget "sorted(set(m['bulk'] in ('ok', 'stalled', 'broken', 'not-tried') for m in d['matrix']))")" \
		"[True]" "every row's bulk verdict is a known one" || return 1
	expect_eq "$(jget "sorted(set(0 <= m['pmtu'] <= $1 for m in d['matrix'] if 'pmtu' in m))")" "[True]" \
		"pmtu within 0..$1" || return 1
}

t_mtu_changed_during_the_matrix_is_classified_within_the_deadline() {
	local ns
	up 3 || return 1
	ns=$(cluster_node_ns 2)
	# node2's NIC flips between MTU 1400 and 1500 every 50 ms for the whole check: peers' frames
	# over 1400 are dropped while it is low, and the probes see sizes come and go
	(
		for ((k = 0; k < 400; k++)); do
			ip -n "$ns" link set dev eth0 mtu 1400
			sleep 0.05
			ip -n "$ns" link set dev eth0 mtu 1500
			sleep 0.05
		done
	) &
	BG_PID=$!
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	stop_bg
	ip -n "$ns" link set dev eth0 mtu 1500
	[ -n "$out" ] || { echo "    no report (rc $rc): $err"; return 1; }
	every_row_classified 1500 || return 1
	expect_eq "$(jget "len([m for m in d['matrix'] if m['bulk'] != 'not-tried'])")" 3 "bulk proofs (one per pair)" || return 1
	((elapsed_ms < 20000)) || { echo "    check took $elapsed_ms ms"; return 1; }
}

t_stale_job_that_accepts_and_never_reads_master_port_is_classified() {
	local port=29500
	up 3 || return 1
	# a stale job on the master: accepts on MASTER_PORT (dual-stack, as TCPStore binds it), keeps
	# every connection open, never reads and never answers
	ip netns exec "$(cluster_node_ns 1)" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", '"$port"'))
s.listen(64)
s.settimeout(0.2)
held = []
end = time.time() + 60
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' &
	BG_PID=$!
	sleep 0.5
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	stop_bg
	[ -n "$out" ] || { echo "    no report (rc $rc): $err"; return 1; }
	has master-port-in-use node1 || return 1
	# the agent asked the holder who it is (REACH_HOLDER_WAIT_MS, 2 s at most): no answer, so a
	# stale job, not another clusterdoc run
	expect_match "$(jget "[f for f in d['findings'] if f['id'] == 'master-port-in-use']")" \
		"node1: bind to port $port failed: EADDRINUSE" "evidence" || return 1
	has master-port-held-by-run "" || return 1
	every_row_classified 1500 || return 1
	expect_eq "$(jget "d['suggestions'].get('master_port')")" "$((port + 1))" "MASTER_PORT suggested instead" || return 1
	((elapsed_ms < 20000)) || { echo "    check took $elapsed_ms ms"; return 1; }
}

itest_need_root
trap stop_bg EXIT
itest_run_all
