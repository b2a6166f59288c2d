#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The TUI's Hang view (h from any view), driven through tmux on a namespace cluster of three real
# sshd nodes with Debian's torch over Gloo: a job started with `clusterdoc run` from the Job view
# (R), 2 ranks per node, where rank 5 sleeps in load_batch before an allreduce the others wait in
# (tests/fixtures/hang/hang_job.py). While the view is open it inspects the run by its id in
# rounds: it says HUNG and names rank 5 on node3 first, in the words of `clusterdoc hang`, with
# the stack from the run's hang-ready dump, then the ranks grouped; Enter opens the full report;
# Esc closes the view and the inspection stops. The run is then stopped (S, y) and nothing of it
# is left on the nodes; h then finds no job and says what it searched. The head is the ASan +
# UBSan build when there is one, and no sanitizer may report anything.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=tui_hang
JOBS=""
SAN_LOG=""
trap 'tui_stop; [[ -n $JOBS && -d $JOBS ]] && rm -rf "$JOBS"; [[ -n $SAN_LOG ]] && rm -rf "$SAN_LOG"' EXIT

# the run id the Job view shows, or nothing
shown_run_id() { tui_screen | sed -nE 's/^  run id   ([0-9]{8}-[0-9]{6}-[0-9a-f]{4}) .*/\1/p'; }

t_a_rank_asleep_is_named_live_with_its_node_and_stack() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	JOBS=$(mktemp -d /tmp/cdtuihang-test.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/hang/hang_job.py "$JOBS/"
	local head=$CLUSTERDOC
	SAN_LOG=$(mktemp -d)
	[[ -x ${CLUSTERDOC_ASAN:-} ]] && head=$CLUSTERDOC_ASAN
	CLUSTERDOC=$head TUI_SIZE=120x40 tui_start \
		ASAN_OPTIONS="log_path=$SAN_LOG/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$SAN_LOG/ubsan:halt_on_error=1:print_stacktrace=1" \
		-- tui -w 'node[1-3]' --probe-timeout 1000 || return 1
	tui_wait 'check done: 3 node\(s\)' 90 || return 1
	tui_keys 6
	tui_wait 'R runs your own command instead' 5 || return 1
	tui_keys R
	tui_wait '^Run:' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "--chdir $JOBS --nproc-per-node 2 --stall-timeout 600 hang_job.py sleep5"
	tui_keys Enter
	# every rank but 5 waits in step 3's allreduce once rank 4 printed step 2
	tui_wait 'rank 4 step 2$' 120 || return 1
	local id
	id=$(shown_run_id)
	[[ -n $id ]] || { echo "    no run id shown"; return 1; }
	sleep 2
	tui_keys h
	tui_wait "^ Hang: the run $id on node\[1-3\]" 5 || return 1
	tui_wait '^ HUNG ' 30 || return 1
	local s
	s=$(tui_screen)
	[[ -n ${TUI_HANG_SHOW:-} ]] && sed 's/^/    | /' <<<"$s"
	expect_match "$s" '^ suspects$' "the suspects' heading" || return 1
	# the first suspect, as `clusterdoc hang` words it
	expect_match "$(grep -E '^ +1\. ' <<<"$s")" "^   1\. rank 5 \(node3, pid [0-9]+\) has not entered the collective the others wait in: its main thread sleeps in" "the suspect" || return 1
	# the reason wraps: its stack, from the run's hang-ready dump, on the suspect's rows
	expect_match "$(sed -n '/^   1\. /,/^$/p' <<<"$s" | tr -s ' \n' ' ')" "its stack in load_batch" "the stack in the reason" || return 1
	expect_match "$s" '^ ranks, grouped by what they do$' "the groups' heading" || return 1
	expect_match "$s" '^   1 rank \[5\]: ' "rank 5's group" || return 1
	# it goes on sampling while open
	tui_wait '^ round 2, verdict [0-9]+s old' 30 || return 1
	tui_keys Enter
	tui_wait '^ clusterdoc hang: ' 5 || return 1
	s=$(tui_screen)
	expect_match "$s" '^ suspects:$' "the report's suspects" || return 1
	expect_match "$s" '^ +rank 5 +node3 pid [0-9]+ ' "rank 5's row in the report" || return 1
	tui_keys Escape
	tui_wait '^ HUNG ' 5 || return 1
	tui_keys Escape
	tui_wait '^ Run job  running' 5 || return 1
	if grep -Eq '^ Hang: ' <<<"$(tui_screen)"; then
		echo "    the Hang view did not close"
		return 1
	fi
}

t_the_run_stops_and_nothing_is_left() {
	tui_keys Escape Escape # the Hang view closed, when an assertion above left it open
	tui_wait '^ Run job  running' 5 || return 1
	tui_keys S
	tui_wait '^Stop the run on every node\?' 5 || return 1
	tui_keys y Enter
	tui_wait 'FAILED, exit status 130 \(stopped\)' 30 || return 1
	local i
	for ((i = 0; i < 50; i++)); do
		[[ $(itest_run_procs) == 0 ]] && break
		sleep 0.1
	done
	expect_eq "$(itest_run_procs)" 0 "processes of the run left on the nodes" || return 1
	# the run is over: no job found, and what was searched
	local id
	id=$(shown_run_id)
	tui_keys h
	tui_wait "^ NOT INSPECTED  no job found: searched processes with CLUSTERDOC_RUN=$id " 30 || return 1
	tui_keys Escape
	tui_wait 'FAILED, exit status 130 \(stopped\)' 5 || return 1
	tui_keys q
	tui_ended_clean "$SAN_LOG" || return 1
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
itest_run_all
