#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc run --sync` and the run directory against the faults of fault-run-3.md cases 3, 4
# and 5, on two namespace nodes with separate homes: a second run into one --remote-dir keeps
# what the first job wrote; a run started while another runs there leaves the running job's
# directory alone; a --remote-dir another user can change is refused on the node, naming it,
# and their module never runs; two nodes carrying one home-id token (one image) but separate
# homes each get the tree and run the new code.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=run_sync_fault

SRC="" # the trees, flags and planted directories, in a /tmp dir of the test's (the nodes share /tmp)

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	SRC=$(mktemp -d /tmp/cdsyncfault-test.XXXXXX)
	chmod 755 "$SRC"
	# the nodes' check, saved for the --no-check runs below
	cd_head run -w 'node[1-2]' --launcher none --no-hang-ready -- true
	expect_eq "$rc" 0 "the checked run's exit status ($err)"
}

run() { cd_head run --json -w 'node[1-2]' --launcher none --no-check --stall-timeout 60 "$@"; }

# node I's home, as the head's side of the test sees it
home() { echo "$CD_RUN/n$1/home"; }

t_a_second_run_into_the_same_remote_dir_keeps_the_first_runs_outputs() {
	local i ck
	setup_cluster || return 1
	mkdir -p "$SRC/proj"
	echo 'print("v1")' >"$SRC/proj/train.py"
	run --sync "$SRC/proj" --remote-dir '~/proj' -- \
		sh -c 'python3 train.py; echo "epoch 5 weights" > model.ckpt; mkdir -p out; echo result > out/metrics.json'
	expect_eq "$rc" 0 "the first run's exit status ($err)" || return 1
	echo 'print("v2")' >"$SRC/proj/train.py"
	run --sync "$SRC/proj" --remote-dir '~/proj' -- sh -c 'python3 train.py; ls'
	expect_eq "$rc" 0 "the second run's exit status ($err)" || return 1
	expect_match "$err" "^node1 r0: v2$" "the second job runs the new code" || return 1
	for i in 1 2; do
		ck=$(find "$(home "$i")/proj" -name model.ckpt)
		expect_eq "$(wc -l <<<"$ck")" 1 "checkpoints on node$i ($ck)" || return 1
		expect_eq "$(cat "$ck" 2>&1)" "epoch 5 weights" "node$i's checkpoint" || return 1
		expect_eq "$(cat "$(dirname "$ck")/out/metrics.json" 2>&1)" result "node$i's metrics" || return 1
	done
}

t_a_concurrent_run_does_not_delete_a_running_jobs_directory() {
	local flag=$SRC/flag-a i
	mkdir -p "$SRC/pA" "$SRC/pB"
	echo 'VERSION=1' >"$SRC/pA/cfg.py"
	echo 'VERSION=2' >"$SRC/pB/cfg.py"
	bgout=$(mktemp)
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run --json -w 'node[1-2]' \
		--launcher none --no-check --stall-timeout 60 --sync "$SRC/pA" --remote-dir '~/proj' -- \
		sh -c 'echo up; while [ ! -e "$0" ]; do sleep 0.1; done; cat cfg.py; echo out > result.txt; cat result.txt' \
		"$flag" >"$bgout" 2>"$bgerr" &
	bg=$!
	for ((i = 0; i < 300; i++)); do
		[[ $(grep -c '^node[12] r[01]: up$' "$bgerr") == 2 ]] && break
		sleep 0.1
	done
	run --sync "$SRC/pB" --remote-dir '~/proj' -- cat cfg.py
	touch "$flag"
	wait "$bg"
	local arc=$? aerr
	aerr=$(cat "$bgerr")
	rm -f "$bgout" "$bgerr"
	expect_eq "$rc" 0 "run B's exit status ($err)" || return 1
	expect_match "$err" "^node2 r1: VERSION=2$" "run B's code" || return 1
	expect_eq "$arc" 0 "run A's exit status ($aerr)" || return 1
	expect_match "$aerr" "^node1 r0: VERSION=1$" "run A still reads its own code" || return 1
	expect_match "$aerr" "^node2 r1: out$" "run A writes into its directory" || return 1
}

t_a_remote_dir_another_user_can_write_is_refused_naming_node_and_path() {
	local dir=$SRC/scratch
	# as the fault run: another user's world-writable directory, a module the job would import
	mkdir -p "$dir/hang"
	printf 'import os\nopen("%s/OWNED_BY_uid%%d" %% os.getuid(), "w").write("x")\nfrom _json import *\n' \
		"$SRC" >"$dir/hang/json.py"
	chmod 777 "$dir" "$dir/hang"
	chown -R 2902:2902 "$dir"
	run --remote-dir "$dir" -- python3 -c 'import json; print(json.dumps([1]))'
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "^node1: $dir/[0-9]{8}-[0-9]{6}-[0-9a-f]{4} is not there, and $dir above it can be written by another user \(uid 2902, mode 0777\): they could make it: no code runs from a directory another user can change \(unsafe\) \(nothing was started\)$" "the refusal" || return 1
	expect_eq "$(ls -A "$dir")" hang "what is in the other user's directory (nothing was put there)" || return 1
	expect_eq "$(jget '[(n["started"], n["error_code"]) for n in d["nodes"]]')" "[(False, 'unsafe'), (False, 'unsafe')]" "each node refused" || return 1
	if ls "$SRC"/OWNED_BY_uid* 2>/dev/null; then
		echo "    the other user's module ran"
		return 1
	fi
	if grep -q 'r[01]: \[1\]' <<<"$err"; then
		echo "    the job ran: $err"
		return 1
	fi
}

t_a_group_writable_remote_dir_is_refused_with_its_reason() {
	local dir=$SRC/group
	mkdir -p "$dir"
	chmod 775 "$dir"
	run --sync "$SRC/proj" --remote-dir "$dir" -- python3 train.py
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "^node1: $dir/[0-9]{8}-[0-9]{6}-[0-9a-f]{4} is not there, and $dir above it can be written by another user \(uid 0, mode 0775\): they could make it: no code runs from a directory another user can change \(unsafe\) \(nothing was started\)$" "the refusal" || return 1
	expect_eq "$(ls -A "$dir")" "" "what is in the group's directory (nothing was put there)" || return 1
	expect_eq "$(jget '[n["error_code"] for n in d["nodes"]]')" "['unsafe', 'unsafe']" "each node refused" || return 1
	if grep -q 'r[01]: v2' <<<"$err"; then
		echo "    the job ran: $err"
		return 1
	fi
	# the same directory, the group's write bit taken away: the run goes
	chmod 755 "$dir"
	run --sync "$SRC/proj" --remote-dir "$dir" -- python3 train.py
	expect_eq "$rc" 0 "exit status once 0755 ($err)" || return 1
	expect_match "$err" "^node2 r1: v2$" "node2's line"
}

t_copied_home_id_tokens_on_separate_homes_each_get_the_tree() {
	local tok=.local/state/clusterdoc/home-id
	mkdir -p "$SRC/pC"
	echo 'print("code v1")' >"$SRC/pC/train.py"
	run --sync "$SRC/pC" --remote-dir '~/proj' -- python3 train.py
	expect_eq "$rc" 0 "exit status with their own tokens ($err)" || return 1
	# node2 made from node1's image: the same token
	cp "$(home 1)/$tok" "$(home 2)/$tok"
	echo 'print("code v2 (fixed bug)")' >"$SRC/pC/train.py"
	run --sync "$SRC/pC" --remote-dir '~/proj' -- python3 train.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^node1 r0: code v2 \(fixed bug\)$" "node1 runs the new code" || return 1
	expect_match "$err" "^node2 r1: code v2 \(fixed bug\)$" "node2 runs the new code" || return 1
	expect_eq "$(jget '[n["put_by"] for n in d["nodes"]]')" "['node1', 'node2']" "who put the tree" || return 1
	expect_match "$(jget 'd["warning"]')" "node2 holds node1's home-id token .* but not its home: the run's files were put on node2 too" "the warning" || return 1
	# a fresh run directory (no --remote-dir): no "No such file" on node2
	run --sync "$SRC/pC" -- python3 train.py
	expect_eq "$rc" 0 "exit status in the default run directory ($err)" || return 1
	expect_match "$err" "^node2 r1: code v2 \(fixed bug\)$" "node2's line there" || return 1
	# hang-ready's file alone (no --sync) reaches node2's home too
	run -- python3 -c 'import sitecustomize, sys; print("hang-ready", "clusterdoc-hang-ready" in open(sitecustomize.__file__).read())'
	expect_eq "$rc" 0 "exit status without --sync ($err)" || return 1
	expect_match "$err" "^node2 r1: hang-ready True$" "node2's sitecustomize"
}

cleanup() { [[ -n $SRC && -d $SRC ]] && rm -rf "$SRC"; }

itest_need_root
trap cleanup EXIT
itest_run_all
