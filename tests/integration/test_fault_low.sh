#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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

# case 19: the messages that said something untrue. A fresh check said "(--no-check: the last
# saved check)", as if --no-check had been given
t_a_fresh_check_before_a_run_does_not_read_as_no_check() {
	cd_head run -w 'node[1-2]' --launcher none -- true
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^# checking the nodes' network first \(to use the last saved check instead, pass --no-check\)$" \
		"the check's line" || return 1
	if grep -q -- '(--no-check' <<<"$err"; then
		echo "    a line reads as if --no-check were given: $err"
		return 1
	fi
}

# the agent refusing the head's over-long line said "line longer than 1048576 bytes from the
# agent"
t_an_agent_refusing_a_long_line_says_it_came_from_the_head() {
	err=$(head -c 1100000 /dev/zero | tr '\0' x | timeout 20 "$CLUSTERDOC_AGENT" 2>&1 >/dev/null)
	rc=$?
	expect_eq "$rc" 1 "the agent's exit status" || return 1
	expect_eq "$err" "clusterdoc-agent: a line longer than 1048576 bytes from the head" "the agent's message"
}

# a node whose agent answers garbage was reached: it is not UNREACHABLE in the facts table
t_a_node_whose_agent_answers_garbage_is_not_called_unreachable() {
	local sha
	sha=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
	cluster_node_exec 2 sh -c "mkdir -p /root/.cache/clusterdoc && printf '%s\n' '#!/bin/sh' 'echo \"this is not json\"; sleep 5' >/root/.cache/clusterdoc/agent-$sha && chmod 700 /root/.cache/clusterdoc/agent-$sha"
	cd_head facts -w 'node[1-2]'
	cluster_node_exec 2 sh -c 'rm -f /root/.cache/clusterdoc/agent-*'
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$out" "^node2 +AGENT FAILED +node2: " "node2's row" || return 1
	if grep -q UNREACHABLE <<<"$out"; then
		echo "    a node called UNREACHABLE: $out"
		return 1
	fi
}

# case 17: an undo that could not restore a change (the file changed since) is marked in
# fix --list until an undo restores it, and stays listed as such, not as plain "1 change"
t_fix_list_marks_an_undo_that_failed_for_a_change() {
	local run hosts line kept
	cluster_trap_hostname_loopback 2 || return 1
	cd_head fix -w 'node[1-2]' --only hosts --apply --yes --json
	expect_eq "$rc" 0 "the apply's exit status ($err)" || return 1
	run=$(jget 'd["run"]')
	hosts="/etc/netns/$(cluster_node_ns 2)/hosts"
	kept=$(mktemp)
	cat "$hosts" >"$kept"
	echo "10.9.9.9 changed-since" >>"$hosts"
	cd_head fix -w 'node[1-2]' --undo "$run"
	expect_eq "$rc" 1 "the undo's exit status ($out $err)" || return 1
	cd_head fix --list
	line=$(grep "^$run " <<<"$out")
	expect_eq "$line" "$run  1 change on 1 node  (undo failed for 1 of 1; again: clusterdoc fix --undo $run)" "--list" || return 1
	# the file put back as the run left it (in place: it is bind-mounted over the node's
	# /etc/hosts): the undo now restores it, and the mark goes
	cat "$kept" >"$hosts"
	rm -f "$kept"
	cd_head fix -w 'node[1-2]' --undo "$run"
	expect_eq "$rc" 0 "the second undo's exit status ($out $err)" || return 1
	cd_head fix --list
	expect_eq "$(grep "^$run " <<<"$out")" "$run  1 change on 1 node  (undone)" "--list after the second undo"
}

itest_need_root
itest_run_all
