#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# itest: quiet (its rounds are timed against the watch interval)
# `clusterdoc check --watch SECONDS [--count N]` on a namespace cluster of real sshd nodes: the
# agents stay connected across rounds (no new TCP connection to any node's sshd, counted by an
# nft counter of the SYNs to port 22 in each node's namespace), a finding raised mid-watch by
# an nft rule the test adds and cleared when the test removes it is printed with its time, both
# ways, per node (a node joining a finding another node has is raised alone), a round without a
# change says so, a node partitioned from the head is node-unreachable on the first round that
# misses it, and Ctrl-C ends the watch with the last state and check's exit status for the last
# round.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=check_watch
itest_need_root

PT=(--probe-timeout 1000)
TMPD=$(mktemp -d /tmp/cd-watch.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT

up_once() {
	[[ -n ${CD_RUN:-} && -d ${CD_RUN:-/nonexistent} ]] && return 0
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_ssh_syns_start
}

# watch_bg ARGS...: clusterdoc check ARGS in the background in the head namespace; its stdout
# in $TMPD/out, stderr in $TMPD/err, its PID in $bg (cluster_head_exec's command, exec'd all
# the way: the PID is clusterdoc's own). SIGINT is set back to its default: a background job of
# a script starts with it ignored, and a Ctrl-C at a terminal reaches a foreground command that
# does not ignore it.
watch_bg() {
	: >"$TMPD/out"
	(exec ip netns exec "$CD_NS_HEAD" env --default-signal=INT -u SSH_AUTH_SOCK HOME="$CD_HOME" \
		USER=root LOGNAME=root CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" check "$@" \
		>"$TMPD/out" 2>"$TMPD/err") &
	bg=$!
}
# wait_for REGEX SECONDS: until a line of the watch's stdout matches (1 when it does not in time
# or the watch ended)
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -Eq -- "$1" "$TMPD/out" && return 0
		kill -0 "$bg" 2>/dev/null || { grep -Eq -- "$1" "$TMPD/out"; return; }
		sleep 0.1
	done
	echo "    no line matching /$1/ within $2 s: $(tail -c 600 "$TMPD/out") $(tail -c 300 "$TMPD/err")"
	return 1
}
# stop_watch SIGNAL: end the watch (SIGKILL after 20 s: then 1); $rc its status, $out its stdout
stop_watch() {
	local i
	kill "-$1" "$bg" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$bg" 2>/dev/null; then
		kill -KILL "$bg"
		echo "    the watch did not end within 20 s of SIG$1"
		wait "$bg"
		return 1
	fi
	wait "$bg"
	rc=$?
	out=$(cat "$TMPD/out")
	err=$(cat "$TMPD/err")
}
unblock_node() { ip netns exec "$(cluster_node_ns "$1")" nft delete table inet clusterdoc_test; }
unblock() { unblock_node 3; }
# agents_gone: until the ended watch's agents let MASTER_PORT go on node1 (they end when their
# SSH session closes; a check started before would find the port held by another run)
agents_gone() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -z $(cluster_node_exec 1 ss -Hltn 'sport = :29500') ]] && return 0
		sleep 0.1
	done
	echo "    node1's port 29500 still held 10 s after the watch ended"
	return 1
}

TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'

t_a_firewall_rule_added_mid_watch_is_raised_then_cleared_with_their_times() {
	up_once || return 1
	local before after
	watch_bg -w 'node[1-3]' --watch 1 "${PT[@]}"
	wait_for "round 1: 3 node\(s\), 3 checked" 60 || { stop_watch TERM; return 1; }
	before=$(cluster_ssh_syns)
	cluster_trap_firewall_port 3 29500 || { stop_watch TERM; return 1; }
	wait_for "round [0-9]+ raised warning firewall-blocks-port node3: " 30 || { stop_watch TERM; unblock; return 1; }
	unblock || { stop_watch TERM; return 1; }
	wait_for "round [0-9]+ cleared warning firewall-blocks-port node3: " 30 || { stop_watch TERM; return 1; }
	after=$(cluster_ssh_syns)
	stop_watch INT || return 1
	expect_eq "$rc" 0 "exit status (the last round is clean; $err)" || return 1
	expect_match "$out" "^$TS round [0-9]+ raised warning firewall-blocks-port node3: node3: " "raised line" || return 1
	expect_match "$out" "^$TS round [0-9]+ cleared warning firewall-blocks-port node3: " "cleared line" || return 1
	expect_match "$out" "^last state \(round [0-9]+, interrupted\):" "the last state" || return 1
	expect_match "$out" "FINDINGS: 0 error" "the last round's report" || return 1
	# one line per change; every other round after the first says it changed nothing
	expect_eq "$(grep -c ' raised \| cleared ' <<<"$out")" 2 "change lines" || return 1
	local rounds
	rounds=$(sed -nE 's/^last state \(round ([0-9]+), interrupted\):$/\1/p' <<<"$out")
	expect_eq "$(grep -Ec "^$TS round [0-9]+: no change \(0 error\(s\), [01] warning\(s\)\)$" <<<"$out")" \
		"$((rounds - 1 - 2))" "no-change lines (the rounds after the first but the two that changed)" || return 1
	expect_eq "$after" "$before" "new SSH connections to the nodes after round 1"
}

# node3 drops 29500 from the start; node2 joins the finding, then leaves it: each change names
# node2 alone, never node3, whose state never changed
t_a_node_joining_then_leaving_a_finding_is_raised_then_cleared_alone() {
	up_once || return 1
	cluster_trap_firewall_port 3 29500 || return 1
	watch_bg -w 'node[1-3]' --watch 1 "${PT[@]}"
	wait_for "round 1: 3 node\(s\), 3 checked" 60 || { stop_watch TERM; unblock; return 1; }
	wait_for "^$TS round [0-9]+: no change \(0 error\(s\), 1 warning\(s\)\)$" 30 || { stop_watch TERM; unblock; return 1; }
	cluster_trap_firewall_port 2 29500 || { stop_watch TERM; unblock; return 1; }
	wait_for "round [0-9]+ raised warning firewall-blocks-port node2: " 30 || { stop_watch TERM; unblock; unblock_node 2; return 1; }
	unblock_node 2 || { stop_watch TERM; unblock; return 1; }
	wait_for "round [0-9]+ cleared warning firewall-blocks-port node2: " 30 || { stop_watch TERM; unblock; return 1; }
	stop_watch INT || { unblock; return 1; }
	unblock || return 1
	agents_gone || return 1
	expect_match "$out" "^$TS round 1 raised warning firewall-blocks-port node3: node3: " "round 1's line" || return 1
	expect_eq "$(grep -E "^$TS round ([2-9]|[1-9][0-9]+) (raised|cleared) " <<<"$out" | sed -E "s/^$TS round [0-9]+ //; s/: node2: .*//")" \
		"raised warning firewall-blocks-port node2
cleared warning firewall-blocks-port node2" "the changes after round 1 (node2's, each alone)"
}

t_json_prints_one_object_per_round_over_the_same_agents() {
	up_once || return 1
	local before
	before=$(cluster_ssh_syns)
	cd_head check -w 'node[1-3]' --watch 0.5 --count 3 --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(wc -l <<<"$out")" 4 "lines (3 rounds, the end)" || return 1
	expect_eq "$(python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d["event"] == "round":
        print(d["version"], d["round"], d["checked"], d["kept"], d["reconnected"], len(d["cleared"]))
    else:
        print(d["event"], d["round"], d["interrupted"], d["exit_status"])
' <<<"$out")" "$(printf '1 1 3 0 3 0\n1 2 3 3 0 0\n1 3 3 3 0 0\nend 3 False 0')" "rounds" || return 1
	# the first round connects each node once; the others none
	expect_eq "$(($(cluster_ssh_syns) - before))" 3 "SSH connections of the whole watch"
}

# node_down I: node I's sshd stopped, and the sshd sessions and agents left in its namespace
# (this test's own) killed, as a node that went down takes them with it
node_down() {
	local p
	cluster_node_stop_sshd "$1"
	for p in $(ip netns pids "$(cluster_node_ns "$1")"); do
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		sshd* | agent* | clusterdoc*) kill -9 "$p" 2>/dev/null ;;
		esac
	done
}

t_a_node_lost_between_rounds_is_raised_and_connects_again_when_back() {
	up_once || return 1
	watch_bg -w 'node[1-3]' --watch 1 --json "${PT[@]}"
	wait_for '"round":1,' 60 || { stop_watch TERM; return 1; }
	node_down 2
	wait_for '"raised":\[.*"id":"node-unreachable","severity":"error","nodes":\["node2"\].*"cleared"' 30 ||
		{ stop_watch TERM; cluster_node_start_sshd 2; return 1; }
	cluster_node_start_sshd 2 || { stop_watch TERM; return 1; }
	wait_for '"cleared":\[.*"id":"node-unreachable","severity":"error","nodes":\["node2"\]' 30 ||
		{ stop_watch TERM; return 1; }
	stop_watch TERM || return 1
	expect_eq "$rc" 0 "exit status (node2 is back in the last round; $err)" || return 1
	expect_match "$(tail -1 <<<"$out")" '"event":"end".*"interrupted":true' "the end line"
}

# fault-run-3 case 23: node2 "reinstalled" with a new host key mid-watch. node-unreachable stays
# raised (the new key is refused), and the rounds say why, as a plain check does: each round's
# "node_errors" holds node2's HOST KEY CHANGED with its ssh-keygen -R line
t_a_changed_host_key_mid_watch_is_said_in_the_rounds() {
	up_once || return 1
	watch_bg -w 'node[1-3]' --watch 1 --json "${PT[@]}"
	wait_for '"round":1,' 60 || { stop_watch TERM; return 1; }
	node_down 2
	cluster_node_rekey 2 || { stop_watch TERM; return 1; }
	wait_for '"node_errors":\[[^]]*"host":"node2","error_code":"[^"]*","error":"node2: HOST KEY CHANGED: [^"]*ssh-keygen -R node2"' 60 ||
		{ stop_watch TERM; cluster_learn_hostkey 2; return 1; }
	stop_watch TERM
	cluster_learn_hostkey 2 || return 1
	expect_match "$out" '"raised":\[[^]]*"id":"node-unreachable","severity":"error","nodes":\["node2"\]' "node-unreachable raised"
}

# node2 drops everything from and to the head between rounds, the nodes still reach each other
# (report fault-run-3, case 8): the first round that misses node2 re-tests the path with a fresh
# connection and raises node-unreachable, not probe-incomplete ("reachable but slow")
t_a_partitioned_node_is_raised_unreachable_on_the_first_round_not_probe_incomplete() {
	local rules first
	up_once || return 1
	watch_bg -w 'node[1-3]' --watch 1 -t 4 "${PT[@]}"
	wait_for "round 1: 3 node\(s\), 3 checked" 60 || { stop_watch TERM; return 1; }
	rules="table inet cdpart {
		chain in { type filter hook input priority -300; ip saddr $CD_HEAD_IP drop; }
		chain out { type filter hook output priority -300; ip daddr $CD_HEAD_IP drop; }
	}"
	cluster_node_exec 2 nft -f - <<<"$rules" || { stop_watch TERM; return 1; }
	wait_for "round [0-9]+ raised [a-z]+ [a-z-]+ [^ ]*node2[^ ]*: " 60 ||
		{ cluster_node_exec 2 nft delete table inet cdpart; stop_watch TERM; return 1; }
	cluster_node_exec 2 nft delete table inet cdpart
	stop_watch TERM || return 1
	first=$(grep -Em1 "round [0-9]+ raised [a-z]+ [a-z-]+ [^ ]*node2[^ ]*: " <<<"$out")
	echo "    first: ${first:0:300}"
	expect_match "$first" "round [0-9]+ raised error node-unreachable node2: " "the first change naming node2" || return 1
	expect_eq "$(grep -c 'raised warning probe-incomplete [^ ]*node2' <<<"$out")" 0 "probe-incomplete for node2" || return 1
	# a check starts no job on its nodes: what may still run there is the agent
	! grep -q "its job may still run" <<<"$out" || { echo "    a check's node said to run a job: $(grep -m1 -o "its job may still run[^)]*" <<<"$out")"; return 1; }
	agents_gone
}

# Rounds over kept agents under ASan+UBSan (leaks included): a clean end, no report
t_a_watch_under_asan_ends_clean() {
	[[ -x ${CLUSTERDOC_ASAN:-} ]] || { echo "    no ASan build of the head (CLUSTERDOC_ASAN)"; return 1; }
	up_once || return 1
	local log=$TMPD/asan
	mkdir -p "$log"
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" \
		ASAN_OPTIONS="log_path=$log/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$log/ubsan:halt_on_error=1:print_stacktrace=1" \
		"$CLUSTERDOC_ASAN" check -w 'node[1-3]' --watch 0.5 --count 3 "${PT[@]}" 2>&1)
	rc=$?
	expect_eq "$rc" 0 "exit status under ASan ($(tail -c 300 <<<"$out"))" || return 1
	if compgen -G "$log/*" >/dev/null; then
		echo "    sanitizer reports:"
		head -40 "$log"/* | sed 's/^/    /'
		return 1
	fi
}

t_watch_options_are_checked() {
	cd_head check -w 'node[1-3]' --count 2
	expect_eq "$rc" 2 "--count without --watch" || return 1
	expect_match "$err" "--count N is the number of rounds of --watch" "message" || return 1
	cd_head check -w 'node[1-3]' --watch 0
	expect_eq "$rc" 2 "--watch 0" || return 1
	cd_head check -w 'node[1-3]' --watch 1 --drain
	expect_eq "$rc" 2 "--watch with --drain" || return 1
	cd_head env -w 'node[1-3]' --watch 1
	expect_eq "$rc" 2 "env --watch"
}

itest_run_all
