#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU findings (docs/findings.md, gpu-*) on a namespace cluster of 3 real sshd nodes. No GPU can
# exist here: NVML is the stand-in of tests/fakes (fake_nvml.c and fake_nvml_health.c, selected by
# CLUSTERDOC_NVML_LIB in each node's login environment), each node answering from its own scenario
# file ($CLUSTERDOC_FAKE_NVML_SCENARIO: "count N", "gpu I KEY VALUE", "gpu I nvlink L down",
# "gpu I lost"), and each node's kernel log a /dev/kmsg text of its own ($CLUSTERDOC_KMSG) with
# the Xid lines NVIDIA's "XID Errors" document quotes. Each fault must land on exactly its node and
# GPU (NODE/gpuN), and a healthy node has no GPU finding; an error fails --slurm-prolog on its
# node only. The stand-in's GPU I sits at PCI bus 0x18 + 0x10 * I.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=gpu_health
trap tui_stop EXIT

# scenario I LINES...: node I's NVML scenario: two healthy GPUs (idle), then LINES
scenario() {
	local i=$1
	shift
	{ echo "count 2"; printf '%s\n' "$@"; } >"$CD_RUN/n$i/nvml.sc"
}

# kmsg I LINES...: node I's kernel log, as /dev/kmsg records (PRI,SEQ,USEC,FLAGS;TEXT)
kmsg() {
	local i=$1 seq=100 l
	shift
	{
		echo "6,1,0,-;Linux version 6.1.0 (gcc) #1 SMP"
		for l in "$@"; do
			echo "4,$seq,$((seq * 1000000 + 500000)),-;$l"
			seq=$((seq + 1))
		done
	} >"$CD_RUN/n$i/kmsg"
}

healthy() {
	local i
	for i in 1 2 3; do
		scenario "$i"
		kmsg "$i"
	done
}

# gpu_findings: "id: evidence" lines of the gpu-* and probe-incomplete findings of $out, sorted
gpu_findings() {
	jget '"\n".join(sorted(f["id"] + " " + f["severity"] + " " + ",".join(f["nodes"]) + ": " + e for f in d["findings"] if f["id"].startswith("gpu-") or f["id"] == "probe-incomplete" for e in f["evidence"]))'
}

check() {
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000 "$@"
}

t_healthy_gpu_nodes_have_no_gpu_finding() {
	local lib=$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1 i
	[[ -f $lib ]] || make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 >/dev/null || return 1
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cp "$lib" "$CD_RUN/libnvidia-ml.so.1" || return 1
	healthy
	for i in 1 2 3; do
		cluster_node_env "$i" "export CLUSTERDOC_NVML_LIB=$CD_RUN/libnvidia-ml.so.1" \
			"export CLUSTERDOC_FAKE_NVML_SCENARIO=$CD_RUN/n$i/nvml.sc" \
			"export CLUSTERDOC_KMSG=$CD_RUN/n$i/kmsg" || return 1
	done
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget '[len(n["gpus"]) for n in d["nodes"]]')" "[2, 2, 2]" "GPUs per node (the stand-in's)" || return 1
	check
	expect_eq "$(gpu_findings)" "" "GPU findings of healthy nodes (idle GPUs at their default PCIe gen)"
}

t_each_fault_lands_on_its_gpu_and_node() {
	scenario 1 "gpu 1 ecc.volatile.uncorrected 2"
	scenario 2 "gpu 0 row_remap.pending true"
	kmsg 2 "NVRM: Xid (PCI:0000:28:00): 79, pid=1234, name=python, GPU has fallen off the bus."
	scenario 3 "gpu 0 pcie.gen 3" "gpu 0 throttle 0x0" "gpu 1 throttle 0x8" "gpu 1 nvlink 3 down" \
		"gpu 0 persistence off"
	kmsg 3 "NVRM: Xid (PCI:0000:18:00): 13, pid=99, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)"
	check
	healthy
	expect_eq "$(gpu_findings | sed 's/^\(gpu-xid [a-z]* node[0-9]: node[0-9]\/gpu[0-9]: Xid [0-9]*\) .*/\1/')" \
		"gpu-ecc-uncorrectable error node1: node1/gpu1: uncorrectable ECC errors: 2 since the driver loaded, 0 in the GPU's lifetime
gpu-nvlink-down warning node3: node3/gpu1: NVLink link 3 down
gpu-pcie-degraded warning node3: node3/gpu0: PCIe link gen 3 x16, the maximum is gen 5 x16 (the GPU is not idle)
gpu-persistence-off warning node3: node3/gpu0: persistence mode off
gpu-row-remap-pending error node2: node2/gpu0: a row remap is pending (0 rows remapped for correctable, 0 for uncorrectable errors)
gpu-throttled warning node3: node3/gpu1: clocks held down by hw_slowdown (mask 0x0000000000000008); SM clock 1980 of 1980 MHz; 35 C (slowdown at 87 C); 75 of 700 W
gpu-xid error node2: node2/gpu1: Xid 79
gpu-xid warning node3: node3/gpu0: Xid 13" "each finding on its node and GPU"
}

t_an_error_fails_the_prolog_of_its_node_only() {
	scenario 2 "gpu 1 row_remap.failure true"
	cd_head check -w 'node[1-3]' --slurm-prolog --node node2
	expect_eq "$rc" 1 "node2's prolog ($err)" || { healthy; return 1; }
	cd_head check -w 'node[1-3]' --slurm-prolog --node node1
	healthy
	expect_eq "$rc" 0 "node1's prolog ($err)"
}

t_fewer_gpus_than_expect_gpus_and_a_lost_gpu_are_gpu_missing() {
	{ echo "count 1"; } >"$CD_RUN/n3/nvml.sc"
	scenario 2 "gpu 1 lost"
	check --expect-gpus 2
	healthy
	expect_eq "$(gpu_findings | grep '^gpu-missing' | sed 's/lost the GPU: nvml[A-Za-z0-9_]*: /lost the GPU: FN: /')" \
		"gpu-missing error node2: node2/gpu1: NVML lost the GPU: FN: GPU is lost (NVML error 15)
gpu-missing error node3: node3: NVML lists 1 GPU, --expect-gpus 2" "the missing GPUs"
}

# The check run and mnist make first takes --expect-gpus and reads [expect] gpus as `check` does:
# node3 with one GPU refuses the job, and the healthy nodes start it.
t_run_and_mnist_refuse_a_node_with_fewer_gpus_than_declared() {
	echo "count 1" >"$CD_RUN/n3/nvml.sc"
	cd_head run -w 'node[1-3]' --launcher none --dry-run --expect-gpus 2 -- true
	expect_eq "$rc" 2 "run's exit status with --expect-gpus 2 ($err)" || { healthy; return 1; }
	expect_match "$err" "^  gpu-missing: " "run's refusal" || { healthy; return 1; }
	cd_head mnist -w 'node[1-3]' --mode torch --expect-gpus 2 --data-dir /nonexistent
	expect_eq "$rc" 2 "mnist's exit status" || { healthy; return 1; }
	expect_match "$err" "^  gpu-missing: " "mnist's refusal" || { healthy; return 1; }
	cd_head run -w 'node[1-3]' --launcher none --dry-run -O expect.gpus=2 -- true
	healthy
	expect_eq "$rc" 2 "run's exit status with [expect] gpus = 2 ($err)" || return 1
	expect_match "$err" "^  expect-gpus: " "run's refusal" || return 1
	cd_head run -w 'node[1-3]' --launcher none --dry-run --expect-gpus 2 -O expect.gpus=2 -- true
	expect_eq "$rc" 0 "run's exit status on healthy nodes ($err)"
}

# A refusal says what the check saw (each error's evidence), names the nodes whose own state it
# is (`-x node3`), and a dry run still prints the plan it would start, exiting 2.
t_a_refused_dry_run_shows_the_evidence_the_nodes_to_leave_out_and_the_plan() {
	scenario 3 "gpu 1 ecc.volatile.uncorrected 2"
	cd_head run -w 'node[1-3]' --launcher none --dry-run -- true
	healthy
	expect_eq "$rc" 2 "the dry run's exit status ($err)" || return 1
	expect_match "$err" "^  gpu-ecc-uncorrectable: " "the refused error" || return 1
	expect_match "$err" "^      node3/gpu1: uncorrectable ECC errors: 2 since the driver loaded" "its evidence" || return 1
	expect_match "$err" "these are the own state of node3 alone: \`-x node3\` starts the job on the other nodes" "the nodes to leave out" || return 1
	expect_eq "$(grep -c '^export WORLD_SIZE=3$' <<<"$out")" 3 "the plan, on stdout" || return 1
	cd_head run -w 'node[1-3]' -x node3 --launcher none --dry-run -- true
	expect_eq "$rc" 0 "with -x node3 ($err)"
}

# `fix` leaves a GPU's own errors to the admin and says so after its plan: no fixer answers them
t_fix_names_the_gpu_errors_it_leaves_to_the_admin() {
	scenario 3 "gpu 1 ecc.volatile.uncorrected 2"
	cd_head fix -w 'node[1-3]' --probe-timeout 1000
	healthy
	expect_match "$out" "^  error +gpu-ecc-uncorrectable +node3 +fix: by hand$" "the finding's line" || return 1
	expect_match "$out" "^left to you \(no fixer of clusterdoc changes these" "the section" || return 1
	expect_match "$out" "^  gpu-ecc-uncorrectable on node3: GPU 1 of node3 has uncorrectable ECC errors$" "the error left"
}

# The TUI's Nodes view: the GPU column is each node's GPU health once the check is done, its
# worst GPU finding in a word and how many more; Enter lists them, worst first.
t_the_tuis_gpu_column_names_each_nodes_worst_gpu_finding() {
	scenario 1 "gpu 1 ecc.volatile.uncorrected 2" "gpu 0 persistence off"
	scenario 3 "gpu 1 throttle 0x8"
	tui_start -- tui -w 'node[1-3]' --probe-timeout 1000 || { healthy; return 1; }
	tui_wait 'check done: 3 node\(s\)' 60 || { healthy; return 1; }
	healthy
	tui_wait '^ node1 .* 2 ecc\+1 ' 5 || return 1
	tui_wait '^ node2 .* 2 ok ' 5 || return 1
	tui_wait '^ node3 .* 2 clocks ' 5 || return 1
	tui_keys Enter
	tui_wait 'gpu\?      gpu-ecc-uncorrectable \(error\)' 5 || return 1
	tui_wait 'gpu\?      gpu-persistence-off \(warning\)' 5 || return 1
	tui_keys q q
}

# The stand-in answers the health queries only with its scenario half (fake_nvml_health.c).
stand_in_has_health() {
	local lib=$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1
	[[ -f $lib ]] || make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 >/dev/null || return 1
	nm -D "$lib" | grep -q ' T nvmlDeviceGetRemappedRows$' && return 0
	result SKIP "$ITEST_FILE (the NVML stand-in has no health queries: tests/fakes/fake_nvml_health.c)"
	exit 0
}

itest_need_root
stand_in_has_health
itest_run_all
