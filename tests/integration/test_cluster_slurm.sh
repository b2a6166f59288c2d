#!/usr/bin/env bash
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

# Without --launcher srun (a clusterdoc before the connect-back transport) that one test is
# recorded as skipped and left out of the ONLY list itest_run_all runs.
if ! "$CLUSTERDOC" check --help 2>&1 | grep -q -- '--launcher ssh|srun'; then
	result SKIP "$ITEST_FILE/check_over_srun_in_an_allocation_finds_what_check_over_ssh_finds" "no --launcher srun in $CLUSTERDOC"
	names=""
	for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
		[[ $t != check_over_srun* && ( -z ${ONLY:-} || $t =~ $ONLY ) ]] && names+="${names:+|}$t"
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
