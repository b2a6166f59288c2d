#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The TUI's R refuses, as `clusterdoc run` does, to start a run on nodes whose check found
# errors the job's plan cannot avoid: with every MASTER_PORT candidate (29500, 29501, 29510)
# blocked on node1 (the master), R asks "Start anyway?"; n starts nothing, y starts it;
# `clusterdoc run` itself refuses (exit 2) naming the finding, and --force starts it. (With
# 29500 alone blocked, the plan takes the proved 29501 and nothing is refused: test_journey.sh.) tmux on a two-node namespace cluster; the head is the ASan + UBSan build
# when there is one, and no sanitizer may report anything.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=run_tui_check
SAN_LOG=""
trap 'tui_stop; [[ -n $SAN_LOG ]] && rm -rf "$SAN_LOG"' EXIT

shown_run_id() { tui_screen | sed -nE 's/^  run id   ([0-9]{8}-[0-9]{6}-[0-9a-f]{4}) .*/\1/p'; }

enter_line() {
	tui_keys R
	tui_wait '^Run:' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "$1"
	tui_keys Enter
}

t_a_run_on_nodes_with_check_errors_asks_before_it_starts() {
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	cluster_trap_firewall_port 1 29500-29510 || return 1
	local head=$CLUSTERDOC
	SAN_LOG=$(mktemp -d)
	[[ -x ${CLUSTERDOC_ASAN:-} ]] && head=$CLUSTERDOC_ASAN
	CLUSTERDOC=$head TUI_SIZE=160x40 tui_start \
		ASAN_OPTIONS="log_path=$SAN_LOG/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$SAN_LOG/ubsan:halt_on_error=1:print_stacktrace=1" \
		-- tui -w 'node[1-2]' --probe-timeout 1000 || return 1
	tui_wait 'check done: 2 node\(s\)' 90 || return 1
	tui_keys 6
	tui_wait 'R runs your own command instead' 5 || return 1
	enter_line "none: echo hello" || return 1
	tui_wait 'The check found [0-9]+ error\(s\) that may break the job: .*Start anyway\?' 5 || return 1
	tui_keys n Enter
	tui_wait 'the run is not started' 5 || return 1
	expect_eq "$(shown_run_id)" "" "a run shown after n" || return 1
	enter_line "none: echo hello" || return 1
	tui_wait 'Start anyway\?' 5 || return 1
	tui_keys y Enter
	tui_wait 'ok: exit 0 on every node, 2 rank\(s\)' 60 || return 1
	tui_keys q
	local status
	status=$(tui_exit_status 20)
	if [[ $status != 0 ]] || compgen -G "$SAN_LOG/*" >/dev/null; then
		echo "    exit status $status; its stderr and sanitizer logs:"
		cat "$TUI_DIR/stderr" "$SAN_LOG"/* 2>/dev/null | head -60 | sed 's/^/    /'
		return 1
	fi
}

t_clusterdoc_run_refuses_on_check_errors_naming_them_and_force_starts_it() {
	if [[ -z ${CD_RUN:-} ]]; then
		CD_QUIET=1 cluster_up 2 >/dev/null || return 1
		cluster_trap_firewall_port 1 29500-29510 || return 1
	fi
	cd_head run -w 'node[1-2]' --launcher none -- sh -c 'echo ran-{node_rank}'
	expect_eq "$rc" 2 "the exit status without --force" || return 1
	expect_match "$err" "the check found what would break the job, and the plan's environment does not avoid it \(--force starts it anyway\)" "the refusal" || return 1
	expect_match "$err" "^  master-port-blocked: node1 " "the finding named, with its node" || return 1
	expect_eq "$(grep -c '^node[12] r[01] out ran-' <<<"$out")" 0 "lines of a refused run" || return 1
	cd_head run -w 'node[1-2]' --launcher none --no-check --force -- sh -c 'echo ran-{node_rank}'
	expect_eq "$rc" 0 "the exit status with --force" || return 1
	expect_match "$err" "^# --force: not refused for what the check found:" "--force says what it starts despite" || return 1
	expect_match "$err" "^  master-port-blocked: node1 " "the finding --force starts despite" || return 1
	expect_match "$out" "ran-0" "node1's line" || return 1
	expect_match "$out" "ran-1" "node2's line"
}

itest_need_root
itest_run_all
