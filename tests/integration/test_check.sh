#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc check` and `clusterdoc env` on namespace clusters of real sshd nodes: a clean
# cluster, each trap alone, and all of them together. For the traps an environment can fix,
# the suggested environment is written into every node's login shell and the check is run
# again: the finding must be gone.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=check

PT=(--probe-timeout 1000)

# up N [cluster_up args]: a fresh cluster (the previous one is torn down)
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
severity_of() { jget "[f['severity'] for f in d['findings'] if f['id'] == '$1']"; }
no_errors() {
	local e
	e=$(jget "[f['id'] + ' ' + ','.join(f['nodes']) for f in d['findings'] if f['severity'] == 'error']")
	expect_eq "$e" "[]" "error findings"
}

# apply_env: write `clusterdoc env --node nodeI` into each node's login shell
apply_env() {
	local i lines
	for ((i = 1; i <= CD_N; i++)); do
		cd_head env -w "node[1-$CD_N]" --node "node$i" "${PT[@]}"
		lines=$(grep '^export ' <<<"$out")
		[ -n "$lines" ] || { echo "    env printed no export for node$i: $out $err"; return 1; }
		cluster_node_env "$i" "$lines" || return 1
	done
}

t_clean_cluster_has_no_errors_and_exits_0() {
	up 3 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["version"]')" 1 "version" || return 1
	no_errors || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_IFNAME"]')" eth0 "NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_addr"]')" "$(cluster_node_ip 1)" "MASTER_ADDR" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29500 "MASTER_PORT" || return 1
	expect_eq "$(jget 'sorted(set(v["GLOO_SOCKET_IFNAME"] for v in d["suggestions"]["per_node"].values()))')" \
		"['eth0']" "GLOO_SOCKET_IFNAME" || return 1
	expect_eq "$(jget 'd["nodes"][1]["nccl"]["log_line"]')" \
		"NET/Socket : Using [0]eth0:$(cluster_node_ip 2)<0>" "node2's NCCL line" || return 1
	expect_eq "$(jget 'all(m["result"] == "ok" for m in d["matrix"])')" True "every attempt ok" || return 1
	# every ordered pair tested the other's eth0 address
	expect_eq "$(jget 'len({(m["from"], m["to"]) for m in d["matrix"] if not m["fixed_port"]})')" 6 "pairs" || return 1
	expect_match "$(jget 'd["suggestions"]["torchrun"]["node2"]')" \
		"^torchrun --nnodes=3 --node_rank=1 --nproc_per_node=1 --master_addr=$(cluster_node_ip 1) --master_port=29500 " \
		"torchrun line"
}

# Every suggested torchrun line is one Debian's torch (1.13, whose torchrun knows only the
# underscore spellings of its options) accepts: parsed by that torch's own argument parser.
t_suggested_torchrun_lines_parse_with_debian_torch() {
	local lines
	[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import torch.distributed.run' 2>/dev/null ||
		{ echo "    no torch in /usr/bin/python3"; return 1; }
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	lines=$(jget '"\n".join(d["suggestions"]["torchrun"].values())')
	expect_eq "$(wc -l <<<"$lines")" 3 "lines" || return 1
	expect_eq "$(/usr/bin/python3 -c '
import shlex, sys
from torch.distributed.run import get_args_parser
for line in sys.stdin:
    a = get_args_parser().parse_args(shlex.split(line)[1:])
    print(a.nnodes, a.node_rank, a.nproc_per_node, a.master_addr, a.master_port, a.training_script)
' <<<"$lines" 2>&1 | sort)" "$(printf '3 %d 1 %s 29500 train.py\n' 0 "$(cluster_node_ip 1)" 1 "$(cluster_node_ip 1)" 2 "$(cluster_node_ip 1)")" \
		"what torch's parser reads"
}

t_text_report_shows_nccl_line_findings_and_environment() {
	cd_head check -w 'node[1-3]' "${PT[@]}"
	expect_eq "$rc" 0 "exit status" || return 1
	expect_match "$out" "NCCL  NET/Socket : Using \[0\]eth0:$(cluster_node_ip 1)<0>" "NCCL line" || return 1
	expect_match "$out" "FINDINGS: 0 error" "findings header" || return 1
	expect_match "$out" "all nodes:  NCCL_SOCKET_IFNAME=eth0" "suggestion"
}

t_env_prints_export_lines_per_node() {
	cd_head env -w 'node[1-3]' "${PT[@]}"
	expect_eq "$rc" 0 "exit status" || return 1
	expect_match "$out" "^# node2$" "node comment" || return 1
	expect_eq "$(grep -c '^export GLOO_SOCKET_IFNAME=eth0$' <<<"$out")" 3 "GLOO lines" || return 1
	cd_head env -w 'node[1-3]' --node node3 "${PT[@]}"
	expect_eq "$(grep -c '^export ' <<<"$out")" 4 "export lines for one node" || return 1
	expect_match "$out" "^export MASTER_ADDR=$(cluster_node_ip 1)$" "MASTER_ADDR" || return 1
	# the lines are valid shell
	bash -n <<<"$out" || { echo "    not valid shell: $out"; return 1; }
	cd_head env -w 'node[1-3]' --node node9 "${PT[@]}"
	expect_eq "$rc" 2 "exit status for an unknown --node" || return 1
	# --json: the same values as one document (docs/schema/env.json)
	cd_head env -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status with --json ($err)" || return 1
	expect_eq "$(jget '[(n["host"], n["checked"], n["verified"], n["env"]["GLOO_SOCKET_IFNAME"]) for n in d["nodes"]]')" \
		"[('node1', True, True, 'eth0'), ('node2', True, True, 'eth0'), ('node3', True, True, 'eth0')]" \
		"each node's variables" || return 1
	expect_eq "$(jget 'd["nodes"][2]["env"]["MASTER_ADDR"]')" "$(cluster_node_ip 1)" "MASTER_ADDR" || return 1
	expect_eq "$(jget 'd["exit"]')" 0 "the exit status in the document"
}

t_ipv6_only_nic_is_ipv6_no_route_and_the_suggestion_avoids_it() {
	up 3 || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	has ipv6-no-route node1 || return 1
	expect_match "$(jget 'd["nodes"][0]["nccl"]["log_line"]')" "\[1\]ens6:2001:db8::11<0>" "node1's NCCL line" || return 1
	expect_eq "$(jget 'd["suggestions"]["env"].get("NCCL_SOCKET_FAMILY")')" AF_INET "NCCL_SOCKET_FAMILY" || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_IFNAME"]')" eth0 "NCCL_SOCKET_IFNAME" || return 1
	apply_env || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status with the suggested environment ($(jget '[f["id"] for f in d["findings"]]'))" || return 1
	expect_eq "$(jget 'd["nodes"][0]["nccl"]["log_line"]')" "NET/Socket : Using [0]eth0:$(cluster_node_ip 1)<0>" \
		"node1's NCCL line with the suggestion"
}

t_hostname_on_127_0_1_1_is_hostname_loopback_for_gloo() {
	up 3 || return 1
	cluster_trap_hostname_loopback 2 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	has hostname-loopback node2 || return 1
	expect_eq "$(severity_of hostname-loopback)" "['error']" "severity" || return 1
	expect_eq "$(jget 'd["nodes"][1]["gloo"]["devices"][0]["address"]')" 127.0.1.1 "Gloo's address on node2" || return 1
	expect_eq "$(jget 'd["suggestions"]["per_node"]["node2"]["GLOO_SOCKET_IFNAME"]')" eth0 "GLOO for node2" || return 1
	apply_env || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status with GLOO_SOCKET_IFNAME set" || return 1
	# still worth a warning: torchrun advertises the hostname
	expect_eq "$(severity_of hostname-loopback)" "['warning']" "severity with GLOO_SOCKET_IFNAME"
}

t_docker0_everywhere_is_a_duplicate_address() {
	up 3 || return 1
	cluster_trap_docker0 all || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status (NCCL's default excludes docker)" || return 1
	has duplicate-address node1,node2,node3 || return 1
	expect_eq "$(severity_of duplicate-address)" "['warning']" "severity while unused" || return 1
	expect_eq "$(jget '[f["evidence"] for f in d["findings"] if f["id"] == "duplicate-address"]')" \
		"[['172.17.0.1 on docker0: node[1-3]']]" "evidence: one line, the nodes folded"
}

t_stale_ifname_env_selecting_docker0_is_an_error() {
	# continues on the docker0 cluster: ^lo lets docker0 in; eth9 exists nowhere
	cluster_node_env 1 'export NCCL_SOCKET_IFNAME=^lo' || return 1
	cluster_node_env 2 'export NCCL_SOCKET_IFNAME=eth9' 'export GLOO_SOCKET_IFNAME=^lo' || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	has stale-ifname-env node2 || return 1
	has virtual-iface-selected node1 || return 1
	expect_eq "$(severity_of duplicate-address)" "['error']" "duplicate-address once docker0 is used" || return 1
	expect_match "$(jget 'd["nodes"][1]["gloo"]["error"]')" "Unable to find address for: \^lo" "Gloo's error" || return 1
	expect_match "$(jget 'd["nodes"][0]["nccl"]["rule"]')" "NCCL_SOCKET_IFNAME=\^lo" "rule names the variable" || return 1
	apply_env || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status with the suggested environment" || return 1
	expect_eq "$(severity_of duplicate-address)" "['warning']" "docker0 unused again"
}

t_different_nic_names_are_reported_and_listed_in_the_suggestion() {
	up 3 --nic-names "eth0 eth0 enp1s0" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status" || return 1
	has nic-name-mismatch node1,node2,node3 || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_IFNAME"]')" "eth0,enp1s0" "NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget 'd["suggestions"]["per_node"]["node3"]["GLOO_SOCKET_IFNAME"]')" enp1s0 "GLOO on node3" || return 1
	expect_eq "$(jget 'd["suggestions"]["per_node"]["node1"]["GLOO_SOCKET_IFNAME"]')" eth0 "GLOO on node1"
}

t_mtu_mismatch_is_a_warning() {
	cluster_trap_mtu 2 9000 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	has mtu-mismatch node1,node2,node3 || return 1
	expect_match "$(jget 'd["findings"]')" "node2: eth0 mtu 9000" "evidence"
}

t_master_port_dropped_on_another_node_is_a_warning_and_on_the_master_an_error() {
	up 3 || return 1
	cluster_trap_firewall_port 3 29500 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status (master is node1)" || return 1
	has firewall-blocks-port node3 || return 1
	expect_match "$(jget 'd["findings"]')" "dropped" "how" || return 1
	cd_head check -w 'node[1-3]' --master node3 --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status with node3 as master" || return 1
	has master-port-blocked node3 || return 1
	expect_match "$(jget 'd["findings"]')" "nft: .*dport 29500.*drop" "the rule as evidence" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29501 "a MASTER_PORT proved open" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_addr"]')" "$(cluster_node_ip 3)" "MASTER_ADDR"
}

t_blocked_ephemeral_ports_are_reported() {
	up 3 || return 1
	cluster_trap_firewall_port 2 1024-29499 || return 1
	cluster_trap_firewall_port 2 29511-65535 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	has ephemeral-ports-blocked node2 || return 1
	has firewall-blocks-port node2 || return 1
	expect_eq "$(jget 'd["suggestions"]["per_node"]["node2"].get("GLOO_SOCKET_IFNAME")')" None \
		"no unverified GLOO suggestion for node2"
}

t_dead_node_is_reported_and_the_others_are_checked() {
	up 3 || return 1
	cluster_node_stop_sshd 2 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 2 "exit status" || return 1
	has node-unreachable node2 || return 1
	expect_eq "$(jget '[n["checked"] for n in d["nodes"]]')" "[True, False, True]" "checked" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" refused "error code" || return 1
	expect_eq "$(jget 'all(m["result"] == "ok" for m in d["matrix"])')" True "node1<->node3 ok" || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_IFNAME"]')" eth0 "suggestion for the others"
}

t_odd_addresses_do_not_break_the_check() {
	up 2 || return 1
	# node2: a link with no address (down, so not even a link-local one), a secondary IPv4, a ULA and a second global IPv6 on eth0
	printf '%s\n' "link add noaddr0 type bridge" \
		"addr add $CD_SUBNET.112/24 dev eth0" "addr add fd00:cd::12/64 dev eth0 nodad" \
		"addr add 2001:db8:cd::12/64 dev eth0 nodad" | ip -n "$(cluster_node_ns 2)" -b - || return 1
	cd_head check -w 'node[1-2]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($(jget '[f["id"] for f in d["findings"]]'))" || return 1
	expect_eq "$(jget '[i["addresses"] for i in d["nodes"][1]["interfaces"] if i["name"] == "noaddr0"]')" "[[]]" \
		"noaddr0 has no address" || return 1
	expect_eq "$(jget 'len([a for i in d["nodes"][1]["interfaces"] if i["name"] == "eth0" for a in i["addresses"] if a["family"] == "inet"])')" 2 \
		"eth0's two IPv4 addresses" || return 1
	# NCCL keeps the first address of eth0; the secondary was tested too
	expect_eq "$(jget 'd["nodes"][1]["nccl"]["interfaces"][0]["address"]')" "$(cluster_node_ip 2)" "NCCL's pick" || return 1
	expect_eq "$(jget '[m["result"] for m in d["matrix"] if m["address"] == "'"$CD_SUBNET"'.112" and not m["fixed_port"]]')" "['ok']" \
		"the secondary address reached"
}

t_all_traps_together_each_on_its_node() {
	up 4 --nic-names "eth0 eth0 enp1s0 eth0" || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	cluster_trap_hostname_loopback 2 || return 1
	cluster_trap_docker0 all || return 1
	cluster_trap_firewall_port 4 29500 || return 1
	cluster_trap_mtu 3 1400 || return 1
	cd_head check -w 'node[1-4]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	has ipv6-no-route node1 || return 1
	has hostname-loopback node2 || return 1
	has nic-name-mismatch node1,node2,node3,node4 || return 1
	has duplicate-address node1,node2,node3,node4 || return 1
	expect_eq "$(jget '[f["evidence"] for f in d["findings"] if f["id"] == "duplicate-address"]')" \
		"[['172.17.0.1 on docker0: node[1-4]']]" "duplicate-address evidence" || return 1
	has firewall-blocks-port node4 || return 1
	has mtu-mismatch node1,node2,node3,node4 || return 1
	expect_eq "$(jget 'd["findings"][0]["severity"]')" error "worst first" || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_IFNAME"]')" "eth0,enp1s0" "NCCL_SOCKET_IFNAME" || return 1
	expect_eq "$(jget 'd["suggestions"]["env"]["NCCL_SOCKET_FAMILY"]')" AF_INET "NCCL_SOCKET_FAMILY" || return 1
	apply_env || return 1
	cd_head check -w 'node[1-4]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status with the suggested environment ($(jget '[f["id"] for f in d["findings"] if f["severity"] == "error"]'))"
}

itest_need_root
# In file order: some tests continue on the cluster the previous one made.
itest_run_all
