#!/usr/bin/env bash
# tests/cluster/slurm.sh - a real Slurm controller for tests: munged + slurmctld (Debian 12:
# slurmctld 22.05, slurm-client, munge), all on 127.0.0.1, everything in a directory of the caller.
#
# Source it (bash), then:
#     slurm_available || skip             # the binaries are installed
#     slurm_up "$dir"                     # exports SLURM_CONF=$dir/slurm.conf
#     scontrol update NodeName=node2 State=DRAIN Reason="clusterdoc: x"
#     slurm_down "$dir"                   # stops what slurm_up started (by PID), idempotent
# Install: apt-get install --no-install-recommends slurmctld slurm-client munge
#   (brings libmunge2 liblua5.1-0 slurm-wlm-basic-plugins; stop the services the packages start
#   with a policy-rc.d that exits 101 during the install).
#
# Layout of DIR:  slurm.conf, slurmctld.log, slurmctld.out, state/ (StateSaveLocation),
#   munge/ (munge.key, munge.socket, munged.out), pids ("PID STARTTIME NAME": munged, slurmctld,
#   slurmscriptd, the helper slurmctld forks). slurm_down signals only those, start time checked.
# SLURM_NETNS=NAME: run everything in that network namespace (`ip netns exec`).
# SLURM_LISTEN_ANY=1: listen on the wildcard address instead, for a network namespace of the
#   test's own with no route out (where "localhost" also resolves to ::1 first, which slurmctld
#   cannot bind without EnableIPv6).
# Network: slurmctld listens on 127.0.0.1:P only (CommunicationParameters=NoCtldInAddrAny), P a
#   free port in 20000-59999; nodes have NodeAddr=127.0.0.1 and SlurmdPort P+1 where nothing
#   listens: its pings to them are refused on loopback. munged has only a Unix socket.
#
# Nodes node1 node2 node3, partition "debug" (default). They have no slurmd; slurm_up turns them
# from DOWN (slurm.conf) to idle with RESUME, and SlurmdTimeout=0 keeps them from going DOWN again:
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

# _sl_ns CMD...: run CMD in $SLURM_NETNS (ip netns exec, which execs CMD: a background $! is
# CMD itself, a child of the caller's shell), or here when unset
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
	_sl_ns "$@" </dev/null >"$log" 2>&1 &
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
	slurm_available || { _sl_err "slurmctld, scontrol or munged not installed"; return 1; }
	mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || return 1
	if [[ -s $dir/pids ]]; then _sl_err "$dir/pids exists: already up? (slurm_down $dir)"; return 1; fi
	mkdir -p "$dir/state" "$dir/spool" "$dir/munge" && chmod 700 "$dir/munge" || return 1
	: >"$dir/pids"

	# munged: own key and socket; --force because DIR (mktemp -d) is not world-searchable
	(umask 077 && head -c 128 /dev/urandom >"$dir/munge/munge.key") || return 1
	if ! _sl_start "$dir" munged "$dir/munge/munged.out" munged -F --force \
		--socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
		--log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" \
		--seed-file="$dir/munge/munged.seed" || ! _sl_wait 5 test -S "$dir/munge/munge.socket"; then
		_sl_err "munged did not start: $(tail -n 2 "$dir/munge/munged.out" 2>/dev/null)"
		slurm_down "$dir"
		return 1
	fi

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
	for want in slurmctld slurmscriptd munged; do
		while read -r pid st name; do
			[[ $name == "$want" && $pid =~ ^[0-9]+$ ]] && _sl_stop "$pid" "$st"
		done <"$dir/pids"
	done
	rm -f "$dir/pids"
	[[ ${SLURM_CONF:-} == "$dir/slurm.conf" ]] && unset SLURM_CONF
	return 0
}
