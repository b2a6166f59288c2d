#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NCCL predictor against the real NCCL: on a test node, run tests/oracle/nccl_bootstrap
# (ncclGetUniqueId with NCCL_DEBUG=INFO; no GPU needed) under an environment, and compare the
# interface and address NCCL logs ("Bootstrap: Using eth0:10.0.0.1<0>") with what
# `clusterdoc check` predicts for the bootstrap when the same environment is the node's login
# environment. Skips when NCCL is not installed ($NCCL_ORACLE unset).
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=nccl_oracle

# real_nccl I VAR=value...: the "<if>:<addr>" NCCL's bootstrap picks on node I, or its error
real_nccl() {
	local i=$1 log
	shift
	log=$(cluster_node_exec "$i" env -i PATH=/usr/bin:/bin HOME=/root NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP "$@" "$NCCL_ORACLE" 2>&1)
	if grep -q 'no socket interface found' <<<"$log"; then
		echo "Bootstrap : no socket interface found"
		return
	fi
	sed -nE 's/.*Bootstrap ?: Using (\[0\])?([^ ]+)<0>.*/\2/p' <<<"$log" | head -1
}

# predicted I VAR=value...: the same, from clusterdoc, with the variables in node I's login shell
predicted() {
	local i=$1 v
	shift
	: >"$CD_RUN/n$i/bashrc"
	for v in "$@"; do cluster_node_env "$i" "export $v"; done
	cd_head check -w "node$i" --json --no-firewall
	jget "(lambda b: b[0]['name'] + ':' + b[0]['address'] + ('%' + b[0]['name'] if b[0]['scope_id'] else '') if b else d['nodes'][0]['nccl']['bootstrap_error'])(d['nodes'][0]['nccl']['bootstrap'])"
}

# same I VAR=value...: NCCL and clusterdoc agree
same() {
	local real pred
	real=$(real_nccl "$@")
	pred=$(predicted "$@")
	[ -n "$real" ] || { echo "    NCCL logged no bootstrap line"; return 1; }
	expect_eq "$pred" "$real" "clusterdoc's bootstrap prediction vs NCCL's ($*)"
}

t_default_selection_matches() { same 1; }
t_prefix_ens_picks_the_ipv6_only_nic() { same 1 NCCL_SOCKET_IFNAME=ens; }
t_family_inet6_picks_link_local() { same 1 NCCL_SOCKET_FAMILY=AF_INET6; }
t_exclude_docker0_alone_lets_lo_in() { same 1 'NCCL_SOCKET_IFNAME=^docker0'; }
t_exact_list_matches() { same 1 'NCCL_SOCKET_IFNAME==eth0,ens6'; }
t_name_matching_nothing_fails_the_same_way() { same 1 NCCL_SOCKET_IFNAME=ib; }
t_one_character_value_is_ignored() { same 1 NCCL_SOCKET_IFNAME=e; }

itest_need_root
if [ -z "${NCCL_ORACLE:-}" ] || [ ! -x "$NCCL_ORACLE" ]; then
	result SKIP "$ITEST_FILE (NCCL is not installed: no oracle)"
	exit 0
fi
CD_QUIET=1 cluster_up 1 >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
cluster_trap_ipv6_only_nic 1 ens6 && cluster_trap_docker0 1 || { result FAIL "$ITEST_FILE/traps"; exit 1; }
itest_run_all
