#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ascend NPU facts and check on a namespace cluster of two real sshd nodes ("servers" of eight
# devices each). No NPU can exist here: npu-smi and hccn_tool are the stand-ins of tests/fakes
# (they replay the tools' documented output; sources cited in them), copied to a directory first
# on each node's login PATH, each node reading its own scenario file ($CD_FAKE_ASCEND). The
# install files (driver, firmware, CANN) are under $CLUSTERDOC_ASCEND_ROOT, per node.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=ascend

# guide_plan S: the guide's device addresses for server S (0 or 1), as scenario lines
guide_plan() {
	local d
	for ((d = 0; d < 8; d++)); do
		printf 'ip.%d=192.168.%d.%d/255.255.255.0\n' "$d" $((100 + d % 4)) $((($1 ? 111 : 101) - (d >= 4)))
	done
}

# scenario I LINES...: node I's scenario: npus=8, the guide's plan, then LINES (later keys win)
scenario() {
	local i=$1 f
	shift
	f=$CD_RUN/n$i/ascend.sc
	{ echo npus=8; guide_plan $((i - 1)); printf '%s\n' "$@"; } >"$f"
	rm -f "$f".state.*
}

# ascend_findings: "id: evidence" lines of the ascend-* findings of $out, sorted
ascend_findings() {
	jget '"\n".join(sorted(f["id"] + ": " + e for f in d["findings"] if f["id"].startswith("ascend-") and f["id"] != "ascend-hccl-settings" for e in f["evidence"]))'
}

t_facts_lists_the_npus_the_versions_and_the_hccl_variables() {
	local i root
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	mkdir -p "$CD_RUN/ascend-bin" || return 1
	cp "$CD_TOP/tests/fakes/npu-smi" "$CD_TOP/tests/fakes/hccn_tool" "$CD_TOP/tests/fakes/ascend_scenario.sh" "$CD_RUN/ascend-bin/" || return 1
	for i in 1 2; do
		root=$CD_RUN/n$i/Ascend
		mkdir -p "$root/driver" "$root/firmware" "$root/ascend-toolkit/latest/$(uname -m)-linux" || return 1
		printf 'Version=23.0.3\n' >"$root/driver/version.info"
		printf 'Version=7.1.0.5.220\n' >"$root/firmware/version.info"
		printf 'package_name=Ascend-cann-toolkit\nversion=7.0.0\n' >"$root/ascend-toolkit/latest/$(uname -m)-linux/ascend_toolkit_install.info"
		scenario "$i"
		cluster_node_env "$i" "export PATH=$CD_RUN/ascend-bin:\$PATH" "export CD_FAKE_ASCEND=$CD_RUN/n$i/ascend.sc" \
			"export CLUSTERDOC_ASCEND_ROOT=$root" "export HCCL_CONNECT_TIMEOUT=600" || return 1
	done
	cd_head facts -w 'node[1-2]' --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[len(n["npus"]) for n in d["nodes"]]')" "[8, 8]" "NPUs per node" || return 1
	expect_eq "$(jget 'd["nodes"][1]["npus"][7]')" "{'id': 7, 'name': '910B3', 'health': 'OK', 'bus_id': '0000:C8:00.0'}" "node2's NPU 7" || return 1
	expect_eq "$(jget '[(n["ascend"]["driver"], n["ascend"]["firmware"], n["ascend"]["cann"]) for n in d["nodes"]]')" \
		"[('23.0.3', '7.1.0.5.220', '7.0.0'), ('23.0.3', '7.1.0.5.220', '7.0.0')]" "driver, firmware, CANN" || return 1
	expect_eq "$(jget 'd["nodes"][0]["ascend_env"]')" "{'HCCL_CONNECT_TIMEOUT': '600'}" "the login's HCCL_ variables"
}

t_check_of_the_guides_plan_has_no_ascend_fault_and_suggests_hccl_settings() {
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000
	expect_eq "$(ascend_findings)" "" "ascend findings" || return 1
	expect_eq "$(jget '[e for f in d["findings"] if f["id"] == "ascend-hccl-settings" for e in f["evidence"] if e.startswith("node2:")]')" \
		"['node2: HCCL_IF_IP=$(cluster_node_ip 2) MASTER_ADDR=$(cluster_node_ip 1) MASTER_PORT=29500 torchrun --nnodes=2 --node_rank=1 --nproc_per_node=8 --master_addr=$(cluster_node_ip 1) --master_port=29500 main.py']" \
		"node2's launch line" || return 1
	expect_match "$(jget '[f["fix"] for f in d["findings"] if f["id"] == "ascend-hccl-settings"][0]')" "Keep the firewall on" "no firewall off"
}

t_check_names_link_down_tls_mismatch_duplicate_and_failed_netdetect() {
	scenario 1 "link.6=DOWN" "unreach=192.168.101.111"
	scenario 2 "tls.2=0" "ip.3=192.168.103.101/255.255.255.0"
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000
	expect_eq "$(ascend_findings)" "ascend-duplicate-address: address 192.168.103.101 is held by device 3 of node1 and device 3 of node2 (rule 3: every address is unique)
ascend-link-down: node1: device 6: link status DOWN
ascend-net-health: node1: device 1 toward 192.168.101.111: net health status Receive timeout
ascend-net-health: node1: device 6 toward 192.168.102.110: net health status Fault
ascend-tls-mismatch: tls switch 0 (disabled) on 1: node2:2
ascend-tls-mismatch: tls switch 1 (enabled) on 15: node1:0, node1:1, node1:2, node1:3, node1:4, node1:5, node1:6, node1:7, node2:0, node2:1, node2:3, node2:4, node2:5, node2:6, node2:7" \
		"the findings, each naming its device and server"
}

t_check_names_each_broken_plan_rule() {
	# node2: devices 1 and 5 swapped into each other's places of server0's plan
	scenario 1
	scenario 2 "ip.0=192.168.100.111/255.255.255.0" "ip.4=192.168.104.110/255.255.255.0" "ip.1=192.168.101.111/255.255.255.0" \
		"ip.5=192.168.101.112/255.255.255.0" "ip.6=192.168.101.110/255.255.255.0"
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000
	expect_eq "$(ascend_findings)" "ascend-ip-plan: device 4 of node1 (192.168.100.100/255.255.255.0) and of node2 (192.168.104.110/255.255.255.0) are in different segments (rule 2: device i of every server is in the same segment)
ascend-ip-plan: device 6 of node1 (192.168.102.100/255.255.255.0) and of node2 (192.168.101.110/255.255.255.0) are in different segments (rule 2: device i of every server is in the same segment)
ascend-ip-plan: on node2, devices 0 (192.168.100.111/255.255.255.0) and 4 (192.168.104.110/255.255.255.0) are in different segments (rule 1: devices i and i+4 of a server share a segment)
ascend-ip-plan: on node2, devices 2 (192.168.102.111/255.255.255.0) and 6 (192.168.101.110/255.255.255.0) are in different segments (rule 1: devices i and i+4 of a server share a segment)
ascend-ip-plan: on node2, devices 5 (192.168.101.112) and 6 (192.168.101.110) are both in 192.168.101.0/24 (rule 1: devices 4-7 of a server are in different segments)" \
		"each broken rule with its devices and servers"
}

t_a_hanging_or_garbling_tool_makes_the_probe_incomplete_within_its_deadline() {
	scenario 1 "mode.hccn_tool=garbage"
	scenario 2 "mode.hccn_tool=hang"
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000
	expect_eq "$(jget '[f["id"] for f in d["findings"] if f["id"].startswith("ascend-") and f["id"] not in ("ascend-hccl-settings", "ascend-probe-incomplete")]')" \
		"[]" "no finding from what the tools did not say" || return 1
	expect_match "$(ascend_findings)" "ascend-probe-incomplete: node1: hccn_tool -i 0 -link -g: a format clusterdoc does not know: \"dcmi model initialized failed" "the garbled answer, quoted" || return 1
	expect_match "$(ascend_findings)" "ascend-probe-incomplete: node2: hccn_tool -i 7 -tls -g: [^ ]*/hccn_tool did not finish within 5000 ms" "the hang" || return 1
	# every call at once, each with a 5 s deadline: the whole check well within 30 s
	((elapsed_ms < 30000)) || { echo "    the check took ${elapsed_ms} ms"; return 1; }
}

# --backend hccl: refused before anything starts, naming each node's reason (node1 has NPUs but no
# torch_npu; node2's npu-smi lists no device).
t_backend_hccl_is_refused_on_nodes_without_torch_npu_or_an_npu() {
	scenario 1
	scenario 2 "npus=0"
	cd_head run -w 'node[1-2]' --launcher none --force --no-hang-ready --backend hccl --dry-run -- python3 main.py
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$out$err" "unavailable: --backend hccl needs an NPU and torch_npu on every node: no torch_npu on node1; no NPU on node2 \(nothing was started\)" "run's refusal" || return 1
	mkdir -p "$CD_RUN/mnist" || return 1
	[[ -e $CD_RUN/mnist/MD5SUMS ]] || /usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$CD_RUN/mnist" 300 100 >/dev/null || return 1
	cd_head mnist -w 'node[1-2]' --backend hccl --cache-dir "$CD_RUN/mnist-cache" --data-dir "$CD_RUN/mnist" --data-md5 "$CD_RUN/mnist/MD5SUMS" --json
	expect_eq "$(jget 'd["failure"]')" "unavailable: --backend hccl needs an NPU and torch_npu on every node: no torch_npu on node1; no NPU on node2 (nothing was started)" "mnist's refusal" || return 1
	expect_eq "$(jget '[n.get("error") for n in d["nodes"]]')" "['no torch_npu', 'no NPU']" "each node's reason"
}

# With a stand-in torch_npu (a package directory on the nodes' PYTHONPATH holding the version.py
# the facts read; it cannot train: no NPU exists here, so no real HCCL job runs), the plan gives
# each node its HCCL variables: its own HCCL_IF_IP, the interface name pattern, the timeout.
t_backend_hccl_plans_the_hccl_variables_per_node() {
	local i
	scenario 1
	scenario 2
	mkdir -p "$CD_RUN/npu-site/torch_npu" || return 1
	printf "__version__ = '2.1.0.post3'\n" >"$CD_RUN/npu-site/torch_npu/version.py"
	for i in 1 2; do
		cluster_node_env "$i" "export PYTHONPATH=$CD_RUN/npu-site" || return 1
	done
	cd_head facts -w 'node[1-2]' --json
	expect_eq "$(jget '[n["ascend"]["torch_npu"] for n in d["nodes"]]')" "['2.1.0.post3', '2.1.0.post3']" "torch_npu's version from PYTHONPATH" || return 1
	cd_head run -w 'node[1-2]' --launcher none --force --no-hang-ready --backend hccl --dry-run -- python3 main.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^export HCCL_' <<<"$out")" "export HCCL_IF_IP=$(cluster_node_ip 1)
export HCCL_SOCKET_IFNAME=$(cluster_node_nic 1)
export HCCL_CONNECT_TIMEOUT=120
export HCCL_IF_IP=$(cluster_node_ip 2)
export HCCL_SOCKET_IFNAME=$(cluster_node_nic 2)
export HCCL_CONNECT_TIMEOUT=120" "each node's HCCL variables"
}

itest_need_root
itest_run_all
