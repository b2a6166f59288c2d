#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cluster/slurm.sh - a real Slurm for tests (Debian 12: Slurm 22.05's slurmctld, slurmd,
# slurm-client, munge), everything in a directory of the caller. Two set-ups:
#
# 1. slurm_up DIR: munged + slurmctld alone, on 127.0.0.1, nodes without slurmd (for scontrol).
#     slurm_available || skip             # the binaries are installed
#     slurm_up "$dir"                     # exports SLURM_CONF=$dir/slurm.conf
#     scontrol update NodeName=node2 State=DRAIN Reason="clusterdoc: x"
#     slurm_down "$dir"                   # stops what slurm_up started (by PID), idempotent
#
# 2. slurm_cluster_up DIR: a whole Slurm on the namespace cluster of tests/cluster/cluster.sh
#    (use `cluster_up N --slurm` or `cluster_slurm_up`, which call it with DIR=$CD_RUN/slurm):
#    munged and slurmctld in the head's network namespace, and one slurmd per node, started
#    inside that node's network, UTS and mount namespaces (where its sshd runs: the task's
#    hostname is nodeI, its NIC and address are the node's). Returns when every node is idle.
#     cluster_up 3 --slurm                # or: cluster_up 3; cluster_slurm_up
#     cluster_head_exec srun -N3 --ntasks-per-node=1 hostname          # node1 node2 node3
#     cluster_head_exec salloc -N3 srun --overlap -N3 --ntasks-per-node=1 CMD
#     cluster_slurm_down                  # or cluster_down, which stops it first
#    A caller needs only SLURM_CONF (exported, and in $CD_RUN/state.sh: `cluster.sh up 3 --slurm`
#    prints it) and the head's network namespace (cluster_head_exec, or `ip netns exec
#    $CD_NS_HEAD`): srun, salloc, sinfo, squeue, scancel and scontrol find slurmctld at
#    $CD_HEAD_IP through slurm.conf, and the nodes' slurmd reach srun back at the head's address.
#    slurm.conf: SlurmctldHost=localhost($CD_HEAD_IP) (slurmctld takes "localhost" as its own
#    name: the head namespace has the machine's hostname), SlurmctldPort P (free in the head's
#    namespace) and SlurmdPort P+1 (each node listens on its own address), NodeName=nodeI
#    NodeAddr=$CD_SUBNET.(I+10) with this machine's CPUs (slurmd -C), partition "debug" (default,
#    all nodes), select/linear (a job has whole nodes), proctrack/linuxproc, task/none,
#    jobacct_gather/none, SlurmdSpoolDir=DIR/spool/%n (one per node), SlurmdTimeout=300,
#    ReturnToService=2, SlurmUser=SlurmdUser=root; cgroup.conf: CgroupPlugin=cgroup/v1 (see
#    slurm_cluster_up). Jobs run as root, from the caller's working directory: use one every node
#    sees (/tmp, or the worktree; not a node's own /root). Tasks get srun's environment
#    (--export=ALL, the default), never through a command line, HOME included: the head's
#    $CD_HOME under cluster_head_exec, not the node's /root. Not with --old-node, --arm-node
#    (their roots have no slurmd) or --ipv6-only. slurm_cluster_up takes 1-3 s for 3 nodes and
#    3-7 s for 32 (each slurmd ~8 MiB), slurm_down 0.5-3 s.
# Install: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge
#   (brings libmunge2 liblua5.1-0 slurm-wlm-basic-plugins; stop the services the packages start
#   with a policy-rc.d that exits 101 during the install).
#
# Layout of DIR:  slurm.conf, slurmctld.log, slurmctld.out, state/ (StateSaveLocation),
#   munge/ (munge.key, munge.socket, munged.out), pids ("PID STARTTIME NAME": munged, slurmctld,
#   slurmscriptd, the helper slurmctld forks, slurmdI). slurm_down signals only those, start time
#   checked; with slurm_cluster_up also: cgroup.conf, nodes ("NAME ADDR NETNS"), spool/nodeI/,
#   slurmd.nodeI.log, slurmd.nodeI.out; slurm_down then first cancels the jobs (scancel), stops
#   the slurmds and any slurmstepd left in a node's namespace with its tasks.
# SLURM_NETNS=NAME (slurm_up only): run everything in that network namespace (`ip netns exec`).
# SLURM_LISTEN_ANY=1 (slurm_up only): listen on the wildcard address instead, for a network
#   namespace of the test's own with no route out (where "localhost" also resolves to ::1 first,
#   which slurmctld cannot bind without EnableIPv6).
# Network (slurm_up): slurmctld listens on 127.0.0.1:P only (CommunicationParameters=NoCtldInAddrAny),
#   P a free port in 20000-59999; nodes have NodeAddr=127.0.0.1 and SlurmdPort P+1 where nothing
#   listens: its pings to them are refused on loopback. munged has only a Unix socket (which
#   every namespace reaches: the path is on the shared /tmp).
#
# slurm_up's nodes node1 node2 node3, partition "debug" (default), have no slurmd; slurm_up turns
# them from DOWN (slurm.conf) to idle with RESUME, and SlurmdTimeout=0 keeps them from going DOWN:
#   after slurm_up   State=IDLE+NOT_RESPONDING, no Reason=           (sinfo: idle*)
#   after DRAIN      State=IDLE+DRAIN+NOT_RESPONDING ... Reason=clusterdoc: x [root@2024-01-01T00:00:00]
#   after RESUME     State=IDLE+NOT_RESPONDING, no Reason=; scontrol exits 0
# (Left UNKNOWN, as nodes that never registered are, RESUME would clear DRAIN and Reason but exit 1:
#  "slurm_update error: Invalid node state specified".)
# slurm_up takes 0.1-0.3 s, slurm_down 0.1-3 s. Needs root (SlurmUser=root).

_sl_err() { printf 'slurm: ERROR: %s\n' "$*" >&2; }

_sl_starttime() { # pid : field 22 of /proc/PID/stat, to never signal a recycled PID
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	printf '%s\n' "${20}"
}

_sl_alive() { # pid starttime : running, not a zombie, the same process
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[[ ${s:0:1} != Z && $(_sl_starttime "$1") == "$2" ]]
}

_sl_ports_free() { # port... : nobody listens on them (TCP, any address)
	local p
	for p in "$@"; do [[ -z $(_sl_ns ss -Hltn "sport = :$p" 2>/dev/null) ]] || return 1; done
}

_sl_wait() { # seconds cmd... : poll cmd every 0.1 s until it succeeds or the time is up
	local end=$((SECONDS + $1))
	until "${@:2}"; do
		((SECONDS < end)) || return 1
		sleep 0.1
	done
}

# _sl_ns CMD...: run CMD in $SLURM_NETNS (ip netns exec), or here when unset
_sl_ns() {
	if [[ -n ${SLURM_NETNS:-} ]]; then
		ip netns exec "$SLURM_NETNS" "$@"
	else
		"$@"
	fi
}

slurm_available() {
	command -v slurmctld >/dev/null && command -v scontrol >/dev/null && command -v munged >/dev/null
}

_sl_conf() { # dir port
	cat <<EOF
ClusterName=cdtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$2
SlurmdPort=$(($2 + 1))
$([[ ${SLURM_LISTEN_ANY:-0} == 1 ]] || echo CommunicationParameters=NoCtldInAddrAny,NoInAddrAny)
AuthType=auth/munge
AuthInfo=socket=$1/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool
SlurmctldPidFile=$1/slurmctld.pid
SlurmdPidFile=$1/slurmd.pid
SlurmctldLogFile=$1/slurmctld.log
SlurmctldDebug=info
SlurmdTimeout=0
ReturnToService=0
MailProg=/bin/true
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
NodeName=node[1-3] NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=1 State=DOWN
PartitionName=debug Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP
EOF
}

_sl_start() { # dir name log cmd... : start cmd in the background (output to log), record it in dir/pids
	local dir=$1 name=$2 log=$3 pid st
	shift 3
	# simple commands, not the function _sl_ns: a background function is a subshell that forks
	# CMD, and $! would be that subshell (signalling it would leave CMD running)
	if [[ -n ${SLURM_NETNS:-} ]]; then
		ip netns exec "$SLURM_NETNS" "$@" </dev/null >"$log" 2>&1 &
	else
		"$@" </dev/null >"$log" 2>&1 &
	fi
	pid=$!
	st=$(_sl_starttime "$pid") || return 1 # already gone
	printf '%s %s %s\n' "$pid" "$st" "$name" >>"$dir/pids"
}

_sl_track_children() { # dir name childname : record the children of process "name" (slurmscriptd)
	local pid st name f s
	while read -r pid st name; do
		if [[ $name != "$2" ]] || ! _sl_alive "$pid" "$st"; then continue; fi
		for f in /proc/[0-9]*/stat; do
			s=$(cat "$f" 2>/dev/null) || continue
			s=${s##*) }
			[[ ${s#* } == "$pid "* ]] || continue # field 4: ppid
			f=${f#/proc/} && f=${f%/stat}
			st=$(_sl_starttime "$f") && printf '%s %s %s\n' "$f" "$st" "$3" >>"$1/pids"
		done
	done < <(cat "$1/pids")
}

_sl_pid_alive() { # dir name
	local pid st name
	while read -r pid st name; do
		[[ $name == "$2" ]] && _sl_alive "$pid" "$st" && return 0
	done <"$1/pids"
	return 1
}

_sl_ping() { _sl_ns timeout 5 scontrol ping >/dev/null 2>&1; }
_sl_ctld_settled() { _sl_ping || ! _sl_pid_alive "$1" slurmctld; } # dir : answers, or is gone

# slurm_up DIR : munged + slurmctld with DIR/slurm.conf; exports SLURM_CONF
slurm_up() {
	local dir=${1:-} port try
	[[ -n $dir ]] || { _sl_err "usage: slurm_up DIR"; return 1; }
	_sl_munge_up "$dir" || return 1
	dir=$(cd "$dir" && pwd) || return 1

	export SLURM_CONF=$dir/slurm.conf
	for try in 1 2 3; do # retried: a port taken between the check and the bind
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		_sl_ports_free "$port" $((port + 1)) || continue # SlurmctldPort, SlurmdPort
		_sl_conf "$dir" "$port" >"$SLURM_CONF" || break
		if _sl_start "$dir" slurmctld "$dir/slurmctld.out" slurmctld -D -c -f "$SLURM_CONF" &&
			_sl_wait 20 _sl_ctld_settled "$dir" && _sl_pid_alive "$dir" slurmctld; then
			_sl_track_children "$dir" slurmctld slurmscriptd
			_sl_ns scontrol update NodeName=node[1-3] State=RESUME && return 0
			_sl_err "scontrol update NodeName=node[1-3] State=RESUME failed"
			break
		fi
		if _sl_pid_alive "$dir" slurmctld; then
			_sl_err "scontrol ping failed for 20 s: $(tail -n 2 "$dir/slurmctld.log" 2>/dev/null)"
			break
		fi
		_sl_err "slurmctld exited (try $try, port $port): $(tail -n 2 "$dir/slurmctld.out" 2>/dev/null)"
	done
	slurm_down "$dir"
	return 1
}

_sl_stop() { # pid starttime : TERM, wait up to 5 s, then KILL
	local t
	_sl_alive "$1" "$2" && kill -TERM "$1" 2>/dev/null || return 0
	for ((t = 0; t < 50; t++)); do
		_sl_alive "$1" "$2" || break
		sleep 0.1
	done
	_sl_alive "$1" "$2" && kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null || true # reap, when it is our child
}

# slurm_down DIR : stop the processes slurm_up recorded in DIR/pids: slurmctld, its slurmscriptd,
# munged; idempotent
slurm_down() {
	local dir=${1:-} pid st name want
	[[ -f $dir/pids ]] || return 0
	if [[ -f $dir/nodes ]]; then _sl_nodes_down "$dir"; fi
	for want in slurmctld slurmscriptd munged; do
		while read -r pid st name; do
			[[ $name == "$want" && $pid =~ ^[0-9]+$ ]] && _sl_stop "$pid" "$st"
		done <"$dir/pids"
	done
	rm -f "$dir/pids"
	[[ ${SLURM_CONF:-} == "$dir/slurm.conf" ]] && unset SLURM_CONF
	return 0
}

# ---------------------------------------------------------------- Slurm on the test cluster

# slurm_cluster_up DIR : a real Slurm on the cluster of tests/cluster/cluster.sh that is up in
# this shell (cluster_up; CD_* set): munged and slurmctld in the head's namespace, one slurmd per
# node inside that node's namespaces (network, UTS, mount: where its sshd runs). Returns when
# every node is idle; exports SLURM_CONF=DIR/slurm.conf. slurm_down DIR stops it all.
slurm_cluster_up() {
	local dir=${1:-} port try i
	[[ -n $dir ]] || { _sl_err "usage: slurm_cluster_up DIR"; return 1; }
	[[ -n ${CD_RUN:-} && -n ${CD_NS_HEAD:-} && -n ${CD_N:-} ]] || { _sl_err "slurm_cluster_up: no test cluster is up (cluster_up)"; return 1; }
	command -v slurmd >/dev/null || { _sl_err "slurmd not installed (make deps)"; return 1; }
	[[ -z ${CD_OLD_NODE:-}${CD_ARM_NODE:-} ]] || { _sl_err "slurm_cluster_up: the nodes with their own root (--old-node, --arm-node) have no slurmd"; return 1; }
	((${CD_IPV6_ONLY:-0} == 0)) || { _sl_err "slurm_cluster_up: not on an IPv6-only cluster"; return 1; }
	SLURM_NETNS=$CD_NS_HEAD _sl_munge_up "$dir" || return 1
	dir=$(cd "$dir" && pwd) || return 1
	for ((i = 1; i <= CD_N; i++)); do echo "node$i $(cluster_node_ip "$i") $(cluster_node_ns "$i")"; done >"$dir/nodes"
	export SLURM_CONF=$dir/slurm.conf
	for try in 1 2 3; do # retried: a port taken between the check and the bind
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		SLURM_NETNS=$CD_NS_HEAD _sl_ports_free "$port" || continue
		_sl_cluster_conf "$dir" "$port" >"$SLURM_CONF" || break
		# `ip netns exec` gave each node a sysfs of its own, where /sys/fs/cgroup is an empty
		# directory: slurmd 22.05's autodetection of the cgroup version fails there ("No
		# filesystem mounted on /sys/fs/cgroup") and slurmd exits. Named, cgroup/v1 loads
		# without looking; proctrack/linuxproc, task/none and jobacct_gather/none never use it.
		echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf" || break
		if SLURM_NETNS=$CD_NS_HEAD _sl_start "$dir" slurmctld "$dir/slurmctld.out" slurmctld -D -c -f "$SLURM_CONF" &&
			SLURM_NETNS=$CD_NS_HEAD _sl_wait 20 _sl_ctld_settled "$dir" && _sl_pid_alive "$dir" slurmctld; then
			_sl_track_children "$dir" slurmctld slurmscriptd
			break
		fi
		_sl_pid_alive "$dir" slurmctld && break
		_sl_err "slurmctld exited (try $try, port $port): $(tail -n 2 "$dir/slurmctld.out" 2>/dev/null)"
	done
	if ! SLURM_NETNS=$CD_NS_HEAD _sl_ping; then
		_sl_pid_alive "$dir" slurmctld && _sl_err "scontrol ping failed for 20 s: $(tail -n 2 "$dir/slurmctld.log" 2>/dev/null)"
		slurm_down "$dir"
		return 1
	fi
	for ((i = 1; i <= CD_N; i++)); do
		_sl_slurmd_start "$dir" "$i" || { slurm_down "$dir"; return 1; }
	done
	if ! _sl_wait 30 _sl_all_idle "$CD_N"; then
		_sl_err "the nodes did not all become idle in 30 s: $(SLURM_NETNS=$CD_NS_HEAD _sl_ns sinfo -h -N -o '%N %T' 2>&1 | tr '\n' ' ')"
		for ((i = 1; i <= CD_N; i++)); do
			_sl_pid_alive "$dir" "slurmd$i" || _sl_err "slurmd on node$i exited: $(tail -n 3 "$dir/slurmd.node$i.out" "$dir/slurmd.node$i.log" 2>/dev/null | tr '\n' ' ')"
		done
		slurm_down "$dir"
		return 1
	fi
	return 0
}

_sl_slurmd_start() { # dir i : node i's slurmd, in the namespaces of its sshd
	mkdir -p "$1/spool/node$2" || return 1
	# nsenter and env exec: $! is slurmd itself
	# shellcheck disable=SC2046
	SLURM_NETNS="" _sl_start "$1" "slurmd$2" "$1/slurmd.node$2.out" \
		nsenter $(_cd_enter_opts "$2") -- env -u SSH_AUTH_SOCK HOME=/root \
		slurmd -D -N "node$2" -f "$1/slurm.conf"
}

# slurm_cluster_node_stop DIR I : stop node I's slurmd (by PID; a running step's slurmstepd and
# tasks go on). slurmctld still holds the node idle (it pings the nodes every SlurmdTimeout/3,
# 100 s): a job placed there is allocated and its step fails at the launch, naming the node, as
# where a node's slurmd has just died.
slurm_cluster_node_stop() {
	local dir=${1:-} i=${2:-} pid st name
	[[ -f $dir/nodes && $i =~ ^[0-9]+$ ]] || { _sl_err "usage: slurm_cluster_node_stop DIR I (after slurm_cluster_up DIR)"; return 1; }
	while read -r pid st name; do
		[[ $name == "slurmd$i" ]] && _sl_stop "$pid" "$st"
	done <"$dir/pids"
	return 0
}

# slurm_cluster_node_start DIR I : start node I's slurmd again; returns when the node is idle
slurm_cluster_node_start() {
	local dir=${1:-} i=${2:-}
	[[ -f $dir/nodes && $i =~ ^[0-9]+$ ]] || { _sl_err "usage: slurm_cluster_node_start DIR I (after slurm_cluster_up DIR)"; return 1; }
	_sl_pid_alive "$dir" "slurmd$i" && return 0
	_sl_slurmd_start "$dir" "$i" || return 1
	_sl_wait 30 _sl_node_idle "$dir" "node$i" && return 0
	_sl_err "node$i did not become idle in 30 s: $(tail -n 3 "$dir/slurmd.node$i.out" "$dir/slurmd.node$i.log" 2>/dev/null | tr '\n' ' ')"
	return 1
}

_sl_node_idle() { # dir name
	[[ $(SLURM_NETNS=$CD_NS_HEAD _sl_ns env SLURM_CONF="$1/slurm.conf" timeout 5 sinfo -h -N -n "$2" -o '%T' 2>/dev/null) == idle ]]
}

_sl_all_idle() { # n : sinfo lists n nodes, each idle (no "*": each slurmd answers)
	local l
	l=$(SLURM_NETNS=$CD_NS_HEAD _sl_ns timeout 5 sinfo -h -N -o '%T' 2>/dev/null) || return 1
	[[ $(grep -cx idle <<<"$l") == "$1" ]]
}

_sl_munge_up() { # dir : the layout of DIR, munged with its own key and socket
	local dir=$1
	slurm_available || { _sl_err "slurmctld, scontrol or munged not installed"; return 1; }
	mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || return 1
	if [[ -s $dir/pids ]]; then _sl_err "$dir/pids exists: already up? (slurm_down $dir)"; return 1; fi
	mkdir -p "$dir/state" "$dir/spool" "$dir/munge" && chmod 700 "$dir/munge" || return 1
	: >"$dir/pids"
	# --force because DIR (mktemp -d) is not world-searchable
	(umask 077 && head -c 128 /dev/urandom >"$dir/munge/munge.key") || return 1
	if ! _sl_start "$dir" munged "$dir/munge/munged.out" munged -F --force \
		--socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
		--log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" \
		--seed-file="$dir/munge/munged.seed" || ! _sl_wait 5 test -S "$dir/munge/munge.socket"; then
		_sl_err "munged did not start: $(tail -n 2 "$dir/munge/munged.out" 2>/dev/null)"
		slurm_down "$dir"
		return 1
	fi
}

_sl_cluster_conf() { # dir port : slurm.conf of the test cluster's Slurm
	local name ip ns hw
	cat <<EOF
ClusterName=cdtest
SlurmctldHost=localhost($CD_HEAD_IP)
SlurmctldPort=$2
SlurmdPort=$(($2 + 1))
AuthType=auth/munge
AuthInfo=socket=$1/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool/%n
SlurmctldPidFile=$1/slurmctld.pid
SlurmdPidFile=$1/slurmd.%n.pid
SlurmctldLogFile=$1/slurmctld.log
SlurmdLogFile=$1/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdTimeout=300
ReturnToService=2
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/linear
MpiDefault=none
EOF
	# every node is this machine: its hardware (slurmd -C) but the memory, which only
	# allocations that ask for it would need
	hw=$(slurmd -C | sed -n '1{s/^NodeName=[^ ]* //;s/ RealMemory=[0-9]*//;p}')
	while read -r name ip ns; do
		echo "NodeName=$name NodeAddr=$ip ${hw:-CPUs=1} State=UNKNOWN"
	done <"$1/nodes"
	echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

_sl_stop_all() { # "pid starttime"... : _sl_stop for many at once: TERM to all, then the waits
	local e
	for e in "$@"; do _sl_alive "${e% *}" "${e#* }" && kill -TERM "${e% *}" 2>/dev/null; done
	for e in "$@"; do _sl_stop "${e% *}" "${e#* }"; done
}

_sl_node_stepds() { # dir : "PID STARTTIME" of each slurmstepd in the nodes' network namespaces
	local name ip ns pid st
	while read -r name ip ns; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			[[ $(cat "/proc/$pid/comm" 2>/dev/null) == slurmstepd ]] || continue
			st=$(_sl_starttime "$pid") && echo "$pid $st"
		done
	done <"$1/nodes"
}

_sl_no_stepd() { [[ -z $(_sl_node_stepds "$1") ]]; } # dir

_sl_descendants() { # pid : every process below it (its tasks and theirs), deepest last
	local f s want=" $1 " found=1
	local -A ppid=()
	for f in /proc/[0-9]*/stat; do
		s=$(cat "$f" 2>/dev/null) || continue
		s=${s##*) }
		s=${s#* }
		f=${f#/proc/} && ppid[${f%/stat}]=${s%% *}
	done
	while ((found)); do
		found=0
		for f in "${!ppid[@]}"; do
			[[ $want == *" ${ppid[$f]} "* && $want != *" $f "* ]] || continue
			want+="$f " found=1
			echo "$f"
		done
	done
}

_sl_nodes_down() { # dir : end the jobs, stop each slurmd and whatever is left of their steps
	local dir=$1 pid st name l=()
	# the normal way first: slurmctld has each slurmd end its steps (tasks and slurmstepd)
	if _sl_pid_alive "$dir" slurmctld &&
		SLURM_NETNS=${CD_NS_HEAD:-} _sl_ns env SLURM_CONF="$dir/slurm.conf" timeout 5 scancel --quiet --user=root 2>/dev/null; then
		_sl_wait 10 _sl_no_stepd "$dir"
	fi
	while read -r pid st name; do
		[[ $name == slurmd[0-9]* && $pid =~ ^[0-9]+$ ]] && l+=("$pid $st")
	done <"$dir/pids"
	_sl_stop_all "${l[@]+"${l[@]}"}"
	l=()
	# a slurmstepd that outlived that (slurmd daemonizes them), its tasks and theirs
	while read -r pid st; do
		[[ -n $pid ]] || continue
		l+=("$pid $st")
		for name in $(_sl_descendants "$pid"); do
			st=$(_sl_starttime "$name") && l+=("$name $st")
		done
	done < <(_sl_node_stepds "$dir")
	_sl_stop_all "${l[@]+"${l[@]}"}"
	rm -f "$dir/nodes"
}
