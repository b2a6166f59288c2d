#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Several data NICs and the traps together on namespace clusters: when the first data NIC is a
# jumbo black hole (cluster_trap_jumbo_blackhole) and a second one carries bulk traffic
# (cluster_trap_second_data_nic), the second is suggested on every node, the notes say why, and
# real NCCL picks it; with the black hole, a stale route and two NICs in one subnet in one
# cluster, each finding names exactly its nodes and every suggested address carries bulk traffic.
# A real Gloo allreduce (Debian's torch) of 4 MiB completes with the suggested environment and
# stalls when forced onto the black-holed NIC.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/fabric_gloo.sh"
ITEST_FILE=fabric_nics

PT=(--probe-timeout 1000)
SECOND=192.168.251

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

# has ID NODES: a finding with that id lists exactly these nodes (sorted, comma-separated)
has() {
	local got
	got=$(jget "','.join(sorted(set(n for f in d['findings'] if f['id'] == '$1' for n in f['nodes'])))")
	expect_eq "$got" "$2" "nodes of finding $1"
}
gloo_of() { jget "d['suggestions']['per_node']['node$1'].get('GLOO_SOCKET_IFNAME')"; }
notes() { jget "d['suggestions']['notes']"; }

# nccl_picks IFNAME ADDRESS I: real NCCL (tests/oracle) on node I, with the NCCL_SOCKET_* variables
# suggested for it, binds its bootstrap to IFNAME:ADDRESS; nothing to check without NCCL
nccl_picks() {
	local vars log got
	[ -n "${NCCL_ORACLE:-}" ] && [ -x "$NCCL_ORACLE" ] || return 0
	read -r -a vars <<<"$(jget "' '.join(k + '=' + v for k, v in d['suggestions']['per_node']['node$3'].items() if k.startswith('NCCL_SOCKET_'))")"
	((${#vars[@]} > 0)) || { echo "    node$3: no NCCL_SOCKET_* suggested"; return 1; }
	log=$(cluster_node_exec "$3" env -i PATH=/usr/bin:/bin HOME=/root NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP "${vars[@]}" "$NCCL_ORACLE" 2>&1)
	got=$(sed -nE 's/.*Bootstrap ?: Using (\[0\])?([^ ]+)<0>.*/\2/p' <<<"$log" | head -1)
	expect_eq "$got" "$1:$2" "real NCCL's bootstrap on node$3 with ${vars[*]}"
}

# suggested_bulk_ok: between every two nodes that got a data interface, the matrix's bulk proof
# toward its address passed (each pair proven once, none stalled)
suggested_bulk_ok() {
	local i ifname a map=""
	for ((i = 1; i <= CD_N; i++)); do
		ifname=$(jget "d['nodes'][$((i - 1))]['data_interface'] or ''")
		[ -n "$ifname" ] || continue
		a=$(cluster_node_exec "$i" ip -4 -o addr show dev "$ifname" | awk '{split($4, p, "/"); print p[1]; exit}')
		map+="'node$i': '$a', "
	done
	expect_eq "$(jget "(lambda addr: (lambda rows: (sorted(set(m['bulk'] for m in rows)), set(frozenset((m['from'], m['to'])) for m in rows) == set(frozenset((x, y)) for x in addr for y in addr if x < y)))([m for m in d['matrix'] if m['from'] in addr and m['to'] in addr and m['address'] == addr[m['to']] and m['bulk'] != 'not-tried']))({$map})")" \
		"(['ok'], True)" "bulk proofs between the suggested addresses (each pair proven, all ok)"
}

t_blackholed_first_nic_leaves_the_second_suggested_on_every_node() {
	up 3 || return 1
	cluster_trap_second_data_nic eth2 1 2 3 || return 1
	cluster_trap_jumbo_blackhole 1 2 3 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	has path-mtu-blackhole node1,node2,node3 || return 1
	# like with like: eth0 is 9000 and eth2 1500 on every node, each network alike
	has mtu-mismatch "" || return 1
	# the second NIC's own network is not a route astray
	has route-egress-mismatch "" || return 1
	expect_eq "$(jget "[n['data_interface'] for n in d['nodes']]")" "['eth2', 'eth2', 'eth2']" \
		"data interfaces" || return 1
	expect_eq "$(gloo_of 1),$(gloo_of 2),$(gloo_of 3)" "eth2,eth2,eth2" "GLOO_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "d['suggestions']['master_addr']")" "$SECOND.11" "MASTER_ADDR" || return 1
	suggested_bulk_ok
}

t_the_notes_say_why_the_first_nic_is_passed_over() {
	local i
	for i in 1 2 3; do
		expect_match "$(notes)" "node$i: eth0 is not suggested: its bulk transfer stalled \(path-mtu-blackhole\).*; eth2 is suggested instead" \
			"node$i's note" || return 1
	done
}

t_real_nccl_picks_the_second_nic() {
	local i
	for i in 1 2 3; do
		nccl_picks eth2 "$SECOND.$((i + 10))" "$i" || return 1
	done
}

# jumbo_drops: the frames the black hole's bridge rule has dropped so far
jumbo_drops() {
	ip netns exec "$CD_NS_BR" nft list table bridge clusterdoc_jumbo | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -1
}

t_a_gloo_allreduce_with_the_suggested_environment_completes() {
	# the job's own traffic as the judge: 4 MiB over the suggested eth2 and MASTER_ADDR
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || { echo "    (no torch: skipped)"; return 0; }
	local m i specs=()
	m=$(jget "d['suggestions']['per_node']['node1'].get('MASTER_ADDR', '')")
	expect_eq "$m" "$SECOND.11" "node1's MASTER_ADDR" || return 1
	for i in 1 2 3; do specs+=("$i=$(gloo_of "$i"),$m"); done
	gloo_allreduce 30 "${specs[@]}"
	expect_eq "$(gloo_count 'sum 6.0 6.0')" 3 "ranks whose 4 MiB allreduce completed within 30 s" ||
		{ tail -n 5 "$CD_RUN"/gloo-*.log; return 1; }
}

t_a_gloo_allreduce_forced_onto_the_blackholed_nic_stalls() {
	# the trap is real: the same job on eth0 (MTU 9000 behind the 1500-byte switch) joins its
	# group (small packets pass) and then never finishes the allreduce
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || { echo "    (no torch: skipped)"; return 0; }
	local i specs=() before after
	for i in 1 2 3; do specs+=("$i=eth0,$(cluster_node_ip 1)"); done
	before=$(jumbo_drops)
	gloo_allreduce 12 "${specs[@]}"
	after=$(jumbo_drops)
	expect_eq "$(gloo_count joined)" 3 "ranks that joined the group on eth0" ||
		{ tail -n 5 "$CD_RUN"/gloo-*.log; return 1; }
	expect_eq "$(gloo_count sum)" 0 "ranks whose allreduce completed on the black-holed eth0" || return 1
	((after > before)) || { echo "    the switch dropped no jumbo frame ($before -> $after)"; return 1; }
}

t_an_ipv6_only_second_network_is_suggested_beside_the_blackholed_first() {
	# the data network that carries bulk traffic is IPv6 only: its addresses are suggested
	# (bracketed in the URL), the notes say why eth0 is passed over, and the judges agree
	local i m
	up 3 || return 1
	cluster_trap_second_data_nic6 eth2 1 2 3 || return 1
	cluster_trap_jumbo_blackhole 1 2 3 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	has path-mtu-blackhole node1,node2,node3 || return 1
	has ipv6-no-route "" || return 1
	has mtu-mismatch "" || return 1
	expect_eq "$(gloo_of 1),$(gloo_of 2),$(gloo_of 3)" "eth2,eth2,eth2" "GLOO_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "d['suggestions']['master_addr']")" "fd00:251::11" "MASTER_ADDR" || return 1
	expect_eq "$(jget "d['suggestions']['init_method']")" "tcp://[fd00:251::11]:$(jget "d['suggestions']['master_port']")" \
		"init_method" || return 1
	expect_eq "$(jget "[k for n in d['suggestions']['per_node'].values() for k, v in n.items() if v == 'AF_INET']")" "[]" \
		"AF_INET suggested" || return 1
	for i in 1 2 3; do
		expect_match "$(notes)" "node$i: eth0 is not suggested: its bulk transfer stalled \(path-mtu-blackhole\).*; eth2 is suggested instead" \
			"node$i's note" || return 1
		nccl_picks eth2 "fd00:251::$((i + 10))" "$i" || return 1
	done
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || return 0
	m=$(jget "d['suggestions']['per_node']['node1'].get('MASTER_ADDR', '')")
	gloo_allreduce 30 "1=eth2,$m" "2=eth2,$m" "3=eth2,$m"
	expect_eq "$(gloo_count 'sum 6.0 6.0')" 3 "ranks whose 4 MiB allreduce over IPv6 completed within 30 s" ||
		{ tail -n 5 "$CD_RUN"/gloo-*.log; return 1; }
}

t_blackhole_stale_route_and_two_nics_together_each_on_its_nodes() {
	# node2's stale route points at node4, itself behind the black hole; node3 and node6 are clean
	up 6 || return 1
	cluster_trap_two_nics_subnet 1 || return 1
	cluster_trap_stale_route 2 4 || return 1
	cluster_trap_jumbo_blackhole 4 5 || return 1
	cd_head check -w 'node[1-6]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	has path-mtu-blackhole node4,node5 || return 1
	has route-egress-mismatch node2 || return 1
	has multiple-nics-same-subnet node1 || return 1
	has nic-name-mismatch "" || return 1
	# what the stall and the stale route do to the matrix stays on their nodes
	expect_eq "$(jget "' '.join(sorted(set(m['from'] + '>' + m['to'] for m in d['matrix'] if m['bulk'] == 'stalled')))")" \
		"node4>node5" "stalled pairs" || return 1
	expect_eq "$(jget "sorted(set(m['pmtu'] for m in d['matrix'] if m['bulk'] == 'stalled'))")" "[1500]" \
		"pmtu of the stalled pair" || return 1
	((elapsed_ms < 30000)) || { echo "    check took $elapsed_ms ms"; return 1; }
}

t_together_the_suggested_environment_carries_bulk_traffic() {
	# node2's own route and node4/node5's stall keep them out; node1, node3 and node6 are
	# suggested eth0, whose bulk traffic passed between every two of them
	expect_eq "$(jget "[n['data_interface'] for n in d['nodes']]")" "['eth0', None, 'eth0', None, None, 'eth0']" \
		"data interfaces" || return 1
	suggested_bulk_ok || return 1
	expect_match "$(notes)" "node2: eth0 is not suggested: its own route sends traffic from $(cluster_node_ip 2) to $(cluster_node_ip 4) \(node4\) out of ens7" \
		"node2's note" || return 1
	expect_match "$(notes)" "node5: eth0 is not suggested: its bulk transfer stalled" "node5's note" || return 1
	nccl_picks eth0 "$(cluster_node_ip 1)" 1 || return 1
	nccl_picks eth0 "$(cluster_node_ip 6)" 6
}

itest_need_root
itest_run_all
