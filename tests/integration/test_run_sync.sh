#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc run --sync` and hang-ready on namespace nodes sharing one home: the tree's objects
# are sent once for the three nodes (runsync's count in --json), the job sees its files and not
# the .gitignore'd one, a second run sends nothing, then only a changed file, a tree over
# --sync-cap is refused before any node is contacted; a waiting Python rank dumps its stacks
# under the run directory on SIGUSR2 and then finishes normally; --no-hang-ready leaves
# PYTHONPATH and the dump signal out; a run into the --remote-dir of a running job leaves that
# job's tree alone.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=run_sync

SRC="" # the synced tree, and the hang test's flag, in a /tmp dir of the test's
RUNS="" # the nodes' run directories (one home)

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 3 --shared-home >/dev/null || return 1
	RUNS=$CD_SHARED_DIR/root/.cache/clusterdoc/runs
	SRC=$(mktemp -d /tmp/cdrunsync-test.XXXXXX)
	chmod 755 "$SRC"
	mkdir -p "$SRC/code/lib"
	cat >"$SRC/code/job.py" <<'PY'
import os, sys
sys.path.insert(0, "lib")
import greet
print("rank", sys.argv[1], "in", os.getcwd(), greet.WORD, open("data.txt").read().strip(),
      "ckpt", "present" if os.path.exists("big.ckpt") else "absent", flush=True)
PY
	echo 'WORD = "hello-sync"' >"$SRC/code/lib/greet.py"
	echo 'data-v1' >"$SRC/code/data.txt"
	echo '*.ckpt' >"$SRC/code/.gitignore"
	head -c 100000 /dev/urandom >"$SRC/code/big.ckpt"
}

run() { cd_head run --json "$@"; }

t_sync_on_a_shared_home_sends_each_object_once_and_the_job_sees_its_tree() {
	setup_cluster || return 1
	run -w 'node[1-3]' --launcher none --sync "$SRC/code" --stall-timeout 60 -- python3 job.py '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	# job.py, lib/greet.py, data.txt, .gitignore and hang-ready's hang/sitecustomize.py
	expect_eq "$(jget 'd["sync"]["files"], d["sync"]["files_sent"]')" "(5, 5)" "files, sent" || return 1
	expect_eq "$(jget 'sum(n["files_sent"] for n in d["nodes"])')" 5 "objects sent over the nodes" || return 1
	expect_eq "$(jget '[n["put_by"] for n in d["nodes"]]')" "['node1', 'node1', 'node1']" "one node puts for the shared home" || return 1
	# node2 and node3 proved the shared home: they found the tree node1 made, and no warning
	expect_eq "$(jget 'd["warning"]')" None "the warning" || return 1
	expect_match "$err" "^node3 r2: rank 2 in /root/\.cache/clusterdoc/runs/$(jget 'd["run_id"]') hello-sync data-v1 ckpt absent$" "node3's line" || return 1
	[[ ! -e $RUNS/$(jget 'd["run_id"]')/big.ckpt ]] || { echo "    the .gitignore'd big.ckpt arrived"; return 1; }
}

t_a_second_run_of_the_same_tree_sends_nothing() {
	run -w 'node[1-3]' --launcher none --no-check --sync "$SRC/code" --stall-timeout 60 -- python3 job.py '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["sync"]["files_sent"]')" 0 "objects sent" || return 1
	expect_match "$err" "^node1 r0: rank 0 in .* hello-sync data-v1 ckpt absent$" "node1's line"
}

t_only_the_changed_file_is_sent_and_the_job_sees_it() {
	echo 'data-v2' >"$SRC/code/data.txt"
	run -w 'node[1-3]' --launcher none --no-check --sync "$SRC/code" --stall-timeout 60 -- python3 job.py '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["sync"]["files"], d["sync"]["files_sent"]')" "(5, 1)" "files, sent" || return 1
	expect_match "$err" "^node2 r1: rank 1 in .* hello-sync data-v2 ckpt absent$" "node2's line"
}

t_a_sync_dir_over_the_cap_is_refused_before_anything_starts() {
	mkdir -p "$SRC/big"
	head -c $((3 << 20)) /dev/urandom >"$SRC/big/weights.bin"
	run -w 'node[1-3]' --launcher none --no-check --sync "$SRC/big" --sync-cap 2 -- python3 -c 'print(1)'
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "big holds 3\.0 MiB to sync, over the cap of 2\.0 MiB: add a .gitignore or raise --sync-cap" "the refusal" || return 1
	if grep -q "connecting to the nodes" <<<"$err"; then
		echo "    nodes were contacted: $err"
		return 1
	fi
}

# a background run, as test_run_fault.sh starts them
start_run() {
	bgout=$(mktemp)
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run --json "$@" >"$bgout" 2>"$bgerr" &
	bg=$!
}

# the PID of node I's python3 of a run (CLUSTERDOC_RUN in its environment)
rank_pid() {
	local pid
	for pid in $(ip netns pids "$(cluster_node_ns "$1")" 2>/dev/null); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == python3 ]] || continue
		tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^CLUSTERDOC_RUN=' && { echo "$pid"; return 0; }
	done
	return 1
}

t_sigusr2_dumps_a_waiting_ranks_stacks_under_the_run_dir_and_the_job_goes_on() {
	local flag=$SRC/flag pid run_id i f=""
	rm -f "$flag"
	start_run -w 'node[1-3]' --launcher none --no-check --stall-timeout 60 -- python3 -c '
import os, sys, time
def wait_for_the_flag():
    print("up", flush=True)
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.1)
wait_for_the_flag()
print("done", flush=True)' "$flag"
	for ((i = 0; i < 300; i++)); do
		grep -q '^node2 r1: up' "$bgerr" && break
		sleep 0.1
	done
	pid=$(rank_pid 2) || { echo "    no python3 of the run on node2: $(cat "$bgerr")"; touch "$flag"; finish_run; return 1; }
	run_id=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^CLUSTERDOC_RUN=//p')
	kill -USR2 "$pid"
	for ((i = 0; i < 50; i++)); do
		f=$(ls "$RUNS/$run_id/hang/"py_stacks_*_"$pid".txt 2>/dev/null | head -1)
		[[ -n $f ]] && grep -q wait_for_the_flag "$f" && break
		sleep 0.1
	done
	touch "$flag"
	finish_run
	[[ -n $f ]] || { echo "    no stack file for pid $pid in $RUNS/$run_id/hang/: $(ls "$RUNS/$run_id/hang/" 2>&1)"; return 1; }
	grep -q wait_for_the_flag "$f" || { echo "    the stacks lack the waiting function: $(head -c 600 "$f")"; return 1; }
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep -c '^node[123] r[012]: done$' <<<"$err")" 3 "ranks that finished" || return 1
	expect_eq "$(jget 'd["dump_signal"]')" SIGUSR2 "the dump signal in --json"
}

t_no_hang_ready_leaves_pythonpath_and_the_dump_signal_out() {
	cd_head run -w 'node[1-3]' --launcher none --no-check --dry-run -- python3 x.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" "^    PYTHONPATH=~/\.cache/clusterdoc/runs/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}/hang \\\\$" "hang-ready's PYTHONPATH" || return 1
	expect_match "$out" "^    CLUSTERDOC_DUMP_SIGNAL=SIGUSR2 \\\\$" "the dump signal" || return 1
	cd_head run -w 'node[1-3]' --launcher none --no-check --no-hang-ready --dry-run -- python3 x.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	if grep -E 'PYTHONPATH|TORCH_NCCL_|CLUSTERDOC_DUMP_SIGNAL' <<<"$out"; then
		echo "    hang-ready variables with --no-hang-ready"
		return 1
	fi
}

# fault-run-3 case 3 on the shared home: run B into the --remote-dir where run A's job runs
t_a_run_into_a_shared_remote_dir_leaves_a_running_jobs_tree_alone() {
	local flag=$SRC/flag-a i arc aerr
	mkdir -p "$SRC/pA" "$SRC/pB"
	echo 'VERSION=1' >"$SRC/pA/cfg.py"
	echo 'VERSION=2' >"$SRC/pB/cfg.py"
	start_run -w 'node[1-3]' --launcher none --no-check --stall-timeout 60 --sync "$SRC/pA" \
		--remote-dir '~/proj' -- sh -c 'echo up; while [ ! -e "$0" ]; do sleep 0.1; done; cat cfg.py; f=result.$(hostname); echo out > "$f"; cat "$f"' "$flag"
	for ((i = 0; i < 300; i++)); do
		[[ $(grep -c '^node[123] r[012]: up$' "$bgerr") == 3 ]] && break
		sleep 0.1
	done
	run -w 'node[1-3]' --launcher none --no-check --stall-timeout 60 --sync "$SRC/pB" --remote-dir '~/proj' -- cat cfg.py
	touch "$flag"
	local brc=$rc berr=$err bout=$out
	finish_run
	arc=$rc aerr=$err
	expect_eq "$brc" 0 "run B's exit status ($berr)" || return 1
	expect_eq "$(grep -c '^node[123] r[012]: VERSION=2$' <<<"$berr")" 3 "run B's ranks that read its code" || return 1
	out=$bout
	expect_eq "$(jget '[n["put_by"] for n in d["nodes"]]')" "['node1', 'node1', 'node1']" "run B put once for the shared home" || return 1
	expect_eq "$arc" 0 "run A's exit status ($aerr)" || return 1
	expect_eq "$(grep -c '^node[123] r[012]: VERSION=1$' <<<"$aerr")" 3 "run A's ranks that still read their code" || return 1
	expect_eq "$(grep -c '^node[123] r[012]: out$' <<<"$aerr")" 3 "run A's ranks that wrote into their directory"
}

cleanup() { [[ -n $SRC && -d $SRC ]] && rm -rf "$SRC"; }

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap cleanup EXIT
itest_run_all
