#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An IPv6-only cluster is healthy: on a cluster whose head and nodes have only IPv6 (ULA)
# addresses between them, reached over IPv6 SSH (cluster_up --ipv6-only), `check` exits 0 with
# no finding and suggests the master's IPv6 address (bare in MASTER_ADDR and torchrun's
# --master_addr, bracketed in the init_method URL), NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME,
# NCCL_SOCKET_FAMILY only where NCCL needs it (AF_INET6, never AF_INET), and `env` prints them.
# The judges: the real NCCL's bootstrap (tests/oracle/nccl_bootstrap, $NCCL_ORACLE; skipped
# without NCCL) picks the suggested interface and address on every node under the suggested
# environment, and Debian's torch starts a Gloo group across two nodes with it.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fabric_ipv6
N=3

# check_json: `check --json` on every node into $out (the report is kept for the next tests
# until the cluster changes: fresh=1 runs it again)
check_json() {
	if [[ ${fresh:-0} == 0 && -s $CD_RUN/check.json ]]; then
		out=$(cat "$CD_RUN/check.json") rc=$(cat "$CD_RUN/check.rc")
		return
	fi
	cd_head check -w "node[1-$N]" --json --no-firewall
	printf '%s' "$out" >"$CD_RUN/check.json"
	echo "$rc" >"$CD_RUN/check.rc"
}

# var I NAME: the value check suggests for NAME on node I ("" when none)
var() { jget "d['suggestions']['per_node']['node$1'].get('$2', '')"; }

# suggested_env I: node I's suggested variables as NAME=value words
suggested_env() { jget "' '.join(k + '=' + v for k, v in d['suggestions']['per_node']['node$1'].items())"; }

# real_nccl I VAR=value...: the "<if>:<addr>" the real NCCL's bootstrap picks on node I
real_nccl() {
	local i=$1
	shift
	cluster_node_exec "$i" env -i PATH=/usr/bin:/bin HOME=/root NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP "$@" "$NCCL_ORACLE" 2>&1 |
		sed -nE 's/.*Bootstrap ?: Using (\[0\])?([^ ]+)<0>.*/\2/p' | head -1
}

t_no_node_has_ipv4_and_ssh_runs_over_ipv6() {
	local i ns
	for ((i = 0; i <= N; i++)); do
		if ((i == 0)); then ns=$CD_NS_HEAD; else ns=$(cluster_node_ns "$i"); fi
		expect_eq "$(ip -n "$ns" -4 addr show scope global)" "" "IPv4 addresses in $ns" || return 1
	done
	expect_match "$(cluster_ssh 2 'echo $SSH_CONNECTION')" "^$CD_HEAD_IP [0-9]+ $(cluster_node_ip6 2) 22$" \
		"node2's SSH_CONNECTION"
}

t_check_exits_0_with_no_finding() {
	check_json
	expect_eq "$rc" 0 "check's exit status" || return 1
	expect_eq "$(jget "len(d['findings'])")" 0 "number of findings" || return 1
	expect_eq "$(jget "d['suggestions']['notes']")" "[]" "notes"
}

t_path_mtu_probe_passes_over_ipv6() {
	# the UDP probe (IPV6_DONTFRAG) on each bulk-proven pair echoes the whole MTU
	check_json
	expect_eq "$(jget "sorted(set((m['bulk'], m.get('pmtu'), m.get('pmtu_max')) for m in d['matrix'] if m['bulk'] != 'not-tried'))")" \
		"[('ok', 1500, 1500)]" "bulk and pmtu of the proven pairs"
}

t_master_addr_is_the_masters_bare_ipv6_address() {
	check_json
	expect_eq "$(jget "d['suggestions']['master_addr']")" "$(cluster_node_ip6 1)" "master_addr" || return 1
	expect_eq "$(jget "d['suggestions']['env']['MASTER_ADDR']")" "$(cluster_node_ip6 1)" "env MASTER_ADDR" || return 1
	expect_eq "$(jget "d['suggestions']['master_port']")" 29500 "master_port"
}

t_init_method_brackets_the_address() {
	check_json
	expect_eq "$(jget "d['suggestions']['init_method']")" "tcp://[$(cluster_node_ip6 1)]:29500" "init_method"
}

t_nccl_and_gloo_ifname_without_a_family() {
	local i
	check_json
	expect_eq "$(jget "d['suggestions']['env'].get('NCCL_SOCKET_IFNAME')")" eth0 "NCCL_SOCKET_IFNAME" || return 1
	for ((i = 1; i <= N; i++)); do
		expect_eq "$(var "$i" GLOO_SOCKET_IFNAME)" eth0 "node$i GLOO_SOCKET_IFNAME" || return 1
		# NCCL's own pick on eth0 is its IPv6 address: no family is needed
		expect_eq "$(var "$i" NCCL_SOCKET_FAMILY)" "" "node$i NCCL_SOCKET_FAMILY" || return 1
	done
}

t_torchrun_lines_take_the_bare_address() {
	check_json
	expect_eq "$(jget "d['suggestions']['torchrun']['node3']")" \
		"torchrun --nnodes=3 --node_rank=2 --nproc_per_node=1 --master_addr=$(cluster_node_ip6 1) --master_port=29500 train.py" \
		"node3's torchrun line"
}

t_text_report_shows_the_url_form() {
	cd_head check -w "node[1-$N]" --no-firewall
	expect_eq "$rc" 0 "check's exit status" || return 1
	expect_match "$out" "MASTER_ADDR=$(cluster_node_ip6 1)\$" "MASTER_ADDR line" || return 1
	expect_match "$out" "init_method=tcp://\[$(cluster_node_ip6 1)\]:29500 " "init_method line"
}

t_env_prints_the_ipv6_exports() {
	cd_head env -w "node[1-$N]" --no-firewall
	expect_eq "$rc" 0 "env's exit status" || return 1
	expect_eq "$(grep -c '^export MASTER_ADDR='"$(cluster_node_ip6 1)"'$' <<<"$out")" "$N" "MASTER_ADDR export lines" || return 1
	expect_eq "$(grep -c '^export NCCL_SOCKET_IFNAME=eth0$' <<<"$out")" "$N" "NCCL_SOCKET_IFNAME export lines" || return 1
	expect_eq "$(grep -c '^export GLOO_SOCKET_IFNAME=eth0$' <<<"$out")" "$N" "GLOO_SOCKET_IFNAME export lines" || return 1
	expect_eq "$(grep -c 'NCCL_SOCKET_FAMILY' <<<"$out")" 0 "NCCL_SOCKET_FAMILY lines"
}

t_real_nccl_picks_the_suggested_address() {
	local i env
	[[ -x ${NCCL_ORACLE:-} ]] || { echo "    (no NCCL: skipped)"; return 0; }
	check_json
	for ((i = 1; i <= N; i++)); do
		expect_eq "$(var "$i" NCCL_SOCKET_IFNAME)" eth0 "node$i NCCL_SOCKET_IFNAME" || return 1
		read -r -a env <<<"$(suggested_env "$i")"
		expect_eq "$(real_nccl "$i" "${env[@]}")" "eth0:$(cluster_node_ip6 "$i")" "NCCL's bootstrap on node$i" || return 1
	done
}

# gloo_pair A B ENV...: a Gloo group of ranks 0 (node A) and 1 (node B) under the suggested
# GLOO_SOCKET_IFNAME and ENV (init_method= or MASTER_ADDR/MASTER_PORT), one allreduce;
# each rank prints "sum 3.0" on success within 20 s
gloo_pair() {
	local a=$1 b=$2 r pids=() node
	shift 2
	local py='import datetime, os, sys, torch, torch.distributed as dist
kw = {"init_method": os.environ["INIT"]} if os.environ.get("INIT") else {}
dist.init_process_group("gloo", rank=int(sys.argv[1]), world_size=2,
                        timeout=datetime.timedelta(seconds=20), **kw)
x = torch.ones(1) * (dist.get_rank() + 1)
dist.all_reduce(x)
print("sum", x.item(), flush=True)'
	for r in 0 1; do
		if ((r == 0)); then node=$a; else node=$b; fi
		cluster_node_exec "$node" timeout 30 env GLOO_SOCKET_IFNAME="$(var "$node" GLOO_SOCKET_IFNAME)" "$@" \
			/usr/bin/python3 -c "$py" "$r" >"$CD_RUN/gloo$r.log" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for r in 0 1; do
		grep -qx 'sum 3.0' "$CD_RUN/gloo$r.log" || { echo "    rank $r:"; tail -5 "$CD_RUN/gloo$r.log"; return 1; }
	done
}

t_gloo_group_starts_with_the_suggested_init_method() {
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || { echo "    (no torch: skipped)"; return 0; }
	check_json
	gloo_pair 1 3 INIT="$(jget "d['suggestions']['init_method']")"
}

t_gloo_group_starts_with_the_suggested_master_addr() {
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || { echo "    (no torch: skipped)"; return 0; }
	check_json
	gloo_pair 1 2 MASTER_ADDR="$(var 1 MASTER_ADDR)" MASTER_PORT="$(var 1 MASTER_PORT)"
}

# An IPv4 address on node2's data NIC that no peer can reach (none has IPv4): NCCL, free to take
# any family, takes it first; AF_INET6 is then suggested, and AF_INET never.
t_family_inet6_only_where_nccl_would_take_ipv4() {
	local i env
	ip -n "$(cluster_node_ns 2)" addr add 192.0.2.12/24 dev eth0 || return 1
	fresh=1 check_json
	ip -n "$(cluster_node_ns 2)" addr del 192.0.2.12/24 dev eth0
	rm -f "$CD_RUN/check.json"
	expect_eq "$(jget "d['suggestions']['master_addr']")" "$(cluster_node_ip6 1)" "master_addr" || return 1
	for ((i = 1; i <= N; i++)); do
		expect_eq "$(var "$i" NCCL_SOCKET_IFNAME)" eth0 "node$i NCCL_SOCKET_IFNAME" || return 1
		expect_eq "$(var "$i" NCCL_SOCKET_FAMILY)" AF_INET6 "node$i NCCL_SOCKET_FAMILY" || return 1
	done
	[[ -x ${NCCL_ORACLE:-} ]] || return 0
	ip -n "$(cluster_node_ns 2)" addr add 192.0.2.12/24 dev eth0 || return 1
	read -r -a env <<<"$(suggested_env 2)"
	expect_eq "$(real_nccl 2 NCCL_SOCKET_IFNAME=eth0)" "eth0:192.0.2.12" "NCCL's bootstrap on node2 without a family" &&
		expect_eq "$(real_nccl 2 "${env[@]}")" "eth0:$(cluster_node_ip6 2)" "NCCL's bootstrap on node2 as suggested"
	local ok=$?
	ip -n "$(cluster_node_ns 2)" addr del 192.0.2.12/24 dev eth0
	return $ok
}

# The jumbo black hole on the IPv6-only network: the bulk proof stalls between node2 and node3,
# and the UDP probe (IPV6_DONTFRAG) finds that 1500 passes and 9000 does not. Changes the
# cluster for good: keep it last.
t_ipv6_jumbo_blackhole_is_found_and_the_probe_finds_1500() {
	cluster_trap_jumbo_blackhole 2 3 || return 1
	rm -f "$CD_RUN/check.json"
	fresh=1 check_json
	expect_eq "$(jget "','.join(sorted(set(n for f in d['findings'] if f['id'] == 'path-mtu-blackhole' for n in f['nodes'])))")" \
		"node2,node3" "nodes of path-mtu-blackhole" || return 1
	expect_eq "$(jget "sorted(set((m['from'], m['to'], m['pmtu'], m['pmtu_max']) for m in d['matrix'] if m['bulk'] == 'stalled'))")" \
		"[('node2', 'node3', 1500, 9000)]" "the stalled pair's probe" || return 1
	expect_match "$(jget "[f['message'] for f in d['findings'] if f['id'] == 'path-mtu-blackhole']")" \
		"the largest frame proven to pass is 1500 bytes \(node2 -> node3 carried UDP datagrams" "message"
}

itest_need_root
CD_QUIET=1 cluster_up "$N" --ipv6-only >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
itest_run_all
