#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc fix --only port-range,firewall` on a namespace cluster of real sshd nodes: node 3
# has real nft rules dropping its ephemeral ports; the fix narrows every node's
# ip_local_port_range (sysctl -w, and a block in /etc/sysctl.d for boot) and opens exactly that
# range and MASTER_PORT on node 3, and `check` passes; a second apply changes nothing; `fix
# --undo` puts every range, file and rule back and `check` reports the blocked ports again; a
# range holding MASTER_PORT is refused. Each node has its own network namespace and
# /etc/sysctl.d (cluster.sh), so `sysctl -w net.ipv4.*` there changes that node alone.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fix_ports

PT=(--probe-timeout 1000)
NARROW=(--only port-range,firewall --port-range 40000-40999)
SYSCTL_FILE=60-clusterdoc-port-range.conf

range_of() { cluster_node_exec "$1" cat /proc/sys/net/ipv4/ip_local_port_range; }
sysctl_file() { printf '/etc/netns/%s/sysctl.d/%s\n' "$(cluster_node_ns "$1")" "$SYSCTL_FILE"; }

# snapshot: every node's range, sysctl.d file and ruleset (counters left out)
snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		printf 'node%s range %s\n' "$i" "$(range_of "$i" | tr '\t' ' ')"
		f=$(sysctl_file "$i")
		if [[ -e $f ]]; then printf 'node%s sysctl.d %s\n' "$i" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s sysctl.d absent\n' "$i"; fi
		printf 'node%s nft %s\n' "$i" "$(cluster_node_exec "$i" nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/' | sha256sum | cut -c1-16)"
	done
}

errors_of() { # the error findings of the last --json check, "id:nodes" sorted
	jget "' '.join(sorted(f['id'] + ':' + ','.join(f['nodes']) for f in d['findings'] if f['severity'] == 'error'))"
}

TRAPPED=
BEFORE=
RANGE1=
t_check_reports_the_blocked_ephemeral_ports() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_trap_firewall_port 3 1024-29499 || return 1
	cluster_trap_firewall_port 3 29511-65535 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "check's exit status" || return 1
	TRAPPED=$(errors_of)
	expect_eq "$TRAPPED" "ephemeral-ports-blocked:node3" "error findings" || return 1
	RANGE1=$(range_of 1 | tr '\t' ' ')
	[[ $RANGE1 =~ ^[0-9]+\ [0-9]+$ && $RANGE1 != "40000 40999" ]] || { echo "    node1's range: '$RANGE1'"; return 1; }
	BEFORE=$(snapshot)
}

t_plan_narrows_every_node_and_changes_nothing() {
	cd_head fix -w 'node[1-3]' "${NARROW[@]}" --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status (changes planned)" || return 1
	expect_eq "$(jget '[[a["fixer"] for a in n["actions"]] for n in d["nodes"]]')" \
		"[['port-range', 'port-range'], ['port-range', 'port-range'], ['firewall', 'port-range', 'port-range']]" "actions per node" || return 1
	expect_eq "$(jget 'd["nodes"][0]["actions"][0]["path"]')" "/etc/sysctl.d/$SYSCTL_FILE" "the file" || return 1
	expect_eq "$(jget 'd["nodes"][0]["actions"][1]["argv"]')" \
		"['sysctl', '-w', 'net.ipv4.ip_local_port_range=40000 40999']" "the sysctl command" || return 1
	expect_eq "$(jget 'd["nodes"][0]["actions"][1]["undo"]')" \
		"['sysctl', '-w', 'net.ipv4.ip_local_port_range=$RANGE1']" "its undo" || return 1
	expect_match "$(jget '" ".join(d["nodes"][2]["actions"][0]["argv"])')" \
		"^nft --echo --handle insert rule inet clusterdoc_test input iifname \{ eth0, lo \} ip saddr $CD_SUBNET.0/24 tcp dport \{ 29500, 40000-40999 \} accept comment" "the nft rule" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after a plan"
}

RUN=
AFTER=
t_apply_narrows_the_range_and_opens_only_it() {
	local i
	cd_head fix -w 'node[1-3]' "${NARROW[@]}" --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_eq "$(jget 'sorted(set(a["status"] for n in d["nodes"] for a in n["actions"]))')" "['applied']" "statuses" || return 1
	expect_eq "$(jget '[(v["node"], v["fixer"], v["verified"]) for v in d["verify"]]')" \
		"[('node1', 'port-range', True), ('node2', 'port-range', True), ('node3', 'firewall', True), ('node3', 'port-range', True)]" "verification" || return 1
	for ((i = 1; i <= CD_N; i++)); do
		expect_eq "$(range_of "$i")" "40000	40999" "node$i's ip_local_port_range" || return 1
		expect_eq "$(cat "$(sysctl_file "$i")")" "# >>> clusterdoc port-range >>>
# clusterdoc fix: NCCL and Gloo take their listening ports from this range,
# so the firewall needs to open only it and MASTER_PORT 29500.
net.ipv4.ip_local_port_range = 40000 40999
# <<< clusterdoc port-range <<<" "node$i's $SYSCTL_FILE" || return 1
	done
	expect_match "$(cluster_node_exec 3 nft list chain inet clusterdoc_test input)" \
		"iifname \{ \"lo\", \"eth0\" \} ip saddr $CD_SUBNET.0/24 tcp dport \{ 29500, 40000-40999 \} accept comment \"clusterdoc fix $RUN\"" "node3's rule" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "check's exit status after the fix ($(errors_of))" || return 1
	AFTER=$(snapshot)
}

t_a_second_apply_changes_nothing() {
	cd_head fix -w 'node[1-3]' "${NARROW[@]}" --apply --yes "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" "nothing to change" "the message" || return 1
	expect_match "$out" "note: port-range: net.ipv4.ip_local_port_range already is 40000 40999" "the note" || return 1
	expect_eq "$(snapshot)" "$AFTER" "the nodes"
}

t_undo_restores_ranges_files_and_rules() {
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "exit status ($out $err)" || return 1
	expect_eq "$(grep -c -- '-> undone' <<<"$out")" 7 "changes undone" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo" || return 1
	[[ ! -e $(sysctl_file 1) ]] || { echo "    $(sysctl_file 1) is still there"; return 1; }
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$(errors_of)" "$TRAPPED" "error findings after undo"
}

t_a_range_holding_master_port_is_refused() {
	cd_head fix -w 'node[1-3]' --only port-range,firewall --port-range 29000-30999 --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status (nothing to change)" || return 1
	expect_eq "$(jget 'sum(len(n["actions"]) for n in d["nodes"])')" 0 "actions" || return 1
	expect_eq "$(jget 'len([n for n in d["nodes"] if any("left alone: it holds MASTER_PORT 29500" in t and "address already in use" in t for t in n["notes"])])')" \
		3 "nodes with the refusal" || return 1
	expect_match "$(jget '" | ".join(d["nodes"][2]["notes"])')" \
		"firewall: left as is: MASTER_PORT 29500 is inside the port range 29000-30999" "node3's firewall note" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes"
}

t_an_unknown_fixer_is_refused_before_any_check() {
	cd_head fix -w 'node[1-3]' --only port-range,portrange "${PT[@]}"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" 'clusterdoc fix: --only: no fixer "portrange" (known: ssh-key, env, hosts, firewall, port-range)' "the message" || return 1
	expect_eq "$out" "" "output (no check ran)"
}

itest_need_root
# In file order: each test continues on the cluster and state the previous one left.
itest_run_all
