#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The TUI's Job view runs `clusterdoc run` jobs, driven through tmux on a namespace cluster of
# three real sshd nodes with Debian's torch (node2's NIC is ens5, the others' eth0): R takes a
# command line ("none: ..." for the command alone, else torchrun's script); the view shows the
# command, the run id, the phase, each node's state, rank and interface, and every node's
# lines as `clusterdoc run` prints them. R takes --master-port and --no-hang-ready. A rank that
# exits 3 is named first as the root cause, the others stopped; S (after a y) stops a run on
# every node; q q while a run goes quits; an unknown placeholder, a bad option or an open quote
# is refused before anything starts. After each job, no process of a run is left on any node (ps in each namespace). The
# head is the ASan + UBSan build when there is one, and no sanitizer may report anything.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=tui_run
JOBS=""
SAN_LOG=""
trap 'tui_stop; [[ -n $JOBS && -d $JOBS ]] && rm -rf "$JOBS"; [[ -n $SAN_LOG ]] && rm -rf "$SAN_LOG"' EXIT

# the run id the Job view shows, or nothing
shown_run_id() { tui_screen | sed -nE 's/^  run id   ([0-9]{8}-[0-9]{6}-[0-9a-f]{4}) .*/\1/p'; }

# run_line TEXT: R, the prompt emptied (it offers the last line), TEXT, Enter; returns once
# the view shows the new run (another run id)
run_line() {
	local before i
	before=$(shown_run_id)
	tui_keys R
	tui_wait '^Run:' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "$1"
	tui_keys Enter
	for ((i = 0; i < 100; i++)); do
		[[ -n $(shown_run_id) && $(shown_run_id) != "$before" ]] && return 0
		sleep 0.05
	done
	echo "    no new run shown after R $1"
	return 1
}

# refused_line TEXT: as run_line, for a line that starts nothing
refused_line() {
	tui_keys R
	tui_wait '^Run:' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "$1"
	tui_keys Enter
}

t_a_launcher_none_job_shows_every_nodes_lines_and_ends_ok() {
	CD_QUIET=1 cluster_up 3 --nic-names "eth0 ens5 eth0" >/dev/null || return 1
	JOBS=$(mktemp -d /tmp/cdtuirun-test.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/run/allreduce.py "$JOBS/"
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
	run_line "--env GREETING=hello none: sh -c 'echo \$GREETING from {node_rank} of {nnodes}'" || return 1
	tui_wait 'ok: exit 0 on every node, 3 rank\(s\)' 60 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" "^ Run job  done  [0-9.]+ s" "the title" || return 1
	expect_match "$s" "^  command  --env GREETING=hello none: sh -c 'echo \\\$GREETING from \{node_rank\} of \{nnodes\}'$" "the command as typed" || return 1
	expect_match "$s" '^  run id   [0-9]{8}-[0-9]{6}-[0-9a-f]{4}  launcher none, 3 node\(s\), 3 rank\(s\), master [0-9.]+:29500, hang-ready$' "the run id" || return 1
	expect_match "$s" '^  phase    probe > put > start > watch > orphans > \[done\]   in ~/\.cache/clusterdoc/runs/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$' "the phase and the run directory" || return 1
	for i in 1 2 3; do
		expect_match "$s" "^  node$i +ok exit 0 +rank $((i - 1)) " "node$i's row" || return 1
		expect_match "$s" "^ node$i +r$((i - 1)) +out +hello from $((i - 1)) of 3$" "node$i's line" || return 1
	done
	itest_expect_no_run_left
}

t_master_port_and_no_hang_ready_are_options_of_r() {
	run_line "--master-port 29611 --no-hang-ready none: sh -c 'echo port \$MASTER_PORT path [\$PYTHONPATH]'" || return 1
	tui_wait 'ok: exit 0 on every node, 3 rank\(s\)' 60 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" '^  run id   [0-9]{8}-[0-9]{6}-[0-9a-f]{4}  launcher none, 3 node\(s\), 3 rank\(s\), master [0-9.]+:29611$' "the run id, not hang-ready" || return 1
	expect_match "$s" "^ node2 +r1 +out +port 29611 path \[\]$" "node2's line" || return 1
	refused_line "--no-hang-ready=1 none: true" || return 1
	tui_wait '--no-hang-ready takes no value' 5 || return 1
	tui_keys Escape
	itest_expect_no_run_left
}

t_a_torchrun_script_runs_on_every_rank() {
	run_line "--chdir $JOBS --nproc-per-node 2 allreduce.py" || return 1
	tui_wait 'ok: exit 0 on every node, 6 rank\(s\)' 120 || return 1
	local s r
	s=$(tui_screen)
	expect_match "$s" '  torchrun, 3 node\(s\), 6 rank\(s\)' "the launcher" || return 1
	# (40 rows: the log shows every line of the run, torchrun's warnings included)
	# each rank on its node's own NIC, the one the check proved; a line is its rank's by
	# torchrun's "[default1]:" prefix, else the node's first rank's (a torch < 2.0 torchrun
	# runs without --tee), as `clusterdoc run` prints them
	local nic=(eth0 ens5 eth0)
	for i in 1 2 3; do
		expect_match "$s" "^  node$i +ok exit 0 +ranks $((2 * i - 2))-$((2 * i - 1)) +${nic[i - 1]} " "node$i's row" || return 1
		for r in $((2 * i - 2)) $((2 * i - 1)); do
			expect_match "$s" "^ node$i +r($r|$((2 * i - 2))) +out +rank $r/6 sum 15 iface ${nic[i - 1]}$" "rank $r's line" || return 1
		done
	done
	itest_expect_no_run_left
}

t_an_unknown_placeholder_a_bad_option_or_quote_are_refused_before_anything_starts() {
	local before
	before=$(shown_run_id)
	refused_line "none: echo {rank}" || return 1
	tui_wait 'unknown placeholder \{rank\}' 5 || return 1
	tui_wait '^Run: none: echo \{rank\}' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "--nproc-per-node two echo"
	tui_keys Enter
	tui_wait '--nproc-per-node wants a number from 1 to 1024, not "two"' 5 || return 1
	tui_keys C-u
	tui_keys -l "none: echo 'open"
	tui_keys Enter
	tui_wait "a quote ' is not closed" 5 || return 1
	tui_keys Escape
	# the job shown is still the last one
	tui_wait 'ok: exit 0 on every node' 5 || return 1
	expect_eq "$(shown_run_id)" "$before" "the run shown"
}

t_a_failing_rank_is_the_root_cause_shown_first() {
	run_line "none: python3 -c 'import sys, time; print(\"up\", flush=True); time.sleep(2); {node_rank} == 1 and (print(\"ValueError: rank one gives up\", file=sys.stderr, flush=True), sys.exit(3)); time.sleep(120)'" || return 1
	tui_wait 'FAILED, exit status 3' 60 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" '^  ROOT CAUSE node2 \(rank 1\): FAIL exit 3: ValueError: rank one gives up' "the root cause" || return 1
	expect_match "$s" '^  FAILED: node2: the command exited with 3: ValueError: rank one gives up' "the failure" || return 1
	# the root cause's row first, then the nodes stopped because of it
	expect_match "$(grep -E '^  node[1-3] ' <<<"$s" | head -1)" '^  node2 +FAIL exit 3 +rank 1 +ValueError' "the first node row" || return 1
	expect_match "$s" '^  node1 +stopped \(signal (15|9)\) +rank 0' "node1 stopped" || return 1
	expect_match "$s" '^  node3 +stopped \(signal (15|9)\) +rank 2' "node3 stopped" || return 1
	expect_match "$s" '^ node2 +r1 +err +ValueError: rank one gives up' "node2's error line" || return 1
	itest_expect_no_run_left
}

t_enter_shows_the_report_with_each_nodes_command() {
	tui_keys Enter
	tui_wait '^ ?Run [0-9]{8}-[0-9]{6}-[0-9a-f]{4}: failed' 5 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" 'exit status 3: node2: the command exited with 3' "the status" || return 1
	expect_match "$(grep -E '^ +node[1-3] ' <<<"$s" | head -1)" '^ +node2 +FAIL exit 3, rank 1  <- ROOT CAUSE' "the root cause first" || return 1
	expect_match "$s" '^ +argv python3 -c import sys' "each node's argv" || return 1
	tui_keys Escape
	tui_wait '^ Run job  FAILED' 5
}

t_s_stops_the_run_on_every_node_after_a_y() {
	run_line "none: python3 -c 'import time; print(\"up\", flush=True); time.sleep(120)'" || return 1
	tui_wait '^ node3 +r2 +out +up$' 60 || return 1
	tui_wait '^ node1 +r0 +out +up$' 10 || return 1
	tui_keys S
	tui_wait '^Stop the run on every node\? y and Enter stops it:' 5 || return 1
	tui_keys n Enter
	tui_wait '^ Run job  running' 5 || return 1
	sleep 1
	[[ $(itest_run_procs) -ge 3 ]] || { echo "    the run did not go on: $(itest_run_procs) process(es)"; return 1; }
	tui_keys S
	tui_wait '^Stop the run on every node\?' 5 || return 1
	tui_keys y Enter
	tui_wait 'FAILED, exit status 130 \(stopped\)' 30 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" 'FAILED: stopped from the TUI \(S\)' "why it ended" || return 1
	for i in 1 2 3; do
		expect_match "$s" "^  node$i +stopped \(signal (15|9)\)" "node$i stopped" || return 1
	done
	itest_expect_no_run_left
}

t_q_q_while_a_run_goes_quits_and_leaves_nothing() {
	run_line "none: python3 -c 'import time; print(\"up\", flush=True); time.sleep(120)'" || return 1
	tui_wait '^ node3 +r2 +out +up$' 60 || return 1
	tui_keys q
	tui_wait 'something is running: press q again' 5 || return 1
	tui_keys q
	tui_ended_clean "$SAN_LOG" || return 1
	itest_expect_no_run_left
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
itest_run_all
