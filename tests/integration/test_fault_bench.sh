#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults during `clusterdoc bench` and `mnist` on namespace clusters of real sshd nodes: the
# run ends at its stall deadline (stall + BENCH_GRACE_MS 3 s; mnist: stall + job_stop's 3 s
# grace + 2 s), the sizes done are reported and the size it stopped at names the node, no
# "0 OK" for a run that stopped; every agent is gone afterwards: one that was SIGSTOPped ended
# by the head through a fresh SSH session before the run ends, one on a cut-off node by itself
# once its head has been silent for 6 keepalive intervals. A SIGKILLed agent ends the run naming it; two benches at once both
# finish. docs/reliability.md lists the bounds.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_bench

STALL=2000  # --stall-timeout of the bench runs (ms)
GRACE=3000  # collectives/bench.c: BENCH_GRACE_MS
SLACK=1500  # this box's load (five runs share two cores)
KEEP=500    # CLUSTERDOC_KEEPALIVE_MS of the cut-off run: the agent's bound is 6 x 500 ms
END=2000    # the fresh SSH session that ends a stopped agent: its login and the end
RETEST=5000 # the fresh connection to a cut-off node (core/sshpool_end.c: END_CONNECT_MAX_MS)

# the 4-node cluster the tests share (brought up by the first that runs)
cluster4() {
	[[ -n ${CD_RUN:-} && -d $CD_RUN && ${CD_N:-0} == 4 ]] && return 0
	cluster_down
	CD_QUIET=1 cluster_up 4 >/dev/null
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# agents still running in the node namespaces, as "nodeI:PID" words
agents() {
	local i pid
	for ((i = 1; i <= CD_N; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			[[ $(cat "/proc/$pid/comm" 2>/dev/null) == agent-* ]] && printf 'node%s:%s ' "$i" "$pid"
		done
	done
}
OLD_AGENTS="" # agents already there when a run started (one left by an earlier fault)
agent_of() { # I : the pid of node I's agent of the run started last (waits up to 30 s)
	local t p
	for ((t = 0; t < 300; t++)); do
		for p in $(ip netns pids "$(cluster_node_ns "$1")"); do
			[[ " $OLD_AGENTS " == *":$p "* ]] && continue
			[[ $(cat "/proc/$p/comm" 2>/dev/null) == agent-* ]] && { echo "$p"; return 0; }
		done
		sleep 0.1
	done
	return 1
}
gone_within() { # PID MS : the process ends within MS; prints how long it took
	local t0 t
	t0=$(now_ms)
	while [[ -d /proc/$1 ]]; do
		t=$(($(now_ms) - t0))
		((t > $2)) && { echo "still running after $t ms"; return 1; }
		sleep 0.05
	done
	echo "gone in $(($(now_ms) - t0)) ms"
}

# start a bench in the background: $bg, output in $bgout/$bgerr; at most 60 s
bench_bg() {
	bgout=$(mktemp)
	bgerr=$(mktemp)
	OLD_AGENTS=$(agents)
	cluster_head_exec timeout 60 env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" ${KEEPALIVE:+CLUSTERDOC_KEEPALIVE_MS=$KEEPALIVE} \
		"$CLUSTERDOC" bench --backend tcp --stall-timeout "$STALL" "$@" >"$bgout" 2>"$bgerr" &
	bg=$!
}
bench_wait() {
	wait "$bg"
	rc=$?
	out=$(cat "$bgout")
	err=$(cat "$bgerr")
	rm -f "$bgout" "$bgerr"
}
# until the running bench (--progress) has done at least N sizes
sizes_done_at_least() { # N
	local t
	for ((t = 0; t < 300; t++)); do
		grep -Eq "sizes ([$1-9]|[1-9][0-9])/" "$bgerr" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "    no progress: $(cat "$bgerr")"
	return 1
}

# The agent alone, on a pipe: a hello with keepalive_ms makes it watch its stdin; keepalives
# are never answered; silence past 6 intervals ends it. Without keepalive_ms (an older
# head) it waits for ever.
t_an_agent_exits_when_its_head_is_silent_past_the_bound() {
	python3 - "$CLUSTERDOC_AGENT" <<-'EOF'
		import json, os, subprocess, sys, time
		def start(hello):
		    p = subprocess.Popen([sys.argv[1], "--stdio"], stdin=subprocess.PIPE,
		                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
		    p.stdin.write((json.dumps(hello) + "\n").encode()); p.stdin.flush()
		    return p, json.loads(p.stdout.readline())
		p, r = start({"id": 1, "type": "hello", "protocol": 1, "keepalive_ms": 200})
		if r["result"].get("keepalive_ms") != 200 or r["result"].get("silence_ms") != 1200:
		    sys.exit(f"    hello answered {r}")
		for _ in range(15):      # 1.5 s of keepalives: more than the bound, still alive
		    p.stdin.write(b'{"id": 0, "type": "keepalive"}\n'); p.stdin.flush()
		    time.sleep(0.1)
		p.stdin.write(b'{"id": 2, "type": "bench_caps"}\n'); p.stdin.flush()
		r = json.loads(p.stdout.readline())
		if r.get("id") != 2 or p.poll() is not None:
		    sys.exit(f"    after keepalives: {r}, alive: {p.poll() is None}")
		t0 = time.monotonic()    # now silent, its stdin open
		try:
		    p.wait(timeout=1.2 + 1.5)
		except subprocess.TimeoutExpired:
		    p.kill(); sys.exit("    still running 2.7 s into the silence")
		took = time.monotonic() - t0
		errtext = p.stderr.read().decode()
		if took < 1.0 or "nothing from the head" not in errtext:
		    sys.exit(f"    exited after {took:.2f} s: {errtext!r}")
		q, r = start({"id": 1, "type": "hello", "protocol": 1})
		time.sleep(2)
		if q.poll() is not None or "keepalive_ms" in r["result"]:
		    sys.exit(f"    without keepalive_ms: exited {q.poll()}, hello {r}")
		q.stdin.close(); q.wait(timeout=5)
	EOF
}

t_a_stopped_agent_ends_the_bench_at_the_stall_deadline_with_the_sizes_done() {
	local pid t0 elapsed
	cluster4 || return 1
	bench_bg -w 'node[1-4]' -b 1K -e 64M --iters 10 --warmup 1 --progress --json
	pid=$(agent_of 2) || { kill "$bg"; echo "    no agent on node2"; return 1; }
	sizes_done_at_least 4 || { kill "$bg"; return 1; }
	kill -STOP "$pid"
	t0=$(now_ms)
	bench_wait
	elapsed=$(($(now_ms) - t0))
	echo "    ended $elapsed ms after SIGSTOP; left: $(agents)"
	kill -CONT "$pid"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	((elapsed < STALL + GRACE + END + SLACK)) || { echo "    took $elapsed ms, deadline $((STALL + GRACE + END + SLACK))"; return 1; }
	expect_eq "$(jget 'len(d["results"]) >= 4 and all(r["time_us"] > 0 and r["wrong"] == 0 for r in d["results"])')" True \
		"the sizes done are reported ($(jget 'len(d["results"])'))" || return 1
	expect_eq "$(jget 'd["complete"], d["sizes_planned"]')" "(False, 17)" "complete, planned" || return 1
	expect_eq "$(jget 'd["stopped"]["node"], d["stopped"]["state"]')" "('node2', 'stalled')" "where it stopped" || return 1
	expect_eq "$(jget 'd["stopped"]["bytes"] == 1024 << len(d["results"])')" True "the size it stopped at" || return 1
	expect_eq "$(jget 'd["stopped"]["sizes_done"] == len(d["results"])')" True "sizes_done" || return 1
	# the stopped agent: its channel was closed; running again it sees that and exits
	gone_within "$pid" 3000 || return 1
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

# the same stop (report fault-run-3, item 7 of issue 34): the head ends the stopped agent
# through a fresh SSH session (SIGCONT, then SIGTERM) before the bench ends, so it is gone
# while nobody continues it, and the report says so for node2
t_a_stopped_agent_is_ended_by_the_head_through_a_fresh_session_when_the_bench_ends() {
	local pid left i
	cluster4 || return 1
	bench_bg -w 'node[1-4]' -b 1K -e 64M --iters 10 --warmup 1 --progress --json
	pid=$(agent_of 2) || { kill "$bg"; echo "    no agent on node2"; return 1; }
	sizes_done_at_least 4 || { kill "$bg"; return 1; }
	kill -STOP "$pid"
	bench_wait
	left=0
	for ((i = 0; i < 20; i++)); do # a moment for sshd to reap it
		[[ -d /proc/$pid ]] || break
		sleep 0.1
	done
	[[ -d /proc/$pid ]] && left="1 ($(cut -d' ' -f3 "/proc/$pid/stat"))"
	kill -CONT "$pid" 2>/dev/null
	echo "    node2: $(jget '[n for n in d["nodes"] if n["host"] == "node2"][0].get("error")')"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$left" 0 "the stopped agent left on node2 after the bench, before anyone continued it" || return 1
	expect_match "$(jget '[n for n in d["nodes"] if n["host"] == "node2"][0]["error"]')" "a fresh SSH session found its agent \(pid $pid\) stopped \(state T\); ended its agent \(pid $pid\) through that session" "node2's error" || return 1
	expect_match "$(jget '[f["message"] for f in d["failures"] if f["node"] == "node2" and f["kind"] == "unfinished"]')" \
		"node2: no answer [0-9]+ ms after another rank failed .*; a fresh SSH session found its agent \(pid $pid\) stopped \(state T\)" "node2's unfinished failure" || return 1
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

# node2's link goes down: the others stall, the run ends at the deadline, and node2's agent,
# which never sees an EOF, exits once its head has been silent for 6 keepalive intervals.
t_a_cut_off_node_ends_the_bench_and_its_agent_exits_by_itself() {
	local pid t0 elapsed nic
	cluster4 || return 1
	nic=$(cluster_node_nic 2)
	KEEPALIVE=$KEEP bench_bg -w 'node[1-4]' -b 1K -e 64M --iters 10 --warmup 1 --progress
	pid=$(agent_of 2) || { kill "$bg"; echo "    no agent on node2"; return 1; }
	sizes_done_at_least 4 || { kill "$bg"; return 1; }
	cluster_node_exec 2 ip link set "$nic" down
	t0=$(now_ms)
	bench_wait
	elapsed=$(($(now_ms) - t0))
	echo "    ended $elapsed ms after the cut"
	local left
	left=$(gone_within "$pid" $((6 * KEEP + SLACK - elapsed > 0 ? 6 * KEEP + SLACK - elapsed : 0)))
	local gone=$?
	cluster_node_exec 2 ip link set "$nic" up
	echo "    node2's agent: $left"
	expect_eq "$gone" 0 "node2's agent exits within $((6 * KEEP)) ms of the last keepalive" || return 1
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	((elapsed < STALL + GRACE + RETEST + SLACK)) || { echo "    took $elapsed ms"; return 1; }
	expect_match "$out" '^ +[0-9]+ +[0-9]+ +float +sum +-1 stalled on node2$' "the row where it stopped" || return 1
	expect_match "$out" '^# Out of bounds values : 0 in [0-9]+ of 17 sizes, INCOMPLETE$' "footer" || return 1
	if grep -q 'Out of bounds values : 0 OK' <<<"$out"; then
		echo "    footer says 0 OK"
		return 1
	fi
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

t_a_killed_agent_ends_the_bench_naming_it_and_leaves_nothing() {
	local pid t0 elapsed
	cluster4 || return 1
	bench_bg -w 'node[1-3]' -b 16M -e 16M --iters 100000 --warmup 0 --json
	pid=$(agent_of 2) || { kill "$bg"; echo "    no agent on node2"; return 1; }
	sleep 2
	kill -9 "$pid"
	t0=$(now_ms)
	bench_wait
	elapsed=$(($(now_ms) - t0))
	echo "    ended $elapsed ms after SIGKILL"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget '[f["node"] + " " + f["kind"] for f in d["failures"]]')" "'node2 died'" "node2 reported dead" || return 1
	((elapsed < STALL + GRACE + SLACK)) || { echo "    took $elapsed ms"; return 1; }
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

t_two_benches_at_once_both_finish_and_leave_nothing() {
	local o1 o2 e1 e2 b1 b2 r1 r2 o
	cluster4 || return 1
	o1=$(mktemp) o2=$(mktemp) e1=$(mktemp) e2=$(mktemp)
	cluster_head_exec timeout 60 env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" bench -w 'node[1-4]' \
		--backend tcp -b 1K -e 8M --iters 5 --stall-timeout 5000 --json >"$o1" 2>"$e1" &
	b1=$!
	cluster_head_exec timeout 60 env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" bench -w 'node[1-4]' \
		--backend tcp -b 1K -e 8M --iters 5 --stall-timeout 5000 --json >"$o2" 2>"$e2" &
	b2=$!
	wait "$b1"
	r1=$?
	wait "$b2"
	r2=$?
	for o in 1 2; do
		out=$(cat "$(eval echo "\$o$o")")
		err=$(cat "$(eval echo "\$e$o")")
		rc=$(eval echo "\$r$o")
		# both finish, or one fails saying why
		if [[ $rc == 0 ]]; then
			expect_eq "$(jget 'len(d["results"]), sum(r["wrong"] for r in d["results"])')" \
				"(14, 0)" "run $o: sizes, wrong" || return 1
		else
			expect_eq "$rc" 2 "run $o: exit status ($err)" || return 1
			expect_eq "$(jget 'len(d["failures"]) > 0 or any("error" in n for n in d["nodes"])')" True "run $o says why" || return 1
		fi
	done
	rm -f "$o1" "$o2" "$e1" "$e2"
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

# mnist --mode embedded with node3's agent stopped: no output, the run stops the jobs and
# ends within stall + 5 s (and the fresh session that ends the stopped agent: it is gone before
# anyone continues it).
t_a_stopped_agent_ends_the_embedded_mnist_at_the_stall_deadline() {
	local data cache pid t0 elapsed i left
	cluster4 || return 1
	data=$(mktemp -d)
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 3000 500 >/dev/null || return 1
	cache=$(mktemp -d -p "$CD_HOME")
	bgout=$(mktemp)
	bgerr=$(mktemp)
	OLD_AGENTS=$(agents)
	cluster_head_exec timeout 60 env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" mnist --cache-dir "$cache" \
		--json -w 'node[1-3]' --mode embedded --epochs 100 --stall-timeout 3 --data-dir "$data" \
		--data-md5 "$data/MD5SUMS" >"$bgout" 2>"$bgerr" &
	bg=$!
	pid=$(agent_of 3) || { kill "$bg"; echo "    no agent on node3"; return 1; }
	sleep 5
	kill -STOP "$pid"
	t0=$(now_ms)
	bench_wait
	elapsed=$(($(now_ms) - t0))
	echo "    ended $elapsed ms after SIGSTOP; left: $(agents)"
	for ((i = 0; i < 20; i++)); do # a moment for sshd to reap it
		[[ -d /proc/$pid ]] || break
		sleep 0.1
	done
	[[ -d /proc/$pid ]] && left=1 || left=0
	kill -CONT "$pid"
	rm -rf "$data"
	# its job_stop missed its deadline: the head ended the agent through a fresh session
	expect_eq "$left" 0 "the stopped agent, before anyone continued it" || return 1
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget 'd["failure"]')" "no output from any node for 3 s" "failure" || return 1
	((elapsed < 3000 + 5000 + END + SLACK)) || { echo "    took $elapsed ms, deadline $((3000 + 5000 + END + SLACK))"; return 1; }
	gone_within "$pid" 3000 || return 1
	sleep 0.3
	expect_eq "$(agents)" "" "agents left"
}

itest_need_root
itest_run_all
