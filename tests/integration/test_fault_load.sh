#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# itest: alone (it judges the head's own event-loop lag)
# Faults of load and concurrency on a namespace cluster of real sshd nodes:
# - two checks of the same nodes at once: the run that finds MASTER_PORT held by the other
#   run's agent says so (master-port-held-by-run, info), never master-port-in-use ("stop the
#   stale job"); a real stale job (a silent listener on 29500) is still master-port-in-use;
# - under load: a node that logged in and whose agent said hello, but that missed a request's
#   deadline (its agent stopped, as on an overloaded box), is probe-incomplete, not
#   node-unreachable: a fresh SSH session finds the agent stopped ("agent-stopped") and ends it; a head whose own event loop lagged (the head stopped for 2.5 s, as the
#   scheduler does on a box at load 100) says so: "head_load" in JSON, a note in the text.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_load
itest_need_root

PT=(--probe-timeout 1000)

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

# drop_from_outside I PORT: node I drops new TCP to PORT that comes in on its NIC (not on lo):
# the other nodes' attempts wait out the probe timeout, so a run's listeners stay up that long
drop_from_outside() {
	ip netns exec "$(cluster_node_ns "$1")" nft -f - <<EOF
add table inet fault_load
add chain inet fault_load input { type filter hook input priority 0; policy accept; }
add rule inet fault_load input iifname "$(cluster_node_nic "$1")" tcp dport $2 ct state new drop
EOF
}

# ids FILE: the finding ids of a JSON report, sorted, one line
ids() { python3 -c 'import json,sys; print(" ".join(sorted({f["id"] for f in json.load(open(sys.argv[1]))["findings"]})))' "$1"; }

# head_bg OUT ARGS...: clusterdoc in the head namespace in the background, stdout to OUT;
# $head_pid is clusterdoc itself (ip and env exec it)
head_bg() {
	local o=$1
	shift
	(exec ip netns exec "$CD_NS_HEAD" env -u SSH_AUTH_SOCK HOME="$CD_HOME" USER=root LOGNAME=root \
		CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" >"$o" 2>"$o.err") &
	head_pid=$!
}

t_two_checks_at_once_report_no_stale_job() {
	local w r a b held=0
	up 3 || return 1
	w=$(mktemp -d)
	# node1 (the master) drops 29510 from outside: each run's matrix lasts the probe timeout,
	# so the second run, 0.3 s later, finds the first one's listeners on 29500
	drop_from_outside 1 29510 || return 1
	for r in 1 2 3; do
		head_bg "$w/a.json" check -w 'node[1-3]' --json "${PT[@]}"
		a=$head_pid
		sleep 0.3
		head_bg "$w/b.json" check -w 'node[1-3]' --json "${PT[@]}"
		b=$head_pid
		wait "$a"
		wait "$b"
		echo "round $r: first: $(ids "$w/a.json"); second: $(ids "$w/b.json")"
		for f in "$w/a.json" "$w/b.json"; do
			if grep -qw master-port-in-use <<<"$(ids "$f")"; then
				echo "    round $r: a false master-port-in-use in $f"
				rm -rf "$w"
				return 1
			fi
		done
		# the run whose matrix came second sees the other's listener: on a loaded box the
		# run started 0.3 s later can still be the first to bind
		grep -qw master-port-held-by-run <<<"$(ids "$w/a.json") $(ids "$w/b.json")" && held=$((held + 1))
	done
	rm -rf "$w"
	# the runs did overlap: otherwise this test proved nothing
	expect_eq "$held" 3 "rounds in which one run saw the other one's listener" || return 1
}

t_stale_job_on_master_port_is_still_master_port_in_use() {
	up 3 || return 1
	cluster_node_silent 1 29500 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	cluster_node_silent_stop 1 29500
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget '",".join(f["nodes"][0] for f in d["findings"] if f["id"] == "master-port-in-use")')" \
		node1 "master-port-in-use" || return 1
	expect_eq "$(jget '[f["id"] for f in d["findings"] if f["id"] == "master-port-held-by-run"]')" "[]" \
		"master-port-held-by-run" || return 1
}

# slow_python I SECONDS: node I's login python3 stops the agent that runs it (its ancestor
# ".../agent-<sha> --stdio") for SECONDS, once: the agent said hello, then cannot answer facts
slow_python() {
	local d=$CD_RUN/slowpy$1
	mkdir -p "$d"
	cat >"$d/python3" <<EOF
#!/bin/sh
if mkdir "$d/stopped" 2>/dev/null; then
	p=\$PPID
	while [ "\$p" -gt 1 ] && ! tr '\\0' ' ' </proc/\$p/cmdline | grep -q '/agent-[^ ]* --stdio'; do
		p=\$(awk '{print \$4}' /proc/\$p/stat)
	done
	if [ "\$p" -gt 1 ]; then
		echo "\$p" >"$d/agent.pid"
		kill -STOP "\$p"
		(sleep $2; kill -CONT "\$p"; touch "$d/resumed") >/dev/null 2>&1 </dev/null &
	fi
fi
exec $_CD_PY "\$@"
EOF
	chmod +x "$d/python3"
	cluster_node_env "$1" "export PATH=$d:\$PATH"
}

t_slow_node_is_probe_incomplete_not_unreachable() {
	local t
	up 3 || return 1
	slow_python 2 6
	cd_head check -w 'node[1-3]' --json -t 2 "${PT[@]}"
	echo "rc $rc, ${elapsed_ms} ms; findings: $(jget '[(f["id"], f["nodes"]) for f in d["findings"]]')"
	[ -s "$CD_RUN/slowpy2/agent.pid" ] || { echo "    node2's agent was never stopped"; return 1; }
	# the stopped agent is resumed and gone within the test: nothing left stopped
	for ((t = 0; t < 100; t++)); do
		[ -e "$CD_RUN/slowpy2/resumed" ] && break
		sleep 0.1
	done
	expect_eq "$rc" 2 "exit status (a node could not be checked) ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" agent-stopped "node2's error_code" || return 1
	expect_match "$(jget 'd["nodes"][1]["error"]')" 'a fresh SSH session found its agent \(pid [0-9]+\) stopped \(state T\); ended its agent' "node2's error" || return 1
	# (a loaded box may also find the other nodes' first torch import slow: another finding)
	expect_eq "$(jget '",".join(n for f in d["findings"] if f["id"] == "probe-incomplete" and "slow" in f["message"] for n in f["nodes"])')" \
		node2 "the slow node's probe-incomplete" || return 1
	expect_eq "$(jget '[f["nodes"] for f in d["findings"] if f["id"] == "node-unreachable"]')" "[]" \
		"node-unreachable" || return 1
	expect_match "$(jget '[f["message"] for f in d["findings"] if "node2" in f["nodes"]]')" \
		'reachable but slow' "the finding's message" || return 1
	[ "$elapsed_ms" -lt 8000 ] || { echo "    took ${elapsed_ms} ms with -t 2"; return 1; }
}

# stop_head_for SECONDS: SIGSTOP $head_pid 0.5 s after its start, SIGCONT SECONDS later
stop_head_for() {
	sleep 0.5
	kill -0 "$head_pid" 2>/dev/null || { echo "    the check ended before it could be stopped"; return 1; }
	kill -STOP "$head_pid"
	sleep "$1"
	kill -CONT "$head_pid"
}

t_head_loop_lag_is_reported_in_json_and_text() {
	local w
	up 3 || return 1
	drop_from_outside 3 29500 || return 1 # the matrix lasts the probe timeout: the stop hits it
	w=$(mktemp -d)
	head_bg "$w/r.json" check -w 'node[1-3]' --json "${PT[@]}"
	stop_head_for 2.5 || { wait "$head_pid"; rm -rf "$w"; return 1; }
	wait "$head_pid"
	rc=$?
	out=$(cat "$w/r.json")
	echo "rc $rc; head_load: $(jget 'd["head_load"]')"
	expect_eq "$(jget 'd["head_load"]["overloaded"]')" True "head_load.overloaded" || return 1
	expect_eq "$(jget 'd["head_load"]["loop_lag_ms"] >= 2000')" True "loop_lag_ms >= 2000" || return 1
	# the head's lag blamed no node: all three were checked
	expect_eq "$(jget 'sum(n["checked"] for n in d["nodes"])')" 3 "nodes checked" || return 1
	head_bg "$w/r.txt" check -w 'node[1-3]' "${PT[@]}"
	stop_head_for 2.5 || { wait "$head_pid"; rm -rf "$w"; return 1; }
	wait "$head_pid"
	expect_match "$(cat "$w/r.txt")" \
		'^note: this machine \(the head\) was overloaded: clusterdoc.s event loop lagged up to [2-9]\.[0-9] s' \
		"the text report's note" || { rm -rf "$w"; return 1; }
	rm -rf "$w"
}

t_unloaded_head_reports_no_overload() {
	up 3 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["head_load"]["overloaded"]')" False "head_load.overloaded" || return 1
}

itest_run_all
