#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc run` whose head is suspended, on namespace nodes: a head stopped by Ctrl-Z
# (SIGTSTP) or by `kill -STOP` (a suspended laptop) for longer than the agents' silence bound is
# not a dead head: the job runs on every node throughout, and once the head is continued the run
# ends normally with the job's exit status. A head stopped past the bound plus --head-grace ends
# the job on every node by then; a head killed (EOF) still ends it at once. The TUI's Ctrl-Z
# holds its job too, gives the terminal back, and redraws on SIGCONT.
# The agent alone: hello's head_grace_ms adds to the silence bound; an EOF ends it at once.
# The keepalive is 500 ms here (CLUSTERDOC_KEEPALIVE_MS): the silence bound is 3 s, not 30 s.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=run_suspend
itest_need_root
trap 'tui_stop' EXIT

KEEPALIVE=(CLUSTERDOC_KEEPALIVE_MS=500)
# 16 ticks, one a second, then exit 0 (a node that exits non-zero first would stop the others):
# it outlives every stop below
JOB=(sh -c 'echo start; i=0; while [ $i -lt 16 ]; do sleep 1; echo tick $i; i=$((i + 1)); done')

# start_run ARGS... : in the background, with job control so that the head has a process group
# of its own that a SIGTSTP stops (a group without a parent in the session ignores it); sets
# $bg, $bgout, $bgerr, and $head (the clusterdoc process)
start_run() {
	bgout=$(mktemp)
	bgerr=$(mktemp)
	set -m
	cluster_head_exec env "${KEEPALIVE[@]}" CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" \
		"$CLUSTERDOC" run --json "$@" >"$bgout" 2>"$bgerr" &
	bg=$!
	set +m
	head=
	for ((i = 0; i < 50; i++)); do
		[[ $(cat "/proc/$bg/comm" 2>/dev/null) == clusterdoc ]] && head=$bg
		[ -n "$head" ] || head=$(pgrep -x -P "$bg" clusterdoc)
		[ -n "$head" ] && break
		sleep 0.1
	done
}

# nodes_running: for each node, 1 when a process of the run is alive there, else 0
nodes_running() {
	local i pid n s=
	for ((i = 1; i <= CD_N; i++)); do
		n=0
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^CLUSTERDOC_RUN=' && n=1
		done
		s+="$n "
	done
	echo "${s% }"
}

# ticks: how many tick lines each node's rank printed, from $err
ticks() { echo $(for r in 0 1 2; do grep -c "^node$((r + 1)) r$r: tick" <<<"$err"; done); }

# head_state: the head's state letter (T: stopped)
head_state() { [ -n "$head" ] && awk '{print $3}' "/proc/$head/stat" 2>/dev/null; }

# stop_head SIG SECONDS: send SIG to the head once the job ran on every node, check that it is
# stopped, that the job runs on every node after SECONDS, then SIGCONT it
stop_head_for() {
	wait_for_line '^node3 r2: start' || return 1
	kill -"$1" "$head"
	sleep 0.5
	expect_eq "$(head_state)" T "the head's state after SIG$1" || return 1
	sleep "$2"
	expect_eq "$(nodes_running)" "1 1 1" "the job on each node after ${2} s of a stopped head" || return 1
	kill -CONT "$head"
}

# The agent alone, on a pipe (no cluster): with head_grace_ms in hello it outlives the silence
# bound by that grace, then exits saying so; an EOF ends it at once, grace or not.
t_an_agent_given_a_head_grace_waits_it_out_after_the_silence_bound_but_not_after_eof() {
	python3 - "$CLUSTERDOC_AGENT" <<-'PYEOF'
		import json, subprocess, sys, time
		def start(hello):
		    p = subprocess.Popen([sys.argv[1], "--stdio"], stdin=subprocess.PIPE,
		                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
		    p.stdin.write((json.dumps(hello) + "\n").encode()); p.stdin.flush()
		    return p, json.loads(p.stdout.readline())
		hello = {"id": 1, "type": "hello", "protocol": 1, "keepalive_ms": 200, "head_grace_ms": 1500}
		p, r = start(hello)
		if r["result"].get("silence_ms") != 1200 or r["result"].get("head_grace_ms") != 1500:
		    sys.exit(f"    hello answered {r}")
		t0 = time.monotonic()    # silent from now on, its stdin open
		try:
		    p.wait(timeout=1.2 + 1.5 + 1.5)
		except subprocess.TimeoutExpired:
		    p.kill(); sys.exit("    still running 4.2 s into the silence")
		took = time.monotonic() - t0
		errtext = p.stderr.read().decode()
		if took < 2.5 or "1500 ms of grace for a stopped head ran out" not in errtext:
		    sys.exit(f"    exited after {took:.2f} s: {errtext!r}")
		q, r = start(hello)
		t0 = time.monotonic()
		q.stdin.close()          # EOF: the head is gone
		q.wait(timeout=5)
		if time.monotonic() - t0 > 1.0:
		    sys.exit(f"    EOF ended it only after {time.monotonic() - t0:.2f} s")
	PYEOF
}

t_a_cluster_of_three_nodes_runs_a_job() {
	cluster_down
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cd_head run --json -w 'node[1-3]' --launcher none --force -- true
	expect_eq "$rc" 0 "exit status ($err)" || return 1
}

# no grace: only the hold the head sends before it stops keeps the job
t_a_head_stopped_by_ctrl_z_past_the_silence_bound_resumes_and_the_job_ends_with_its_status() {
	start_run -w 'node[1-3]' --launcher none --no-check -t 5 --head-grace 0 -- "${JOB[@]}"
	stop_head_for TSTP 8 || { kill -CONT "$head"; kill "$head"; finish_run; return 1; }
	finish_run
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[(n["exit_code"], n["stopped"]) for n in d["nodes"]]')" \
		"[(0, False), (0, False), (0, False)]" "each node's exit, and whether it was stopped" || return 1
	expect_eq "$(ticks)" "16 16 16" "the ticks each node printed" || return 1
	itest_expect_no_run_left 30
}

t_a_head_stopped_by_sigstop_within_the_grace_resumes_and_the_job_ends_with_its_status() {
	start_run -w 'node[1-3]' --launcher none --no-check -t 5 -- "${JOB[@]}"
	stop_head_for STOP 8 || { kill -CONT "$head"; kill "$head"; finish_run; return 1; }
	finish_run
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[(n["exit_code"], n["stopped"]) for n in d["nodes"]]')" \
		"[(0, False), (0, False), (0, False)]" "each node's exit, and whether it was stopped" || return 1
	expect_eq "$(ticks)" "16 16 16" "the ticks each node printed" || return 1
	itest_expect_no_run_left 30
}

t_a_head_stopped_past_the_silence_bound_and_the_head_grace_ends_the_job_on_every_node() {
	local i
	start_run -w 'node[1-3]' --launcher none --no-check --head-grace 2 -- "${JOB[@]}"
	wait_for_line '^node3 r2: start' || { kill "$head"; finish_run; return 1; }
	kill -STOP "$head"
	# the bound is 3 s of silence plus 2 s of grace
	for ((i = 0; i < 100; i++)); do
		[[ $(itest_run_procs) == 0 ]] && break
		sleep 0.1
	done
	expect_eq "$(nodes_running)" "0 0 0" "the job on each node 10 s into the stop" ||
		{ kill -CONT "$head"; finish_run; return 1; }
	expect_eq "$(head_state)" T "the head's state" || { kill -CONT "$head"; finish_run; return 1; }
	kill -CONT "$head"
	finish_run
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" 'ms of grace for a stopped head ran out' "the failure" || return 1
}

t_a_head_killed_mid_run_ends_the_job_on_every_node_at_once() {
	local t0 elapsed
	start_run -w 'node[1-3]' --launcher none --no-check -- "${JOB[@]}"
	wait_for_line '^node3 r2: start' || { kill "$head"; finish_run; return 1; }
	t0=$(date +%s%N)
	kill -9 "$head"
	finish_run
	itest_expect_no_run_left 30 || return 1
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	((elapsed < 3000)) || { echo "    the job outlived its killed head by ${elapsed} ms"; return 1; }
}

# tui_in_shell ARGS...: clusterdoc ARGS in the head namespace, typed into an interactive bash in
# tmux (job control: Ctrl-Z stops the TUI's own process group, `fg` continues it)
tui_in_shell() {
	local q
	tui_stop
	TUI_DIR=$(mktemp -d)
	q=$(printf '%q ' env "${KEEPALIVE[@]}" CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@")
	tmux_ -f /dev/null new-session -d -x 120 -y 40 "bash --norc --noprofile -i" || return 1
	tmux_ set-option -g remain-on-exit on >/dev/null
	tui_keys -l -- "source $CD_TOP/tests/cluster/cluster.sh; cluster_attach $CD_RUN; PS1='$ '"
	tui_keys Enter
	tui_keys -l -- "cluster_head_exec $q 2>$TUI_DIR/stderr" # alone: a Ctrl-Z stops it, no more
	tui_keys Enter
}

# the TUI's job pool gives no grace: only the hold its Ctrl-Z sends keeps the job
t_the_tui_stopped_by_ctrl_z_past_the_silence_bound_keeps_its_job_and_redraws() {
	local tui i
	tui_in_shell tui -w 'node[1-3]' --probe-timeout 1000 || return 1
	tui_wait 'check done: 3 node\(s\)' 90 || return 1
	tui_keys 6
	tui_wait 'R runs your own command instead' 5 || return 1
	tui_keys R
	tui_wait '^Run:' 5 || return 1
	tui_keys C-u
	tui_keys -l -- "none: ${JOB[*]:0:2} '${JOB[2]}'"
	tui_keys Enter
	tui_wait '^ node3 +r2 +out +start$' 60 || return 1
	tui=$(pgrep -f "^$CLUSTERDOC tui -w")
	[ -n "$tui" ] || { echo "    no TUI process"; return 1; }
	tui_keys C-z
	sleep 1
	head=$tui
	expect_eq "$(head_state)" T "the TUI's state after Ctrl-Z" || { kill -CONT "$tui"; return 1; }
	if grep -q '^ Run job ' <<<"$(tui_screen)"; then # the shell's screen, given back
		echo "    the terminal was not given back:"
		tui_screen | sed 's/^/    | /'
		tui_keys -l fg
		tui_keys Enter
		return 1
	fi
	sleep 8
	expect_eq "$(nodes_running)" "1 1 1" "the job on each node after 8 s of a stopped TUI" ||
		{ tui_keys -l fg; tui_keys Enter; return 1; }
	tui_keys -l fg
	tui_keys Enter
	tui_wait '^ Run job ' 5 || return 1
	tui_wait 'ok: exit 0 on every node, 3 rank\(s\)' 60 || return 1
	tui_keys q
	for ((i = 0; i < 200; i++)); do
		kill -0 "$tui" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$tui" 2>/dev/null || { echo "    the TUI did not exit: $(cat "$TUI_DIR/stderr")"; return 1; }
	itest_expect_no_run_left 30
}

itest_run_all
