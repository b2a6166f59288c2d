#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cluster/cluster.sh - a throw-away test cluster of N "nodes" made of network namespaces,
# each running a real OpenSSH sshd, plus a "head" namespace to run clusterdoc from.
#
# Source it (bash), then:
#     cluster_up 4                       # traps EXIT/INT/TERM -> cluster_down (see CD_AUTO_TRAP)
#     cluster_head_exec ssh node3 hostname   # -> node3
#     cluster_down                       # idempotent; also runs from the trap
# or use the CLI:  cluster.sh up N [opts]  |  cluster.sh down [RUN_DIR]  |  cluster.sh exec RUN_DIR head|I CMD...
#
# Layout (prefix P = CD_NS_PREFIX or "cdt" + 5 random lowercase chars):
#   netns P"br"    bridge P"br0" (STP off), ports P"b"$i (nodes) and P"bh" (head); no addresses
#   netns P"head"  eth0 = 10.X.Y.2/24           (clusterdoc runs here: cluster_head_exec)
#   netns P"n"$i   NIC (eth0 unless CD_NIC_NAMES) = 10.X.Y.(i+10)/24, lo up, sshd on port 22,
#                  (more than 240 nodes: a /22 for the head and the nodes, CD_PLEN=22; node i
#                  is its (i+10)-th address, cluster_node_ip; up to 1000 nodes)
#                  own UTS ns (hostname node$i) and mount ns: /root is the node's own home
#                  $CD_RUN/n$i/home (nothing a test writes in ~ reaches the real /root), with
#                  /root/.cache = $CD_RUN/n$i/cache and /root/.bashrc = $CD_RUN/n$i/bashrc, empty
#                  (cluster_node_env appends to it)
#   netns P"d"$i   dead end for cluster_trap_ipv6_only_nic (created only by that trap)
#   /etc/netns/<ns>/hosts   node names -> IPs (ip netns exec bind-mounts it over /etc/hosts)
#   /etc/netns/P"n"$i/shadow, /etc/netns/P"n"$i/sysctl.d   the node's own /etc/shadow and /etc/sysctl.d
#   /etc/netns/P"head"/passwd  copy of /etc/passwd with root's home = $CD_RUN/home, so that
#                  OpenSSH (which takes "~" and its default ~/.ssh/config from the passwd entry,
#                  not from $HOME) reads the run's ~/.ssh in the head namespace (CD_HEAD_PASSWD=0: off)
# No namespace has a default route; nothing is created in the root namespace.
# Everything is removed by cluster_down: processes (by PID, start time checked), namespaces,
# /etc/netns/<ns> dirs, the run directory $CD_RUN (/tmp/cdcluster.XXXXXX), binfmt handlers it
# registered.
#
# Real-node options (cluster_up):
#   --shared-home  every node's /root is ONE directory, $CD_SHARED_DIR/root (hence one ~/.cache
#                  and one ~/.bashrc: cluster_node_env I then guards its lines by hostname), and
#                  with --users every node's /home is $CD_SHARED_DIR/home. $CD_RUN/nI/cache and
#                  nI/bashrc are not mounted then.
#   --users        real accounts cdadmin and cdplain on every node (same uid/gid everywhere, the
#                  first free pair from 2901; shell /bin/bash, password "*" = key only), homes
#                  /home/cdadmin and /home/cdplain (per node: $CD_RUN/nI/users/USER, or shared)
#                  holding .ssh/authorized_keys with the run's client key. The host's /etc is
#                  never touched: /etc/netns/<node ns>/passwd, group, shadow (the node's base
#                  files + the users) and sudoers.d/clusterdoc-cdadmin are bound over the node's
#                  /etc (by `ip netns exec`, or by the holder in a node with its own root). The
#                  fragment is tests/cluster/sudoers.cdadmin verbatim (CD_SUDOERS_ADMIN=FILE:
#                  another; none: "cdadmin ALL=(root) NOPASSWD: /usr/bin/true, /bin/true"),
#                  checked with visudo; sudo is the node's real sudo (the host's /etc/sudoers, or
#                  the root's, includes /etc/sudoers.d). cdplain has no sudo rights.
#                  $CD_SSH_CONFIG_ADMIN / $CD_SSH_CONFIG_PLAIN: $CD_SSH_CONFIG with User cdadmin /
#                  User cdplain (clusterdoc -F FILE, or ssh -F FILE).
#   --old-node I   node I's whole root is Debian 11 bullseye (glibc 2.31, OpenSSH 8.4, python3.9)
#   --arm-node I   node I's whole root is Debian 12 arm64, run by qemu-aarch64-static through
#                  binfmt_misc (uname -m: aarch64); its sshd takes seconds to start, each login
#                  ~0.5 s more than on the others. A handler with the F flag (C too with --users:
#                  setuid sudo) is used if the system has one, else registered and removed at down.
#       Both may be repeated for several nodes. A root comes from the cache built by
#       tests/cluster/roots.sh (${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}/NAME, built with
#       debootstrap on first use: about 1 min for bullseye-amd64, several for bookworm-arm64;
#       `cluster.sh roots` builds them ahead). The cache is the read-only lower layer of an
#       overlay ($CD_RUN/nI/root, upper dir on a tmpfs in the node): runs never change it. The
#       holder mounts /proc, /sys (its netns), /dev, the host's /tmp (so $CD_RUN has the same
#       path), the /etc/netns files and the homes in it and chroots; sshd (the root's own
#       /usr/sbin/sshd) and cluster_node_exec enter that root (nsenter -r -w).
#
# Needs root, iproute2, util-linux (unshare, nsenter), openssh-server, /usr/bin/python3 (silent
# listener only), nft (firewall trap only); sudo (--users), debootstrap (--old-node, --arm-node),
# qemu-user-static (--arm-node).
#
# API (all functions return non-zero with a message on stderr when they fail)
#   cluster_up N [--nic-names "eth0 eth0 enp1s0"] [--mtu M] [--prefix P] [--subnet 10.X.Y] [--no-trap]
#                [--shared-home] [--users] [--old-node I] [--arm-node I] [--ipv6-only] [--slurm]
#       env equivalents: CD_NIC_NAMES CD_MTU CD_NS_PREFIX CD_AUTO_TRAP=0 CD_SHARED_HOME=1 CD_USERS=1
#       CD_OLD_NODE="I..." CD_ARM_NODE="I..." CD_IPV6_ONLY=1 CD_SLURM=1; CD_VERBOSE=1 times the phases
#       CD_TORCH_FACTS_SEED=FILE: every node's ~/.cache/clusterdoc starts with these torch facts
#       (tests/run-integration.sh sets it); CD_TORCH_COLD=1: not for this cluster (a cold import)
#       --slurm: a real Slurm on the cluster (cluster_slurm_up below), up when cluster_up returns
#       Installs EXIT (chained before an existing one), INT, TERM, HUP traps unless --no-trap.
#   cluster_down                         idempotent; safe from traps and under set -eu
#   cluster_attach RUN_DIR               load the variables of a cluster made by another process
#   cluster_head_exec CMD...             in the head netns, HOME=$CD_RUN/home, SSH_AUTH_SOCK unset
#   cluster_node_exec I CMD...           in node I's netns + UTS + mount namespaces (like its sshd)
#   cluster_ssh I CMD...                 cluster_head_exec ssh -F $CD_SSH_CONFIG nodeI CMD...
#   cluster_node_ns I | cluster_node_ip I | cluster_node_ip6 I | cluster_node_nic I | cluster_node_sshd_pid I
#   cluster_node_stop_sshd I / cluster_node_start_sshd I
#   cluster_node_silent I PORT / cluster_node_silent_stop I PORT
#   cluster_node_rekey I / cluster_forget_hostkey I / cluster_learn_hostkey I
#   cluster_node_password I PASSWORD [password|kbdint]  root logs in by password on node I
#   cluster_trap_ipv6_only_nic I [NAME] / cluster_trap_hostname_loopback I / cluster_trap_docker0 all|I...
#   cluster_trap_nic_name I NAME / cluster_trap_firewall_port I PORT|LO-HI / cluster_trap_mtu I MTU
#   cluster_trap_jumbo_blackhole I J...  MTU 9000 on those nodes, a bridge that passes 1500
#   cluster_trap_second_data_nic NAME I... a second data NIC on 192.168.251.0/24
#   cluster_trap_second_data_nic6 NAME I... a second data NIC on fd00:251::/64 only (IPv6)
#   cluster_node_env I LINE...            append to node I's own ~/.bashrc (the agent's login environment)
#   cluster_wait_torch_imports [S]       until no torch import an agent left running past its deadline is alive
#   cluster_seed_torch_cache             every node gets node1's cached torch facts (benchmarks)
#   cluster_torch_seed DIR I             node I's warm torch facts (cluster_up's) back into DIR, its ~/.cache
#   cluster_root_ensure NAME             build a cached root now (tests/cluster/roots.sh)
#   cluster_slurm_up / cluster_slurm_down  a real Slurm on this cluster (tests/cluster/slurm.sh,
#                  slurm_cluster_up): munged + slurmctld in the head's namespace, one slurmd per
#                  node in that node's namespaces, all nodes idle; dir $CD_RUN/slurm; exports
#                  SLURM_CONF (and CD_SLURM=1), so srun/salloc/sinfo run with cluster_head_exec.
#                  cluster_down stops it first.
#   cluster_slurm_node_stop I / cluster_slurm_node_start I   node I's slurmd (a node Slurm
#                  still counts idle whose steps fail at the launch) / back, until it is idle
# Variables (exported): CD_RUN CD_PREFIX CD_N CD_NODES CD_SUBNET CD_PLEN CD_HEAD_IP CD_NS_BR CD_NS_HEAD
#   CD_HOME CD_SSH_CONFIG CD_KNOWN_HOSTS CD_UP_SECONDS; applied traps are listed in $CD_RUN/traps.
#   While up, also CD_SHARED_HOME CD_USERS CD_SLURM (0|1) CD_OLD_NODE CD_ARM_NODE (node numbers),
#   SLURM_CONF while its Slurm is up,
#   CD_SHARED_DIR CD_SSH_CONFIG_ADMIN CD_SSH_CONFIG_PLAIN ("" when not asked for); cluster_down
#   gives the option variables back the values the caller had.

_CD_CLUSTER_SH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/cluster/roots.sh
source "$_CD_CLUSTER_SH_DIR/roots.sh"
# shellcheck source=tests/cluster/slurm.sh
source "$_CD_CLUSTER_SH_DIR/slurm.sh"

_CD_SSHD=${CD_SSHD:-/usr/sbin/sshd}
_CD_PY=/usr/bin/python3

_cd_log() { [[ ${CD_QUIET:-0} == 1 ]] || printf 'cluster: %s\n' "$*" >&2; }
_cd_err() { printf 'cluster: ERROR: %s\n' "$*" >&2; }
_cd_now() { date +%s.%N; }
_cd_phase() { [[ ${CD_VERBOSE:-0} == 1 ]] && printf 'cluster: %s %s\n' "$(date +%T.%N | cut -c1-12)" "$*" >&2; return 0; }

# ---------------------------------------------------------------- names and lookups

cluster_node_ns() { printf '%s\n' "${CD_PREFIX}n$1"; }                          # netns of node i
cluster_node_ip() { _cd_ip4 $(($1 + 10)); }                                   # IPv4 of node i
# _cd_ip4 K: the K-th host address of the cluster's network ($CD_SUBNET.K up to 254; a cluster
# of more than 240 nodes has a /22, CD_PLEN=22, and K = 255.. goes on at .1 of its next /24s,
# never .0 nor .255)
_cd_ip4() {
	local x=${CD_SUBNET%.*} y=${CD_SUBNET##*.}
	printf '%s.%s.%s\n' "$x" $((y + ($1 - 1) / 254)) $((($1 - 1) % 254 + 1))
}
cluster_node_nic() { cat "$CD_RUN/n$1/nic"; }                                   # primary NIC name of node i
cluster_node_sshd_pid() { cat "$CD_RUN/n$1/sshd.listener" 2>/dev/null; }        # PID of node i's sshd listener

_cd_check_node() { # i
	[[ -n ${CD_RUN:-} && -d ${CD_RUN:-/nonexistent} ]] || { _cd_err "no cluster is up (CD_RUN unset or gone)"; return 1; }
	[[ ${1:-} =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= CD_N)) || { _cd_err "no such node: '${1:-}' (1..$CD_N)"; return 1; }
}

# "start time" of a process (field 22 of /proc/PID/stat), to never signal a recycled PID
_cd_starttime() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	printf '%s\n' "${20}"
}

_cd_track() { # pid tag : remember a process we started
	local st
	st=$(_cd_starttime "$1") || st=0
	printf '%s %s %s\n' "$1" "$st" "$2" >>"$CD_RUN/pids"
}

_cd_alive() { # pid [starttime] : running (not a zombie) and, if given, the same process
	local s st
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[[ ${s:0:1} == Z ]] && return 1
	if [[ -n ${2:-} && ${2:-0} != 0 ]]; then
		st=$(_cd_starttime "$1") || return 1
		[[ $st == "$2" ]] || return 1
	fi
	return 0
}

# _cd_kill_pids "pid:start" ... : TERM, wait up to ~2 s, then KILL; reap our own children
_cd_kill_pids() {
	local e pid st left=() t
	for e in "$@"; do
		pid=${e%%:*} st=${e#*:}
		[[ $pid =~ ^[0-9]+$ ]] || continue
		if _cd_alive "$pid" "$st"; then kill -TERM "$pid" 2>/dev/null && left+=("$e"); fi
	done
	for ((t = 0; t < 40 && ${#left[@]} > 0; t++)); do
		local still=()
		for e in "${left[@]}"; do _cd_alive "${e%%:*}" "${e#*:}" && still+=("$e"); done
		left=("${still[@]+"${still[@]}"}")
		((${#left[@]} == 0)) && break
		sleep 0.05
	done
	for e in "${left[@]+"${left[@]}"}"; do
		_cd_alive "${e%%:*}" "${e#*:}" && kill -KILL "${e%%:*}" 2>/dev/null
	done
	for e in "$@"; do wait "${e%%:*}" 2>/dev/null; done
	return 0
}

_cd_kill_tag() { # tag : kill the tracked processes with that tag
	local pid st tag l=()
	[[ -f $CD_RUN/pids ]] || return 0
	while read -r pid st tag; do
		[[ $tag == "$1" ]] && l+=("$pid:$st")
	done <"$CD_RUN/pids"
	((${#l[@]})) && _cd_kill_pids "${l[@]}"
	return 0
}

_cd_our_ns() { # namespaces of this run (exact names only, so a short custom prefix never matches other runs)
	[[ -n ${CD_PREFIX:-} ]] || return 0
	ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${CD_PREFIX}(br|head|n[0-9]+|d[0-9]+)\$" || true
}

_cd_hosts_body() { # i (0 = head) : /etc/hosts content for that namespace
	local i=$1 j
	if ((${CD_IPV6_ONLY:-0})); then _cd_ipv6_only_hosts_body "$i"; return; fi
	echo "127.0.0.1	localhost"
	if [[ $i != 0 && -f $CD_RUN/n$i/trap_hostname_loopback ]]; then echo "127.0.1.1	node$i"; fi
	echo "::1	localhost ip6-localhost ip6-loopback"
	echo "$CD_SUBNET.2	head"
	local x=${CD_SUBNET%.*} y=${CD_SUBNET##*.} k
	for ((j = 1; j <= CD_N; j++)); do
		[[ $j == "$i" && -f $CD_RUN/n$j/trap_hostname_loopback ]] && continue
		k=$((j + 9)) # cluster_node_ip, without a subshell per line (N files of N lines)
		echo "$x.$((y + k / 254)).$((k % 254 + 1))	node$j"
	done
}

_cd_write_state() {
	{
		printf 'CD_RUN=%q\nCD_PREFIX=%q\nCD_N=%q\nCD_NODES=%q\nCD_SUBNET=%q\nCD_PLEN=%q\nCD_HEAD_IP=%q\n' \
			"$CD_RUN" "$CD_PREFIX" "$CD_N" "$CD_NODES" "$CD_SUBNET" "$CD_PLEN" "$CD_HEAD_IP"
		printf 'CD_NS_BR=%q\nCD_NS_HEAD=%q\nCD_HOME=%q\nCD_SSH_CONFIG=%q\nCD_KNOWN_HOSTS=%q\n' \
			"$CD_NS_BR" "$CD_NS_HEAD" "$CD_HOME" "$CD_SSH_CONFIG" "$CD_KNOWN_HOSTS"
		printf 'CD_SHARED_HOME=%q\nCD_USERS=%q\nCD_OLD_NODE=%q\nCD_ARM_NODE=%q\nCD_SHARED_DIR=%q\n' \
			"${CD_SHARED_HOME:-0}" "${CD_USERS:-0}" "${CD_OLD_NODE:-}" "${CD_ARM_NODE:-}" "${CD_SHARED_DIR:-}"
		printf 'CD_SSH_CONFIG_ADMIN=%q\nCD_SSH_CONFIG_PLAIN=%q\n' "${CD_SSH_CONFIG_ADMIN:-}" "${CD_SSH_CONFIG_PLAIN:-}"
		printf 'CD_IPV6_ONLY=%q\nCD_SUBNET6=%q\nexport CD_IPV6_ONLY CD_SUBNET6\n' "${CD_IPV6_ONLY:-0}" "${CD_SUBNET6:-}"
		if ((${CD_SLURM:-0})); then printf 'CD_SLURM=1\nSLURM_CONF=%q\nexport CD_SLURM SLURM_CONF\n' "$SLURM_CONF"; fi
		printf 'export CD_RUN CD_PREFIX CD_N CD_NODES CD_SUBNET CD_PLEN CD_HEAD_IP CD_NS_BR CD_NS_HEAD CD_HOME CD_SSH_CONFIG CD_KNOWN_HOSTS\n'
		printf 'export CD_SHARED_HOME CD_USERS CD_OLD_NODE CD_ARM_NODE CD_SHARED_DIR CD_SSH_CONFIG_ADMIN CD_SSH_CONFIG_PLAIN\n'
	} >"$CD_RUN/state.sh"
}

# cluster_attach RUN_DIR : load a cluster brought up by another process (e.g. "cluster.sh up")
cluster_attach() {
	[[ -f ${1:-}/state.sh ]] || { _cd_err "no cluster state in '${1:-}'"; return 1; }
	# shellcheck disable=SC1091
	source "$1/state.sh"
}

# ---------------------------------------------------------------- exec helpers

# cluster_head_exec CMD... : run in the head namespace, HOME=$CD_RUN/home, no ssh agent
cluster_head_exec() {
	ip netns exec "$CD_NS_HEAD" env -u SSH_AUTH_SOCK HOME="$CD_HOME" USER=root LOGNAME=root "$@"
}

# cluster_node_exec i CMD... : run "on" node i, seeing what its sshd sessions see (netns, hostname,
# /etc/hosts, /root/.cache); works while its sshd is stopped
# cluster_ssh_syns_start / cluster_ssh_syns / cluster_ssh_syns_stop: an nft counter, in every
# node's namespace, of the SYNs to port 22: each SSH handshake made to a node is one (a SYN, not
# conntrack's "new": a table that brings conntrack into a namespace takes the sessions already
# open there for new ones). cluster_ssh_syns prints the total since the start and, when not run
# in a subshell, leaves it in CD_SSH_SYNS and " node1:N node2:N ..." in CD_SSH_SYNS_EACH; a
# counter that cannot be read counts as 1 ("?").
cluster_ssh_syns_start() {
	local i
	for ((i = 1; i <= CD_N; i++)); do
		ip netns exec "$(cluster_node_ns "$i")" nft -f - <<EOF || return 1
add table inet cdsyn
add chain inet cdsyn input { type filter hook input priority -10; policy accept; }
add rule inet cdsyn input tcp dport 22 tcp flags & (syn | ack) == syn counter
EOF
	done
}
cluster_ssh_syns() {
	local i n total=0
	CD_SSH_SYNS_EACH=""
	for ((i = 1; i <= CD_N; i++)); do
		n=$(ip netns exec "$(cluster_node_ns "$i")" nft list table inet cdsyn 2>/dev/null |
			sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
		total=$((total + ${n:-1}))
		CD_SSH_SYNS_EACH+=" node$i:${n:-?}"
	done
	CD_SSH_SYNS=$total
	echo "$total"
}
cluster_ssh_syns_stop() {
	local i
	for ((i = 1; i <= CD_N; i++)); do
		ip netns exec "$(cluster_node_ns "$i")" nft delete table inet cdsyn 2>/dev/null
	done
	return 0
}

# cluster_seed_torch_cache: give every node node1's cached torch facts (~/.cache/clusterdoc,
# probes/facts_python.c), as if each had imported torch once: every node runs the same
# interpreter and torch of this one host, so the key is the same. For benchmarks at hundreds
# of nodes, whose cold imports would take minutes of the 2 CPUs; run `facts` on node1 first.
# Not with --shared-home (one cache directory for all). Returns 1 when node1 has no cache.
cluster_seed_torch_cache() {
	local i src="$CD_RUN/n1/cache/clusterdoc/python-facts-node1.json"
	[[ -f $src ]] || { _cd_err "node1 has no cached torch facts ($src)"; return 1; }
	for ((i = 2; i <= CD_N; i++)); do
		mkdir -p "$CD_RUN/n$i/cache/clusterdoc"
		cp "$src" "$CD_RUN/n$i/cache/clusterdoc/python-facts-node$i.json" || return 1
	done
}

# cluster_wait_torch_imports [TIMEOUT_S]: wait until no torch import that an agent left running
# past a request's deadline (probes/facts_torch_bg.h: a process named cd-torch-import) is alive
# any more, so that a benchmark times warm facts, not the nodes' cold imports. Prints the seconds
# waited; returns 1 when some are still running at TIMEOUT_S (default 600).
cluster_wait_torch_imports() {
	local limit=${1:-600} t0=$SECONDS
	while pgrep -x cd-torch-import >/dev/null; do
		((SECONDS - t0 < limit)) || { echo "$((SECONDS - t0))"; return 1; }
		sleep 1
	done
	echo "$((SECONDS - t0))"
}

cluster_node_exec() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 h
	shift
	h=$(_cd_enter_opts "$i")
	# shellcheck disable=SC2086
	nsenter $h -- env -u SSH_AUTH_SOCK HOME=/root "$@"
}

# cluster_ssh i CMD... : ssh from the head to node i (BatchMode, the run's config)
cluster_ssh() {
	_cd_check_node "${1:-}" || return 1
	local i=$1
	shift
	cluster_head_exec ssh -F "$CD_SSH_CONFIG" "node$i" "$@"
}

# ---------------------------------------------------------------- sshd

_cd_write_sshd_config() { # i [PermitRootLogin PasswordAuthentication KbdInteractiveAuthentication UsePAM AuthorizedKeysFile]
	local d=$CD_RUN/n$1
	cat >"$d/sshd_config" <<EOF
# clusterdoc test node $1 (run $CD_RUN) - never the system sshd
Port 22
HostKey $d/ssh_host_ed25519_key
PidFile $d/sshd.pid
AuthorizedKeysFile ${6:-$CD_RUN/authorized_keys .ssh/authorized_keys}
PermitRootLogin ${2:-prohibit-password}
PubkeyAuthentication yes
PasswordAuthentication ${3:-no}
KbdInteractiveAuthentication ${4:-no}
UsePAM ${5:-no}
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AcceptEnv LANG LC_*
MaxStartups 1000
MaxSessions 64
LogLevel ERROR
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
}

_cd_start_sshd() { # i : start node i's sshd inside its holder's namespaces (does not wait)
	local i=$1 d=$CD_RUN/n$1 h pid sshd=$_CD_SSHD
	h=$(_cd_enter_opts "$i") || return 1
	[[ -s $d/rootdir ]] && sshd=/usr/sbin/sshd # the root's own
	rm -f "$d/sshd.pid"
	# shellcheck disable=SC2086
	nsenter $h -- "$sshd" -D -e -f "$d/sshd_config" </dev/null >>"$d/sshd.log" 2>&1 &
	pid=$!
	_cd_track "$pid" "sshd$i"
	echo "$pid" >"$d/sshd.listener"
}

_cd_wait_sshd_pidfile() { # i [tries] : until sshd has written its PidFile (it does after listen())
	local i=$1 d=$CD_RUN/n$1 t pid
	pid=$(cat "$d/sshd.listener")
	for ((t = 0; t < ${2:-100}; t++)); do
		[[ -s $d/sshd.pid && $(cat "$d/sshd.pid" 2>/dev/null) == "$pid" ]] && return 0
		_cd_alive "$pid" || return 1
		sleep 0.05
	done
	return 1
}

_cd_ssh_probe() { # i : one BatchMode ssh from the head
	cluster_head_exec ssh -F "$CD_SSH_CONFIG" -o ConnectTimeout="$(_cd_node_is_arm "$1" && echo 10 || echo 2)" -o KexAlgorithms=curve25519-sha256 \
		"node$1" true </dev/null >/dev/null 2>>"$CD_RUN/n$1/probe.err"
}

_cd_wait_ssh() { # i : sshd up and accepting our key (bounded)
	local i=$1 t tries=${CD_SSH_TRIES:-10} pidwait=100
	# an arm64 node's sshd runs under qemu: seconds to start, and each login re-executes it
	if _cd_node_is_arm "$i"; then tries=$((tries * 3)) pidwait=1200; fi
	_cd_wait_sshd_pidfile "$i" "$pidwait" || return 1
	for ((t = 0; t < tries; t++)); do
		_cd_ssh_probe "$i" && return 0
		sleep 0.2
	done
	return 1
}

_cd_sshd_failed_msg() { # i
	local d=$CD_RUN/n$1
	local pid why
	pid=$(cat "$d/sshd.listener" 2>/dev/null)
	if [[ -n $pid ]] && _cd_alive "$pid"; then why="sshd $pid runs, but ssh from the head failed"; else why="sshd exited"; fi
	_cd_err "node$1: sshd not accepting connections ($why; ns $(cluster_node_ns "$1"), $_CD_SSHD -f $d/sshd_config)"
	[[ -s $d/sshd.log ]] && sed 's/^/    sshd: /' "$d/sshd.log" | tail -5 >&2
	[[ -s $d/probe.err ]] && sed 's/^/    ssh: /' "$d/probe.err" | tail -3 >&2
	return 0
}

# ---------------------------------------------------------------- up / down

# cluster_up N [--nic-names "eth0 eth0 enp1s0 ..."] [--mtu M] [--prefix P] [--subnet 10.X.Y] [--no-trap]
# (or the same through CD_NIC_NAMES, CD_MTU, CD_NS_PREFIX, CD_AUTO_TRAP=0)
cluster_up() {
	local - # restore the caller's shell options on return
	set +e
	local n=${1:-} t0 i nic mtu=${CD_MTU:-1500} prefix=${CD_NS_PREFIX:-} subnet=""
	local nics=${CD_NIC_NAMES:-} autotrap=${CD_AUTO_TRAP:-1}
	local shared=${CD_SHARED_HOME:-0} users=${CD_USERS:-0} old=${CD_OLD_NODE:-} arm=${CD_ARM_NODE:-}
	local ipv6only=${CD_IPV6_ONLY:-0} slurm=${CD_SLURM:-0}
	shift || true
	while (($#)); do
		case $1 in
		--shared-home) shared=1; shift ;;
		--users) users=1; shift ;;
		--old-node) old+=" $2"; shift 2 ;;
		--arm-node) arm+=" $2"; shift 2 ;;
		--nic-names) nics=$2; shift 2 ;;
		--mtu) mtu=$2; shift 2 ;;
		--prefix) prefix=$2; shift 2 ;;
		--subnet) subnet=$2; shift 2 ;;
		--no-trap) autotrap=0; shift ;;
		--ipv6-only) ipv6only=1; shift ;;
		--slurm) slurm=1; shift ;;
		*) _cd_err "cluster_up: unknown option '$1'"; return 2 ;;
		esac
	done
	t0=$(_cd_now)
	[[ $EUID == 0 ]] || { _cd_err "cluster_up needs root"; return 1; }
	[[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 1000)) || { _cd_err "cluster_up N: N must be 1..1000 (got '$n')"; return 2; }
	[[ -z ${CD_RUN:-} || ! -d ${CD_RUN:-/nonexistent} ]] || { _cd_err "a cluster is already up in this shell ($CD_RUN); cluster_down first"; return 1; }
	[[ -x $_CD_SSHD ]] || { _cd_err "$_CD_SSHD not found (apt install openssh-server)"; return 1; }
	[[ $mtu =~ ^[0-9]+$ ]] || { _cd_err "bad MTU '$mtu'"; return 2; }
	if [[ -z $prefix ]]; then
		prefix=cdt$(LC_ALL=C tr -dc 'a-z' </dev/urandom 2>/dev/null | head -c 5)
	fi
	[[ $prefix =~ ^[a-z][a-z0-9]{0,10}$ ]] || { _cd_err "prefix '$prefix': want [a-z][a-z0-9]{0,10} (interface names <= 15 chars)"; return 2; }
	if [[ -n $(ip netns list | awk '{print $1}' | grep -E "^${prefix}(br|head|n[0-9]+|d[0-9]+)\$") ]]; then
		_cd_err "namespaces with prefix '$prefix' already exist"
		return 1
	fi
	# per-run /24 inside 10/8, derived from the prefix (only ever configured inside our namespaces)
	if [[ -z $subnet ]]; then
		local h
		h=$(printf '%s' "$prefix" | cksum | cut -d' ' -f1)
		subnet="10.$((100 + h % 150)).$(((h / 150) % 256))"
	fi
	[[ $subnet =~ ^10\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || { _cd_err "subnet '$subnet': want 10.X.Y"; return 2; }
	# up to 240 nodes one /24 (node i = .(i+10)); more take a /22 (10.X.Y.0/22, Y a multiple of
	# 4: node i is its (i+10)-th host address (_cd_ip4), 10.X.(Y+3).248 at 1000 nodes)
	local plen=24
	if ((n > 240)); then
		plen=22
		subnet=${subnet%.*}.$((${subnet##*.} & ~3))
	fi
	[[ $shared == [01] && $users == [01] ]] || { _cd_err "CD_SHARED_HOME and CD_USERS are 0 or 1"; return 2; }
	[[ $ipv6only == [01] ]] || { _cd_err "CD_IPV6_ONLY is 0 or 1"; return 2; }
	[[ $slurm == [01] ]] || { _cd_err "CD_SLURM is 0 or 1"; return 2; }
	if ((slurm)) && [[ -n $old$arm || $ipv6only == 1 ]]; then
		_cd_err "--slurm: not with --old-node, --arm-node (their roots have no slurmd) or --ipv6-only"
		return 2
	fi
	local k rooted=" "
	for k in $old $arm; do
		[[ $k =~ ^[0-9]+$ ]] && ((k >= 1 && k <= n)) || { _cd_err "--old-node/--arm-node: no node '$k' in 1..$n"; return 2; }
		[[ $rooted != *" $k "* ]] || { _cd_err "node $k is named twice by --old-node/--arm-node"; return 2; }
		rooted+="$k "
	done
	local nicarr=()
	read -r -a nicarr <<<"$nics"
	for nic in "${nicarr[@]+"${nicarr[@]}"}"; do
		[[ $nic =~ ^[A-Za-z][A-Za-z0-9._-]{0,14}$ && $nic != lo ]] || { _cd_err "bad NIC name '$nic'"; return 2; }
	done

	export CD_PREFIX=$prefix CD_N=$n CD_SUBNET=$subnet CD_PLEN=$plen CD_HEAD_IP=$subnet.2
	export CD_NS_BR=${prefix}br CD_NS_HEAD=${prefix}head
	CD_RUN=$(mktemp -d /tmp/cdcluster.XXXXXX) || { _cd_err "mktemp failed"; return 1; }
	export CD_RUN CD_HOME=$CD_RUN/home CD_SSH_CONFIG=$CD_RUN/home/.ssh/config CD_KNOWN_HOSTS=$CD_RUN/known_hosts
	CD_NODES=""
	for ((i = 1; i <= n; i++)); do CD_NODES+="${CD_NODES:+ }node$i"; done
	export CD_NODES
	# what the caller had in the option variables, put back by cluster_down (they describe this
	# cluster while it is up; a later cluster_up in the same shell must not inherit them)
	_CD_SAVED_OPTS=$(declare -p CD_SHARED_HOME CD_USERS CD_OLD_NODE CD_ARM_NODE CD_IPV6_ONLY CD_SLURM 2>/dev/null)
	export CD_SHARED_HOME=$shared CD_USERS=$users CD_OLD_NODE=${old# } CD_ARM_NODE=${arm# } CD_SLURM=0
	_cd_ipv6_only_setup "$ipv6only"
	CD_SHARED_DIR="" CD_SSH_CONFIG_ADMIN="" CD_SSH_CONFIG_PLAIN=""
	((shared)) && CD_SHARED_DIR=$CD_RUN/shared
	((users)) && CD_SSH_CONFIG_ADMIN=$CD_HOME/.ssh/config.cdadmin CD_SSH_CONFIG_PLAIN=$CD_HOME/.ssh/config.cdplain
	export CD_SHARED_DIR CD_SSH_CONFIG_ADMIN CD_SSH_CONFIG_PLAIN
	: >"$CD_RUN/pids"
	_cd_write_state
	if [[ $autotrap == 1 ]]; then _cd_install_traps; fi
	_cd_log "up: $n nodes, prefix $prefix, subnet $subnet.0/$plen, run $CD_RUN$( ((shared)) && echo ", shared home")$( ((users)) && echo ", users cdadmin cdplain")${CD_OLD_NODE:+, Debian 11 node(s) $CD_OLD_NODE}${CD_ARM_NODE:+, arm64 node(s) $CD_ARM_NODE}"

	if ! _cd_up_inner "$n" "$mtu" "${nicarr[@]+"${nicarr[@]}"}" || { ((slurm)) && ! cluster_slurm_up; }; then
		_cd_err "cluster_up failed; tearing down"
		cluster_down
		return 1
	fi
	CD_UP_SECONDS=$(awk -v a="$t0" -v b="$(_cd_now)" 'BEGIN{printf "%.2f", b-a}')
	export CD_UP_SECONDS
	_cd_log "up: $n nodes ready in ${CD_UP_SECONDS}s"
	return 0
}

_cd_up_inner() { # n mtu nic-names...
	local n=$1 mtu=$2 i j nic d p
	shift 2
	local nicarr=("$@")
	local R=$CD_RUN P=$CD_PREFIX

	_cd_neigh_room "$n"

	# --- files: keys, configs, hosts
	mkdir -p "$R/home/.ssh" "$R/home/.cache" || return 1
	chmod 700 "$R/home" "$R/home/.ssh"
	: >"$R/empty"
	local kg=()
	ssh-keygen -q -t ed25519 -N '' -C "clusterdoc-test-client@$P" -f "$R/home/.ssh/id_ed25519" </dev/null &
	kg+=($!)
	for ((i = 1; i <= n; i++)); do
		d=$R/n$i
		mkdir -p "$d/cache" "$d/home/.cache"
		chmod 700 "$d/home"
		nic=${nicarr[i - 1]:-eth0}
		echo "$nic" >"$d/nic"
		_cd_write_sshd_config "$i"
		ssh-keygen -q -t ed25519 -N '' -C "node$i@$P" -f "$d/ssh_host_ed25519_key" </dev/null &
		kg+=($!)
	done
	wait "${kg[@]}" # only our own jobs: the caller may have other background jobs
	[[ -s $R/home/.ssh/id_ed25519.pub ]] || { _cd_err "ssh-keygen failed"; return 1; }
	cp "$R/home/.ssh/id_ed25519.pub" "$R/authorized_keys"
	: >"$R/known_hosts"
	for ((i = 1; i <= n; i++)); do
		[[ -s $R/n$i/ssh_host_ed25519_key.pub ]] || { _cd_err "ssh-keygen failed for node$i"; return 1; }
		_cd_known_lines "$i" >>"$R/known_hosts"
	done
	cp "$R/known_hosts" "$R/home/.ssh/known_hosts"
	cat >"$R/home/.ssh/config" <<EOF
# clusterdoc test cluster $P (paths are absolute: OpenSSH expands "~" from the passwd entry, not \$HOME)
Host *
  User root
  IdentityFile $R/home/.ssh/id_ed25519
  IdentitiesOnly yes
  BatchMode yes
  UserKnownHostsFile $R/home/.ssh/known_hosts
  GlobalKnownHostsFile /dev/null
EOF
	if ((${CD_IPV6_ONLY:-0})); then _cd_ipv6_only_ssh_config "$n" >>"$R/home/.ssh/config"; fi
	chmod 600 "$R/home/.ssh/config" "$R/home/.ssh/known_hosts"

	# --- whole roots (Debian 11, arm64), built once into the cache; homes; test users
	_cd_phase "roots"
	_cd_roots_prepare || return 1
	_cd_homes_prepare || return 1
	if ((CD_USERS)); then _cd_users_prepare || return 1; fi

	mkdir -p /etc/netns /run/sshd /root/.cache || return 1
	for ((i = 0; i <= n; i++)); do
		if ((i == 0)); then p=$CD_NS_HEAD; else p=${P}n$i; fi
		mkdir -p "/etc/netns/$p" || return 1
		_cd_hosts_body "$i" >"/etc/netns/$p/hosts"
		((i == 0)) && continue
		_cd_node_etc "$i" || return 1
	done
	if [[ ${CD_HEAD_PASSWD:-1} == 1 ]]; then
		awk -F: -v OFS=: -v h="$R/home" '$3 == 0 { $6 = h } { print }' /etc/passwd >"/etc/netns/$CD_NS_HEAD/passwd"
		chmod 644 "/etc/netns/$CD_NS_HEAD/passwd"
	fi

	_cd_phase "namespaces"
	# --- namespaces and links (no default route anywhere; nothing in the root namespace)
	{
		echo "netns add $CD_NS_BR"
		echo "netns add $CD_NS_HEAD"
		for ((i = 1; i <= n; i++)); do echo "netns add ${P}n$i"; done
	} | ip -b - || { _cd_err "ip netns add failed"; return 1; }
	printf '%s\n' "link set lo up" "link add ${P}br0 type bridge stp_state 0 forward_delay 0" \
		"link set ${P}br0 mtu $mtu up" | ip -n "$CD_NS_BR" -b - || return 1
	printf '%s\n' "link set lo up" \
		"link add eth0 mtu $mtu type veth peer name ${P}bh netns $CD_NS_BR" \
		"addr add $CD_HEAD_IP/$CD_PLEN dev eth0" "link set eth0 up" | ip -n "$CD_NS_HEAD" -b - || return 1
	for ((i = 1; i <= n; i++)); do
		nic=$(cat "$R/n$i/nic")
		# link-local IPv6 addresses usable at once (no DAD wait) on interfaces created from now on
		ip netns exec "${P}n$i" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad; echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad' || return 1
		printf '%s\n' "link set lo up" \
			"link add $nic mtu $mtu type veth peer name ${P}b$i netns $CD_NS_BR" \
			"addr add $(cluster_node_ip "$i")/$CD_PLEN dev $nic" "link set $nic up" | ip -n "${P}n$i" -b - || return 1
	done
	{
		echo "link set ${P}bh master ${P}br0 up"
		for ((i = 1; i <= n; i++)); do echo "link set ${P}b$i master ${P}br0 up"; done
	} | ip -n "$CD_NS_BR" -b - || return 1
	if ((${CD_IPV6_ONLY:-0})); then _cd_ipv6_only_addrs "$n" || return 1; fi

	_cd_phase "holders"
	# --- per-node holder: own UTS + mount namespace, hostname, bind mounts; sshd joins it.
	# A node with its own root ($4 = overlay mount point, lower layer $5 from the cache) gets the
	# overlay, /proc, /sys (of its netns), /dev, the host's /tmp (so $CD_RUN has the same path
	# inside) and what `ip netns exec` would bind over /etc, then chroots into it: nsenter -r -w
	# takes the holder's root, so sshd and cluster_node_exec run the root's own programs.
	local holder_sh='host=$1 ready=$2 ns=$3 root=$4 lower=$5
shift 5
hostname "$host" || exit 1
if [ "$root" != - ]; then
	# upper and work dirs on a tmpfs: overlayfs refuses an upper dir on overlayfs (/tmp in a
	# container); $root.upper holds what cluster_up prepared (etc targets, run/sshd)
	mount -t tmpfs -o mode=755 tmpfs "$root.rw" || exit 1
	mkdir "$root.rw/upper" "$root.rw/work" && cp -a "$root.upper/." "$root.rw/upper/" || exit 1
	mount -t overlay overlay -o "lowerdir=$lower,upperdir=$root.rw/upper,workdir=$root.rw/work" "$root" || exit 1
	mount -t proc proc "$root/proc" || exit 1
	mount -t sysfs sysfs "$root/sys" || exit 1
	mount --rbind /dev "$root/dev" || exit 1
	mount --bind /tmp "$root/tmp" || exit 1
	for f in /etc/netns/"$ns"/*; do
		[ -e "$f" ] || continue
		mount --bind "$f" "$root/etc/${f##*/}" || exit 1
	done
else
	root=""
fi
while [ $# -ge 2 ]; do
	mount --bind "$1" "$root$2" || exit 1
	shift 2
done
if [ -n "$root" ]; then
	exec chroot "$root" /bin/sh -c ": >\"\$1\"; exec sleep infinity" holder "$ready"
fi
: >"$ready"
exec sleep infinity'
	local binds lower rootmnt
	for ((i = 1; i <= n; i++)); do
		d=$R/n$i
		read -r -a binds <<<"$(_cd_node_binds "$i")"
		rootmnt=- lower=-
		if [[ -s $d/rootdir ]]; then rootmnt=$d/root lower=$(cat "$d/rootdir"); fi
		ip netns exec "${P}n$i" unshare --uts --mount --propagation private \
			sh -c "$holder_sh" holder "node$i" "$d/ready" "${P}n$i" "$rootmnt" "$lower" "${binds[@]}" \
			</dev/null >"$d/holder.log" 2>&1 &
		echo "$!" >"$d/holder.pid"
		_cd_track "$!" "holder$i"
	done
	for ((i = 1; i <= n; i++)); do
		for ((j = 0; j < 1000; j++)); do
			[[ -e $R/n$i/ready ]] && break
			_cd_alive "$(cat "$R/n$i/holder.pid")" || break
			sleep 0.02
		done
		[[ -e $R/n$i/ready ]] || { _cd_err "node$i: namespace holder failed: $(cat "$R/n$i/holder.log")"; return 1; }
	done

	_cd_phase "sshd"
	# --- sshd on every node, in parallel, then wait until each accepts our key
	for ((i = 1; i <= n; i++)); do _cd_start_sshd "$i" || return 1; done
	local probes=()
	for ((i = 1; i <= n; i++)); do
		(_cd_wait_ssh "$i" || { : >"$R/n$i/notready"; exit 1; }) 2>/dev/null &
		probes+=($!)
		_cd_track "$!" "probe$i" # so an interrupted cluster_up leaves no prober behind
	done
	wait "${probes[@]}"
	local bad=0
	for ((i = 1; i <= n; i++)); do
		if [[ -e $R/n$i/notready ]]; then
			_cd_sshd_failed_msg "$i"
			bad=1
		fi
	done
	((bad == 0)) || return 1
	_cd_phase "all sshd accept our key"

	_cd_phase "routes-check"
	# --- paranoia: no default route in any namespace we made
	for p in $(_cd_our_ns); do
		if [[ -n $(ip -n "$p" route show default; ip -n "$p" -6 route show default) ]]; then
			_cd_err "default route found in $p"
			return 1
		fi
	done
	return 0
}

# ---------------------------------------------------------------- IPv6-only clusters

# --ipv6-only (CD_IPV6_ONLY=1): the head and every node have only IPv6 addresses on the bridge,
# a ULA $CD_SUBNET6::/64 derived from the run's subnet 10.X.Y (fdcd:X:Y::/64): the head
# $CD_SUBNET6::2, node i $CD_SUBNET6::(i+10) (cluster_node_ip6), both with no DAD wait, plus
# their link-local addresses. No IPv4 address but 127.0.0.1 on lo anywhere. /etc/hosts maps
# the names to the IPv6 addresses and the ssh config gives each node its IPv6 HostName, so the
# head reaches every sshd over IPv6; known_hosts holds the IPv6 addresses too. CD_HEAD_IP is
# the head's IPv6 address then. cluster_node_ip still prints the IPv4 address the node would
# have had (nothing has it): use cluster_node_ip6.

cluster_node_ip6() { printf '%s::%x\n' "$CD_SUBNET6" $(($1 + 10)); } # IPv6 of node i (--ipv6-only)

_cd_ipv6_only_setup() { # 0|1 : the variables of the mode (after CD_SUBNET is known)
	export CD_IPV6_ONLY=$1 CD_SUBNET6=""
	((CD_IPV6_ONLY)) || return 0
	local x y
	IFS=. read -r _ x y <<<"$CD_SUBNET"
	CD_SUBNET6=$(printf 'fdcd:%x:%x' "$x" "$y")
	CD_HEAD_IP=$CD_SUBNET6::2
	export CD_SUBNET6 CD_HEAD_IP
}

_cd_ipv6_only_hosts_body() { # i (0 = head) : /etc/hosts with the IPv6 addresses only
	local i=$1 j
	echo "127.0.0.1	localhost"
	echo "::1	localhost ip6-localhost ip6-loopback"
	if [[ $i != 0 && -f $CD_RUN/n$i/trap_hostname_loopback ]]; then echo "127.0.1.1	node$i"; fi
	echo "$CD_SUBNET6::2	head"
	for ((j = 1; j <= CD_N; j++)); do
		[[ $j == "$i" && -f $CD_RUN/n$j/trap_hostname_loopback ]] && continue
		echo "$(cluster_node_ip6 "$j")	node$j"
	done
}

_cd_ipv6_only_ssh_config() { # n : one Host block per node naming its IPv6 address
	local i
	for ((i = 1; i <= $1; i++)); do printf 'Host node%s\n  HostName %s\n' "$i" "$(cluster_node_ip6 "$i")"; done
}

_cd_ipv6_only_addrs() { # n : IPv4 off the bridge links, the ULA addresses on
	local n=$1 i nic
	ip netns exec "$CD_NS_HEAD" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad' || return 1
	printf '%s\n' "addr flush dev eth0 scope global" "addr add $CD_SUBNET6::2/64 dev eth0 nodad" |
		ip -n "$CD_NS_HEAD" -b - || return 1
	for ((i = 1; i <= n; i++)); do
		nic=$(cat "$CD_RUN/n$i/nic")
		printf '%s\n' "addr flush dev $nic scope global" "addr add $(cluster_node_ip6 "$i")/64 dev $nic nodad" |
			ip -n "${CD_PREFIX}n$i" -b - || return 1
	done
}

# ---------------------------------------------------------------- roots, homes, users

_cd_node_rootdir() { cat "$CD_RUN/n$1/rootdir" 2>/dev/null; } # node i's cached root, or nothing
_cd_node_is_arm() { [[ " ${CD_ARM_NODE:-} " == *" $1 "* ]]; }

# _cd_enter_opts i : nsenter options that put a command where node i's sshd runs (its netns,
# UTS and mount namespaces, and for a node with its own root, the holder's root and cwd)
_cd_enter_opts() {
	local o
	o="-t $(cat "$CD_RUN/n$1/holder.pid") -n -u -m" || return 1
	[[ -s $CD_RUN/n$1/rootdir ]] && o+=" -r -w"
	printf '%s\n' "$o"
}

_cd_roots_prepare() { # the nodes' roots from the cache (built on first use), binfmt for arm64
	local i name dir reg
	for i in ${CD_OLD_NODE:-}; do echo bullseye-amd64 >"$CD_RUN/n$i/rootname"; done
	for i in ${CD_ARM_NODE:-}; do echo bookworm-arm64 >"$CD_RUN/n$i/rootname"; done
	if [[ -n ${CD_ARM_NODE:-} ]]; then
		# C (credentials of the binary, not of qemu) only where the users need a setuid sudo
		if ((CD_USERS)); then reg=$(cluster_root_binfmt "$CD_PREFIX" C); else reg=$(cluster_root_binfmt "$CD_PREFIX"); fi || return 1
		[[ -z $reg ]] || echo "$reg" >>"$CD_RUN/binfmt"
	fi
	for i in ${CD_OLD_NODE:-} ${CD_ARM_NODE:-}; do
		name=$(cat "$CD_RUN/n$i/rootname")
		dir=$(cluster_root_ensure "$name") || return 1
		echo "$dir" >"$CD_RUN/n$i/rootdir"
		mkdir -p "$CD_RUN/n$i/root" "$CD_RUN/n$i/root.upper/run/sshd" "$CD_RUN/n$i/root.rw" || return 1
	done
}

_cd_homes_prepare() { # root's home(s), and the directories over /home when there are users
	local i d
	for ((i = 1; i <= CD_N; i++)); do
		d=$CD_RUN/n$i
		: >"$d/bashrc" && : >"$d/home/.bashrc" || return 1
		if ((CD_USERS && !CD_SHARED_HOME)); then mkdir -p "$d/users" && chmod 755 "$d/users" || return 1; fi
		if ((CD_SHARED_HOME)); then _cd_torch_seed "$CD_SHARED_DIR/root/.cache" "$i"; else _cd_torch_seed "$d/cache" "$i"; fi || return 1
	done
	if ((CD_SHARED_HOME)); then
		mkdir -p "$CD_SHARED_DIR/root/.cache" "$CD_SHARED_DIR/home" || return 1
		: >"$CD_SHARED_DIR/root/.bashrc"
		chmod 700 "$CD_SHARED_DIR/root" && chmod 755 "$CD_SHARED_DIR" "$CD_SHARED_DIR/home"
	fi
}

# _cd_torch_seed CACHE_DIR I: node I's root starts with warm torch facts: $CD_TORCH_FACTS_SEED
# (tests/run-integration.sh makes it once per test run) as ~/.cache/clusterdoc/python-facts-nodeI.json,
# unless CD_TORCH_COLD=1 (a test of the cold import) or there is no seed.
_cd_torch_seed() {
	[[ -n ${CD_TORCH_FACTS_SEED:-} && -f $CD_TORCH_FACTS_SEED && ${CD_TORCH_COLD:-0} != 1 ]] || return 0
	mkdir -p -m 700 "$1" "$1/clusterdoc" &&
		install -m 600 "$CD_TORCH_FACTS_SEED" "$1/clusterdoc/python-facts-node$2.json"
}

# cluster_torch_seed CACHE_DIR I: put node I's warm torch facts back in CACHE_DIR (its
# ~/.cache) after a test emptied it, as cluster_up did
cluster_torch_seed() { _cd_torch_seed "$@"; }

# _cd_node_binds i : "SOURCE TARGET" pairs the holder binds (TARGET inside the node)
_cd_node_binds() {
	local d=$CD_RUN/n$1
	if ((CD_SHARED_HOME)); then
		printf '%s %s ' "$CD_SHARED_DIR/root" /root
		((CD_USERS)) && printf '%s %s ' "$CD_SHARED_DIR/home" /home
	else
		printf '%s %s %s %s %s %s ' "$d/home" /root "$d/cache" /root/.cache "$d/bashrc" /root/.bashrc
		((CD_USERS)) && printf '%s %s ' "$d/users" /home
	fi
	echo
}

_cd_uid_taken() { # uid : used as a uid or gid on the host or in a root the nodes use
	local f
	for f in /etc/passwd /etc/group; do
		awk -F: -v u="$1" '$3 == u { found = 1 } END { exit !found }' "$f" && return 0
	done
	for f in "$CD_RUN"/n*/rootdir; do
		[[ -s $f ]] || continue
		awk -F: -v u="$1" '$3 == u { found = 1 } END { exit !found }' "$(cat "$f")/etc/passwd" "$(cat "$f")/etc/group" && return 0
	done
	return 1
}

# the default of tests/cluster/sudoers.cdadmin while that file does not exist
_CD_SUDOERS_FALLBACK='# clusterdoc test cluster: cdadmin may run these as root without a password
cdadmin ALL=(root) NOPASSWD: /usr/bin/true, /bin/true'

_cd_users_prepare() { # cdadmin (sudo) and cdplain (none): passwd lines, homes, ssh configs
	local R=$CD_RUN uid=2901 u id base i frag=${CD_SUDOERS_ADMIN:-$_CD_CLUSTER_SH_DIR/sudoers.cdadmin}
	while _cd_uid_taken "$uid" || _cd_uid_taken $((uid + 1)); do uid=$((uid + 2)); done
	mkdir -p "$R/users" || return 1
	printf 'cdadmin:x:%d:%d:clusterdoc test admin:/home/cdadmin:/bin/bash\ncdplain:x:%d:%d:clusterdoc test user:/home/cdplain:/bin/bash\n' \
		"$uid" "$uid" $((uid + 1)) $((uid + 1)) >"$R/users/passwd"
	printf 'cdadmin:x:%d:\ncdplain:x:%d:\n' "$uid" $((uid + 1)) >"$R/users/group"
	# "*": no password, but not locked ("!" would make sshd refuse the key too)
	printf 'cdadmin:*:19000:0:99999:7:::\ncdplain:*:19000:0:99999:7:::\n' >"$R/users/shadow"
	if [[ -f $frag ]]; then
		cp "$frag" "$R/users/sudoers" || return 1
	else
		_cd_log "no $frag: cdadmin gets the built-in sudoers fragment (NOPASSWD: true)"
		printf '%s\n' "$_CD_SUDOERS_FALLBACK" >"$R/users/sudoers"
	fi
	if command -v visudo >/dev/null && ! visudo -cqf "$R/users/sudoers" >/dev/null; then
		_cd_err "sudoers fragment $frag does not parse (visudo -cf)"
		return 1
	fi
	local bases=()
	if ((CD_SHARED_HOME)); then bases=("$CD_SHARED_DIR/home"); else for ((i = 1; i <= CD_N; i++)); do bases+=("$R/n$i/users"); done; fi
	for base in "${bases[@]}"; do
		id=$uid
		for u in cdadmin cdplain; do
			mkdir -p "$base/$u/.ssh" && cp "$R/authorized_keys" "$base/$u/.ssh/authorized_keys" &&
				: >"$base/$u/.bashrc" && chown -R "$id:$id" "$base/$u" &&
				chmod 700 "$base/$u" "$base/$u/.ssh" && chmod 600 "$base/$u/.ssh/authorized_keys" || return 1
			id=$((id + 1))
		done
	done
	for u in cdadmin cdplain; do
		sed 's/^  User root$/  User '$u'/' "$CD_SSH_CONFIG" >"$CD_HOME/.ssh/config.$u" && chmod 600 "$CD_HOME/.ssh/config.$u" || return 1
	done
}

# _cd_sudo_has_regex ROOT: the sudo of that root reads regular expressions in sudoers (1.9.10+)
_cd_sudo_has_regex() {
	local v
	# the root's package database: no need to run its (maybe foreign-architecture) sudo
	v=$(awk '/^Package: /{p=$2} p=="sudo" && /^Version: /{print $2; exit}' "$1/var/lib/dpkg/status" 2>/dev/null)
	v=${v%%p*}
	[[ -n $v && $(printf '%s\n1.9.10\n' "$v" | sort -V | head -1) == 1.9.10 ]]
}

# _cd_node_etc i : node i's files that `ip netns exec` (or, for a node with its own root, the
# holder) binds over /etc: shadow (root's password: cluster_node_password), sysctl.d, and with
# --users passwd, group and sudoers.d. Made from the node's own root's /etc when it has one.
_cd_node_etc() {
	local i=$1 e=/etc/netns/${CD_PREFIX}n$1 base=/etc rd f
	rd=$(_cd_node_rootdir "$i")
	[[ -z $rd ]] || base=$rd/etc
	install -m 640 -g shadow "$base/shadow" "$e/shadow" 2>/dev/null ||
		install -m 600 "$base/shadow" "$e/shadow" || return 1
	mkdir -p "$e/sysctl.d" || return 1
	if ((CD_USERS)); then
		cat "$base/passwd" "$CD_RUN/users/passwd" >"$e/passwd" && chmod 644 "$e/passwd" || return 1
		cat "$base/group" "$CD_RUN/users/group" >"$e/group" && chmod 644 "$e/group" || return 1
		cat "$CD_RUN/users/shadow" >>"$e/shadow" || return 1
		# sudo reads /etc/sudoers, which includes /etc/sudoers.d (Debian's default on the host
		# and in the roots); the fragment goes in verbatim
		mkdir -p "$e/sudoers.d" && chmod 750 "$e/sudoers.d" || return 1
		install -m 440 -o root -g root "$CD_RUN/users/sudoers" "$e/sudoers.d/clusterdoc-cdadmin" || return 1
		# a root whose sudo predates regular expressions in sudoers (1.9.10) refuses the whole
		# file for them: its admin leaves those lines out, as the fragment's header says
		if [[ -n $rd ]] && ! _cd_sudo_has_regex "$rd"; then
			grep -v '^[^#].* NOPASSWD: [^ ]* \^' "$CD_RUN/users/sudoers" >"$e/sudoers.d/clusterdoc-cdadmin" || return 1
		fi
	fi
	if [[ -n $rd ]]; then # the holder binds over these: make the targets the root lacks
		mkdir -p "$CD_RUN/n$i/root.upper/etc" || return 1
		for f in "$e"/*; do
			[[ -e $rd/etc/${f##*/} ]] && continue
			if [[ -d $f ]]; then mkdir -p "$CD_RUN/n$i/root.upper/etc/${f##*/}"; else : >"$CD_RUN/n$i/root.upper/etc/${f##*/}"; fi
		done
	fi
	return 0
}

_cd_known_lines() { # i : plain known_hosts lines (name and IP) for node i's current host key
	local k
	k=$(cut -d' ' -f1,2 "$CD_RUN/n$1/ssh_host_ed25519_key.pub")
	printf 'node%s %s\n%s %s\n' "$1" "$k" "$(cluster_node_ip "$1")" "$k"
	if ((${CD_IPV6_ONLY:-0})); then printf '%s %s\n' "$(cluster_node_ip6 "$1")" "$k"; fi
}

_cd_install_traps() {
	local prev
	prev=$(trap -p EXIT)
	if [[ $prev != *cluster_down* ]]; then
		if [[ -n $prev ]]; then
			eval "set -- $prev" # -> trap -- 'CMD' EXIT
			# run ours first (the old one may call exit), then the old one with the original $?
			# ("(exit N) && :" sets $? without tripping set -e)
			# shellcheck disable=SC2064
			trap "_cd_trap_rc=\$?; cluster_down; (exit \$_cd_trap_rc) && :; $3" EXIT
		else
			trap 'cluster_down' EXIT
		fi
	fi
	[[ -n $(trap -p INT) ]] || trap 'exit 130' INT
	[[ -n $(trap -p TERM) ]] || trap 'exit 143' TERM
	[[ -n $(trap -p HUP) ]] || trap 'exit 129' HUP
}

# cluster_down : stop everything this run started and remove all it created. Idempotent.
# The kernel's neighbour (ARP/NDP) tables are shared by every namespace, and their hard limit
# (gc_thresh3, 1024 by default) counts all of them: with n nodes each resolving every other one
# the default overflows near 32 nodes, packets to unresolved peers are dropped and connects
# time out. Make room (about 3 n^2 entries per family) and remember what to put back at down.
_cd_neigh_room() { # n
	local n=$1 fam f want cur
	want=$((3 * (n + 1) * (n + 1)))
	for fam in ipv4 ipv6; do
		f=/proc/sys/net/$fam/neigh/default
		[[ -w $f/gc_thresh3 ]] || continue
		cur=$(<"$f/gc_thresh3")
		((cur >= want)) && continue
		printf '%s %s %s %s\n' "$fam" "$(<"$f/gc_thresh2")" "$cur" "$want" >>"$CD_RUN/neigh_restore"
		echo $((want * 3 / 4)) >"$f/gc_thresh2" && echo "$want" >"$f/gc_thresh3" &&
			_cd_log "raised net.$fam.neigh.default.gc_thresh3 $cur -> $want for $n nodes (restored at down)"
	done
	return 0
}

_cd_neigh_restore() { # puts back what _cd_neigh_room changed, unless someone changed it since
	local fam t2 t3 set f
	[[ -f ${CD_RUN:-}/neigh_restore ]] || return 0
	while read -r fam t2 t3 set; do
		f=/proc/sys/net/$fam/neigh/default
		[[ $(<"$f/gc_thresh3") == "$set" ]] || continue
		echo "$t3" >"$f/gc_thresh3" && echo "$t2" >"$f/gc_thresh2"
	done <"$CD_RUN/neigh_restore"
}

cluster_down() {
	local -
	set +e +u
	local pid st tag l=() p
	if [[ -z ${CD_PREFIX:-} && -n ${CD_RUN:-} && -f ${CD_RUN}/state.sh ]]; then source "$CD_RUN/state.sh"; fi
	[[ -n ${CD_PREFIX:-} ]] || return 0
	# 0. its Slurm, while the nodes' namespaces still exist (its jobs are cancelled first)
	if [[ -n ${CD_RUN:-} && -f $CD_RUN/slurm/pids ]]; then slurm_down "$CD_RUN/slurm"; fi
	# 1. processes we started (sshd, namespace holders, silent listeners), by PID + start time
	if [[ -n ${CD_RUN:-} && -f $CD_RUN/pids ]]; then
		while read -r pid st tag; do l+=("$pid:$st"); done <"$CD_RUN/pids"
		((${#l[@]})) && _cd_kill_pids "${l[@]}"
	fi
	# 2. anything still inside our namespaces (ssh sessions, agents they started, commands run
	#    with cluster_head_exec/cluster_node_exec): all descendants of this run
	local ns_list
	ns_list=$(_cd_our_ns)
	l=()
	for p in $ns_list; do
		for pid in $(ip netns pids "$p" 2>/dev/null); do
			[[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
			st=$(_cd_starttime "$pid") && l+=("$pid:$st")
		done
	done
	((${#l[@]})) && _cd_kill_pids "${l[@]}"
	# 3. namespaces (their links go with them), /etc/netns entries, run dir
	for p in $ns_list; do ip netns del "$p" 2>/dev/null; done
	for p in $(_cd_our_ns); do ip netns del "$p" 2>/dev/null || _cd_err "could not delete netns $p"; done
	for p in /etc/netns/"${CD_PREFIX}"*; do
		[[ -d $p && ${p##*/} =~ ^${CD_PREFIX}(br|head|n[0-9]+|d[0-9]+)$ ]] && rm -rf -- "$p"
	done
	_cd_neigh_restore
	if [[ -n ${CD_RUN:-} && -f $CD_RUN/binfmt ]]; then
		while read -r p; do cluster_root_unbinfmt "$p"; done <"$CD_RUN/binfmt"
	fi
	if [[ -n ${_CD_SAVED_OPTS+x} ]]; then
		unset CD_SHARED_HOME CD_USERS CD_OLD_NODE CD_ARM_NODE CD_IPV6_ONLY CD_SLURM
		eval "${_CD_SAVED_OPTS//declare -/declare -g}"
		unset _CD_SAVED_OPTS
	fi
	if [[ -n ${CD_RUN:-} && $CD_RUN == /tmp/cdcluster.* && -d $CD_RUN ]]; then
		# a bind mount never points into the run dir from the root namespace, so rm is safe
		rm -rf -- "$CD_RUN"
		_cd_log "down: $CD_PREFIX removed"
	fi
	return 0
}

# ---------------------------------------------------------------- Slurm

# cluster_slurm_up : a real Slurm on this cluster (tests/cluster/slurm.sh, slurm_cluster_up) in
# $CD_RUN/slurm; exports SLURM_CONF and CD_SLURM=1, recorded in state.sh for cluster_attach
cluster_slurm_up() {
	[[ -n ${CD_RUN:-} && -d $CD_RUN ]] || { _cd_err "cluster_slurm_up: no cluster is up"; return 1; }
	[[ ! -f $CD_RUN/slurm/pids ]] || { _cd_err "cluster_slurm_up: its Slurm is already up"; return 1; }
	slurm_cluster_up "$CD_RUN/slurm" || return 1
	export CD_SLURM=1
	_cd_write_state
	_cd_log "slurm: slurmctld on $CD_HEAD_IP, slurmd on node[1-$CD_N]; SLURM_CONF=$SLURM_CONF"
}

# cluster_slurm_down : stop what cluster_slurm_up started (by PID); idempotent
cluster_slurm_down() {
	[[ -n ${CD_RUN:-} ]] || return 0
	slurm_down "$CD_RUN/slurm"
	rm -rf -- "${CD_RUN:?}/slurm"
	export CD_SLURM=0
	[[ ! -d $CD_RUN ]] || _cd_write_state
}

# cluster_slurm_node_stop I / cluster_slurm_node_start I : stop node I's slurmd (by PID; Slurm
# still counts the node idle, so a step placed there fails at the launch) / start it again
# (returns when the node is idle)
cluster_slurm_node_stop() { _cd_check_node "${1:-}" && slurm_cluster_node_stop "$CD_RUN/slurm" "$1"; }
cluster_slurm_node_start() { _cd_check_node "${1:-}" && slurm_cluster_node_start "$CD_RUN/slurm" "$1"; }

# ---------------------------------------------------------------- failures

# cluster_node_stop_sshd i : kill node i's sshd listener (connection refused afterwards;
# already open sessions live on)
cluster_node_stop_sshd() {
	_cd_check_node "${1:-}" || return 1
	_cd_kill_tag "sshd$1"
	rm -f "$CD_RUN/n$1/sshd.pid"
}

# cluster_node_start_sshd i : (re)start node i's sshd and wait until it accepts connections
cluster_node_start_sshd() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 pid
	pid=$(cluster_node_sshd_pid "$i")
	if [[ -n $pid ]] && _cd_alive "$pid"; then return 0; fi
	_cd_start_sshd "$i" || return 1
	_cd_wait_sshd_pidfile "$i" "$(_cd_node_is_arm "$i" && echo 1200 || echo 100)" || { _cd_sshd_failed_msg "$i"; return 1; }
}

# cluster_node_silent i PORT : a listener on node i (all addresses, v4+v6) that accepts TCP
# connections on PORT and never sends anything; returns once it listens. PID: $CD_RUN/n$i/silent.PORT.pid
cluster_node_silent() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 port=${2:-} d=$CD_RUN/n$1 t pid
	[[ $port =~ ^[0-9]+$ ]] || { _cd_err "cluster_node_silent i PORT"; return 2; }
	rm -f "$d/silent.$port.ready"
	# a simple command in the background: $! is the python process itself (nsenter and env exec)
	# shellcheck disable=SC2046
	nsenter $(_cd_enter_opts "$i") -- env HOME=/root "$_CD_PY" -c '
import socket, sys
port, ready = int(sys.argv[1]), sys.argv[2]
try:
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    addr = ("::", port)
except OSError:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    addr = ("0.0.0.0", port)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(addr)
s.listen(128)
open(ready, "w").close()
held = []
while True:
    c, _ = s.accept()
    held.append(c)      # keep it open, never send
' "$port" "$d/silent.$port.ready" </dev/null >"$d/silent.$port.log" 2>&1 &
	pid=$!
	_cd_track "$pid" "silent$i:$port"
	echo "$pid" >"$d/silent.$port.pid"
	for ((t = 0; t < 200; t++)); do
		[[ -e $d/silent.$port.ready ]] && return 0
		_cd_alive "$pid" || break
		sleep 0.02
	done
	_cd_err "node$i: silent listener on $port did not start: $(cat "$d/silent.$port.log")"
	return 1
}

# cluster_node_silent_stop i PORT
cluster_node_silent_stop() {
	_cd_check_node "${1:-}" || return 1
	_cd_kill_tag "silent$1:$2"
}

# cluster_node_rekey i : node i gets a NEW host key (sshd restarted with it); the head's
# known_hosts still holds the old one, so ssh to node i fails host key verification
cluster_node_rekey() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 d=$CD_RUN/n$1
	cluster_node_stop_sshd "$i"
	rm -f "$d/ssh_host_ed25519_key" "$d/ssh_host_ed25519_key.pub"
	ssh-keygen -q -t ed25519 -N '' -C "node$i-rekeyed@$CD_PREFIX" -f "$d/ssh_host_ed25519_key" </dev/null || return 1
	cluster_node_start_sshd "$i"
}

# cluster_node_password i PASSWORD [password|kbdint] : give root on node i (only in its own
# /etc/shadow) that password and restart its sshd accepting it by PasswordAuthentication, or by
# keyboard-interactive through PAM. The head's key is then refused: only keys in the node's own
# ~/.ssh/authorized_keys are accepted (a new node that has never seen the head's key)
cluster_node_password() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 hash shadow
	shadow=/etc/netns/$(cluster_node_ns "$i")/shadow
	hash=$(printf '%s' "$2" | openssl passwd -6 -stdin) || return 1
	# rewrite in place (same inode): the file is bind-mounted over the node's /etc/shadow
	awk -F: -v OFS=: -v h="$hash" '$1 == "root" { $2 = h } { print }' "$shadow" >"$CD_RUN/shadow.tmp" &&
		cat "$CD_RUN/shadow.tmp" >"$shadow" && rm -f "$CD_RUN/shadow.tmp" || return 1
	if [[ ${3:-password} == kbdint ]]; then
		_cd_write_sshd_config "$i" yes no yes yes .ssh/authorized_keys
	else
		_cd_write_sshd_config "$i" yes yes no no .ssh/authorized_keys
	fi
	cluster_node_stop_sshd "$i" && cluster_node_start_sshd "$i"
}

# cluster_forget_hostkey i : remove node i's entries (name and IP, plain or hashed) from the head's known_hosts
cluster_forget_hostkey() {
	_cd_check_node "${1:-}" || return 1
	local kh=$CD_HOME/.ssh/known_hosts h
	for h in "node$1" "$(cluster_node_ip "$1")" ${CD_SUBNET6:+"$(cluster_node_ip6 "$1")"}; do
		ssh-keygen -q -R "$h" -f "$kh" >/dev/null 2>&1
	done
	rm -f "$kh.old"
	return 0
}

# cluster_learn_hostkey i : put node i's CURRENT host key into the head's known_hosts (undo rekey/forget)
cluster_learn_hostkey() {
	cluster_forget_hostkey "${1:-}" || return 1
	_cd_known_lines "$1" >>"$CD_HOME/.ssh/known_hosts"
}

# ---------------------------------------------------------------- traps (misconfigurations to diagnose)

_cd_note_trap() { echo "$*" >>"$CD_RUN/traps"; }

# cluster_trap_ipv6_only_nic i [NAME=ens6] : second NIC on node i whose peer sits in a dead-end
# namespace, holding only 2001:db8::(i+10)/64 (+ its link-local); no IPv4. Other nodes cannot reach it.
cluster_trap_ipv6_only_nic() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 name=${2:-ens6} ns dead t
	ns=$(cluster_node_ns "$i") dead=${CD_PREFIX}d$i
	[[ ${#name} -le 15 ]] || { _cd_err "NIC name too long: $name"; return 2; }
	ip netns add "$dead" || return 1
	ip -n "$dead" link set lo up
	ip -n "$ns" link add "$name" type veth peer name "${CD_PREFIX}x$i" netns "$dead" || return 1
	ip -n "$dead" link set "${CD_PREFIX}x$i" up
	ip netns exec "$ns" sh -c "echo 0 >/proc/sys/net/ipv6/conf/$name/accept_dad" 2>/dev/null
	ip -n "$ns" addr add "2001:db8::$((i + 10))/64" dev "$name" nodad || return 1
	ip -n "$ns" link set "$name" up || return 1
	for ((t = 0; t < 100; t++)); do # until the link-local address exists and is usable
		[[ -n $(ip -n "$ns" -6 addr show dev "$name" scope link -tentative 2>/dev/null) ]] && break
		sleep 0.02
	done
	_cd_note_trap "ipv6_only_nic $i $name 2001:db8::$((i + 10))"
}

# cluster_trap_hostname_loopback i : node i's /etc/hosts maps its own hostname to 127.0.1.1
# (Debian installer style; its real-IP line for itself is dropped). Other nodes are unchanged.
cluster_trap_hostname_loopback() {
	_cd_check_node "${1:-}" || return 1
	: >"$CD_RUN/n$1/trap_hostname_loopback"
	# rewrite in place (same inode): the file is bind-mounted over the node's /etc/hosts
	_cd_hosts_body "$1" >"/etc/netns/$(cluster_node_ns "$1")/hosts"
	_cd_note_trap "hostname_loopback $1"
}

# cluster_trap_docker0 all|i... : a docker0 bridge (no ports, like docker with no containers)
# with 172.17.0.1/16 on those nodes; no route out
cluster_trap_docker0() {
	local nodes=() i
	if [[ ${1:-all} == all ]]; then for ((i = 1; i <= CD_N; i++)); do nodes+=("$i"); done; else nodes=("$@"); fi
	for i in "${nodes[@]}"; do
		_cd_check_node "$i" || return 1
		printf '%s\n' "link add docker0 type bridge" "addr add 172.17.0.1/16 dev docker0" \
			"link set docker0 up" | ip -n "$(cluster_node_ns "$i")" -b - || return 1
		_cd_note_trap "docker0 $i"
	done
}

# cluster_trap_nic_name i NAME : rename node i's primary NIC (addresses are kept). Prefer
# cluster_up --nic-names / CD_NIC_NAMES, which names it at creation.
cluster_trap_nic_name() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 name=${2:-} ns old
	[[ $name =~ ^[A-Za-z][A-Za-z0-9._-]{0,14}$ && $name != lo ]] || { _cd_err "bad NIC name '$name'"; return 2; }
	ns=$(cluster_node_ns "$i") old=$(cluster_node_nic "$i")
	[[ $old == "$name" ]] && return 0
	printf '%s\n' "link set $old down" "link set $old name $name" "link set $name up" | ip -n "$ns" -b - || return 1
	ip -n "$ns" -4 addr show dev "$name" | grep -q "inet $(cluster_node_ip "$i")/" ||
		ip -n "$ns" addr add "$(cluster_node_ip "$i")/24" dev "$name"
	echo "$name" >"$CD_RUN/n$i/nic"
	_cd_note_trap "nic_name $i $name"
}

# cluster_trap_firewall_port i PORT|LO-HI : nft table inet clusterdoc_test in node i's namespace,
# dropping new TCP input to that port (or range), replies to the node's own connections
# accepted as every real firewall does; repeated calls add rules
cluster_trap_firewall_port() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 port=${2:-}
	[[ $port =~ ^[0-9]+(-[0-9]+)?$ ]] || { _cd_err "cluster_trap_firewall_port i PORT|LO-HI"; return 2; }
	ip netns exec "$(cluster_node_ns "$i")" nft -f - <<EOF || return 1
add table inet clusterdoc_test
add chain inet clusterdoc_test input { type filter hook input priority 0; policy accept; }
add rule inet clusterdoc_test input ct state established,related accept
add rule inet clusterdoc_test input tcp dport $port counter drop
EOF
	_cd_note_trap "firewall_port $i $port"
}

# cluster_node_env i LINE... : append lines to node i's own ~/.bashrc (a per-node file bind-mounted
# over /root/.bashrc; bash reads it for commands run by sshd)
cluster_node_env() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 l
	shift
	if ((${CD_SHARED_HOME:-0})); then
		# one ~/.bashrc for every node: each line only where the hostname is node i
		for l in "$@"; do printf 'if [ "$(hostname)" = node%s ]; then %s; fi\n' "$i" "$l"; done >>"$CD_SHARED_DIR/root/.bashrc"
		return
	fi
	printf '%s\n' "$@" >>"$CD_RUN/n$i/bashrc"
}

# cluster_trap_mtu i MTU : node i's primary NIC gets another MTU (MTU mismatch)
cluster_trap_mtu() {
	_cd_check_node "${1:-}" || return 1
	[[ ${2:-} =~ ^[0-9]+$ ]] || { _cd_err "cluster_trap_mtu i MTU"; return 2; }
	ip -n "$(cluster_node_ns "$1")" link set dev "$(cluster_node_nic "$1")" mtu "$2" || return 1
	_cd_note_trap "mtu $1 $2"
}

# _cd_second_nic i NAME PORT : a second NIC NAME on node i, cabled to the bridge (port PORT)
_cd_second_nic() {
	local i=$1 name=$2 port=$3 ns mtu
	ns=$(cluster_node_ns "$i")
	[[ $name =~ ^[A-Za-z][A-Za-z0-9._-]{0,14}$ && $name != lo ]] || { _cd_err "bad NIC name '$name'"; return 2; }
	mtu=$(ip -n "$ns" -o link show dev "$(cluster_node_nic "$i")" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
	ip -n "$ns" link add "$name" mtu "${mtu:-1500}" type veth peer name "$port" netns "$CD_NS_BR" || return 1
	ip -n "$CD_NS_BR" link set "$port" master "${CD_PREFIX}br0" up || return 1
}

# cluster_trap_stale_route i j [NAME=ens7] : node i gets a second NIC NAME on the bridge, with
# 192.168.250.(i+10)/24, and a stale more specific route: node j's address /32 via NAME. Node i's
# traffic to node j leaves NAME (it still arrives: one L2 segment); every other node is unchanged.
cluster_trap_stale_route() {
	_cd_check_node "${1:-}" || return 1
	_cd_check_node "${2:-}" || return 1
	local i=$1 j=$2 name=${3:-ens7} ns
	ns=$(cluster_node_ns "$i")
	_cd_second_nic "$i" "$name" "${CD_PREFIX}r$i" || return 1
	printf '%s\n' "addr add 192.168.250.$((i + 10))/24 dev $name" "link set $name up" \
		"route add $(cluster_node_ip "$j")/32 dev $name" | ip -n "$ns" -b - || return 1
	_cd_note_trap "stale_route $i $j $name"
}

# cluster_trap_two_nics_subnet i [NAME=eth1] : node i gets a second NIC NAME on the bridge in the
# cluster's subnet ($CD_SUBNET.(i+100)/24) and strict reverse-path filtering (rp_filter=1 on all,
# default and both NICs); arp_ignore/arp_announce keep their defaults (0: ARP flux). Route order
# is the kernel's: the first NIC's subnet route stays first.
cluster_trap_two_nics_subnet() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 name=${2:-eth1} ns nic
	ns=$(cluster_node_ns "$i") nic=$(cluster_node_nic "$i")
	_cd_second_nic "$i" "$name" "${CD_PREFIX}m$i" || return 1
	ip netns exec "$ns" sh -c "echo 1 >/proc/sys/net/ipv4/conf/all/rp_filter; echo 1 >/proc/sys/net/ipv4/conf/default/rp_filter; echo 1 >/proc/sys/net/ipv4/conf/$nic/rp_filter; echo 1 >/proc/sys/net/ipv4/conf/$name/rp_filter" || return 1
	printf '%s\n' "addr add $CD_SUBNET.$((i + 100))/24 dev $name" "link set $name up" | ip -n "$ns" -b - || return 1
	_cd_note_trap "two_nics_subnet $i $name $CD_SUBNET.$((i + 100))"
}

# cluster_trap_route_order i [NAME=eth1] : like NVIDIA/nccl#1581: node i gets a second NIC NAME on
# the bridge in the cluster's subnet ($CD_SUBNET.(i+100)/24, rp_filter loose) and its two subnet
# routes, same metric, are reordered so that NAME's comes first: node i's traffic to its peers
# leaves NAME while nodes with the kernel's order (or one NIC) use their first NIC.
cluster_trap_route_order() {
	_cd_check_node "${1:-}" || return 1
	local i=$1 name=${2:-eth1} ns nic t
	ns=$(cluster_node_ns "$i") nic=$(cluster_node_nic "$i")
	_cd_second_nic "$i" "$name" "${CD_PREFIX}o$i" || return 1
	printf '%s\n' "addr add $CD_SUBNET.$((i + 100))/24 dev $name" "link set $name up" | ip -n "$ns" -b - || return 1
	# the kernel adds NAME's prefix route when the link comes up: wait for it, then put it first
	for ((t = 0; t < 100; t++)); do
		[[ -n $(ip -n "$ns" -4 route show "$CD_SUBNET.0/24" dev "$name") ]] && break
		sleep 0.02
	done
	ip -n "$ns" route del "$CD_SUBNET.0/24" dev "$nic" || return 1
	ip -n "$ns" route append "$CD_SUBNET.0/24" dev "$nic" proto kernel scope link src "$(cluster_node_ip "$i")" || return 1
	ip -n "$ns" route get "$CD_SUBNET.1" | grep -q " dev $name " || { _cd_err "route_order: $name's route is not first"; return 1; }
	_cd_note_trap "route_order $i $name $CD_SUBNET.$((i + 100))"
}

# cluster_trap_jumbo_blackhole i j... : the half-done jumbo-frame set-up. Those nodes' NICs and
# their bridge ports get MTU 9000, and an nftables rule in the bridge family of the bridge's
# namespace (table bridge clusterdoc_jumbo) drops every frame over 1500 bytes of payload that
# goes between two of those ports, sending no ICMP: connections between them open (small
# packets pass), transfers larger than 1500 stall. The head and the other nodes keep MTU 1500,
# so their TCP negotiates a small MSS and passes. Removed with the bridge's namespace at down.
cluster_trap_jumbo_blackhole() {
	(($# >= 2)) || { _cd_err "cluster_trap_jumbo_blackhole i j... (two nodes at least)"; return 2; }
	local i ports=""
	for i in "$@"; do
		_cd_check_node "$i" || return 1
		ip -n "$CD_NS_BR" link set dev "${CD_PREFIX}b$i" mtu 9000 || return 1
		ip -n "$(cluster_node_ns "$i")" link set dev "$(cluster_node_nic "$i")" mtu 9000 || return 1
		ports+="${ports:+, }\"${CD_PREFIX}b$i\""
	done
	ip netns exec "$CD_NS_BR" nft -f - <<EOF || return 1
add table bridge clusterdoc_jumbo
add chain bridge clusterdoc_jumbo forward { type filter hook forward priority 0; policy accept; }
add rule bridge clusterdoc_jumbo forward iifname { $ports } oifname { $ports } meta length > 1500 counter drop
EOF
	_cd_note_trap "jumbo_blackhole $*"
}

# cluster_trap_second_data_nic NAME i... : those nodes get a second data NIC NAME (MTU 1500) on
# the bridge, with 192.168.251.(i+10)/24: a second data network beside the primary NIC's, on
# ports that no other trap touches (the jumbo black hole's rule names only the primary ports).
# Those nodes answer ARP only on the NIC that holds the address (arp_ignore=1, arp_announce=2).
cluster_trap_second_data_nic() {
	_cd_second_data_nic second_data_nic "" "$@"
}

# cluster_trap_second_data_nic6 NAME i... : like cluster_trap_second_data_nic, but the second data
# network is IPv6 only: NAME gets fd00:251::(i+10)/64 (no DAD wait) and no IPv4 address.
cluster_trap_second_data_nic6() {
	_cd_second_data_nic second_data_nic6 6 "$@"
}

# _cd_second_data_nic TRAP FAMILY NAME i... : the two traps above; FAMILY "" (IPv4) or 6
_cd_second_data_nic() {
	local trap=$1 family=$2 name=${3:-} i ns addr
	(($# >= 4)) || { _cd_err "cluster_trap_$trap NAME i..."; return 2; }
	shift 3
	for i in "$@"; do
		_cd_check_node "$i" || return 1
		ns=$(cluster_node_ns "$i")
		_cd_second_nic "$i" "$name" "${CD_PREFIX}s$i" || return 1
		ip -n "$CD_NS_BR" link set dev "${CD_PREFIX}s$i" mtu 1500 || return 1
		# its own network, as on a separate switch: ARP answered only on the NIC that holds the
		# address (without it, ARP flux may send the first NIC's traffic to the second's port,
		# around any trap on the first)
		ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore; echo 2 >/proc/sys/net/ipv4/conf/all/arp_announce' || return 1
		if [[ $family == 6 ]]; then
			addr="fd00:251::$((i + 10))/64 dev $name nodad"
		else
			addr="192.168.251.$((i + 10))/24 dev $name"
		fi
		printf '%s\n' "link set $name mtu 1500" "addr add $addr" "link set $name up" | ip -n "$ns" -b - || return 1
	done
	_cd_note_trap "$trap $name $*"
}

# ---------------------------------------------------------------- CLI

_cd_cli_usage() {
	cat >&2 <<'EOF'
usage: cluster.sh up N [--nic-names "..."] [--mtu M] [--prefix P] [--subnet 10.X.Y]
                       [--shared-home] [--users] [--old-node I] [--arm-node I] [--ipv6-only] [--slurm]
           brings a cluster up and leaves it running; prints shell assignments to eval
       cluster.sh roots [NAME...]            build the cached roots (bullseye-amd64 bookworm-arm64)
       cluster.sh down [RUN_DIR|PREFIX]      tear down (default: $CD_RUN); PREFIX also finds
                                             the leftovers of a test that was SIGKILLed
       cluster.sh list                       clusters of this machine (run dirs and namespaces)
       cluster.sh exec RUN_DIR head|I CMD... run CMD in the head namespace or on node I
       cluster.sh ssh RUN_DIR I [CMD...]     ssh from the head to node I
EOF
}

_cd_cli() {
	local cmd=${1:-} f p
	shift || true
	case $cmd in
	up)
		CD_AUTO_TRAP=0 cluster_up "$@" || return 1
		cat "$CD_RUN/state.sh"
		;;
	down)
		local arg=${1:-${CD_RUN:-}}
		[[ -n $arg ]] || { _cd_err "down: give RUN_DIR or PREFIX, or set CD_RUN"; return 2; }
		if [[ -f $arg/state.sh ]]; then
			cluster_attach "$arg" || return 1
		elif [[ $arg == /* ]]; then
			if [[ -n ${CD_PREFIX:-} && ${CD_RUN:-} == "$arg" ]]; then :; else
				_cd_log "down: $arg does not exist (already down?)"
				return 0
			fi
		elif [[ $arg =~ ^[a-z][a-z0-9]{0,10}$ ]]; then
			CD_PREFIX=$arg CD_RUN=""
			for f in /tmp/cdcluster.*/state.sh; do
				[[ -f $f ]] && grep -qx "CD_PREFIX=$arg" "$f" && { cluster_attach "${f%/state.sh}"; break; }
			done
		else
			_cd_err "down: '$arg' is neither a run dir nor a prefix"
			return 2
		fi
		cluster_down
		;;
	roots)
		(($#)) || set -- bullseye-amd64 bookworm-arm64
		for f in "$@"; do cluster_root_ensure "$f" || return 1; done
		;;
	list)
		for f in /tmp/cdcluster.*/state.sh; do
			[[ -f $f ]] || continue
			p=$(sed -n 's/^CD_PREFIX=//p' "$f")
			printf '%s\t%s\tN=%s\tnetns=%s\n' "$p" "${f%/state.sh}" "$(sed -n 's/^CD_N=//p' "$f")" \
				"$(ip netns list | awk '{print $1}' | grep -cE "^${p}(br|head|n[0-9]+|d[0-9]+)\$")"
		done
		for p in $(ip netns list | awk '{print $1}' | sed -nE 's/^(.+)head$/\1/p'); do
			grep -qsx "CD_PREFIX=$p" /tmp/cdcluster.*/state.sh || printf '%s\t(no run dir: orphan, "cluster.sh down %s")\n' "$p" "$p"
		done
		;;
	exec)
		cluster_attach "${1:-}" || return 1
		local who=${2:-}
		shift 2 || true
		if [[ $who == head ]]; then cluster_head_exec "$@"; else cluster_node_exec "$who" "$@"; fi
		;;
	ssh)
		cluster_attach "${1:-}" || return 1
		shift
		cluster_ssh "$@"
		;;
	*) _cd_cli_usage; return 2 ;;
	esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -u
	_cd_cli "$@"
	exit $?
fi
