#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc gpu-burn` on a namespace cluster of 3 real sshd nodes. node3 has only Debian's
# python3-torch, which has no CUDA: that node is named and says why, for real (and an interpreter
# without torch, one that does not exist, and the discovery of ~/.venv past a login python3
# without torch, as facts does it). node1 and node2
# have no GPU either (none exists here), so their login environment puts the torch stand-in
# (tests/fakes/torch, torch's documented CUDA API with the timings a scenario file chooses) first
# on PYTHONPATH: the table, the JSON, the medians per model, gpu-slow, a GPU that fails
# mid-stress or hangs (named at the deadline), a node that dies mid-stress and the Prometheus metrics are checked against the
# timings each scenario chose.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=gpu_burn

SUBNET=10.97.47
DIR="" # the stand-in and the scenarios, in the /tmp the nodes share

# scenario I LINE...: node I's stand-in scenario (tests/fakes/torch/torch/__init__.py's format)
scenario() {
	local i=$1
	shift
	printf '%s\n' "$@" >"$DIR/node$i.scn"
}

t_setup_a_cluster_of_three_nodes_two_with_the_torch_stand_in() {
	cluster_down
	CD_QUIET=1 cluster_up 3 --subnet "$SUBNET" >/dev/null || return 1
	DIR=$(mktemp -d /tmp/cdgpuburn-test.XXXXXX)
	chmod 755 "$DIR"
	cp -r "$CD_TOP/tests/fakes/torch" "$DIR/stand-in"
	chmod -R a+rX "$DIR"
	for i in 1 2; do
		scenario "$i" "count 4"
		cluster_node_env "$i" "export PYTHONPATH=$DIR/stand-in" \
			"export CLUSTERDOC_FAKE_TORCH=$DIR/node$i.scn" || return 1
	done
}

burn() { cd_head gpu-burn "$@"; }

t_a_torch_without_cuda_names_the_node_and_says_why() {
	local version
	version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)') || return 1
	burn -w node3 --seconds 1 --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget '[(n["host"], n["error_code"], n["python"]) for n in d["nodes"]]')" \
		"[('node3', 'no-cuda', '/usr/bin/python3')]" "the node, its error and its python" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error"]')" \
		"torch $version has no CUDA (a CPU-only build: torch.version.cuda is None)" "why" || return 1
	burn -w node3 --seconds 1
	expect_eq "$rc" 2 "text: exit status" || return 1
	expect_match "$out" "^ +node3 +- .* no-cuda: torch $version has no CUDA \(a CPU-only build: torch\.version\.cuda is None\) \(/usr/bin/python3\)$" \
		"the table's row for node3"
}

t_an_interpreter_that_does_not_exist_is_named_no_python() {
	burn -w node3 --seconds 1 --python /nonexistent/python3 --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget '(d["nodes"][0]["error_code"], d["nodes"][0]["python"])')" \
		"('no-python', '/nonexistent/python3')" "the error and the interpreter"
}

# within P % of the expected value: the stand-in's events measure its own queue, so only the
# gaps Python leaves between the operations make a figure lower
near() { python3 -c 'import sys; a, b, p = map(float, sys.argv[1:]); sys.exit(abs(a - b) > b * p / 100)' "$@"; }

t_each_gpus_tflops_and_gbps_are_its_timings_in_the_json_and_the_table() {
	local i g t b
	scenario 1 "count 2" "tflops 400" "gbps 2000" "gpu 1 tflops 200" "gpu 1 name NVIDIA A100-SXM4-80GB"
	scenario 2 "count 2" "tflops 400" "gbps 2000" "gpu 1 gbps 1000" "gpu 1 name NVIDIA A100-SXM4-80GB"
	# each A100 is a third off their median (300 TFLOP/s, 1500 GB/s): not slow at 50 %
	burn -w 'node[1-2]' --seconds 2 --slow-pct 50 --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["summary"]')" \
		"{'nodes': 2, 'nodes_failed': 0, 'gpus': 4, 'measured': 4, 'failed': 0, 'slow': 0}" "summary" || return 1
	for spec in "0 0 400 2000" "0 1 200 2000" "1 0 400 2000" "1 1 400 1000"; do
		read -r i g t b <<<"$spec"
		near "$(jget "d['nodes'][$i]['gpus'][$g]['tflops']")" "$t" 5 ||
			{ echo "    node$((i + 1)) gpu$g: tflops $(jget "d['nodes'][$i]['gpus'][$g]['tflops']"), want $t"; return 1; }
		near "$(jget "d['nodes'][$i]['gpus'][$g]['gbps']")" "$b" 5 ||
			{ echo "    node$((i + 1)) gpu$g: gbps $(jget "d['nodes'][$i]['gpus'][$g]['gbps']"), want $b"; return 1; }
	done
	expect_eq "$(jget '[(m["name"], m["gpus"]) for m in d["models"]]')" \
		"[('NVIDIA H200', 2), ('NVIDIA A100-SXM4-80GB', 2)]" "the models and their GPUs" || return 1
	near "$(jget 'd["models"][1]["tflops_median"]')" 300 5 || { echo "    A100 median $(jget 'd["models"][1]["tflops_median"]')"; return 1; }
	near "$(jget 'd["models"][1]["gbps_median"]')" 1500 5 || { echo "    A100 median $(jget 'd["models"][1]["gbps_median"]')"; return 1; }
	near "$(jget 'd["nodes"][0]["gpus"][1]["tflops_pct"]')" 66.7 5 || { echo "    node1 gpu1's share $(jget 'd["nodes"][0]["gpus"][1]["tflops_pct"]')"; return 1; }
	expect_eq "$(jget 'd["nodes"][0]["gpus"][0]["dtype"]')" bf16 "dtype" || return 1
	# GPU N is NVML's GPU N (CUDA_DEVICE_ORDER=PCI_BUS_ID), named by its bus id and UUID
	expect_eq "$(jget '[(g["index"], g["pci_bus_id"], g["uuid"][-2:]) for g in d["nodes"][0]["gpus"]]')" \
		"[(0, '00000000:18:00.0', '00'), (1, '00000000:28:00.0', '01')]" "each GPU's PCI bus id and UUID" || return 1
	scenario 1 "count 2" "gpu 1 bf16 no"
	burn -w node1 --seconds 1
	expect_eq "$rc" 0 "text: exit status ($err)" || return 1
	expect_match "$out" '^# clusterdoc gpu-burn: 1 s on every GPU at once' "the header" || return 1
	expect_match "$out" '^ +node1 +0  NVIDIA H200 +bf16 +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+%  ok$' "GPU 0's row" || return 1
	expect_match "$out" '^ +node1 +1  NVIDIA H200 +fp16 +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+%  ok$' "GPU 1's row, fp16" || return 1
	expect_match "$out" '^# Median of NVIDIA H200 \(2 GPUs\): ' "the median line" || return 1
	expect_match "$out" '^# GPUs: 2 measured, 0 failed, 0 slow; nodes: 1, 0 without a result$' "the summary line"
}

t_a_gpu_more_than_slow_pct_below_its_models_median_is_named_gpu_slow() {
	scenario 1 "count 4"
	scenario 2 "count 4" "gpu 2 tflops 400"
	burn -w 'node[1-2]' --seconds 2 --json
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget '[(f["id"], f["key"], f["node"], f["gpu"], f["severity"]) for f in d["findings"]]')" \
		"[('gpu-slow', 'node2/gpu2', 'node2', 2, 'warning')]" "exactly one finding, on node2's GPU 2" || return 1
	expect_match "$(jget 'd["findings"][0]["message"]')" \
		'^GPU 2 of node2 \(NVIDIA H200, 00000000:38:00.0\) is more than 10 % below the median of its model: (79|80|81)\.[0-9] % of its TFLOP/s' "its message" || return 1
	expect_eq "$(jget '[g["index"] for n in d["nodes"] for g in n["gpus"] if g["slow"]]')" "[2]" "the slow GPUs" || return 1
	burn -w 'node[1-2]' --seconds 2 --slow-pct 30 --json
	expect_eq "$rc" 0 "--slow-pct 30: exit status ($err)" || return 1
	expect_eq "$(jget 'd["findings"]')" "[]" "--slow-pct 30: no finding"
}

t_a_gpu_that_fails_mid_stress_is_named_and_the_others_results_stand() {
	scenario 1 "count 4" "gpu 1 lost-after 0.3"
	burn -w node1 --seconds 2 --json
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][0]["gpus"][1]["error"]')" \
		"RuntimeError: CUDA error: unspecified launch failure" "GPU 1's CUDA error" || return 1
	expect_eq "$(jget '[g["index"] for g in d["nodes"][0]["gpus"] if g.get("tflops", 0) > 400]')" "[0, 2, 3]" \
		"the others measured" || return 1
	expect_eq "$(jget '(d["summary"]["measured"], d["summary"]["failed"], d["findings"])')" "(3, 1, [])" "counts"
}

t_a_node_without_cuda_beside_gpu_nodes_is_named_and_theirs_stand() {
	scenario 1 "count 2"
	scenario 2 "count 2"
	burn -w 'node[1-3]' --seconds 1 --json
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget '[(n["host"], n.get("error_code"), len(n["gpus"])) for n in d["nodes"]]')" \
		"[('node1', None, 2), ('node2', None, 2), ('node3', 'no-cuda', 0)]" "per node" || return 1
	expect_eq "$(jget '(d["summary"]["measured"], d["summary"]["nodes_failed"])')" "(4, 1)" "counts"
}

t_a_gpu_that_hangs_is_named_at_the_deadline_and_the_others_results_stand() {
	local t0 ms
	scenario 1 "count 3" "gpu 2 hang-after 0.3"
	t0=$(date +%s%N)
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" CLUSTERDOC_GPUBURN_SLACK_MS=3000 \
		"$CLUSTERDOC" gpu-burn -w node1 --seconds 1 --json 2>/dev/null)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["gpus"][2]["error"]')" \
		"no result before the request's deadline (the GPU hangs or fell off the bus); the script was killed" \
		"GPU 2's error" || return 1
	expect_eq "$(jget '[g["index"] for g in d["nodes"][0]["gpus"] if g.get("tflops", 0) > 400]')" "[0, 1]" \
		"the others measured" || return 1
	((ms < 15000)) || { echo "    took $ms ms (the deadline is 1 s + 3 s)"; return 1; }
}

# the pid of node I's agent (waits up to 30 s)
agent_of() {
	local t p
	for ((t = 0; t < 300; t++)); do
		for p in $(ip netns pids "$(cluster_node_ns "$1")"); do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) == agent-* ]] && { echo "$p"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

t_a_node_that_dies_mid_stress_is_named_and_the_others_results_stand() {
	local bg pid f left p
	scenario 1 "count 2"
	scenario 2 "count 2"
	f=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" gpu-burn -w 'node[1-2]' \
		--seconds 6 --json >"$f" 2>&1 &
	bg=$!
	pid=$(agent_of 2) || { kill "$bg"; rm -f "$f"; echo "    no agent on node2"; return 1; }
	sleep 2
	kill -9 "$pid"
	wait "$bg"
	rc=$?
	out=$(cat "$f")
	rm -f "$f"
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(jget '[(n["host"], n.get("error_code"), len(n["gpus"])) for n in d["nodes"]]')" \
		"[('node1', None, 2), ('node2', 'unreachable', 0)]" "per node" || return 1
	expect_match "$(jget 'd["nodes"][1]["error"]')" '^node2: ' "node2's error names it" || return 1
	sleep 1 # the script ends within 0.5 s of its agent (collectives/gpuburn.py, orphan_watch)
	left=0
	for p in $(ip netns pids "$(cluster_node_ns 2)"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- ' - --seconds' && left=$((left + 1))
	done
	expect_eq "$left" 0 "stress scripts left on node2"
}

t_the_prometheus_metrics_hold_each_gpus_figures() {
	local prom
	scenario 1 "count 2" "gpu 1 tflops 300"
	prom=$(mktemp -d)/gpuburn.prom
	burn -w node1 --seconds 2 --prom "$prom"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	grep -qE '^clusterdoc_gpuburn_gpu_slow\{node="node1",gpu="1",model="NVIDIA H200"\} 1$' "$prom" ||
		{ echo "    no gpu_slow 1 for gpu 1: $(grep gpu_slow "$prom")"; return 1; }
	grep -qE '^clusterdoc_gpuburn_tflops\{node="node1",gpu="0",model="NVIDIA H200"\} (49[0-9]|500)\.' "$prom" ||
		{ echo "    tflops of gpu 0: $(grep '^clusterdoc_gpuburn_tflops' "$prom")"; return 1; }
	grep -qE '^clusterdoc_gpuburn_copy_bytes_per_second\{node="node1",gpu="0",model="NVIDIA H200"\} [23][0-9.e+]+$' "$prom" ||
		{ echo "    copy bytes of gpu 0: $(grep '^clusterdoc_gpuburn_copy' "$prom")"; return 1; }
	grep -qE '^clusterdoc_gpuburn_exit_status 1$' "$prom" || { echo "    exit status: $(grep exit_status "$prom")"; return 1; }
	rm -rf "$(dirname "$prom")"
}

t_an_interpreter_without_torch_is_named_no_torch() {
	/usr/bin/python3 -m venv --without-pip "$DIR/bare" || return 1
	burn -w node3 --seconds 1 --python "$DIR/bare/bin/python" --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget '(d["nodes"][0]["error_code"], d["nodes"][0]["python"], d["nodes"][0]["error"])')" \
		"('no-torch', '$DIR/bare/bin/python', \"import torch failed: ModuleNotFoundError: No module named 'torch'\")" \
		"the error, the interpreter and why"
}

# Last: node3's login PATH changes for good. Its python3 has no torch; ~/.venv's has Debian's
# (the places facts looks in, probes/facts_pyfind.h): that one runs, and says it has no CUDA.
t_without_torch_in_the_login_python3_the_one_facts_would_find_runs() {
	[[ -x $DIR/bare/bin/python ]] || /usr/bin/python3 -m venv --without-pip "$DIR/bare" || return 1
	cluster_node_exec 3 /usr/bin/python3 -m venv --without-pip --system-site-packages /root/.venv || return 1
	cluster_node_env 3 "export PATH=$DIR/bare/bin:\$PATH" || return 1
	burn -w node3 --seconds 1 --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget '(d["nodes"][0]["error_code"], d["nodes"][0]["python"])')" \
		"('no-cuda', '/root/.venv/bin/python')" "the interpreter found and its answer"
}

cleanup() {
	[[ -n $DIR && -d $DIR ]] && rm -rf "$DIR"
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap cleanup EXIT
itest_run_all
