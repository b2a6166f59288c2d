#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check --dcgm-level (issue 35, "DCGM where it exists") on a namespace cluster of 3 real sshd
# nodes. No GPU or DCGM can exist here: NVML is the stand-in of tests/fakes (two healthy GPUs per
# node), and dcgmi is tests/fakes/dcgmi, on the PATH of node1 and node3 only, printing what a
# real `dcgmi diag -j` prints, DCGM 3.x or 4.x (tests/fixtures/dcgm/, README there), as each
# node's scenario file says ($CLUSTERDOC_FAKE_DCGM_SCENARIO: "print FILE" or "hang"). A FAIL
# must land on its node and GPU, a "Fail" whose warnings DCGM grades as monitor-only is a
# warning, a diagnostic dcgmi could not run is named with DCGM's own message, a node without
# dcgmi is named absent and never fails, a dcgmi that hangs is cut at its deadline
# ($CLUSTERDOC_DCGM_TIMEOUT_MS on the nodes, from n*/dcgm.ms: 3 s) and named, and a check's
# --deadline shorter than dcgmi's own cuts dcgmi on the node in time to hear the node's answer.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=gpu_dcgm

FIX=$CD_TOP/tests/fixtures/dcgm

# dcgm I LINE: node I's dcgmi scenario
dcgm() {
	echo "$2" >"$CD_RUN/n$1/dcgm.sc"
	rm -f "$CD_RUN/n$1/dcgm.sc.calls"
}

# the gpu-* and probe-incomplete findings of $out: "id severity nodes: evidence", sorted
gpu_findings() {
	jget '"\n".join(sorted(f["id"] + " " + f["severity"] + " " + ",".join(f["nodes"]) + ": " + e for f in d["findings"] if f["id"].startswith("gpu-") or f["id"] == "probe-incomplete" for e in f["evidence"]))'
}

t_setup_cluster_with_dcgmi_on_node1_and_node3() {
	local lib=$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1 i
	[[ -f $lib ]] || make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 >/dev/null || return 1
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cp "$lib" "$CD_RUN/libnvidia-ml.so.1" || return 1
	mkdir -p "$CD_RUN/dcgmbin" && cp "$CD_TOP/tests/fakes/dcgmi" "$CD_RUN/dcgmbin/dcgmi" || return 1
	for i in 1 2 3; do
		echo "count 2" >"$CD_RUN/n$i/nvml.sc"
		echo "6,1,0,-;Linux version 6.1.0 (gcc) #1 SMP" >"$CD_RUN/n$i/kmsg"
		dcgm "$i" "print $FIX/dcgm3_pass.json"
		echo 3000 >"$CD_RUN/n$i/dcgm.ms"
		cluster_node_env "$i" "export CLUSTERDOC_NVML_LIB=$CD_RUN/libnvidia-ml.so.1" \
			"export CLUSTERDOC_FAKE_NVML_SCENARIO=$CD_RUN/n$i/nvml.sc" \
			"export CLUSTERDOC_KMSG=$CD_RUN/n$i/kmsg" \
			"export CLUSTERDOC_FAKE_DCGM_SCENARIO=$CD_RUN/n$i/dcgm.sc" \
			"export CLUSTERDOC_DCGM_TIMEOUT_MS=\$(cat $CD_RUN/n$i/dcgm.ms)" || return 1
	done
	for i in 1 3; do
		cluster_node_env "$i" "export PATH=$CD_RUN/dcgmbin:\$PATH" || return 1
	done
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	expect_eq "$(gpu_findings)" "" "GPU findings without --dcgm-level (dcgmi not run)" || return 1
	expect_eq "$(cat "$CD_RUN"/n[13]/dcgm.sc.calls 2>/dev/null)" "" "dcgmi calls without --dcgm-level"
}

t_a_dcgm_fail_lands_on_its_node_and_gpu_and_a_node_without_dcgmi_is_absent() {
	dcgm 1 "print $FIX/dcgm3_fail.json"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 1
	dcgm 1 "print $FIX/dcgm3_pass.json"
	expect_eq "$(gpu_findings)" \
		"gpu-dcgm-absent info node2: node2: dcgmi is not on PATH
gpu-dcgm-fail error node1: node1/gpu1: DCGM test PCIe: FAIL: Bandwidth of GPU 1 in direction h2d of 2.15 did not exceed minimum required bandwidth of 11.00.
gpu-dcgm-fail error node1: node1/gpu1: DCGM test Page Retirement/Row Remap: FAIL: GPU 1 had memory errors and row remappings are pending" \
		"DCGM 3's results on their node and GPU, node2 named absent" || return 1
	expect_eq "$(cat "$CD_RUN/n3/dcgm.sc.calls")" "diag -r 1 -j" "node3's dcgmi call"
}

t_dcgm4_results_land_on_their_gpu_and_a_monitor_only_fail_is_a_warning() {
	dcgm 1 "print $FIX/dcgm4_fail.json"
	dcgm 3 "print $FIX/dcgm4_warn.json"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 1
	dcgm 1 "print $FIX/dcgm3_pass.json"
	dcgm 3 "print $FIX/dcgm3_pass.json"
	expect_eq "$(gpu_findings)" \
		"gpu-dcgm-absent info node2: node2: dcgmi is not on PATH
gpu-dcgm-fail error node1: node1/gpu1: DCGM test memory: FAIL: Detected 2 volatile double-bit ECC error(s) in GPU 1.
gpu-dcgm-warn warning node3: node3/gpu0: DCGM test targeted_stress: WARN: Temperature 92 of GPU 0 exceeded user-specified maximum allowed temperature 87" \
		"DCGM 4's results on their node and GPU"
}

t_a_diagnostic_dcgmi_could_not_run_is_named_with_dcgms_message() {
	dcgm 3 "print $FIX/dcgm4_runtime_error.json"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 1
	dcgm 1 "print $FIX/dcgm3_pass.json"
	dcgm 3 "print $FIX/dcgm3_pass.json"
	expect_eq "$(gpu_findings | grep node3)" \
		"probe-incomplete warning node3: node3: DCGM diagnostic: dcgmi could not run the diagnostic: Error: Unable to complete diagnostic for group 2147483647. Return: (-34) The requested operation could not be completed because the affected resource is in use. (exit 1)" \
		"node3's runtime_error, DCGM's message kept"
}

t_the_level_given_is_the_level_run() {
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 2
	expect_eq "$(cat "$CD_RUN/n1/dcgm.sc.calls")" "diag -r 2 -j" "node1's dcgmi call" || return 1
	expect_eq "$(gpu_findings)" "gpu-dcgm-absent info node2: node2: dcgmi is not on PATH" \
		"findings of passing DCGM runs"
}

t_a_fail_fails_the_prolog_of_its_node_and_dcgmi_absent_does_not() {
	dcgm 1 "print $FIX/dcgm3_fail.json"
	cd_head check -w 'node[1-3]' --dcgm-level 1 --slurm-prolog --node node1
	expect_eq "$rc" 1 "node1's prolog ($err)" || { dcgm 1 "print $FIX/dcgm3_pass.json"; return 1; }
	cd_head check -w 'node[1-3]' --dcgm-level 1 --slurm-prolog --node node2
	dcgm 1 "print $FIX/dcgm3_pass.json"
	expect_eq "$rc" 0 "node2's prolog, dcgmi absent ($err)"
}

t_a_dcgmi_that_hangs_is_cut_at_its_deadline_and_named() {
	local t0 took
	dcgm 3 "hang"
	t0=$(date +%s)
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 1
	took=$(($(date +%s) - t0))
	dcgm 3 "print $FIX/dcgm3_pass.json"
	expect_eq "$(gpu_findings | grep node3 | sed 's/in 3 s: .*/in 3 s: .../')" \
		"probe-incomplete warning node3: node3: DCGM diagnostic: dcgmi did not finish in 3 s: ..." \
		"node3's hung dcgmi named" || return 1
	expect_eq "$((took < 40))" 1 "the check ended ($took s) soon after dcgmi's 3 s deadline" || return 1
	# the stand-in's child too: the deadline kills dcgmi's whole process group
	expect_eq "$(pgrep -f "sleep 3599" || true)" "" "a process of the hung dcgmi left running"
}

t_a_deadline_shorter_than_dcgmi_cuts_dcgmi_on_the_node_and_keeps_the_nodes_answer() {
	local t0 took
	dcgm 3 "hang"
	echo 60000 >"$CD_RUN/n3/dcgm.ms"
	t0=$(date +%s)
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 --dcgm-level 1 --deadline 8
	took=$(($(date +%s) - t0))
	dcgm 3 "print $FIX/dcgm3_pass.json"
	echo 3000 >"$CD_RUN/n3/dcgm.ms"
	expect_eq "$(gpu_findings | grep node3 | sed 's/in [0-9]* s (/in N s (/; s/left it): .*/left it): .../')" \
		"probe-incomplete warning node3: node3: DCGM diagnostic: dcgmi did not finish in N s (what the check's --deadline left it): ..." \
		"node3's dcgmi cut by what the deadline left it" || return 1
	expect_eq "$(jget '",".join(f["id"] for f in d["findings"] if "node3" in f["nodes"] and f["id"] == "node-unreachable")')" \
		"" "node3 reported unreachable: the check's deadline cut the node, not dcgmi" || return 1
	expect_eq "$((took < 20))" 1 "the check ended ($took s) soon after its 8 s deadline"
}

itest_need_root
itest_run_all
