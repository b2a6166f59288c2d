#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test cluster's Slurm (cluster_up --slurm: tests/cluster/slurm.sh, slurm_cluster_up): a real
# slurmctld in the head's namespace and one real slurmd per namespace node. srun, salloc and
# sinfo run from the head namespace and every task runs on its node: its hostname, its network
# namespace, its environment as srun exported it. Then the teardown leaves nothing running.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=cluster_slurm
itest_need_root
if ! slurm_available || ! command -v slurmd >/dev/null; then
	result SKIP "$ITEST_FILE" "slurmd, slurmctld or munged is missing: make deps"
	exit 0
fi

# Without --launcher srun (a clusterdoc before the connect-back transport) the tests of it are
# recorded as skipped and left out of the ONLY list itest_run_all runs.
LAUNCHER_TESTS='^(check_over_srun|facts_env_bench_and_mnist_over_srun|a_node_whose_slurmd_stopped_fails|a_node_outside_the_allocation|a_firewall_dropping|an_agent_with_a_wrong_secret|sbcast_copies)'
if ! "$CLUSTERDOC" check --help 2>&1 | grep -q -- '--launcher ssh|srun'; then
	names=""
	for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
		if [[ $t =~ $LAUNCHER_TESTS ]]; then
			result SKIP "$ITEST_FILE/$t" "no --launcher srun in $CLUSTERDOC"
		elif [[ -z ${ONLY:-} || $t =~ $ONLY ]]; then
			names+="${names:+|}$t"
		fi
	done
	ONLY="^(${names:-none})\$"
fi

CD_QUIET=1 cluster_up 3 --slurm >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }

# head CMD...: in the head namespace, bounded, from /tmp (srun's working directory is its
# tasks', and every node sees /tmp); sets $out (stdout, sorted), $err, $rc
head_run() {
	local of ef
	of=$(mktemp) ef=$(mktemp)
	(cd /tmp && cluster_head_exec timeout 30 "$@" >"$of" 2>"$ef")
	rc=$?
	out=$(sort "$of") err=$(cat "$ef")
	rm -f "$of" "$ef"
}

t_every_slurmd_registered_and_every_node_is_idle() {
	local cpus
	cpus=$(slurmd -C | sed -n '1s/.* CPUs=\([0-9]*\) .*/\1/p')
	head_run sinfo -h -N -o '%N %T %c'
	expect_eq "$rc" 0 "sinfo's exit status ($err)" || return 1
	expect_eq "$out" "$(printf 'node%s idle %s\n' 1 "$cpus" 2 "$cpus" 3 "$cpus")" "sinfo (each node this machine's CPUs)" || return 1
	expect_match "$(cat "$CD_RUN/slurm/slurmd.node2.log")" "slurmd started on" "node2's slurmd log"
}

t_srun_runs_one_task_on_each_node() {
	# hostname (UTS namespace), the address on the node's NIC (network namespace) and the
	# name slurmd gave the task: the same node each time
	head_run srun -N3 --ntasks-per-node=1 sh -c \
		'echo "$(hostname) $(ip -4 -o addr show dev eth0 | awk "{print \$4}") $SLURMD_NODENAME"'
	expect_eq "$rc" 0 "srun's exit status ($err)" || return 1
	expect_eq "$out" "$(for i in 1 2 3; do echo "node$i $(cluster_node_ip "$i")/24 node$i"; done)" "the tasks"
}

t_overlapping_steps_run_side_by_side_inside_salloc() {
	# a step that holds every node, as the agents will, and a second one beside it (--overlap)
	head_run salloc -N3 sh -c '
		srun --overlap -N3 --ntasks-per-node=1 sleep 20 &
		sleep 1
		srun --overlap -N3 --ntasks-per-node=1 hostname
		echo "beside: $(squeue -h --steps="$SLURM_JOB_ID.0" -o "%i %j %N" | sed "s/^$SLURM_JOB_ID\././")"
		kill $! && wait $! 2>/dev/null
		exit 0'
	expect_eq "$rc" 0 "salloc's exit status ($err)" || return 1
	expect_eq "$out" "$(printf '%s\n' 'beside: .0 sleep node[1-3]' node1 node2 node3 | sort)" "the second step" || return 1
	expect_match "$err" "Granted job allocation" "salloc's allocation"
}

t_exported_variables_reach_every_task_and_no_command_line() {
	# --export=ALL (the default) passes srun's environment; an explicit --export names one
	head_run env CDTEST_SECRET=s3cr3t srun -N3 --ntasks-per-node=1 --export=ALL,CDTEST_X=hello sh -c \
		'echo "$(hostname) $CDTEST_X $CDTEST_SECRET $(tr "\0" " " </proc/$PPID/cmdline | grep -c s3cr3t)"'
	expect_eq "$rc" 0 "srun's exit status ($err)" || return 1
	expect_eq "$out" "$(printf 'node%s hello s3cr3t 0\n' 1 2 3)" "what the tasks saw"
}

t_every_node_runs_the_agent_from_the_same_path() {
	head_run srun -N3 --ntasks-per-node=1 "$CLUSTERDOC_AGENT" --version
	expect_eq "$rc" 0 "srun's exit status ($err)" || return 1
	expect_eq "$(wc -l <<<"$out")" 3 "answers" || return 1
	expect_eq "$(sort -u <<<"$out" | wc -l)" 1 "distinct answers ($out)"
}

t_each_task_connects_back_to_a_port_the_head_listens_on() {
	# the connect-back path of --launcher srun: a listener on the head's address, an ephemeral
	# port, and one connection from each node's own address carrying its name
	local lp
	ip netns exec "$CD_NS_HEAD" python3 -c '
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(8)
s.settimeout(20)
open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1]))
__import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
for _ in range(3):
    c, a = s.accept()
    print(c.makefile().readline().strip(), "from", a[0], flush=True)
' "$CD_HEAD_IP" "$CD_RUN/back.port" >"$CD_RUN/back.out" 2>&1 &
	lp=$!
	for _ in $(seq 50); do [[ -s $CD_RUN/back.port ]] && break; sleep 0.1; done
	head_run srun -N3 --ntasks-per-node=1 bash -c \
		"exec 3<>/dev/tcp/$CD_HEAD_IP/$(cat "$CD_RUN/back.port") && echo \"\$(hostname) \$(ip -4 -o addr show dev eth0 | awk '{print \$4}')\" >&3"
	wait "$lp"
	expect_eq "$rc" 0 "srun's exit status ($err)" || return 1
	expect_eq "$(sort "$CD_RUN/back.out")" \
		"$(for i in 1 2 3; do echo "node$i $(cluster_node_ip "$i")/24 from $(cluster_node_ip "$i")"; done)" "what the head received"
}

t_a_node_outside_the_cluster_is_named_by_srun() {
	head_run srun -N1 -w node9 hostname
	expect_eq "$rc" 1 "srun's exit status" || return 1
	expect_match "$err" "Invalid node name specified" "srun's error"
}

t_a_node_whose_slurmd_stopped_is_named_by_srun_and_comes_back() {
	cluster_slurm_node_stop 2 || return 1
	head_run srun -N3 --ntasks-per-node=1 hostname
	expect_eq "$rc" 233 "srun's exit status" || return 1
	expect_match "$err" "Task launch for StepId=[0-9.]+ failed on node node2: Communication connection failure" "srun's error" || return 1
	cluster_slurm_node_start 2 || return 1
	head_run srun -N3 --ntasks-per-node=1 hostname
	expect_eq "$rc" 0 "srun's exit status after the restart ($err)" || return 1
	expect_eq "$out" "$(printf 'node%s\n' 1 2 3)" "the tasks after the restart"
}

# `check --launcher srun` (the srun stream's connect-back transport) inside an allocation on
# this Slurm: the same findings as over SSH. Skipped where clusterdoc has no --launcher srun.
t_check_over_srun_in_an_allocation_finds_what_check_over_ssh_finds() {
	local findings='sorted((f["id"], f["severity"], tuple(f["nodes"])) for f in d["findings"])'
	local ssh_findings out err rc
	cluster_trap_ipv6_only_nic 2 ens6 || return 1
	cd_head check -w 'node[1-3]' --json
	expect_eq "$rc" 1 "check's exit status over ssh ($err)" || return 1
	ssh_findings=$(jget "$findings")
	expect_match "$ssh_findings" "\('ipv6-no-route', 'error', \('node2',\)\)" "node2's finding over ssh" || return 1
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" timeout 100 \
		salloc -N3 "$CLUSTERDOC" check -w 'node[1-3]' --launcher srun --json >"$CD_RUN/srun.json" 2>"$CD_RUN/srun.err"
	rc=$? out=$(cat "$CD_RUN/srun.json") err=$(cat "$CD_RUN/srun.err")
	expect_eq "$rc" 1 "check's exit status over srun ($err)" || return 1
	expect_match "$err" "in Slurm job [0-9]+; agents start with srun" "what check said of the launcher" || return 1
	expect_eq "$(jget "$findings")" "$ssh_findings" "the findings over srun"
}

# srun_head ARGS...: cd_head from /tmp (srun's working directory is its tasks', every node sees it)
srun_head() {
	local here=$PWD
	cd /tmp || return 1
	cd_head "$@"
	cd "$here" || return 1
}

# what each node answered: (host, error_code, error)
NODE_ERRORS='[(n["host"], n["error_code"], n["error"]) for n in d["nodes"]]'
# The facts that do not depend on how the agent was reached, nor on when.
# "env" differs by design: under srun the agent has the environment srun exports from the head
# (--export=ALL), as a job started by srun would; over ssh the node's login environment.
FACTS_SAME='[{k: (v if k != "torch" or not v else {a: b for a, b in v.items() if a not in ("cached", "import_ms")}) for k, v in n.items() if k not in ("transport", "clock_skew_ms", "agent_uploaded", "agent_dir", "agent_dir_shared_by", "agent_note", "mem_available_bytes", "uptime_s", "wall_clock_ms", "env")} for n in d["nodes"]]'

t_facts_env_bench_and_mnist_over_srun_answer_as_over_ssh() {
	local want data=$CD_RUN/mnist cmd
	srun_head facts -w 'node[1-3]' -t 120 --json
	expect_eq "$rc" 0 "facts over ssh ($err)" || return 1
	want=$(jget "$FACTS_SAME")
	srun_head facts -w 'node[1-3]' --launcher srun -t 120 --json
	expect_eq "$rc" 0 "facts over srun ($err)" || return 1
	expect_eq "$(jget '[n["transport"] for n in d["nodes"]]')" \
		"['connect-back', 'connect-back', 'connect-back']" "transports" || return 1
	expect_eq "$(jget "$FACTS_SAME")" "$want" "facts over srun" || return 1
	srun_head env -w 'node[1-3]'
	expect_eq "$rc" 0 "env over ssh ($err)" || return 1
	want=$out
	srun_head env -w 'node[1-3]' --launcher srun
	expect_eq "$rc" 0 "env over srun ($err)" || return 1
	expect_eq "$out" "$want" "env over srun" || return 1
	# bench: everything but the timings (the ranks' lines, each row's size, count, type, #wrong)
	cmd=(bench -w 'node[1-3]' -b 8 -e 64K -f 8 --iters 2 --warmup 1)
	srun_head "${cmd[@]}"
	expect_eq "$rc" 0 "bench over ssh ($err)" || return 1
	want=$(awk '/^#  node/ || /^ +[0-9]/ {print $1, $2, $3, $NF}' <<<"$out")
	srun_head "${cmd[@]}" --launcher srun
	expect_eq "$rc" 0 "bench over srun ($err)" || return 1
	expect_eq "$(awk '/^#  node/ || /^ +[0-9]/ {print $1, $2, $3, $NF}' <<<"$out")" "$want" \
		"bench over srun" || return 1
	# mnist (embedded: the agents train): the same accuracy and parameters, whichever launcher
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 1000 200 >/dev/null || return 1
	cmd=(mnist -w 'node[1-3]' --mode embedded --epochs 1 --data-dir "$data" --data-md5 "$data/MD5SUMS"
		--cache-dir "$CD_RUN/head-cache" --quiet)
	srun_head "${cmd[@]}"
	expect_eq "$rc" 0 "mnist over ssh ($err)" || return 1
	want=$(grep -E '^(test accuracy|parameters):' <<<"$out")
	srun_head "${cmd[@]}" --launcher srun
	expect_eq "$rc" 0 "mnist over srun ($err)" || return 1
	expect_eq "$(grep -E '^(test accuracy|parameters):' <<<"$out")" "$want" "mnist over srun"
}

t_a_node_whose_slurmd_stopped_fails_with_sruns_error_and_the_others_answer() {
	cluster_slurm_node_stop 2 || return 1
	srun_head facts -w 'node[1-3]' --launcher srun --json
	cluster_slurm_node_start 2 || return 1
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget "$NODE_ERRORS")" \
		"^\[\('node1', None, None\), \('node2', 'launcher', 'node2: srun: error: Task launch for StepId=[0-9.]+ failed on node node2: Communication connection failure'\), \('node3', None, None\)\]$" \
		"what each node answered"
}

t_a_node_outside_the_allocation_is_named_and_the_others_answer() {
	# salloc -N2 on node1 and node3, three nodes asked for: node2 is named, srun starts the two
	(cd /tmp && cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" timeout 60 salloc -N2 -w 'node[1,3]' \
		"$CLUSTERDOC" facts -w 'node[1-3]' --launcher srun --json >"$CD_RUN/alloc.json" 2>"$CD_RUN/alloc.err")
	rc=$? out=$(cat "$CD_RUN/alloc.json") err=$(cat "$CD_RUN/alloc.err")
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget "$NODE_ERRORS")" \
		"^\[\('node1', None, None\), \('node2', 'launcher', 'node2: not in the allocation of Slurm job [0-9]+ \(node\[1,3\]\): srun cannot start its agent there'\), \('node3', None, None\)\]$" \
		"what each node answered" || return 1
	# inside the allocation the head says which launcher starts the agents
	expect_match "$err" "clusterdoc facts: in Slurm job [0-9]+; agents start with srun" "the launcher's note"
}

t_a_firewall_dropping_the_heads_port_on_a_node_is_reported_within_the_deadline() {
	local port t0 t1
	for _ in 1 2 3 4 5; do
		port=$((40000 + RANDOM % 20000))
		[[ -z $(cluster_head_exec ss -Hltn "sport = :$port") ]] && break
	done
	# node2's own output chain drops its packets to the head's listen port (srun's own ports pass)
	ip netns exec "$(cluster_node_ns 2)" nft -f - <<EOF || return 1
add table inet cdtest_back
add chain inet cdtest_back output { type filter hook output priority 0; policy accept; }
add rule inet cdtest_back output ip daddr $CD_HEAD_IP tcp dport $port counter drop
EOF
	t0=$(date +%s%N)
	srun_head facts -w 'node[1-3]' --launcher srun --listen "$CD_HEAD_IP:$port" \
		--connect-timeout 2 --auth-timeout 1 --json
	t1=$(date +%s%N)
	ip netns exec "$(cluster_node_ns 2)" nft delete table inet cdtest_back
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget "$NODE_ERRORS")" \
		"[('node1', None, None), ('node2', 'connect-timeout', \"node2: its agent did not connect back to $CD_HEAD_IP:$port within the deadline (a firewall between the node and the head's port, or the launcher did not start it)\"), ('node3', None, None)]" \
		"what each node answered" || return 1
	# the 3 s deadline, then up to 3 s for srun to end (node2's task hangs in connect) + slack
	expect_eq "$((((t1 - t0) / 1000000) < 15000))" 1 "within the deadline ($(((t1 - t0) / 1000000)) ms)" ||
		return 1
	# a firewall that rejects instead: the agent itself says why, and the head passes it on
	ip netns exec "$(cluster_node_ns 2)" nft -f - <<EOF || return 1
add table inet cdtest_back
add chain inet cdtest_back output { type filter hook output priority 0; policy accept; }
add rule inet cdtest_back output ip daddr $CD_HEAD_IP tcp dport $port counter reject with tcp reset
EOF
	srun_head facts -w 'node[1-3]' --launcher srun --listen "$CD_HEAD_IP:$port" --json
	ip netns exec "$(cluster_node_ns 2)" nft delete table inet cdtest_back
	expect_eq "$rc" 2 "exit status with a rejecting firewall ($err)" || return 1
	expect_eq "$(jget "$NODE_ERRORS")" \
		"[('node1', None, None), ('node2', 'launcher', 'node2: clusterdoc-agent: node2: cannot connect back to the head at $CD_HEAD_IP:$port: Connection refused'), ('node3', None, None)]" \
		"what each node answered with a rejecting firewall"
}

# nodes_idle: wait up to 20 s until Slurm says every node is idle (a test that drained, stopped
# or revoked leaves them so); 1 with `sinfo`'s states in $out when they are not
nodes_idle() {
	for _ in $(seq 1 80); do
		head_run sinfo -h -N -o '%N %t'
		[[ -n $out ]] && ! grep -qv ' idle$' <<<"$out" && return 0
		sleep 0.25
	done
	return 1
}

t_an_agent_with_a_wrong_secret_is_refused_and_named() {
	nodes_idle || { echo "    Slurm's nodes are not all idle: $(tr '\n' ' ' <<<"$out")"; return 1; }
	# Slurm's own way to change one task's environment: a task prolog (SLURM_TASK_PROLOG, read
	# by srun) whose "export" lines slurmstepd applies; node2's agent gets another secret
	printf '#!/bin/sh\n[ "$(hostname)" = node2 ] && echo export CLUSTERDOC_BACK_SECRET=%s\nexit 0\n' \
		"$(printf 'ab%.0s' $(seq 32))" >"$CD_RUN/wrong-secret.sh" && chmod +x "$CD_RUN/wrong-secret.sh"
	SLURM_TASK_PROLOG=$CD_RUN/wrong-secret.sh srun_head facts -w 'node[1-3]' --launcher srun \
		--connect-timeout 3 --auth-timeout 2 --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget "$NODE_ERRORS")" \
		"^\[\('node1', None, None\), \('node2', 'launcher', \"node2: clusterdoc-agent: node2: the head at $CD_HEAD_IP:[0-9]+ did not prove the run's secret\"\), \('node3', None, None\)\]$" \
		"what each node answered"
}

t_sbcast_copies_an_agent_the_nodes_do_not_see() {
	# the host's /root is not the nodes' (each has its own, bind-mounted): an agent there is
	# on the head only, as on a cluster without a shared file system
	local dir job
	dir=$(mktemp -d /root/.cd-sbcast.XXXXXX) || return 1
	cp "$CLUSTERDOC_AGENT" "$dir/clusterdoc-agent" || return 1
	(cd /tmp && cluster_head_exec env CLUSTERDOC_AGENT="$dir/clusterdoc-agent" timeout 60 salloc -N3 sh -c \
		'"$0" facts -w "node[1-3]" --launcher srun --connect-timeout 5 --auth-timeout 2 --json >"$1.plain.json"
		"$0" facts -w "node[1-3]" --launcher srun --sbcast --json >"$1.json"; rc=$?
		echo "$SLURM_JOB_ID" >"$1.job"; exit $rc' "$CLUSTERDOC" "$CD_RUN/sbcast" 2>"$CD_RUN/sbcast.err")
	rc=$? err=$(cat "$CD_RUN/sbcast.err") job=$(cat "$CD_RUN/sbcast.job")
	rm -rf "$dir"
	out=$(cat "$CD_RUN/sbcast.plain.json")
	expect_eq "$(jget '[n["error_code"] for n in d["nodes"]]')" "['launcher', 'launcher', 'launcher']" \
		"without --sbcast ($err)" || return 1
	out=$(cat "$CD_RUN/sbcast.json")
	expect_eq "$rc" 0 "exit status with --sbcast ($err)" || return 1
	expect_eq "$(jget '[(n["hostname"], n["transport"]) for n in d["nodes"]]')" \
		"[('node1', 'connect-back'), ('node2', 'connect-back'), ('node3', 'connect-back')]" "the nodes" ||
		return 1
	expect_eq "$(cmp "$CLUSTERDOC_AGENT" "/tmp/clusterdoc-agent.$job" && echo same)" same "the copy" || return 1
	rm -f "/tmp/clusterdoc-agent.$job"
}

# in_node I ARGV : how many processes in node I's network namespace run ARGV (argv[0] may be a
# path: srun finds the program in PATH; pgrep would count the whole machine's processes: the
# namespaces share one PID namespace)
in_node() {
	local pid n=0 want
	want=$(printf '%s ' "${@:2}")
	for pid in $(ip netns pids "$(cluster_node_ns "$1")"); do
		[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == ?(*/)"$want" ]] && n=$((n + 1))
	done
	echo "$n"
}

# `check --launcher srun` outside an allocation, with a node Slurm cannot give now (drained):
# srun queues a job and waits. At the deadline the head ends srun with SIGTERM, so srun revokes
# its request ("Job allocation N has been revoked"): nothing is left in Slurm's queue to start
# the agents on every node later, once the node is back. Each node's error gives srun's own
# words, not a firewall, and the fix is not about ssh.
t_check_over_srun_outside_an_allocation_with_a_drained_node_leaves_no_job_and_gives_sruns_words() {
	local jobs crc cout cerr
	head_run scontrol update NodeName=node3 State=DRAIN Reason=cdtest
	expect_eq "$rc" 0 "draining node3 ($err)" || return 1
	srun_head check -w 'node[1-3]' --launcher srun --connect-timeout 3 --auth-timeout 2 --json
	crc=$rc cout=$out cerr=$err
	head_run squeue -h -o '%i %T %r'
	jobs=$out
	# whatever happened, nothing may start later: cancel what is left, then bring node3 back
	# shellcheck disable=SC2046
	[[ -n $jobs ]] && head_run scancel $(awk '{print $1}' <<<"$jobs")
	head_run scontrol update NodeName=node3 State=RESUME
	# the next tests need node3 back in service: wait for Slurm to say so (a job revoked at
	# its start may hold it a moment)
	nodes_idle || echo "    Slurm's nodes after the test: $out"
	rc=$crc out=$cout err=$cerr
	expect_eq "$rc" 2 "check's exit status ($err)" || return 1
	expect_eq "$jobs" "" "Slurm's queue once the check has ended" || return 1
	expect_eq "$(jget '[f["id"] for f in d["findings"] if f["severity"] == "error"]')" \
		"['node-unreachable']" "the error findings" || return 1
	expect_match "$(jget '"\n".join(e for f in d["findings"] for e in f["evidence"])')" \
		"^node1: node1: the launcher had not started its agent by the deadline; it said: srun: .*job [0-9]+ queued and waiting for resources.* \(launcher\)$" \
		"node1's evidence: srun's words" || return 1
	expect_eq "$(grep -c firewall <<<"$out")" 0 "a firewall blamed" || return 1
	expect_match "$(jget '[f["fix"] for f in d["findings"] if f["id"] == "node-unreachable"][0]')" \
		"^Make the launcher start the agent on the node" "the fix"
}

t_slurm_down_stops_slurmd_slurmctld_munged_and_running_steps() {
	local pids pid st name survivors="" i ns
	(cluster_head_exec srun -N3 --ntasks-per-node=1 sleep 271 </dev/null >"$CD_RUN/sleep.out" 2>&1 &)
	for _ in $(seq 100); do
		(($(in_node 3 sleep 271) == 1)) && break
		sleep 0.1
	done
	expect_eq "$(in_node 3 sleep 271)" 1 "the step's task on node3 ($(cat "$CD_RUN/sleep.out"))" || return 1
	pids=$(cat "$CD_RUN/slurm/pids")
	for ((i = 1; i <= 3; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")"); do
			[[ $(cat "/proc/$pid/comm" 2>/dev/null) == slurmstepd ]] && pids+=$'\n'"$pid $(_sl_starttime "$pid") slurmstepd"
		done
	done
	expect_match "$pids" " slurmstepd$" "a running step's slurmstepd" || return 1
	cluster_slurm_down
	while read -r pid st name; do
		_sl_alive "$pid" "$st" && survivors+=" $name($pid)"
	done <<<"$pids"
	expect_eq "$survivors" "" "recorded and still running after cluster_slurm_down" || return 1
	for ns in "$CD_NS_HEAD" $(for ((i = 1; i <= 3; i++)); do cluster_node_ns "$i"; done); do
		for pid in $(ip netns pids "$ns"); do
			name=$(cat "/proc/$pid/comm" 2>/dev/null)
			[[ $name == @(munged|slurm*) ]] && survivors+=" $name($pid in $ns)"
		done
	done
	expect_eq "$survivors" "" "in the namespaces after cluster_slurm_down" || return 1
	expect_eq "${SLURM_CONF:-}" "" "SLURM_CONF after cluster_slurm_down" || return 1
	expect_eq "$(in_node 3 sleep 271)" 0 "the step's task on node3"
}

itest_run_all
