#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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
# Needs root. The cluster is kept afterwards, so that you can go on using it,
# and the demo prints how (tests/cluster/cluster.sh exec RUN_DIR head CMD...)
# and how to take it down (tests/cluster/cluster.sh down RUN_DIR); DEMO_KEEP=0
# takes it down at the end instead.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root to create network namespaces (try: sudo make demo)" >&2
	exit 2
fi
keep=${DEMO_KEEP:-1}
[ "$keep" = 1 ] && export CD_AUTO_TRAP=0

# how to go on with the kept cluster (from this tree's top), or take it down
kept() {
	local run=$CD_RUN
	echo "demo: the cluster is kept: go on using it from the head namespace, e.g."
	echo "  tests/cluster/cluster.sh exec $run head ./clusterdoc env -w 'node[1-4]'"
	echo "  tests/cluster/cluster.sh exec $run head ./clusterdoc run -w 'node[1-4]' -- train.py"
	echo "  tests/cluster/cluster.sh exec $run head bash      (a shell there; the nodes are node1..node4)"
	echo "demo: take it down with: tests/cluster/cluster.sh down $run"
}
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
	if [ "$keep" = 1 ]; then kept; else cluster_down; fi
	exit $rc
fi
echo "demo: \$ clusterdoc facts -w 'node[1-4]'"
cluster_head_exec "$CLUSTERDOC" facts -w 'node[1-4]'
echo
echo "demo: \$ clusterdoc check -w 'node[1-4]'"
cluster_head_exec "$CLUSTERDOC" check -w 'node[1-4]' --probe-timeout 1000
rc=$?
echo
echo "demo: check exited $rc (1 = error findings). Each trap above is reported on its node,"
echo "demo: with the environment that avoids it; \`clusterdoc env\` prints it as export lines and"
echo "demo: \`clusterdoc run\` starts jobs with it."
if [ "$keep" = 1 ]; then kept; else cluster_down; fi
# the traps are meant to be found: exit 1 (error findings) is the demo working
exit $((rc == 1 ? 0 : rc))
