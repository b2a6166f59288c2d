#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc hang` on a namespace cluster of 3 real sshd nodes, 2 ranks each, with Debian's torch
# over Gloo started by `clusterdoc run` (and once by torchrun by hand on every node): a rank asleep
# before an allreduce is named with its node and its Python stack from the run's hang-ready dump
# (started by torchrun by hand: the report says how to get stacks); a healthy job is progressing; a
# link dropped with nftables mid-run is named with both ranks; a rank killed with SIGKILL is named
# gone; a rank SIGSTOPped by its PID is named stopped (state T), first; a process of another user is named with the rights needed; no job is exit 2 saying what
# was searched; through the NVML stand-in, a rank whose GPU idles while the others' are busy is named. Each inspection of 3 nodes x 2
# ranks with 2 samples must take under 10 s. Cases that leave a job as they found it share it
# (use_job): one sleeping job, one healthy job and one --launcher none job serve two or three
# cases each, in the order below, instead of a torch job started per case.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=hang

JOBS="" # the job script, in the /tmp the nodes share
JOB_PID="" JOB_LOG=""
SUBNET=10.97.43

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 3 --users --subnet "$SUBNET" >/dev/null || return 1
	JOBS=$(mktemp -d /tmp/cdhang-test.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/hang/*.py "$JOBS/"
}

# Start the job (mode: healthy, sleep5) with `clusterdoc run` in the background and wait until
# every rank has done steps (or at most 90 s).
start_job() {
	JOB_LOG=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-3]' \
		--nproc-per-node 2 --chdir "$JOBS" --stall-timeout 600 -- hang_job.py "$1" >"$JOB_LOG" 2>&1 &
	JOB_PID=$!
	for _ in $(seq 1 180); do
		[[ $(grep -c 'step 2$' "$JOB_LOG") -ge 6 ]] && return 0
		kill -0 "$JOB_PID" 2>/dev/null || break
		sleep 0.5
	done
	echo "    the job did not start: $(tail -5 "$JOB_LOG")"
	return 1
}

# use_job MODE: a job of MODE (start_job's), the one running now when an earlier case started
# one of that mode and it is still there, else a new one. Cases that leave the job as they
# found it share one; a case that changes it for good (a rank killed, a link dropped) stops it.
JOB_MODE=""
use_job() {
	if [[ -n $JOB_PID && $JOB_MODE == "$1" ]] && kill -0 "$JOB_PID" 2>/dev/null; then
		return 0
	fi
	stop_job
	start_job "$1" || { stop_job; return 1; }
	JOB_MODE=$1
}

# pid and every process below it, deepest first
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do descendants "$c"; done
	echo "$1"
}

# The head's `clusterdoc run` on SIGTERM stops the ranks on every node (job_stop).
stop_job() {
	local pids
	[[ -n $JOB_PID ]] || return 0
	pids=$(descendants "$JOB_PID")
	kill -TERM $pids 2>/dev/null
	for _ in $(seq 1 60); do
		kill -0 $pids 2>/dev/null || break
		sleep 0.5
	done
	kill -KILL $pids 2>/dev/null
	wait "$JOB_PID" 2>/dev/null
	JOB_PID="" JOB_MODE=""
	rm -f "$JOB_LOG"
}

hang() { cd_head hang -w 'node[1-3]' --json "$@"; }

t_a_rank_asleep_before_an_allreduce_is_named_with_its_node() {
	setup_cluster || return 1
	use_job sleep5 || return 1
	sleep 2 # rank 5 is in its sleep, the others in the allreduce
	hang
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["status"], len(d["ranks"])')" "('hung', 6)" "status and ranks" || return 1
	expect_eq "$(jget '(d["suspects"][0]["rank"], d["suspects"][0]["node"])')" "(5, 'node3')" "the suspect" || return 1
	expect_match "$(jget 'd["suspects"][0]["reason"]')" "^rank 5 \(node3, pid [0-9]+\) has not entered the collective the others wait in: its main thread sleeps in [a-z_]+" "the reason" || return 1
	# its stack, through the hang-ready dump signal the run set the job up for (docs/run.md)
	expect_eq "$(jget 'd["ranks"][5]["stacks_how"]')" hang-ready "how the stack came" || return 1
	expect_match "$(jget 'd["ranks"][5]["stacks"]')" "in load_batch" "the stack" || return 1
	expect_match "$(jget 'd["suspects"][0]["reason"]')" "its stack in load_batch" "the stack in the reason" || return 1
	[[ $elapsed_ms -lt 10000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
}

t_a_rank_killed_while_the_others_wait_is_named_gone() {
	local pid
	[[ -n $JOBS ]] || setup_cluster || return 1
	use_job sleep5 || return 1
	sleep 1
	hang --samples 2 --interval 0.5 --no-stacks
	pid=$(jget 'd["ranks"][5]["pid"]')
	[[ $pid =~ ^[0-9]+$ ]] || { stop_job; echo "    no pid for rank 5"; return 1; }
	kill -KILL "$pid" # the shared process table: rank 5 of node3, by its PID
	hang --no-stacks
	stop_job
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_match "$(jget '[s["reason"] for s in d["suspects"] if s["rank"] == 5]')" "rank 5 .*is gone" "rank 5 gone"
}

t_a_healthy_job_is_progressing() {
	[[ -n $JOBS ]] || setup_cluster || return 1
	use_job healthy || return 1
	hang
	expect_eq "$rc" 0 "exit status ($err) $(jget 'd["suspects"]' 2>/dev/null)" || return 1
	expect_eq "$(jget 'd["status"], len(d["ranks"])')" "('progressing', 6)" "status and ranks" || return 1
	[[ $elapsed_ms -lt 10000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
}

# NVML through its stand-in (tests/fakes/fake_nvml.c, selected by CLUSTERDOC_NVML_LIB in each node's
# login environment): a healthy job whose rank 5 has an idle GPU while every other rank's GPU is
# busy is hung, and rank 5 is named with its GPU; the text report shows each rank's GPU. Last:
# the nodes' environment keeps the stand-in, with no GPUs once the case is over.
t_an_idle_gpu_while_the_others_are_busy_names_its_rank() {
	local lib=$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1 i
	[[ -f $lib ]] || make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 >/dev/null || return 1
	[[ -n $JOBS ]] || setup_cluster || return 1
	cp "$lib" "$JOBS/libnvidia-ml.so.1"
	for i in 1 2 3; do
		printf '100:RANK=%d,%d:RANK=%d\n' $((2 * i - 2)) $((i == 3 ? 0 : 100)) $((2 * i - 1)) >"$JOBS/nvml_node$i"
		chmod 644 "$JOBS/nvml_node$i"
		cluster_node_env "$i" "export CLUSTERDOC_NVML_LIB=$JOBS/libnvidia-ml.so.1" \
			"export FAKE_NVML_FILE=$JOBS/nvml_node$i" || return 1
	done
	use_job healthy || return 1
	hang --no-stacks
	expect_eq "$rc" 1 "exit status ($err)" || { stop_job; return 1; }
	expect_eq "$(jget '(d["suspects"][0]["rank"], d["suspects"][0]["node"])')" "(5, 'node3')" "the suspect" || { stop_job; return 1; }
	expect_match "$(jget 'd["suspects"][0]["reason"]')" "^rank 5 \(node3, pid [0-9]+\) has its GPU 1 idle \(0 %, 0 %\) while 5 rank\(s\)' GPUs are busy" "the reason" || { stop_job; return 1; }
	expect_eq "$(jget '[r["gpu"]["util"][-1] for r in d["ranks"]]')" "[100, 100, 100, 100, 100, 0]" "each rank's GPU" || { stop_job; return 1; }
	[[ $elapsed_ms -lt 10000 ]] || { stop_job; echo "    took $elapsed_ms ms"; return 1; }
	cd_head hang -w 'node[1-3]' --no-stacks
	for i in 1 2 3; do : >"$JOBS/nvml_node$i"; done
	expect_match "$out" "rank 5  node3 pid [0-9]+ .*  gpu 1 at 0 %" "the text report's rank 5"
}

t_a_link_dropped_mid_run_is_named_with_both_ranks() {
	local r
	[[ -n $JOBS ]] || setup_cluster || return 1
	use_job healthy || return 1
	# node2 drops everything to and from node3, in its own netns only
	cluster_node_exec 2 nft -f - <<-EOF || { stop_job; return 1; }
		table inet cdhang {
			chain out { type filter hook output priority 0; ip daddr $SUBNET.13 drop; }
			chain in { type filter hook input priority 0; ip saddr $SUBNET.13 drop; }
		}
	EOF
	sleep 3
	hang
	cluster_node_exec 2 nft delete table inet cdhang
	stop_job
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	r=$(jget '[s["reason"] for s in d["suspects"] if s["reason"].startswith("link ")]')
	# whichever side was sending when the link went: node2's queue toward node3, or node3's toward node2
	# a firewall's drop: the sender's kernel retransmits, unanswered, or, when the peer's window
	# was already zero as the link went, its zero-window probes go unanswered
	expect_match "$r" "link (node2 → node3 \($SUBNET\.13:[0-9]+\): [0-9]+ bytes queued, not drained for [0-9]+ s \(rank [23] sends to rank [45]\)|node3 → node2 \($SUBNET\.12:[0-9]+\): [0-9]+ bytes queued, not drained for [0-9]+ s \(rank [45] sends to rank [23]\)), ([0-9]+ retransmission timeout\(s\) unanswered|the peer's receive window is zero \([0-9]+ probe\(s\)\))" "the link" || return 1
	[[ $elapsed_ms -lt 10000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
}

# torchrun started by hand on every node (as a user would over SSH), not by clusterdoc
TR_PIDS="" TR_LOG=""
start_torchrun() {
	local i
	TR_LOG=$(mktemp -d)
	for i in 1 2 3; do
		cluster_node_exec "$i" env GLOO_SOCKET_IFNAME="$(cluster_node_nic "$i")" \
			/usr/bin/python3 "$JOBS/torchrun_by_hand.py" \
			--nnodes 3 --node_rank $((i - 1)) --nproc_per_node 2 --master_addr "$SUBNET.11" \
			--master_port 29531 "$JOBS/hang_job.py" "$1" >"$TR_LOG/n$i" 2>&1 &
		TR_PIDS="$TR_PIDS $!"
	done
	for _ in $(seq 1 180); do
		[[ $(cat "$TR_LOG"/n* | grep -c 'step 2$') -ge 6 ]] && return 0
		sleep 0.5
	done
	echo "    torchrun did not start: $(tail -n 5 "$TR_LOG"/n*)"
	return 1
}

stop_torchrun() {
	local p pids=""
	for p in $TR_PIDS; do pids="$pids $(descendants "$p")"; done
	[[ -n ${pids// /} ]] && kill -KILL $pids 2>/dev/null
	for p in $TR_PIDS; do wait "$p" 2>/dev/null; done
	TR_PIDS=""
	[[ -n $TR_LOG ]] && rm -rf "$TR_LOG"
	TR_LOG=""
}

t_a_job_started_by_plain_torchrun_is_found_the_same_way() {
	stop_job # the one an earlier case shared
	start_torchrun sleep5 || { stop_torchrun; return 1; }
	sleep 2
	hang
	stop_torchrun
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["status"], len(d["ranks"])')" "('hung', 6)" "status and ranks (the launchers apart)" || return 1
	expect_eq "$(jget '(d["suspects"][0]["rank"], d["suspects"][0]["node"])')" "(5, 'node3')" "the suspect" || return 1
	# not hang-ready, and no py-spy on the nodes: the report says how to get stacks
	expect_match "$(jget 'd["ranks"][5]["stacks_note"]')" "^no stacks: start the job with .clusterdoc run." "how to get stacks" || return 1
	[[ $elapsed_ms -lt 10000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
}

t_processes_of_another_user_are_named_with_the_rights_needed() {
	local bg pids
	stop_job # the one an earlier case shared
	# root's "rank" on node1; the inspection runs as cdplain, who may not read its environment
	cluster_node_exec 1 env RANK=0 WORLD_SIZE=2 /usr/bin/python3 -c \
		'import time; time.sleep(60)  # torch.distributed' >/dev/null 2>&1 &
	bg=$!
	sleep 1
	cd_head hang -w node1 -F "$CD_SSH_CONFIG_PLAIN" --json --interval 0.5
	pids=$(descendants "$bg")
	kill -KILL $pids 2>/dev/null
	wait "$bg" 2>/dev/null
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][0]["denied"][0]["user"]')" root "the owner named" || return 1
	expect_match "$(jget 'd["nodes"][0]["denied"][0]["need"]')" "readable only by its owner: inspect as that user \(-l USER\) or as root" "the rights needed" || return 1
	expect_match "$(jget 'd["summary"]')" "^no job found: searched processes of cdplain with RANK" "what was searched"
}

t_no_job_is_exit_2_saying_what_was_searched() {
	stop_job # the one an earlier case shared
	hang
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["summary"]')" "^no job found: searched processes of every user with RANK, LOCAL_RANK, WORLD_SIZE, NODE_RANK and NNODES, OMPI_COMM_WORLD_RANK or TORCHELASTIC_\* in their environment on 3 node\(s\)$" "the summary"
}

# `clusterdoc run` with any launcher, in the background: its output in JOB_LOG, the head in JOB_PID
start_run() {
	JOB_LOG=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-3]' \
		--chdir "$JOBS" --stall-timeout 600 "$@" >"$JOB_LOG" 2>&1 &
	JOB_PID=$!
}

# A --launcher none job whose ranks take their rank from argv (argv_job.py), the last one asleep
# before the allreduce the others wait in; returns once every rank is ready (up to 90 s).
start_argv_job_with_last_rank_asleep() {
	if [[ -n $JOB_PID && $JOB_MODE == argv-sleep-last ]] && kill -0 "$JOB_PID" 2>/dev/null; then
		return 0
	fi
	stop_job
	start_run --launcher none -- python3 argv_job.py '{node_rank}' '{nnodes}' sleep-last
	JOB_MODE=argv-sleep-last
	for _ in $(seq 1 180); do
		[[ $(grep -c 'ready$' "$JOB_LOG") -ge 3 ]] && break
		sleep 0.5
	done
	[[ $(grep -c 'ready$' "$JOB_LOG") -ge 3 ]] || { echo "    the job did not start: $(tail -5 "$JOB_LOG")"; stop_job; return 1; }
	sleep 1
}

# A `run --launcher none` job whose ranks take their rank from argv (no RANK in their
# environment: NODE_RANK, NNODES, WORLD_SIZE): the last rank sleeps before the allreduce. Five
# calls in a row, then five with --run RUN, each name rank 2 on node3 with the same verdict.
t_a_stuck_launcher_none_job_is_named_five_times_the_same_with_and_without_run() {
	local i pid run_id verdict first=""
	[[ -n $JOBS ]] || setup_cluster || return 1
	start_argv_job_with_last_rank_asleep || return 1
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if [[ $i -le 5 ]]; then hang; else hang --run "$run_id"; fi
		expect_eq "$rc" 1 "call $i: exit status ($err)" || { stop_job; return 1; }
		verdict=$(jget '(d["status"], len(d["ranks"]), d["suspects"][0]["rank"], d["suspects"][0]["node"], d["suspects"][0]["reason"].split(":")[0])')
		[[ -n $first ]] || first=$verdict
		expect_eq "$verdict" "$first" "call $i: the same verdict" || { stop_job; return 1; }
		if [[ -z $run_id ]]; then
			pid=$(jget 'd["ranks"][0]["pid"]')
			run_id=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^CLUSTERDOC_RUN=//p')
			[[ -n $run_id ]] || { echo "    no CLUSTERDOC_RUN in rank 0's environment"; stop_job; return 1; }
		fi
	done
	expect_match "$first" "^\('hung', 3, 2, 'node3', 'rank 2 \(node3, pid [0-9]+\) has not entered the collective the others wait in'\)$" "the verdict" || { stop_job; return 1; }
	# once the run has ended, --run RUN says so from the head's run logs
	stop_job
	cd_head hang -w 'node[1-3]' --run "$run_id"
	expect_eq "$rc" 2 "exit status of an ended run" || return 1
	expect_match "$err" "^clusterdoc hang: run $run_id has ended \(exit status [0-9]+; its summary: .*/$run_id/summary.json\): no rank of it is left to inspect" "what hang says of it"
}

# A rank SIGSTOPped (by its exact PID) while another sleeps and the third waits: hang says it is
# stopped, state T, and names it first, before the sleeping rank; SIGCONT after.
t_a_sigstopped_rank_is_named_stopped_as_the_first_suspect() {
	local pid text
	[[ -n $JOBS ]] || setup_cluster || return 1
	start_argv_job_with_last_rank_asleep || return 1
	hang
	pid=$(jget '[r["pid"] for r in d["ranks"] if r["rank"] == 1][0]')
	[[ $pid =~ ^[0-9]+$ ]] && kill -STOP "$pid" || { echo "    no pid for rank 1 ($err)"; stop_job; return 1; }
	cd_head hang -w 'node[1-3]'
	text=$out
	hang
	kill -CONT "$pid"
	stop_job
	expect_match "$text" "^  1\. rank 1 \(node2, pid $pid\) is stopped \(SIGSTOP, state T\)" "the text's first suspect" || return 1
	expect_match "$text" "^  rank 1  node2 pid $pid  STOPPED \(state T\), in " "the text's ranks table" || return 1
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget '[(r["rank"], r["state"]) for r in d["ranks"]][1]')" "(1, 'T')" "rank 1's state" || return 1
	expect_eq "$(jget '(d["suspects"][0]["rank"], d["suspects"][0]["node"], d["suspects"][0]["pid"])')" "(1, 'node2', $pid)" "the first suspect" || return 1
	expect_match "$(jget 'd["suspects"][0]["reason"]')" "^rank 1 \(node2, pid $pid\) is stopped \(SIGSTOP, state T\): it runs no code until it is continued \(kill -CONT $pid" "its reason" || return 1
	expect_eq "$(jget 'd["suspects"][1]["rank"]')" 2 "the sleeping rank, next" || return 1
	expect_eq "$(jget 'sum("sleeps in" in s["reason"] for s in d["suspects"] if s["rank"] == 1)')" 0 "no suspect of rank 1 saying it sleeps"
}

# torchrun on every node waiting for a master port that node1's firewall drops: `hang` says so
# (exit 3) and sends no signal to the launchers, so the job is alive afterwards.
t_a_torchrun_job_stuck_in_the_rendezvous_is_reported_and_left_alive() {
	local n
	[[ -n $JOBS ]] || setup_cluster || return 1
	stop_job # the one an earlier case shared
	cluster_trap_firewall_port 1 29577 || return 1
	start_run --force --master-port 29577 -- hang_job.py healthy
	# the three launchers are up when each node runs one (hang sees them before torch is imported)
	for _ in $(seq 1 60); do
		n=$(pgrep -f -- '--master_port 29577' | wc -l)
		[[ $n -ge 3 ]] && break
		sleep 0.5
	done
	sleep 5 # into the rendezvous
	hang
	sleep 2
	kill -0 "$JOB_PID" 2>/dev/null
	local alive=$?
	n=$(pgrep -f -- '--master_port 29577' | wc -l)
	cluster_node_exec 1 nft delete table inet clusterdoc_test
	stop_job
	expect_eq "$rc" 3 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["status"]')" rendezvous "the status" || return 1
	expect_match "$(jget 'd["summary"]')" "^torchrun on node\[1-3\] waits in the rendezvous at $SUBNET\.11:29577: no rank has started" "the summary" || return 1
	expect_eq "$alive" 0 "the run still running after hang" || return 1
	[[ $n -ge 3 ]] || { echo "    $n torchrun launcher(s) left after hang, 3 expected"; return 1; }
}

# A rank that is a shell does not handle the dump signal: it is not sent, the report says so, and
# every rank is alive afterwards.
t_a_rank_that_is_a_shell_survives_hang_and_is_reported_without_stacks() {
	local pids p dead=0
	[[ -n $JOBS ]] || setup_cluster || return 1
	stop_job # the one an earlier case shared
	start_run --launcher none -- sh -c 'sleep 600'
	sleep 5
	hang
	pids=$(jget '" ".join(str(r["pid"]) for r in d["ranks"])')
	sleep 1
	for p in $pids; do kill -0 "$p" 2>/dev/null || dead=$((dead + 1)); done
	kill -0 "$JOB_PID" 2>/dev/null
	local alive=$?
	stop_job
	expect_eq "$(jget 'len(d["ranks"])')" 3 "ranks found ($err)" || return 1
	expect_eq "$(jget 'sorted(set(r["stacks_note"].split(" (")[0] for r in d["ranks"]))')" \
		"['no stacks: the rank does not handle the dump signal']" "each rank's note" || return 1
	expect_eq "$dead" 0 "ranks that died of hang" || return 1
	expect_eq "$alive" 0 "the run still running after hang"
}

cleanup() {
	stop_job
	stop_torchrun
	[[ -n $JOBS && -d $JOBS ]] && rm -rf "$JOBS"
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap cleanup EXIT
itest_run_all
