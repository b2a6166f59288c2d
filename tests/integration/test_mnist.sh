#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc mnist` on namespace clusters of real sshd nodes, with a dataset in MNIST's format
# made by the test and served over HTTP from the head's loopback: both modes train and the loss
# drops; the second run downloads and pushes nothing; a wrong checksum, a 404, a truncated file
# and a node without torch stop the run before it starts, naming the cause; a killed or hung
# rank ends the job within its deadline and leaves no process on any node.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=mnist

DATA=""      # the good dataset: *.gz and MD5SUMS
HTTP_PID=""  # python3 -m http.server in the head namespace
HTTP_PORT=18731
HTTP_LOG=""
URL="http://127.0.0.1:$HTTP_PORT"

start_http() {
	DATA=$(mktemp -d)
	HTTP_LOG=$(mktemp)
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$DATA/good" 3000 500 || return 1
	# broken variants, each a directory of its own
	mkdir -p "$DATA/missing" "$DATA/short" "$DATA/badsum"
	cp "$DATA/good/"*.gz "$DATA/badsum/"
	sed 's/^[0-9a-f]\{8\}/00000000/' "$DATA/good/MD5SUMS" >"$DATA/badsum/MD5SUMS"
	cp "$DATA/good/"*labels*.gz "$DATA/good/t10k-images-idx3-ubyte.gz" "$DATA/missing/"
	cp "$DATA/good/"*labels*.gz "$DATA/good/t10k-images-idx3-ubyte.gz" "$DATA/short/"
	# an IDX file cut short inside an intact gzip (its MD5 is the one given)
	gzip -dc "$DATA/good/train-images-idx3-ubyte.gz" | head -c 100000 | gzip -n >"$DATA/short/train-images-idx3-ubyte.gz"
	(cd "$DATA/short" && md5sum ./*.gz | sed 's| \./| |') >"$DATA/short/MD5SUMS"
	cluster_head_exec /usr/bin/python3 -m http.server "$HTTP_PORT" --bind 127.0.0.1 \
		--directory "$DATA" >"$HTTP_LOG" 2>&1 &
	HTTP_PID=$!
	local i
	for ((i = 0; i < 50; i++)); do
		cluster_head_exec /usr/bin/python3 -c "import urllib.request as u; u.urlopen('$URL/good/MD5SUMS')" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "    the test's HTTP server did not start"
	return 1
}

stop_http() {
	[[ -n $HTTP_PID ]] && kill "$HTTP_PID" 2>/dev/null && wait "$HTTP_PID" 2>/dev/null
	HTTP_PID=""
	[[ -n $DATA ]] && rm -rf "$DATA"
	[[ -n $HTTP_LOG ]] && rm -f "$HTTP_LOG"
}

downloads() { grep -c 'GET /[a-z]*/[a-z0-9-]*\.gz' "$HTTP_LOG"; }

# the run's own cache on the head: every test downloads into a fresh one unless it says so
CACHE=""
mnist() { # ARGS...
	cd_head mnist --cache-dir "$CACHE" --retries 1 --stall-timeout 60 --json "$@"
}

# processes of the job (agents, torchrun, its workers) still alive in the node namespaces
left_behind() {
	local i pid n=0 comm
	for ((i = 1; i <= CD_N; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			comm=$(cat "/proc/$pid/comm" 2>/dev/null)
			[[ $comm == agent-* || $comm == python* || $comm == pt_* ]] && n=$((n + 1))
		done
	done
	echo "$n"
}

# wait up to 5 s for the nodes to be empty
expect_nothing_left() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ $(left_behind) == 0 ]] && return 0
		sleep 0.1
	done
	echo "    $(left_behind) process(es) left on the nodes"
	return 1
}

t_embedded_trains_on_3_nodes_and_the_loss_drops() {
	cluster_down
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	start_http || return 1
	CACHE=$(mktemp -d -p "$CD_HOME")
	mnist -w 'node[1-3]' --mode embedded --data-url "$URL/good/" --data-md5 "$DATA/good/MD5SUMS"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["mode"], d["nranks"], len(d["epochs"])')" "('embedded', 3, 2)" "mode, ranks, epochs" || return 1
	expect_eq "$(jget 'd["epochs"][1]["loss"] < d["epochs"][0]["loss"]')" True "the loss drops" || return 1
	expect_eq "$(jget 'd["test"]["accuracy"] >= 0.9 and d["test"]["total"] == 500')" True "test accuracy ($(jget 'd["test"]'))" || return 1
	expect_eq "$(jget 'd["params_identical"] and len(set(n["param_sha256"] for n in d["nodes"])) == 1')" True "one parameter hash" || return 1
	expect_eq "$(jget '[n["pushed_files"] for n in d["nodes"]]')" "[4, 4, 4]" "files pushed" || return 1
	expect_eq "$(downloads)" 4 "downloads" || return 1
	expect_nothing_left
}

t_a_second_run_downloads_and_pushes_nothing() {
	mnist -w 'node[1-3]' --mode embedded --nproc-per-node 2 --epochs 1 --data-url "$URL/good/" \
		--data-md5 "$DATA/good/MD5SUMS"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nranks"], d["params_identical"]')" "(6, True)" "ranks, identical parameters" || return 1
	expect_eq "$(jget '[n["pushed_files"] for n in d["nodes"]]')" "[0, 0, 0]" "files pushed" || return 1
	expect_eq "$(downloads)" 4 "downloads (all from the first run)"
}

t_torch_ddp_trains_with_gloo_on_2_nodes() {
	mnist -w 'node[1-2]' --mode torch --backend gloo --nproc-per-node 2 --data-url "$URL/good/" \
		--data-md5 "$DATA/good/MD5SUMS"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["mode"], d["backend"], d["nranks"], len(d["epochs"])')" "('torch', 'gloo', 4, 2)" "mode, backend, ranks, epochs" || return 1
	expect_eq "$(jget 'd["epochs"][1]["loss"] < d["epochs"][0]["loss"]')" True "the loss drops" || return 1
	expect_eq "$(jget 'd["test"]["accuracy"] >= 0.9 and d["test"]["total"] == 500')" True "test accuracy ($(jget 'd["test"]'))" || return 1
	# the script went along with the data; rank 0 saved its checkpoint
	expect_eq "$(jget '[n["pushed_files"] for n in d["nodes"]]')" "[1, 1]" "only the script pushed" || return 1
	cluster_node_exec 1 test -s /root/.cache/clusterdoc/data/mnist_mlp.pt || { echo "    no checkpoint on node1"; return 1; }
	expect_nothing_left
}

t_auto_mode_picks_torch_where_every_node_has_it() {
	mnist -w 'node[1-2]' --epochs 1 --data-url "$URL/good/" --data-md5 "$DATA/good/MD5SUMS"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["mode"], d["backend"]')" "('torch', 'gloo')" "mode and backend (no GPU here)"
}

t_a_wrong_checksum_stops_before_anything_starts() {
	CACHE=$(mktemp -d -p "$CD_HOME")
	mnist -w 'node[1-2]' --mode embedded --data-url "$URL/badsum/" --data-md5 "$DATA/badsum/MD5SUMS"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["failure"]')" 'MD5' "failure names the checksum" || return 1
	expect_match "$(jget 'd["failure"]')" '[a-z0-9-]+-ubyte' "failure names the file" || return 1
	expect_eq "$(jget 'any(n["started"] for n in d["nodes"])')" False "nothing started"
}

t_a_404_names_the_url() {
	CACHE=$(mktemp -d -p "$CD_HOME")
	mnist -w 'node[1-2]' --mode embedded --data-url "$URL/missing/" --data-md5 "$DATA/good/MD5SUMS"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["failure"]')" "404" "failure says 404" || return 1
	expect_match "$(jget 'd["failure"]')" "$URL/missing/train-images-idx3-ubyte.gz" "failure names the URL"
}

t_a_truncated_file_is_refused_before_training() {
	CACHE=$(mktemp -d -p "$CD_HOME")
	mnist -w 'node[1-2]' --mode embedded --data-url "$URL/short/" --data-md5 "$DATA/short/MD5SUMS"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["failure"]')" "train-images-idx3-ubyte" "failure names the file" || return 1
	expect_match "$(jget 'd["failure"]')" "truncated" "failure says truncated"
}

t_a_node_without_torch_is_named_and_nothing_starts() {
	# node2 loses torch: an empty directory over its package (its own mount namespace)
	local torch_dir
	torch_dir=$(/usr/bin/python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))') || return 1
	cluster_node_exec 2 mount -t tmpfs none "$torch_dir" || return 1
	CACHE=$(mktemp -d -p "$CD_HOME")
	mnist -w 'node[1-2]' --mode torch --data-dir "$DATA/good" --data-md5 "$DATA/good/MD5SUMS"
	cluster_node_exec 2 umount "$torch_dir"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "^node2: import torch failed" "failure names node2" || return 1
	expect_match "$(jget 'd["failure"]')" "--mode embedded" "failure says what to do" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"], d["nodes"][0]["error_code"]')" "('no-torch', None)" "node codes" || return 1
	expect_eq "$(jget 'any(n["started"] for n in d["nodes"])')" False "nothing started"
}

# Start the job in the background with ARGS; set $bg, $bgout, $bgerr
start_job() {
	bgout=$(mktemp)
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" mnist --cache-dir "$CACHE" \
		--json "$@" >"$bgout" 2>"$bgerr" &
	bg=$!
}

# the pid of a process on node I whose command line matches PATTERN (waits up to 30 s)
wait_for_proc() { # I PATTERN
	local i p
	for ((i = 0; i < 300; i++)); do
		for p in $(ip netns pids "$(cluster_node_ns "$1")"); do
			if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -Eq -- "$2"; then
				echo "$p"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

finish_job() {
	wait "$bg"
	rc=$?
	out=$(cat "$bgout")
	err=$(cat "$bgerr")
	rm -f "$bgout" "$bgerr"
}

t_a_killed_torch_rank_ends_the_job_and_leaves_nothing() {
	local pid t0 elapsed
	start_job -w 'node[1-2]' --mode torch --backend gloo --epochs 50 --data-dir "$DATA/good" --data-md5 "$DATA/good/MD5SUMS"
	t0=$(date +%s%N)
	# a worker on node2 once it trains (it has read the data by then)
	pid=$(wait_for_proc 2 'python3[^ ]* -u mnist_ddp.py') || { kill "$bg"; echo "    no rank on node2"; return 1; }
	sleep 4
	kill -9 "$pid"
	finish_job
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	# torchrun's own report of the killed worker when it came in time, else the first node's failure
	expect_match "$(jget 'd["failure"]')" "node2: rank 1 failed with exit code -9 \(torchrun's report\)|node[12]: the job" "failure names a node" || return 1
	expect_eq "$(jget 'd["nodes"][1]["exit_code"] != 0')" True "node2's job failed" || return 1
	((elapsed < 60000)) || { echo "    took ${elapsed} ms"; return 1; }
	expect_nothing_left
}

t_a_killed_agent_ends_the_embedded_job_and_leaves_nothing() {
	local pid
	start_job -w 'node[1-3]' --mode embedded --epochs 100 --data-dir "$DATA/good" --data-md5 "$DATA/good/MD5SUMS"
	pid=$(wait_for_proc 3 '^[^ ]*agent-') || { kill "$bg"; echo "    no agent on node3"; return 1; }
	sleep 5
	kill -9 "$pid"
	finish_job
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "node3" "failure names node3" || return 1
	expect_nothing_left
}

t_a_hung_rank_is_stopped_at_the_stall_deadline() {
	local pid t0 elapsed
	start_job -w 'node[1-2]' --mode torch --backend gloo --epochs 50 --stall-timeout 10 --data-dir "$DATA/good" --data-md5 "$DATA/good/MD5SUMS"
	pid=$(wait_for_proc 2 'python3[^ ]* -u mnist_ddp.py') || { kill "$bg"; echo "    no rank on node2"; return 1; }
	sleep 4
	kill -STOP "$pid"
	t0=$(date +%s%N)
	finish_job
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "no output from any node for 10 s" "failure says it hung" || return 1
	((elapsed < 10000 + 15000)) || { echo "    took ${elapsed} ms after the stop: $out"; return 1; }
	expect_nothing_left
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap stop_http EXIT
# In file order: the tests after the first reuse its cluster, server and cache.
for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
	[[ -n ${ONLY:-} && $t != embedded_trains* && ! $t =~ $ONLY ]] && continue
	run_test "$t"
done
stop_http
cluster_down
exit $ITEST_STATUS
