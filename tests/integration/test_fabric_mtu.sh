#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Path-MTU black holes on namespace clusters: the half-done jumbo-frame set-up (MTU 9000 on two
# nodes' NICs, a bridge that passes only 1500-byte frames between them and sends no ICMP:
# cluster_trap_jumbo_blackhole) is found by the matrix's bulk proof on exactly those nodes, with
# the evidence, and no suggestion sends a job onto it; a clean cluster and a node that drops
# all ICMP and UDP have no such finding.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fabric_mtu

PT=(--probe-timeout 1000)

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

# stalled_pairs: the matrix rows whose bulk proof stalled, as "from>to" sorted
stalled_pairs() {
	jget "' '.join(sorted(set(m['from'] + '>' + m['to'] for m in d['matrix'] if m['bulk'] == 'stalled')))"
}

t_jumbo_blackhole_is_found_on_exactly_its_nodes() {
	up 4 || return 1
	cluster_trap_jumbo_blackhole 2 3 || return 1
	cd_head check -w 'node[1-4]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	has path-mtu-blackhole node2,node3 || return 1
	expect_eq "$(jget "[f['severity'] for f in d['findings'] if f['id'] == 'path-mtu-blackhole']")" "['error']" \
		"one error finding" || return 1
	# one proof per pair, sent by the lower-numbered node, covers both directions
	expect_eq "$(stalled_pairs)" "node2>node3" "stalled pairs" || return 1
	# every other ephemeral attempt carried its bulk transfer
	expect_eq "$(jget "sorted(set(m['bulk'] for m in d['matrix'] if not m['fixed_port'] and not m['scope_id'] and m['from'] < m['to'] and {m['from'], m['to']} != {'node2', 'node3'}))")" \
		"['ok']" "bulk of the other pairs" || return 1
}

t_blackhole_finding_names_nic_mtu_network_and_fix() {
	local f
	f=$(jget "[f for f in d['findings'] if f['id'] == 'path-mtu-blackhole'][0]")
	expect_match "$f" "eth0 \(network $CD_SUBNET\.0/24, MTU 9000\)" "message" || return 1
	expect_match "$f" "node2 \(eth0 mtu 9000\) -> node3 $(cluster_node_ip 3) \(eth0 mtu 9000\): connected and answered" "evidence" || return 1
	expect_match "$f" "the largest frame proven to pass is 1500 bytes \(node[1-4] -> node[1-4] carried" "message" || return 1
	expect_match "$f" "ip link set dev eth0 mtu 1500" "fix" || return 1
	expect_match "$f" "enable jumbo frames \(MTU 9000\) on the switch" "fix" || return 1
}

t_suggestions_avoid_the_blackholed_nic() {
	expect_eq "$(jget "d['suggestions']['per_node']['node2'].get('NCCL_SOCKET_IFNAME')")" None "node2's NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "d['suggestions']['per_node']['node3'].get('NCCL_SOCKET_IFNAME')")" None "node3's NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "d['suggestions']['per_node']['node1'].get('NCCL_SOCKET_IFNAME')")" "=eth0" "node1's NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "[n['data_interface'] for n in d['nodes']]")" "['eth0', None, None, 'eth0']" \
		"data interfaces" || return 1
}

# real NCCL (tests/oracle) given the suggested NCCL_SOCKET_IFNAME on a node it was suggested for
# picks that interface and the node's address; skipped without NCCL
t_real_nccl_takes_the_suggested_interface() {
	local v log
	[ -n "${NCCL_ORACLE:-}" ] && [ -x "$NCCL_ORACLE" ] || { echo "    (no NCCL: skipped)"; return 0; }
	v=$(jget "d['suggestions']['per_node']['node4']['NCCL_SOCKET_IFNAME']")
	log=$(cluster_node_exec 4 env -i PATH=/usr/bin:/bin HOME=/root NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP NCCL_SOCKET_IFNAME="$v" "$NCCL_ORACLE" 2>&1)
	expect_match "$log" "Bootstrap ?: Using (\[0\])?eth0:$(cluster_node_ip 4)<0>" "NCCL's bootstrap on node4 with NCCL_SOCKET_IFNAME=$v"
}

t_path_mtu_probe_finds_1500_on_the_blackhole_and_9000_tried() {
	# the UDP probe (Don't Fragment) on the stalled pair: 1500 echoed, nothing above
	expect_eq "$(jget "sorted(set((m['pmtu'], m['pmtu_max']) for m in d['matrix'] if m['bulk'] == 'stalled'))")" \
		"[(1500, 9000)]" "pmtu of the stalled pair" || return 1
	# every other probed pair passes its own MTU (1500: one end keeps MTU 1500)
	expect_eq "$(jget "sorted(set(m['pmtu'] for m in d['matrix'] if 'pmtu' in m and m['bulk'] == 'ok'))")" \
		"[1500]" "pmtu of the other pairs" || return 1
	# the finding names the size from the probe, with the probe's evidence
	local f
	f=$(jget "[f for f in d['findings'] if f['id'] == 'path-mtu-blackhole'][0]")
	expect_match "$f" "the largest frame proven to pass is 1500 bytes \(node2 -> node3 carried UDP datagrams of that size with Don't Fragment; 9000 did not pass\)" "message" || return 1
	expect_match "$f" "path-MTU probe: 1500 bytes echoed, up to 9000 tried" "evidence" || return 1
}

t_blackhole_check_ends_within_its_deadline() {
	# each stalled attempt ends at its own deadline (1 s here): the check does not hang
	((elapsed_ms < 20000)) || { echo "    check took $elapsed_ms ms"; return 1; }
}

t_clean_cluster_has_no_path_mtu_finding_and_every_bulk_passes() {
	up 4 || return 1
	cd_head check -w 'node[1-4]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	has path-mtu-blackhole "" || return 1
	has mtu-mismatch "" || return 1
	# one proof per pair, from the lower-numbered node (node1..node4 sort as numbers)
	expect_eq "$(jget "sorted(set(m['bulk'] for m in d['matrix'] if not m['fixed_port'] and not m['scope_id'] and m['from'] < m['to']))")" \
		"['ok']" "bulk" || return 1
	expect_eq "$(jget "len([m for m in d['matrix'] if m['bulk'] == 'ok'])")" 6 "bulk proofs (one per pair)" || return 1
	expect_eq "$(jget "sorted(set(m['bulk'] for m in d['matrix'] if m['fixed_port'] or m['scope_id'] or m['from'] > m['to']))")" \
		"['not-tried']" "bulk of the MASTER_PORT, link-local and reverse attempts" || return 1
}

t_clean_cluster_probes_the_path_mtu_with_the_bulk_proof() {
	# the path-MTU probe rides with each bulk proof and finds the whole MTU; no other row has it
	expect_eq "$(jget "sorted(set((m['pmtu'], m['pmtu_max']) for m in d['matrix'] if m['bulk'] == 'ok'))")" \
		"[(1500, 1500)]" "pmtu of the bulk-proven pairs" || return 1
	expect_eq "$(jget "len([m for m in d['matrix'] if 'pmtu' in m and m['bulk'] != 'ok'])")" 0 \
		"rows with pmtu but no bulk proof" || return 1
}

t_node_dropping_icmp_and_udp_is_not_a_black_hole() {
	# node2 drops every ICMP and UDP packet (IPv6 neighbour discovery excepted, or nothing
	# would reach it): an MTU probe over them would see nothing; TCP bulk passes
	ip netns exec "$(cluster_node_ns 2)" nft -f - <<'NFT' || return 1
add table inet clusterdoc_noicmp
add chain inet clusterdoc_noicmp input { type filter hook input priority 0; policy accept; }
add chain inet clusterdoc_noicmp output { type filter hook output priority 0; policy accept; }
add rule inet clusterdoc_noicmp input icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept
add rule inet clusterdoc_noicmp output icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept
add rule inet clusterdoc_noicmp input meta l4proto { icmp, icmpv6, udp } counter drop
add rule inet clusterdoc_noicmp output meta l4proto { icmp, icmpv6, udp } counter drop
NFT
	cd_head check -w 'node[1-4]' --json "${PT[@]}"
	has path-mtu-blackhole "" || return 1
	expect_eq "$(stalled_pairs)" "" "stalled pairs" || return 1
	expect_eq "$(jget "[n['data_interface'] for n in d['nodes']]")" "['eth0', 'eth0', 'eth0', 'eth0']" \
		"data interfaces" || return 1
}

t_udp_dropping_node_gets_pmtu_0_and_bulk_ok() {
	# the probe to and from node2 got no echo at any size (pmtu 0), its TCP bulk passed, and
	# the check still ended in its deadline
	expect_eq "$(jget "sorted(set((m['pmtu'], m['bulk']) for m in d['matrix'] if 'pmtu' in m and 'node2' in (m['from'], m['to'])))")" \
		"[(0, 'ok')]" "pmtu and bulk of node2's pairs" || return 1
	expect_eq "$(jget "sorted(set(m['pmtu'] for m in d['matrix'] if 'pmtu' in m and 'node2' not in (m['from'], m['to'])))")" \
		"[1500]" "pmtu of the other pairs" || return 1
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	((elapsed_ms < 20000)) || { echo "    check took $elapsed_ms ms"; return 1; }
}

itest_need_root
itest_run_all
