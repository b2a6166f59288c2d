#!/usr/bin/env bash
# demo.sh - `make demo`: a local 4-node cluster of network namespaces with the
# classic traps of distributed training built in, and clusterdoc run against it:
# the TUI on a terminal, else (or with DEMO_TEXT=1) `facts` and `check` as text.
#
#   node1  a second NIC ens6 whose only address is a global IPv6 peers cannot reach
#   node2  its hostname resolves to 127.0.1.1 (Debian's /etc/hosts habit)
#   node3  its primary NIC is enp1s0, not eth0 like the others
#   node4  its firewall (nftables) drops TCP to port 29500 (MASTER_PORT)
#   all    a docker0 bridge with the same 172.17.0.1/16 on every node
#
# Needs root. DEMO_KEEP=1 keeps the cluster up and prints how to reach it
# (tear it down with: tests/cluster/cluster.sh down RUN_DIR).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root to create network namespaces (try: sudo make demo)" >&2
	exit 2
fi
[ "${DEMO_KEEP:-0}" = 1 ] && export CD_AUTO_TRAP=0
echo "demo: bringing up 4 nodes (namespaces, real sshd) with the classic traps..."
CD_QUIET=1 cluster_up 4 --nic-names "eth0 eth0 enp1s0 eth0" >/dev/null || exit 1
cluster_trap_ipv6_only_nic 1 ens6
cluster_trap_hostname_loopback 2
cluster_trap_docker0 all
cluster_trap_firewall_port 4 29500
echo "demo: traps: $(tr '\n' ';' <"$CD_RUN/traps" 2>/dev/null)"
echo
# On a terminal the demo is the TUI (DEMO_TEXT=1 prints the text commands instead).
if [ -t 0 ] && [ -t 1 ] && [ "${DEMO_TEXT:-0}" != 1 ]; then
	echo "demo: \$ clusterdoc tui -w 'node[1-4]'   (press ? for the keys, q to quit)"
	sleep 1
	cluster_head_exec "$CLUSTERDOC" tui -w 'node[1-4]' --probe-timeout 1000
	rc=$?
	[ "${DEMO_KEEP:-0}" = 1 ] || cluster_down
	exit $rc
fi
echo "demo: \$ clusterdoc facts -w 'node[1-4]'"
cluster_head_exec "$CLUSTERDOC" facts -w 'node[1-4]'
echo
echo "demo: \$ clusterdoc check -w 'node[1-4]'"
cluster_head_exec "$CLUSTERDOC" check -w 'node[1-4]' --probe-timeout 1000
rc=$?
echo
echo "demo: check exited $rc (1 = error findings). Each trap above is reported on its node;"
echo "demo: \`clusterdoc env -w 'node[1-4]'\` prints the verified environment as export lines."
if [ "${DEMO_KEEP:-0}" = 1 ]; then
	echo "demo: cluster kept: source tests/cluster/cluster.sh; cluster_attach $CD_RUN; cluster_head_exec bash"
else
	cluster_down
fi
# the traps are meant to be found: exit 1 (error findings) is the demo working
exit $((rc == 1 ? 0 : rc))
