#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc run` when things go wrong, on namespace nodes: a rank exiting 3 mid-run stops every
# node within --kill-grace + 5 s with exit 3, that node named first, nothing left; a job that
# prints nothing is stopped at --stall-timeout; Ctrl-C on the head stops every node; a command
# missing on one node is named (exit 2, nothing left running); an unknown placeholder and an
# --env value with a newline are refused before anything starts; a node whose agent dies
# mid-run ends the job everywhere; a node whose agent is SIGSTOPped has its job and agent ended
# by the head through a fresh SSH session, and a partitioned node is named unreachable, not
# slow; a burst of 50,000 lines is in the head's log, or the lines lost
# are counted there and in the summary.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=run_fault

start_run() { # ARGS... : in the background; $bg, $bgout, $bgerr
	bgout=$(mktemp)
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run --json "$@" >"$bgout" 2>"$bgerr" &
	bg=$!
}

t_a_rank_exiting_3_stops_every_node_and_is_named_first() {
	local t0 elapsed
	cluster_down
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	start_run -w 'node[1-3]' --launcher none --kill-grace 2 -- python3 -c \
		'import sys, time; print("up", flush=True); time.sleep(2)
if {node_rank} == 1: print("ValueError: rank one gives up", file=sys.stderr, flush=True); sys.exit(3)
time.sleep(120)'
	wait_for_line '^node3 r2: up' || { kill "$bg"; return 1; }
	t0=$(date +%s%N)
	finish_run
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 3 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["root_cause"], d["nodes"][1]["exit_code"], d["nodes"][0]["stopped"], d["nodes"][2]["stopped"]')" "('node2', 3, True, True)" "root cause and the stopped nodes" || return 1
	expect_eq "$(jget 'd["nodes"][1]["first_error"]')" "ValueError: rank one gives up" "its first error" || return 1
	expect_eq "$(jget '[(r["rank"], r["exit_code"], r["signal"], r["first_error"]) for r in d["ranks"]][1]')" "(1, 3, None, 'ValueError: rank one gives up')" "--json's rank 1" || return 1
	expect_eq "$(jget 'all(r["signal"] == n["signal"] and r["wall_ms"] == n["wall_ms"] > 0 for r, n in zip(d["ranks"], d["nodes"]))')" True "each rank's signal and wall time, its node's" || return 1
	expect_eq "$(jget 'sum(len(n["orphans"]) for n in d["nodes"])')" 0 "the orphan check" || return 1
	((elapsed < 2000 + 2000 + 5000)) || { echo "    took ${elapsed} ms"; return 1; }
	itest_expect_no_run_left 30
}

t_the_text_summary_names_the_root_cause_with_its_last_lines() {
	cd_head run -w 'node[1-3]' --launcher none --no-check --kill-grace 1 -- python3 -c \
		'import sys, time
if {node_rank} == 2: print("RuntimeError: boom", file=sys.stderr, flush=True); sys.exit(5)
time.sleep(60)'
	expect_eq "$rc" 5 "exit status" || return 1
	expect_match "$out" "^root cause: node3 r2: exit 5: RuntimeError: boom$" "the root cause line" || return 1
	expect_match "$out" "^    node3 r2 \(stderr\): RuntimeError: boom$" "its last lines" || return 1
	expect_match "$out" "^node1 r0: stopped by clusterdoc" "node1 stopped" || return 1
	itest_expect_no_run_left 30
}

t_a_rank_ignoring_sigterm_is_killed_after_the_kill_grace() {
	local t0 elapsed
	start_run -w 'node[1-3]' --launcher none --no-check --kill-grace 2 -- python3 -c \
		'import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print("up", flush=True); time.sleep(1)
if {node_rank} == 0: sys.exit(4)
time.sleep(120)'
	wait_for_line '^node3 r2: up' || { kill "$bg"; return 1; }
	t0=$(date +%s%N)
	finish_run
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 4 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][1]["signal"], d["nodes"][2]["signal"]')" "(9, 9)" "SIGKILL after the grace" || return 1
	((elapsed < 1000 + 2000 + 5000)) || { echo "    took ${elapsed} ms"; return 1; }
	itest_expect_no_run_left 30
}

t_a_process_that_escaped_the_job_is_listed_by_the_orphan_check() {
	local pid
	# a daemon of its own session: out of the job's process group, so no stop reaches it
	cd_head run --json -w 'node[1-3]' --launcher none --no-check -- \
		sh -c '[ {node_rank} = 1 ] && setsid sleep 77 </dev/null >/dev/null 2>&1 & sleep 1; echo done'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget "[len(n[\"orphans\"]) for n in d[\"nodes\"]]")" "[0, 1, 0]" "orphans per node ($(jget "d[\"nodes\"]"))" || return 1
	expect_eq "$(jget 'd["nodes"][1]["orphans"][0]["cmdline"]')" "sleep 77" "the orphan" || return 1
	pid=$(jget 'd["nodes"][1]["orphans"][0]["pid"]')
	kill "$pid"
	itest_expect_no_run_left 30
}

t_a_silent_job_is_stopped_at_the_stall_deadline() {
	local t0 elapsed
	t0=$(date +%s%N)
	cd_head run --json -w 'node[1-3]' --launcher none --no-check --stall-timeout 3 --kill-grace 1 -- python3 -c 'import time; print("start", flush=True); time.sleep(120)'
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "no output from any node for 3 s" "failure says it hung" || return 1
	((elapsed < 20000)) || { echo "    took ${elapsed} ms"; return 1; }
	itest_expect_no_run_left 30
}

t_ctrl_c_on_the_head_stops_every_node() {
	start_run -w 'node[1-3]' --launcher none --no-check --kill-grace 1 -- python3 -c 'import time; print("up", flush=True); time.sleep(120)'
	wait_for_line '^node[123] r[012]: up' || { kill "$bg"; return 1; }
	sleep 1
	# the clusterdoc this test started (the child of cluster_head_exec's ip netns exec)
	kill -INT "$(pgrep -P "$bg" -f "$CLUSTERDOC run" || echo "$bg")"
	finish_run
	expect_eq "$rc" 130 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["interrupted"], d["root_cause"]')" "(True, None)" "interrupted" || return 1
	itest_expect_no_run_left 30
}

t_a_command_missing_on_one_node_is_named_and_nothing_is_left() {
	cluster_node_exec 1 sh -c 'printf "#!/bin/sh\necho here; exec sleep 60\n" >/root/job.sh; chmod +x /root/job.sh' || return 1
	cluster_node_exec 3 sh -c 'cp /bin/sleep /root/job.sh' || return 1
	cd_head run --json -w 'node[1-3]' --launcher none --no-check -- /root/job.sh 60
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "^node2: cannot run /root/job.sh" "failure names node2" || return 1
	expect_eq "$(jget 'd["could_not_start"], d["root_cause"]')" "(True, 'node2')" "could not start" || return 1
	itest_expect_no_run_left 30
}

t_torchrun_on_a_node_without_torch_is_refused_naming_it() {
	local torch_dir
	torch_dir=$(/usr/bin/python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))') || return 1
	# node2 loses torch: an empty directory over its package (its own mount namespace)
	cluster_node_exec 2 mount -t tmpfs none "$torch_dir" || return 1
	cd_head run --json -w 'node[1-3]' --no-check -- train.py
	cluster_node_exec 2 umount "$torch_dir"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "^node2: import torch failed" "failure names node2" || return 1
	expect_eq "$(jget 'any(n["started"] for n in d["nodes"])')" False "nothing started"
}

t_an_unknown_placeholder_is_refused_before_anything_starts() {
	local t0 elapsed
	t0=$(date +%s%N)
	cd_head run -w 'node[1-3]' --launcher none -- python3 main.py --rank '{rank}'
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "unknown placeholder \{rank\} in \"\{rank\}\"" "the message" || return 1
	((elapsed < 1000)) || { echo "    took ${elapsed} ms: it reached the nodes"; return 1; }
}

t_an_env_value_with_a_newline_is_refused() {
	cd_head run -w 'node[1-3]' --launcher none --env $'A=1\nB=2' -- true
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "^clusterdoc run: --env A: its value holds a newline" "the message"
}

t_a_node_that_drops_out_mid_run_ends_the_job_everywhere() {
	local pid i
	start_run -w 'node[1-3]' --launcher none --no-check --kill-grace 1 -- python3 -c 'import time; print("up", flush=True); time.sleep(120)'
	wait_for_line '^node3 r2: up' || { kill "$bg"; return 1; }
	for pid in $(ip netns pids "$(cluster_node_ns 3)"); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == agent-* ]] && kill -9 "$pid"
	done
	finish_run
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "node3" "failure names node3" || return 1
	expect_eq "$(jget 'd["root_cause"]')" node3 "root cause" || return 1
	itest_expect_no_run_left 30
}

# node I's agent (the --stdio process under sshd) of the run started last (waits up to 30 s)
agent_pid() { # I
	local t p
	for ((t = 0; t < 300; t++)); do
		for p in $(ip netns pids "$(cluster_node_ns "$1")"); do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) == agent-* ]] && { echo "$p"; return 0; }
		done
		sleep 0.1
	done
	return 1
}
# how many processes of a run (CLUSTERDOC_RUN in their environment) node I holds
node_run_procs() { # I
	local pid n=0
	for pid in $(ip netns pids "$(cluster_node_ns "$1")" 2>/dev/null); do
		tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^CLUSTERDOC_RUN=' && n=$((n + 1))
	done
	echo "$n"
}

# node2's agent is SIGSTOPped mid-run (report fault-run-3, case 7): the head ends node2's job
# and its agent through a fresh SSH session (SIGCONT, SIGTERM, SIGKILL after the grace) before
# it exits, so nothing of the run is left there even while nobody continues the agent; the
# summary (text and --json) says that node2 needed it and what was ended
t_a_stopped_agents_job_is_ended_through_a_fresh_session_and_the_summary_says_so() {
	local pid t0 elapsed procs agent_left i
	[[ ${CD_N:-0} == 3 && -d ${CD_RUN:-/nonexistent} ]] || { cluster_down; CD_QUIET=1 cluster_up 3 >/dev/null || return 1; }
	start_run -w 'node[1-3]' --launcher none --force -t 8 --kill-grace 1 -- sh -c 'echo start; while :; do echo tick; sleep 2; done'
	wait_for_line '^node3 r2: start' || { kill "$bg"; return 1; }
	pid=$(agent_pid 2) || { kill "$bg"; echo "    no agent on node2"; return 1; }
	kill -STOP "$pid"
	t0=$(date +%s%N)
	finish_run
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	procs=$(node_run_procs 2)
	agent_left=0
	for ((i = 0; i < 20; i++)); do # a moment for sshd to reap it
		[[ -d /proc/$pid ]] || break
		sleep 0.1
	done
	[[ -d /proc/$pid ]] && agent_left="1 ($(cut -d' ' -f3 "/proc/$pid/stat"))"
	kill -CONT "$pid" 2>/dev/null
	echo "    head exited rc $rc after $elapsed ms; node2: $procs process(es) of the run, agent left: $agent_left"
	echo "    node2: $(jget 'd["nodes"][1]["error"]')"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$procs $agent_left" "0 0" "node2's job and agent, before anyone continues it" || return 1
	expect_match "$(jget 'd["nodes"][1]["error"]')" "node2: the agent did not answer request [0-9]+ in time; a fresh SSH session found its agent \(pid $pid\) stopped \(state T\)" "node2's error" || return 1
	expect_match "$(jget 'd["nodes"][1]["ended_by_head"]')" "^its agent stopped answering; ended its job \(process group [0-9]+\) and its agent \(pid $pid\) through a fresh SSH session$" "--json's ended_by_head" || return 1
	expect_eq "$(jget 'd["nodes"][0]["ended_by_head"], d["nodes"][2]["ended_by_head"]')" "(None, None)" "the other nodes needed nothing" || return 1
	((elapsed < 8000 + 1000 + 10000)) || { echo "    took ${elapsed} ms"; return 1; }
	itest_expect_no_run_left 30 || return 1
	# the text summary says it too (the live lines go to stdout there)
	bgout=$(mktemp)
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-3]' --launcher none --force -t 8 --kill-grace 1 -- \
		sh -c 'echo start; while :; do echo tick; sleep 2; done' >"$bgout" 2>"$bgerr" &
	bg=$!
	for ((i = 0; i < 300; i++)); do grep -q '^node3 r2: start' "$bgout" && break; sleep 0.1; done
	pid=$(agent_pid 2) || { kill "$bg"; return 1; }
	kill -STOP "$pid"
	finish_run
	kill -CONT "$pid" 2>/dev/null
	expect_match "$out" "^node2: its agent stopped answering; ended its job \(process group [0-9]+\) and its agent \(pid $pid\) through a fresh SSH session$" "the text summary's line" || return 1
	itest_expect_no_run_left 30
}

# node2 drops everything from and to the head mid-run (report fault-run-3, case 8), the nodes
# still reach each other: the head re-tests the path with a fresh connection and names the
# partition, not "slow (overloaded or stopped)"; the summary says node2's job may still run there
# and for how long its agent's own bound leaves it
t_a_partitioned_node_is_named_unreachable_not_slow() {
	local nft_rules procs
	[[ ${CD_N:-0} == 3 && -d ${CD_RUN:-/nonexistent} ]] || { cluster_down; CD_QUIET=1 cluster_up 3 >/dev/null || return 1; }
	start_run -w 'node[1-3]' --launcher none --force -t 8 --kill-grace 1 -- sh -c 'echo start; while :; do echo tick; sleep 2; done'
	wait_for_line '^node3 r2: start' || { kill "$bg"; return 1; }
	nft_rules="table inet cdpart {
		chain in { type filter hook input priority -300; ip saddr $CD_HEAD_IP drop; }
		chain out { type filter hook output priority -300; ip daddr $CD_HEAD_IP drop; }
	}"
	cluster_node_exec 2 nft -f - <<<"$nft_rules" || { kill "$bg"; return 1; }
	finish_run
	procs=$(node_run_procs 2)
	cluster_node_exec 2 nft delete table inet cdpart
	echo "    head exited rc $rc; node2 held $procs process(es) of the run then"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["nodes"][1]["error"]')" "^node2: the agent did not answer request [0-9]+ in time; the head cannot reach node2 any more: a fresh connection to port 22 timed out" "node2's error" || return 1
	expect_eq "$(jget '"slow" in d["nodes"][1]["error"] or "overloaded" in d["failure"]')" False "not called slow" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" unreachable "node2's error code" || return 1
	expect_match "$(jget 'd["nodes"][1]["ended_by_head"]')" "^its agent stopped answering and a fresh SSH session could not reach node2: its job may still run there until the agent's own bound ends it, [0-9]+ s after the last keepalive it heard" "--json's ended_by_head" || return 1
	itest_expect_no_run_left 400
}

# 50,000 numbered lines at once: the agent keeps the newest JOB_LOG_KEEP (20,000) until the head
# reads them, so a burst loses some; the head's log then holds every line it got, in order, and a
# marker with the exact count lost there, and the summary (text and --json) states that count
t_a_burst_of_50000_lines_is_logged_or_counted_as_lost_exactly() {
	local dir got lost
	cd_head run -w 'node[1-3]' --launcher none --no-check --json -- sh -c '[ {node_rank} = 0 ] || exit 0; seq 1 50000; echo LAST'
	expect_eq "$rc" 0 "exit status (the job's own: $err)" || return 1
	dir="$CD_RUN/home/.local/state/clusterdoc/runs/$(jget 'd["run_id"]')"
	got=$(grep -cE '^([0-9]+|LAST)$' "$dir/node1.out")
	lost=$(awk '/^\[clusterdoc: [0-9]+ line\(s\) of stdout and stderr lost here/ { n += $2 } END { print n + 0 }' "$dir/node1.out")
	expect_eq "$((got + lost))" 50001 "lines in node1.out ($got) + lost as its markers say ($lost)" || return 1
	expect_eq "$(tail -n 1 "$dir/node1.out")" LAST "the log's last line" || return 1
	expect_eq "$(grep -E '^([0-9]+|LAST)$' "$dir/node1.out" | grep -v LAST | sort -n -c && echo sorted)" sorted "the lines kept, in order" || return 1
	expect_eq "$(jget 'd["lines_dropped"], d["nodes"][0]["lines_dropped"]')" "($lost, $lost)" "--json's count lost" || return 1
	if ((lost > 0)); then
		expect_eq "$(awk '/^node1: [0-9]+ line\(s\) of output lost here/ { n += $2 } END { print n + 0 }' <<<"$err")" "$lost" "lost as the screen said" || return 1
		cd_head run -w 'node[1-3]' --launcher none --no-check -- sh -c '[ {node_rank} = 0 ] || exit 0; seq 1 50000; echo LAST'
		expect_match "$out" "^output lost: node1: [0-9]+ line\(s\)" "the text summary's line" || return 1
	fi
	itest_expect_no_run_left 30
}

itest_need_root
itest_run_all
