#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shared home on 8 nodes: every node's ~ (and so ~/.cache/clusterdoc) is one directory, as on
# an HPC cluster's NFS/Lustre/GPFS home. `clusterdoc facts` from an empty cache must answer on
# all 8 nodes every time (they all upload and start the agent at once), then `check` and
# `bench` must pass on the same cluster. A cached agent that is garbage (a head killed during
# the upload) is replaced, not a permanent "Exec format error". `mnist` in both modes trains
# from a cold data directory in the shared home, and no node leaves a temp file there.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=realnodes_shared

N=8 TRIES=5
CD_QUIET=1 cluster_up $N --shared-home >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }

all_answered() { # what
	expect_eq "$(jget '[n["host"] + ": " + str(n["error"]) for n in d["nodes"] if n["error"] is not None]')" \
		"[]" "errors $1" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" \
		"['node1', 'node2', 'node3', 'node4', 'node5', 'node6', 'node7', 'node8']" "hostnames $1" || return 1
	expect_eq "$rc" 0 "exit status $1 ($err)"
}

# cold_cache [torch]: no ~/.cache/clusterdoc in the shared home. The nodes' torch facts (cluster_up's
# seed) are put back unless "torch": the agent's upload is what is tested, and a cold torch import
# on each of the 8 nodes each time would only cost the machine CPU-seconds.
cold_cache() {
	local i
	rm -rf "$CD_SHARED_DIR/root/.cache/clusterdoc"
	[[ ${1:-} == torch ]] && return 0
	for ((i = 1; i <= N; i++)); do cluster_torch_seed "$CD_SHARED_DIR/root/.cache" "$i"; done
}

t_cold_facts_on_8_nodes_sharing_a_home_answer_every_time() {
	local t
	for ((t = 1; t <= TRIES; t++)); do
		# the first try as cold as a new cluster's: no agent and no torch facts
		if ((t == 1)); then cold_cache torch; else cold_cache; fi
		cd_head facts -w "node[1-$N]" --json
		all_answered "on cold try $t of $TRIES" || return 1
	done
	cd_head facts -w "node[1-$N]" --json
	all_answered "warm" || return 1
	expect_eq "$(jget 'sum(1 for n in d["nodes"] if n["agent_uploaded"])')" 0 "uploads on the warm run"
}

t_a_cached_agent_of_zeros_is_replaced() {
	local sha f
	sha=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
	cd_head facts -w node1 --json
	f=$CD_SHARED_DIR/root/.cache/clusterdoc/agent-$sha
	[[ -f $f ]] || { echo "    $f missing after a run"; return 1; }
	head -c "$(stat -c %s "$CLUSTERDOC_AGENT")" /dev/zero >"$f"
	cd_head facts -w "node[1-$N]" --json
	all_answered "with an agent of zeros in the cache" || return 1
	expect_eq "$(sha256sum "$f" | cut -c1-64)" "$sha" "the cached agent's hash afterwards"
}

t_check_and_bench_pass_on_the_shared_home() {
	cold_cache
	cd_head check -w "node[1-$N]" --json --probe-timeout 1000
	expect_eq "$(jget '[n["host"] + ": " + n["error"] for n in d["nodes"] if n.get("error")]')" "[]" "node errors of check" || return 1
	expect_eq "$rc" 0 "exit status of check ($err)" || return 1
	expect_eq "$(jget "[f['id'] for f in d['findings'] if f['severity'] == 'error']")" "[]" "error findings" || return 1
	cd_head bench -w "node[1-$N]" --backend tcp --iters 2 --warmup 1 --stall-timeout 5000 -b 4 -e 64K -f 16 --json
	expect_eq "$(jget '[n["host"] + ": " + n["error"] for n in d["nodes"] if n.get("error")]')" "[]" "node errors of bench" || return 1
	expect_eq "$rc" 0 "exit status of bench ($err)" || return 1
	expect_eq "$(jget 'd["nranks"]')" $N "ranks" || return 1
	expect_eq "$(jget 'sum(r["wrong"] for r in d["results"])')" 0 "wrong elements"
}

# mnist from a cold ~/.cache/clusterdoc/data in the shared home: every node pushes (or finds)
# the same files there at once. A small dataset of MNIST's format made by the test.
MNIST_DATA=""
mnist_cold() { # NODES MODE ARGS...
	if [[ -z $MNIST_DATA ]]; then
		MNIST_DATA=$CD_RUN/mnist
		/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$MNIST_DATA" 1000 200 >/dev/null || return 1
	fi
	rm -rf "$CD_SHARED_DIR/root/.cache/clusterdoc/data"
	cd_head mnist -w "$1" --mode "$2" --data-dir "$MNIST_DATA" --data-md5 "$MNIST_DATA/MD5SUMS" \
		--cache-dir "$CD_RUN/head-cache" --stall-timeout 120 --json "${@:3}"
}
mnist_trained() { # NRANKS what
	local n=$1
	expect_eq "$rc" 0 "exit status $2 ($(tail -c 600 <<<"$err") $(jget 'd["failure"], [(n["host"], n["error"]) for n in d["nodes"] if n["error"]]' 2>/dev/null))" || return 1
	expect_eq "$(jget 'd["failed"], d["nranks"], len(d["epochs"])')" "(False, $n, 2)" "failed, ranks, epochs $2" || return 1
	expect_eq "$(jget '[(n["started"], n["ended"], n["exit_code"], n["error"]) for n in d["nodes"]]')" \
		"$(python3 -c "print([(True, True, 0, None)] * $n)")" "every rank started, ended and exited 0 $2" || return 1
	expect_eq "$(jget 'd["epochs"][1]["loss"] < d["epochs"][0]["loss"]')" True "the loss drops $2 ($(jget 'd["epochs"]'))" || return 1
	expect_eq "$(jget 'd["test"] is not None and d["test"]["total"] == 200')" True "test set evaluated $2 ($(jget 'd["test"]'))"
}
no_temp_files_in_the_shared_home() {
	local left
	left=$(find "$CD_SHARED_DIR" \( -name '*.part*' -o -name '*.tmp*' -o -name '.agent-*' \) 2>/dev/null)
	[[ -z $left ]] || { echo "    temp files left in the shared home: $left"; return 1; }
}

t_mnist_torch_on_2_nodes_from_a_cold_shared_data_dir() {
	mnist_cold 'node[1-2]' torch --backend gloo --nproc-per-node 1
	mnist_trained 2 "(torch)" || return 1
	expect_eq "$(jget 'sum(n["pushed_files"] for n in d["nodes"]) >= 5')" True "the 4 data files and the script pushed into the cold directory" || return 1
	expect_eq "$(jget 'd["mode"], d["backend"]')" "('torch', 'gloo')" "mode and backend" || return 1
	[[ -s $CD_SHARED_DIR/root/.cache/clusterdoc/data/mnist_mlp.pt ]] || { echo "    no checkpoint in the shared home"; return 1; }
	no_temp_files_in_the_shared_home
}

t_mnist_embedded_on_4_nodes_from_a_cold_shared_data_dir() {
	mnist_cold 'node[1-4]' embedded
	mnist_trained 4 "(embedded)" || return 1
	expect_eq "$(jget 'sum(n["pushed_files"] for n in d["nodes"]) >= 4')" True "the 4 data files pushed into the cold directory" || return 1
	expect_eq "$(jget 'd["mode"], d["params_identical"]')" "('embedded', True)" "mode, identical parameters" || return 1
	no_temp_files_in_the_shared_home
}

run_test cold_facts_on_8_nodes_sharing_a_home_answer_every_time
run_test a_cached_agent_of_zeros_is_replaced
run_test check_and_bench_pass_on_the_shared_home
run_test mnist_torch_on_2_nodes_from_a_cold_shared_data_dir
run_test mnist_embedded_on_4_nodes_from_a_cold_shared_data_dir
cluster_down
exit $ITEST_STATUS
