#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Routes and several NICs on namespace clusters of real sshd nodes: a stale more specific route
# through another NIC, two NICs in one subnet with strict rp_filter, two same-metric routes to one
# subnet ordered differently on one node (NVIDIA/nccl#1581) - each alone and all together. Each
# finding names exactly the nodes where it happens, with `ip route get` evidence taken there, and
# no finding names a node whose own routes and answers are fine.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/fabric_gloo.sh"
ITEST_FILE=fabric_routes

PT=(--probe-timeout 1000)

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

check3() { cd_head check -w 'node[1-3]' --json "${PT[@]}"; }

# has ID NODES: a finding with that id lists exactly these nodes (sorted, comma-separated)
has() {
	local got
	got=$(jget "','.join(sorted(set(n for f in d['findings'] if f['id'] == '$1' for n in f['nodes'])))")
	expect_eq "$got" "$2" "nodes of finding $1"
}
severity_of() { jget "','.join(f['severity'] for f in d['findings'] if f['id'] == '$1')"; }
evidence_of() { jget "'\n'.join(e for f in d['findings'] if f['id'] == '$1' for e in f['evidence'])"; }
# named_by NODE: the ids of every finding that names NODE, sorted
named_by() { jget "','.join(sorted(f['id'] for f in d['findings'] if '$1' in f['nodes']))"; }

# egress_is_suggested: on every node, the kernel's route from the suggested GLOO_SOCKET_IFNAME's
# address toward every peer's eth0 address leaves through that interface
egress_is_suggested() {
	local i j ifname a dev
	for ((i = 1; i <= CD_N; i++)); do
		ifname=$(jget "d['suggestions']['per_node']['node$i'].get('GLOO_SOCKET_IFNAME', '')")
		[ -n "$ifname" ] || { echo "    node$i: no GLOO_SOCKET_IFNAME suggested"; return 1; }
		a=$(cluster_node_exec "$i" ip -4 -o addr show dev "$ifname" | awk '{split($4, p, "/"); print p[1]; exit}')
		for ((j = 1; j <= CD_N; j++)); do
			((i == j)) && continue
			dev=$(cluster_node_exec "$i" ip route get "$(cluster_node_ip "$j")" from "$a" |
				sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -1)
			expect_eq "$dev" "$ifname" "node$i's egress toward node$j from $a" || return 1
		done
	done
}

# nccl_picks_suggested: with its suggested NCCL_SOCKET_IFNAME (and NCCL_SOCKET_FAMILY), the real
# NCCL's bootstrap on every node picks the suggested interface and the node's address on it
# (NCCL_ORACLE: tests/oracle/nccl_bootstrap; nothing to check without it); with "where-suggested",
# only on the nodes that got a GLOO_SOCKET_IFNAME
nccl_picks_suggested() {
	local i ifname a vars log got
	[ -n "${NCCL_ORACLE:-}" ] && [ -x "$NCCL_ORACLE" ] || return 0
	for ((i = 1; i <= CD_N; i++)); do
		ifname=$(jget "d['suggestions']['per_node']['node$i'].get('GLOO_SOCKET_IFNAME', '')")
		[ -z "$ifname" ] && [ "${1:-}" = where-suggested ] && continue
		a=$(cluster_node_exec "$i" ip -4 -o addr show dev "$ifname" | awk '{split($4, p, "/"); print p[1]; exit}')
		read -r -a vars <<<"$(jget "' '.join(k + '=' + v for k, v in d['suggestions']['per_node']['node$i'].items() if k.startswith('NCCL_SOCKET_'))")"
		log=$(cluster_node_exec "$i" env -i PATH=/usr/bin:/bin HOME=/root NCCL_DEBUG=INFO \
			NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP "${vars[@]}" "$NCCL_ORACLE" 2>&1)
		got=$(sed -nE 's/.*Bootstrap ?: Using (\[0\])?([^ ]+)<0>.*/\2/p' <<<"$log" | head -1)
		expect_eq "$got" "$ifname:$a" "real NCCL's bootstrap on node$i with ${vars[*]}" || return 1
	done
}

# suggested_egress_holds: like egress_is_suggested, for the nodes that got a GLOO_SOCKET_IFNAME
# (a node whose every address is refuted gets none)
suggested_egress_holds() {
	local i j ifname a dev
	for ((i = 1; i <= CD_N; i++)); do
		ifname=$(jget "d['suggestions']['per_node']['node$i'].get('GLOO_SOCKET_IFNAME', '')")
		[ -n "$ifname" ] || continue
		a=$(cluster_node_exec "$i" ip -4 -o addr show dev "$ifname" | awk '{split($4, p, "/"); print p[1]; exit}')
		for ((j = 1; j <= CD_N; j++)); do
			((i == j)) && continue
			dev=$(cluster_node_exec "$i" ip route get "$(cluster_node_ip "$j")" from "$a" |
				sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -1)
			expect_eq "$dev" "$ifname" "node$i's egress toward node$j from $a" || return 1
		done
	done
}
notes() { jget "d['suggestions']['notes']"; }

# gloo_suggested I...: a Gloo allreduce of 4 MiB across nodes I... under their suggested
# GLOO_SOCKET_IFNAME and node1's MASTER_ADDR completes on every rank within 30 s (no torch: skipped)
gloo_suggested() {
	local i m specs=() want
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || { echo "    (no torch: skipped)"; return 0; }
	m=$(jget "d['suggestions']['per_node']['node1'].get('MASTER_ADDR', '')")
	for i in "$@"; do
		specs+=("$i=$(jget "d['suggestions']['per_node']['node$i'].get('GLOO_SOCKET_IFNAME', '')"),$m")
	done
	want=$(($# * ($# + 1) / 2)).0
	gloo_allreduce 30 "${specs[@]}"
	expect_eq "$(gloo_count "sum $want $want")" "$#" "ranks whose 4 MiB allreduce completed within 30 s" ||
		{ tail -n 5 "$CD_RUN"/gloo-*.log; return 1; }
}

t_clean_cluster_has_no_route_findings() {
	up 3 || return 1
	check3
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	has route-egress-mismatch "" || return 1
	has multiple-nics-same-subnet "" || return 1
	egress_is_suggested || return 1
	nccl_picks_suggested
}

t_stale_route_is_named_on_its_node_only() {
	up 3 || return 1
	cluster_trap_stale_route 2 3 || return 1
	check3
	has route-egress-mismatch node2 || return 1
	expect_eq "$(severity_of route-egress-mismatch)" error "severity (node2's connects to node3 fail)" || return 1
	expect_match "$(evidence_of route-egress-mismatch)" \
		"^node2: ip route get $(cluster_node_ip 3) from $(cluster_node_ip 2) -> dev ens7.*, but $(cluster_node_ip 2) belongs to eth0; node2 -> node3 port [0-9]+: timeout" \
		"node2's own route answer" || return 1
	# node3 is where node2's connects went; its own routes and answers are fine
	expect_eq "$(named_by node3)" "" "findings naming node3" || return 1
	expect_eq "$(named_by node1)" "" "findings naming node1"
}

t_stale_route_node_is_not_suggested_the_nic_its_route_leaves_beside() {
	# node2's eth0 address sends node3's traffic out of ens7: eth0 is not suggested there, the
	# notes say why, and every interface still suggested sends its traffic out of itself
	expect_eq "$(jget "d['suggestions']['per_node']['node2'].get('GLOO_SOCKET_IFNAME')")" None \
		"node2's GLOO_SOCKET_IFNAME" || return 1
	expect_eq "$(jget "d['suggestions']['per_node']['node2'].get('NCCL_SOCKET_IFNAME')")" None \
		"node2's NCCL_SOCKET_IFNAME" || return 1
	expect_match "$(notes)" "node2: eth0 is not suggested: its own route sends traffic from $(cluster_node_ip 2) to $(cluster_node_ip 3) \(node3\) out of ens7 \(route-egress-mismatch\)" \
		"notes" || return 1
	suggested_egress_holds
}

t_stale_route_target_still_gets_its_own_suggestion() {
	# node3 is only the target of node2's stale route: node2's failed connects are node2's
	# route's fault, so node3's eth0 is still proved, suggested and not noted as refused
	local i
	for i in 1 3; do
		expect_eq "$(jget "d['suggestions']['per_node']['node$i'].get('GLOO_SOCKET_IFNAME')")" eth0 \
			"node$i's GLOO_SOCKET_IFNAME" || return 1
		expect_match "$(jget "d['suggestions']['per_node']['node$i'].get('NCCL_SOCKET_IFNAME')")" '^=?eth0$' \
			"node$i's NCCL_SOCKET_IFNAME" || return 1
	done
	expect_eq "$(jget "'\\n'.join(l for l in d['suggestions']['notes'].splitlines() if l.startswith(('node1', 'node3')))")" "" \
		"notes on node1 and node3" || return 1
	nccl_picks_suggested where-suggested || return 1
	# the job's own traffic between the two nodes suggested for
	gloo_suggested 1 3
}

t_two_nics_in_one_subnet_with_strict_rp_filter_is_an_error_on_its_node() {
	up 3 || return 1
	cluster_trap_two_nics_subnet 2 || return 1
	check3
	expect_eq "$rc" 1 "exit status" || return 1
	has multiple-nics-same-subnet node2 || return 1
	expect_eq "$(severity_of multiple-nics-same-subnet)" error "severity" || return 1
	expect_eq "$(evidence_of multiple-nics-same-subnet)" \
		"node2: eth0 $(cluster_node_ip 2)/24 and eth1 $CD_SUBNET.102/24 share a subnet; rp_filter eth0=1 eth1=1; arp_ignore eth0=0 eth1=0; arp_announce eth0=0 eth1=0; ip route get $(cluster_node_ip 1) from $(cluster_node_ip 2) -> dev eth0" \
		"evidence" || return 1
	expect_eq "$(named_by node1)" "" "findings naming node1" || return 1
	expect_eq "$(named_by node3)" "" "findings naming node3" || return 1
	egress_is_suggested || return 1
	nccl_picks_suggested
}

t_route_order_that_prefers_the_other_nic_is_named_on_its_node() {
	up 3 || return 1
	cluster_trap_route_order 3 || return 1
	check3
	expect_eq "$rc" 0 "exit status (traffic still flows: rp_filter is loose)" || return 1
	has route-egress-mismatch node3 || return 1
	has multiple-nics-same-subnet node3 || return 1
	expect_eq "$(severity_of multiple-nics-same-subnet)" warning "severity" || return 1
	expect_match "$(evidence_of route-egress-mismatch)" \
		"node3: ip route get $(cluster_node_ip 1) from $(cluster_node_ip 3) -> dev eth1.*, but $(cluster_node_ip 3) belongs to eth0" \
		"node3's own route answer" || return 1
	expect_eq "$(named_by node1)" "" "findings naming node1" || return 1
	expect_eq "$(named_by node2)" "" "findings naming node2" || return 1
	nccl_picks_suggested
}

t_route_order_node_is_suggested_the_nic_its_traffic_leaves_through() {
	# node3's routes send its eth0 address's traffic out of eth1: eth1 (its own address there)
	# is suggested, the notes say why, and real NCCL binds eth1's address
	expect_eq "$(jget "d['suggestions']['per_node']['node3'].get('GLOO_SOCKET_IFNAME')")" eth1 \
		"node3's GLOO_SOCKET_IFNAME" || return 1
	expect_match "$(notes)" "node3: eth0 is not suggested: its own route sends traffic from $(cluster_node_ip 3) to $CD_SUBNET\.1[12] \(node[12]\) out of eth1 \(route-egress-mismatch\); eth1 is suggested instead" \
		"notes" || return 1
	egress_is_suggested || return 1
	nccl_picks_suggested || return 1
	gloo_suggested 1 2 3
}

t_all_route_traps_together_each_on_its_node() {
	up 3 || return 1
	cluster_trap_two_nics_subnet 1 || return 1
	cluster_trap_stale_route 2 3 || return 1
	cluster_trap_route_order 3 || return 1
	check3
	expect_eq "$rc" 1 "exit status" || return 1
	has multiple-nics-same-subnet node1,node3 || return 1
	has route-egress-mismatch node2,node3 || return 1
	expect_match "$(evidence_of route-egress-mismatch)" "node2: ip route get $(cluster_node_ip 3) from $(cluster_node_ip 2) -> dev ens7" \
		"node2's evidence" || return 1
	expect_match "$(evidence_of multiple-nics-same-subnet)" "node1: eth0 $(cluster_node_ip 1)/24 and eth1 $CD_SUBNET.101/24 share a subnet; rp_filter eth0=1 eth1=1" \
		"node1's evidence"
}

t_all_route_traps_suggest_only_interfaces_their_traffic_leaves_through() {
	expect_eq "$(jget "d['suggestions']['per_node']['node2'].get('GLOO_SOCKET_IFNAME')")" None \
		"node2's GLOO_SOCKET_IFNAME" || return 1
	suggested_egress_holds || return 1
	nccl_picks_suggested where-suggested
}

itest_need_root
itest_run_all
