#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The master's own path to MASTER_ADDR:MASTER_PORT on a namespace cluster of real sshd nodes.
# torchrun's rank-0 agent connects to its own MASTER_ADDR; that connection comes in on `lo`. The
# master (node1) drops TCP 29500 on every interface (cluster_trap_firewall_port): `check` names
# the master's own path, `fix --apply --yes` opens it (its verify and a fresh check pass, and a
# connection from node1 to its own address is refused at once instead of timing out), and a
# rule that accepts the peers on the data interface alone (what an older fix added) still
# leaves the master's own path blocked, which check names alone.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=master_self_path
itest_need_root

PT=(--probe-timeout 1000)

# the master-port-blocked findings' nodes and evidence lines of the last --json check
blocked_nodes() { jget "','.join(sorted(set(n for f in d['findings'] if f['id'] == 'master-port-blocked' for n in f['nodes'])))"; }
blocked_evidence() { jget "'\n'.join(l for f in d['findings'] if f['id'] == 'master-port-blocked' for l in f['evidence'])"; }
errors_of() { jget "' '.join(sorted(f['id'] + ':' + ','.join(f['nodes']) for f in d['findings'] if f['severity'] == 'error'))"; }

# self_connect: node1 connects to its own address on 29500, nothing listening there; $rc and
# $err of bash's redirection (124: timed out)
self_connect() {
	err=$(cluster_node_exec 1 timeout 3 bash -c "</dev/tcp/$(cluster_node_ip 1)/29500" 2>&1)
	rc=$?
}

t_check_names_the_masters_own_path_when_it_drops_its_port_everywhere() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_trap_firewall_port 1 29500 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(errors_of)" "master-port-blocked:node1" "error findings" || return 1
	expect_match "$(blocked_evidence)" "^node1 -> its own $(cluster_node_ip 1):29500: timed out$" \
		"the master's own path in the evidence" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29501 "a MASTER_PORT every node and the master reached"
}

RUN=
t_fix_apply_opens_the_port_to_the_master_itself() {
	self_connect
	expect_eq "$rc" 124 "node1 -> its own 29500 before the fix (timed out)" || return 1
	cd_head fix -w 'node[1-3]' --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_eq "$(jget '[(v["node"], v["fixer"], v["verified"]) for v in d["verify"]]')" \
		"[('node1', 'firewall', True)]" "verification" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "a fresh check's exit status ($(errors_of))" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29500 "MASTER_PORT" || return 1
	self_connect
	expect_eq "$rc" 1 "node1 -> its own 29500 after the fix (refused, not timed out)" || return 1
	expect_match "$err" "Connection refused" "bash's message"
}

t_an_accept_for_the_data_nic_alone_leaves_the_masters_own_path_blocked() {
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	cluster_node_exec 1 nft insert rule inet clusterdoc_test input iifname "$(cluster_node_nic 1)" \
		ip saddr "$CD_SUBNET.0/24" meta l4proto tcp accept || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(blocked_nodes)" node1 "master-port-blocked's nodes" || return 1
	expect_eq "$(blocked_evidence | grep -c -- ' -> ')" 1 "paths in the evidence (the peers get through)" || return 1
	expect_eq "$(blocked_evidence)" "node1 -> its own $(cluster_node_ip 1):29500: timed out
nft: inet clusterdoc_test input: tcp dport 29500 counter drop" "the evidence: the master's own path and the rule" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29501 "MASTER_PORT"
}

t_fix_adds_a_rule_for_lo_beside_the_older_one() {
	cd_head fix -w 'node[1-3]' --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$(jget '" ".join(d["nodes"][0]["actions"][0]["argv"])')" \
		"iifname \{ $(cluster_node_nic 1), lo \} ip saddr $CD_SUBNET.0/24 meta l4proto tcp accept" "the rule" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "a fresh check's exit status ($(errors_of))" || return 1
	self_connect
	expect_eq "$rc" 1 "node1 -> its own 29500 (refused)"
}

itest_run_all
