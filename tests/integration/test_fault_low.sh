#!/usr/bin/env bash
# The low cases of fault run 3 (research/fault-run-3.md, "Failures, low") that need nodes: a run's
# logs whatever the umask, mpi-check's question and sizes, fix --list beside a run's files, and
# the messages that said something untrue. Two namespace nodes.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_low

RUNS=""   # the head's run and journal directory

t_setup_two_nodes() {
	cluster_down
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	RUNS="$CD_RUN/home/.local/state/clusterdoc/runs"
}

# case 22: under umask 000 a run's HOST.out and HOST.err were 0666; they are 0600 like
# summary.json, in a directory of 0700
t_a_runs_logs_are_0600_whatever_the_umask() {
	local old dir f
	old=$(umask)
	umask 000
	cd_head run -w 'node[1-2]' --launcher none --json -- echo hello
	umask "$old"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	dir="$RUNS/$(jget 'd["run_id"]')"
	for f in node1.out node1.err node2.out node2.err summary.json; do
		expect_eq "$(stat -c %a "$dir/$f")" 600 "$f's mode" || return 1
	done
	expect_eq "$(stat -c %a "$dir")" 700 "the run directory's mode"
}

itest_need_root
itest_run_all
