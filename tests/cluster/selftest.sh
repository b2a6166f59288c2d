#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cluster/selftest.sh [N] - self-test of tests/cluster/cluster.sh (needs root).
# Brings up N (default 4, min 4) nodes, checks the cluster and every failure/trap helper,
# tears down, checks nothing is left. Then the root cache (tests/cluster/selftest_roots.sh, no
# network) and (unless CD_SELFTEST_REALNODES=0) the real-node options on a second cluster:
# tests/cluster/selftest_realnodes.sh. Prints "P passed, F failed"; exit 0 iff F == 0,
# 77 (skip) when not root or sshd is missing.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/cluster/cluster.sh
source "$HERE/cluster.sh"

N=${1:-4}
((N >= 4)) || { echo "selftest needs N >= 4" >&2; exit 2; }
if [[ $EUID != 0 ]]; then echo "skip: needs root"; exit 77; fi
[[ -x /usr/sbin/sshd ]] || { echo "skip: no /usr/sbin/sshd"; exit 77; }

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); printf '  ok    %s\n' "$1"; }
bad() { FAIL=$((FAIL + 1)); printf '  FAIL  %s%s\n' "$1" "${2:+: $2}"; }
check() { # name cmd... : pass iff cmd succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
# TCP probe from the head: prints connected | refused | timeout | error:<msg>; then "banner"/"silent"
tcp_probe() { # host port [read_seconds]
	cluster_head_exec /usr/bin/python3 - "$1" "$2" "${3:-1}" <<'EOF'
import socket, sys
host, port, rd = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
try:
    s = socket.create_connection((host, port), timeout=2)
except ConnectionRefusedError:
    print("refused"); sys.exit(0)
except socket.timeout:
    print("timeout"); sys.exit(0)
except OSError as e:
    print("error:%s" % e.strerror); sys.exit(0)
s.settimeout(rd)
try:
    d = s.recv(64)
    print("connected banner" if d else "connected closed")
except socket.timeout:
    print("connected silent")
EOF
}

# leave a trace of the prefix so the end-of-run check still works after cluster_down
PREFIX=""
BINFMT_OURS=""
down_and_check() { # tear the current cluster down and check that nothing of it is left
	local left p
	[[ -n $PREFIX && -f $RUN/pids ]] && PIDS=$(awk '{print $1}' "$RUN/pids" | tr '\n' ' ')
	[[ -n $PREFIX && -f $RUN/binfmt ]] && BINFMT_OURS=$(cat "$RUN/binfmt")
	cluster_down
	cluster_down # idempotent
	if [[ -n $PREFIX ]]; then
		left=$(ip netns list | awk '{print $1}' | grep "^$PREFIX" || true)
		if [[ -z $left ]]; then ok "teardown: no netns with prefix $PREFIX left"; else bad "teardown: netns left" "$left"; fi
		left=$(ls -d /etc/netns/"$PREFIX"* 2>/dev/null || true)
		if [[ -z $left ]]; then ok "teardown: no /etc/netns/$PREFIX* left"; else bad "teardown: /etc/netns left" "$left"; fi
		if [[ ! -e $RUN ]]; then ok "teardown: run dir removed"; else bad "teardown: run dir left" "$RUN"; fi
		left=""
		for p in $PIDS; do [[ -d /proc/$p ]] && left+=" $p"; done
		if [[ -z $left ]]; then ok "teardown: every started process is gone"; else bad "teardown: processes left" "$left"; fi
		for p in $BINFMT_OURS; do
			[[ -e /proc/sys/fs/binfmt_misc/$p ]] && bad "teardown: binfmt handler $p left" || ok "teardown: binfmt handler $p unregistered"
		done
	fi
	PREFIX="" PIDS="" BINFMT_OURS=""
}
final_checks() {
	down_and_check
	echo "$PASS passed, $FAIL failed"
}
trap 'rc=$?; final_checks; ((FAIL == 0)) || rc=1; trap - EXIT; exit $rc' EXIT
export CD_AUTO_TRAP=0 # our EXIT trap calls cluster_down (in final_checks)
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== cluster_up $N (node 3 NIC named enp1s0)"
nics="eth0 eth0 enp1s0"
for ((i = 4; i <= N; i++)); do nics+=" eth0"; done
if ! CD_NIC_NAMES=$nics cluster_up "$N"; then
	bad "cluster_up $N"
	exit 1
fi
PREFIX=$CD_PREFIX RUN=$CD_RUN
ok "cluster_up $N in ${CD_UP_SECONDS}s (prefix $CD_PREFIX, subnet $CD_SUBNET.0/24)"
PIDS=""
[[ $CD_NODES == node1\ node2\ node3\ node4* ]] && ok "CD_NODES=$CD_NODES" || bad "CD_NODES" "$CD_NODES"

echo "== basics"
out=$(cluster_head_exec ssh node3 hostname 2>&1) || true
[[ $out == node3 ]] && ok "ssh node3 hostname -> node3 (plain ssh, no -F)" || bad "ssh node3 hostname" "$out"
out=$(cluster_head_exec ssh -F "$CD_SSH_CONFIG" "node$N" hostname 2>&1) || true
[[ $out == "node$N" ]] && ok "ssh -F config node$N hostname" || bad "ssh -F node$N hostname" "$out"
out=$(cluster_head_exec ssh node2 'cat /etc/hosts' 2>&1) || true
if grep -q "node1" <<<"$out" && grep -q "node$N" <<<"$out" && grep -q "^$CD_SUBNET.12[[:space:]]node2\$" <<<"$out"; then
	ok "ssh node2 cat /etc/hosts shows the node names"
else bad "node2 /etc/hosts" "$out"; fi
out=$(cluster_head_exec getent hosts node4 2>&1) || true
[[ $out == "$CD_SUBNET.14"* ]] && ok "head resolves node4 -> $CD_SUBNET.14" || bad "head getent hosts node4" "$out"
out=$(cluster_ssh 1 "getent hosts node3" 2>&1) || true
[[ $out == "$CD_SUBNET.13"* ]] && ok "node1 resolves node3" || bad "node1 getent hosts node3" "$out"
out=$(cluster_node_exec 2 hostname 2>&1) || true
[[ $out == node2 ]] && ok "cluster_node_exec 2 hostname -> node2" || bad "cluster_node_exec hostname" "$out"
[[ $(hostname) != node* ]] && ok "root namespace hostname untouched ($(hostname))" || bad "root hostname changed"
out=$(cluster_head_exec sh -c 'echo "$HOME ${SSH_AUTH_SOCK-unset}"')
[[ $out == "$CD_RUN/home unset" ]] && ok "head env: HOME=\$CD_RUN/home, SSH_AUTH_SOCK unset" || bad "head env" "$out"
out=$(cluster_ssh 3 "ip -4 -o addr show dev enp1s0" 2>&1) || true
[[ $out == *"inet $CD_SUBNET.13/24"* ]] && ok "node3 primary NIC is enp1s0 (CD_NIC_NAMES)" || bad "node3 enp1s0" "$out"
out=$(cluster_ssh 1 "ip -o link show dev eth0" 2>&1) || true
[[ -n $out ]] && ok "node1 primary NIC is eth0" || bad "node1 eth0" "$out"
out=$(cluster_ssh 1 "ping -c1 -W2 node$N >/dev/null && echo pong" 2>&1) || true
[[ $out == pong ]] && ok "node1 pings node$N over the bridge" || bad "node1 -> node$N ping" "$out"

# no default route in any namespace we made (v4 and v6), nothing of ours in the root ns
routes=""
for ns in $(ip netns list | awk '{print $1}' | grep "^$CD_PREFIX"); do
	routes+=$(ip -n "$ns" route show default; ip -n "$ns" -6 route show default)
done
[[ -z $routes ]] && ok "no default route in any $CD_PREFIX* namespace" || bad "default route found" "$routes"
if ip -o addr show | grep -q "$CD_SUBNET\."; then bad "subnet address in root namespace"; else ok "no $CD_SUBNET.x address in the root namespace"; fi
if ip -o link show | grep -q "$CD_PREFIX"; then bad "link with prefix in root namespace"; else ok "no $CD_PREFIX* link in the root namespace"; fi

# per-node ~/.cache, shell init files hidden
cluster_ssh 1 'mkdir -p ~/.cache/clusterdoc && echo one > ~/.cache/clusterdoc/mark' || true
out=$(cluster_ssh 2 'cat ~/.cache/clusterdoc/mark 2>/dev/null || echo absent' 2>&1) || true
[[ $out == absent ]] && ok "~/.cache is per node" || bad "~/.cache per node" "$out"
[[ -e /root/.cache/clusterdoc/mark ]] && bad "node cache leaked into /root/.cache" || ok "node cache not in the real /root/.cache"
[[ -s $CD_RUN/n1/cache/clusterdoc/mark ]] && ok "node1 cache lives in \$CD_RUN/n1/cache" || bad "node1 cache dir"
if [[ -e /root/.bashrc ]]; then
	out=$(cluster_ssh 1 'wc -c < ~/.bashrc' 2>&1) || true
	[[ $out == 0 ]] && ok "node ~/.bashrc is empty" || bad "node .bashrc" "$out"
fi
out=$(cluster_head_exec /usr/bin/python3 -c 'import os,sys; sys.stdout.write(os.path.expanduser("~"))')
[[ $out == "$CD_RUN/home" ]] && ok "head ~ = \$CD_RUN/home" || bad "head ~" "$out"
out=$(cluster_head_exec sftp -b - node4 <<<'ls /' 2>&1) && ok "sftp subsystem works" || bad "sftp" "$out"
grep -q "^node2 ssh-ed25519 " "$CD_RUN/home/.ssh/known_hosts" && grep -q "^$CD_SUBNET.12 ssh-ed25519 " "$CD_RUN/home/.ssh/known_hosts" &&
	ok "known_hosts has plain name and IP entries" || bad "known_hosts format"
out=$(cluster_head_exec ssh "$CD_SUBNET.11" hostname 2>&1) || true
[[ $out == node1 ]] && ok "ssh by IP verifies too" || bad "ssh by IP" "$out"

echo "== failures"
out=$(tcp_probe node2 22)
[[ $out == "connected banner" ]] && ok "node2:22 sends a banner" || bad "node2:22 before stop" "$out"
cluster_node_stop_sshd 2
out=$(tcp_probe node2 22)
[[ $out == refused ]] && ok "after cluster_node_stop_sshd 2: node2:22 refused" || bad "stop_sshd" "$out"
out=$(cluster_head_exec ssh node2 true 2>&1) && bad "ssh node2 still works" || { [[ $out == *refused* ]] && ok "ssh node2: connection refused" || bad "ssh node2 error" "$out"; }
cluster_node_start_sshd 2 && out=$(cluster_ssh 2 hostname 2>&1) && [[ $out == node2 ]] && ok "cluster_node_start_sshd 2 brings it back" || bad "start_sshd" "${out:-}"

cluster_node_silent 3 29500 || bad "cluster_node_silent"
out=$(tcp_probe node3 29500 1.5)
[[ $out == "connected silent" ]] && ok "silent port node3:29500 accepts, sends nothing" || bad "silent port" "$out"
out=$(tcp_probe "$CD_SUBNET.13" 29500 0.3)
[[ $out == "connected silent" ]] && ok "silent port again (several connections held)" || bad "silent port 2nd" "$out"

cluster_node_rekey 1 || bad "cluster_node_rekey"
out=$(cluster_head_exec ssh node1 true 2>&1) && bad "ssh node1 after rekey succeeded" ||
	{ [[ $out == *"Host key verification failed"* && $out == *"REMOTE HOST IDENTIFICATION HAS CHANGED"* ]] && ok "after rekey: ssh node1 fails host key verification (changed)" || bad "rekey error text" "$out"; }
cluster_forget_hostkey 1
grep -q "^node1 " "$CD_RUN/home/.ssh/known_hosts" && bad "forget_hostkey left node1" || ok "cluster_forget_hostkey 1 removed node1 entries"
out=$(cluster_head_exec ssh node1 true 2>&1) && bad "ssh node1 with unknown key succeeded" ||
	{ [[ $out == *"Host key verification failed"* && $out != *CHANGED* ]] && ok "unknown key: ssh node1 refused (BatchMode)" || bad "unknown key error" "$out"; }
out=$(cluster_head_exec ssh -o StrictHostKeyChecking=accept-new node1 hostname 2>/dev/null) || true
[[ $out == node1 ]] && ok "accept-new then works" || bad "accept-new" "$out"
cluster_learn_hostkey 1
out=$(cluster_head_exec ssh node1 hostname 2>&1) || true
[[ $out == node1 ]] && ok "cluster_learn_hostkey 1 restores access" || bad "learn_hostkey" "$out"

echo "== traps"
cluster_trap_ipv6_only_nic 3 && cluster_trap_ipv6_only_nic 4 || bad "cluster_trap_ipv6_only_nic"
out=$(cluster_ssh 3 'ip -o addr show dev ens6' 2>&1) || true
if [[ $out == *"inet6 2001:db8::13/64"* && $out == *"inet6 fe80::"* && $out != *" inet "* ]]; then
	ok "node3 ens6: only 2001:db8::13/64 + link-local"
else bad "ens6 addresses" "$out"; fi
out=$(cluster_node_exec 4 /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET6); s.settimeout(8)
try:
    s.connect(("2001:db8::13", 29500)); print("connected")
except OSError as e:
    print(e.strerror)' 2>&1) || true
[[ $out == "No route to host" ]] && ok "node4 -> node3's 2001:db8::13: No route to host" || bad "ipv6 trap connect" "$out"

cluster_trap_hostname_loopback 2
out=$(cluster_ssh 2 'getent hosts node2' 2>&1) || true
[[ $out == 127.0.1.1* ]] && ok "node2 resolves its own name to 127.0.1.1" || bad "hostname_loopback on node2" "$out"
out=$(cluster_ssh 1 'getent hosts node2' 2>&1) || true
[[ $out == "$CD_SUBNET.12"* ]] && ok "node1 still resolves node2 to $CD_SUBNET.12" || bad "hostname_loopback leaked" "$out"

cluster_trap_docker0 all || bad "cluster_trap_docker0"
good=0
for ((i = 1; i <= N; i++)); do
	ip -n "$(cluster_node_ns "$i")" -4 -o addr show dev docker0 2>/dev/null | grep -q 'inet 172.17.0.1/16' && good=$((good + 1))
done
((good == N)) && ok "docker0 172.17.0.1/16 on all $N nodes" || bad "docker0" "$good/$N"

cluster_trap_nic_name 4 ens5 || bad "cluster_trap_nic_name"
out=$(cluster_ssh 4 'ip -4 -o addr show dev ens5' 2>&1) || true
[[ $out == *"inet $CD_SUBNET.14/24"* && $(cluster_node_nic 4) == ens5 ]] && ok "node4 NIC renamed to ens5, address kept" || bad "nic rename" "$out"

cluster_trap_firewall_port 3 29500 || bad "cluster_trap_firewall_port"
out=$(tcp_probe node3 29500)
[[ $out == timeout ]] && ok "firewall on node3 drops :29500 (connect times out)" || bad "firewall" "$out"
out=$(cluster_ssh 3 'nft list table inet clusterdoc_test' 2>&1) || true
[[ $out == *"tcp dport 29500"*drop* ]] && ok "nft table inet clusterdoc_test on node3" || bad "nft table" "$out"
out=$(cluster_ssh 3 hostname 2>&1) || true
[[ $out == node3 ]] && ok "node3 ssh still fine with the firewall" || bad "ssh node3 after firewall" "$out"

cluster_trap_mtu 2 9000 || bad "cluster_trap_mtu"
out=$(cluster_ssh 2 'cat /sys/class/net/eth0/mtu' 2>&1) || true
[[ $out == 9000 ]] && ok "node2 eth0 mtu 9000" || bad "mtu" "$out"

[[ ${CD_SELFTEST_SLEEP:-0} == 0 ]] || sleep "$CD_SELFTEST_SLEEP" # for the interrupt test

echo "== teardown"
down_and_check

# shellcheck source=tests/cluster/selftest_roots.sh
source "$HERE/selftest_roots.sh"
[[ ${CD_SELFTEST_REALNODES:-1} == 1 ]] || exit 0
# shellcheck source=tests/cluster/selftest_realnodes.sh
source "$HERE/selftest_realnodes.sh"
exit 0
