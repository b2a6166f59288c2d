#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The RDMA facts of `clusterdoc facts` (issue 36) on a namespace cluster whose nodes read their
# own sysfs fixture tree (tests/fixtures/rdma/, the kernel's documented layout), named by
# CLUSTERDOC_SYSFS_ROOT in each node's login environment; the tree a node reads is the one its
# file $DIR/rootN names, so a test can give a node another scenario:
#   node1  ib-hdr-8 (8 HCAs, InfiniBand HDR) and a stale NCCL_IB_HCA in its login;
#   node2  roce-v2-idx3 (RoCE v2, the IPv4 v2 GID at index 3) and a real `ulimit -l 64`;
#   node3  no tree: the node's own /sys, which has no RDMA device.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=rdma_facts

DIR="" # the fixture trees, in the /tmp the nodes share
trap 'tui_stop; [[ -n $DIR ]] && rm -rf "$DIR"' EXIT

t_setup_cluster_with_a_fixture_root_per_node() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	DIR=$(mktemp -d /tmp/cdrdma.XXXXXX)
	cp -a "$CD_TOP/tests/fixtures/rdma/." "$DIR/" && chmod -R a+rX "$DIR" || return 1
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	echo "$DIR/roce-v2-idx3" >"$DIR/root2"
	for i in 1 2; do
		cluster_node_env "$i" "export CLUSTERDOC_SYSFS_ROOT=\$(cat $DIR/root$i)" || return 1
	done
	cluster_node_env 1 "export NCCL_IB_HCA=mlx5_9" "export NCCL_SOCKET_IFNAME=eth0" || return 1
	cluster_node_env 2 "ulimit -l 64"
}

node() { echo "d['nodes'][$(($1 - 1))]"; }
port() { echo "$(node "$1")['rdma'][$2]"; }

t_each_node_reports_the_ports_of_its_own_tree() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget "[p['device'] for p in $(node 1)['rdma']]")" \
		"['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6', 'mlx5_7']" \
		"node1's HCAs" || return 1
	expect_eq "$(jget "sorted({(p['state'], p['phys_state'], p['link_layer'], p['rate_gbps'], p['width']) for p in $(node 1)['rdma']})")" \
		"[('ACTIVE', 'LinkUp', 'InfiniBand', 200, '4X')]" "node1's ports" || return 1
	expect_eq "$(jget "($(port 1 4)['lid'], $(port 1 4)['numa_node'], $(port 1 4)['pci_path'], $(port 1 4)['gids'][0]['family'])")" \
		"('0x15', 1, ['0000:00:01.0', '0000:9a:00.0'], 'ib')" "node1's mlx5_4" || return 1
	expect_eq "$(jget "[(g['index'], g['type'], g['family'], g['address']) for g in $(port 2 0)['gids']]")" \
		"[(0, 'IB/RoCE v1', 'link-local', 'fe80::ac0:ebff:fe12:3456'), (1, 'RoCE v2', 'link-local', 'fe80::ac0:ebff:fe12:3456'), (2, 'IB/RoCE v1', 'ipv4', '10.0.11.12'), (3, 'RoCE v2', 'ipv4', '10.0.11.12')]" \
		"node2's GID table (the zero entry 4 left out)" || return 1
	expect_eq "$(jget "($(port 2 0)['netdev'], $(port 2 0)['mtu'], $(port 2 0)['lid'])")" \
		"('ens1f0', 9000, None)" "node2's netdev" || return 1
	expect_eq "$(jget "$(node 3)['rdma']")" "[]" "node3 without RDMA" || return 1
	expect_eq "$(jget "[k for k in $(node 3)['errors'] if k.startswith('rdma')]")" "[]" "node3's errors"
}

t_rdma_node_names_verbs_providers_and_peer_memory() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget "[(n['rdma_node']['verbs_lib'], n['rdma_node']['verbs_providers'], n['rdma_node']['peermem']) for n in d['nodes'][:2]]")" \
		"[('/usr/lib64/libibverbs.so.1', ['mlx5'], 'nvidia_peermem'), ('/usr/lib64/libibverbs.so.1', ['mlx5'], 'nvidia_peermem')]" \
		"nodes 1 and 2" || return 1
	expect_eq "$(jget "$(node 3)['rdma_node']['peermem']")" None "node3's peer memory"
}

t_memlock_is_the_limit_ulimit_gives_the_login() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget "($(node 2)['rdma_node']['memlock_bytes'], $(node 2)['rdma_node']['memlock_unlimited'])")" \
		"(65536, False)" "node2 under ulimit -l 64" || return 1
	expect_eq "$(jget "$(node 1)['rdma_node']['memlock_bytes'] != 65536")" True "node1 without it"
}

t_the_logins_nccl_ib_and_net_variables_are_kept() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget "$(node 1)['rdma_node']['nccl_vars']")" "{'NCCL_IB_HCA': 'mlx5_9'}" \
		"node1's stale NCCL_IB_HCA" || return 1
	expect_eq "$(jget "$(node 2)['rdma_node']['nccl_vars']")" "{}" "node2 sets none"
}

t_bad_input_is_named_per_hca_and_port_and_the_facts_still_answer() {
	echo "$DIR/bad-input" >"$DIR/root2"
	cd_head facts -w 'node[1-3]' --json
	echo "$DIR/roce-v2-idx3" >"$DIR/root2"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget "$(node 2)['errors']['rdma:mlx5_1']")" "no ports" "the HCA without ports" || return 1
	expect_match "$(jget "$(node 2)['errors']['rdma:mlx5_0/1']")" \
		"^state: not in the kernel's format: \"4:\"; rate: cannot read .*/rate: Is a directory; gid_attrs/types/0: not in the kernel's format: \"RoCE v3\"; gids/1: not a GID: \"fe80:0000:00\"$" \
		"mlx5_0 port 1's bad files" || return 1
	expect_eq "$(jget "($(port 2 0)['state'], $(port 2 0)['phys_state'], $(port 2 0)['rate'], [g['index'] for g in $(port 2 0)['gids']])")" \
		"(None, 'LinkUp', None, [0])" "what stands (the zero GID left out)" || return 1
	expect_eq "$(jget "len($(node 1)['rdma'])")" 8 "node1 untouched"
}

t_other_scenarios_polling_no_verbs_and_the_v2_gid_at_index_1() {
	echo "$DIR/port-polling" >"$DIR/root1"
	echo "$DIR/no-verbs" >"$DIR/root2"
	cd_head facts -w 'node[1-2]' --json
	local polling=$out
	echo "$DIR/roce-v2-idx1" >"$DIR/root2"
	cd_head facts -w 'node[1-2]' --json
	local idx1=$out
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	echo "$DIR/roce-v2-idx3" >"$DIR/root2"
	out=$polling
	expect_eq "$(jget "[(p['device'], p['state'], p['phys_state']) for p in $(node 1)['rdma']]")" \
		"[('mlx5_0', 'INIT', 'Polling'), ('mlx5_1', 'ACTIVE', 'LinkUp')]" "port-polling" || return 1
	expect_eq "$(jget "(len($(node 2)['rdma']), $(node 2)['rdma_node']['verbs_lib'], $(node 2)['rdma_node']['verbs_providers'], $(node 2)['rdma_node']['peermem'])")" \
		"(1, None, [], None)" "no-verbs" || return 1
	out=$idx1
	expect_eq "$(jget "[(g['index'], g['address']) for g in $(port 2 0)['gids'] if g['type'] == 'RoCE v2' and g['family'] == 'ipv4']")" \
		"[(1, '10.0.11.13')]" "roce-v2-idx1"
}

t_the_facts_table_shows_one_rdma_word_per_node() {
	cd_head facts -w 'node[1-3]'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" ' GPUS HEALTH +RDMA +SKEW' "the column" || return 1
	expect_match "$out" '^node1 .* 8x200G ib +[-+][0-9]+ms' "node1" || return 1
	expect_match "$out" '^node2 .* 1x100G roce +[-+][0-9]+ms' "node2" || return 1
	expect_match "$out" '^node3 .* - +[-+][0-9]+ms' "node3" || return 1
	echo "$DIR/port-polling" >"$DIR/root1"
	cd_head facts -w node1
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	expect_match "$out" '^node1 .* 1x200G ib \+1down +[-+][0-9]+ms' "a port not ACTIVE"
}

# The facts reach `check`'s RDMA findings (probes/diagnose_rdma.c), each on exactly its nodes:
# node1's NCCL_IB_HCA names no HCA it has; the memlock of node1 (this machine's default, 8 MiB:
# no process here may raise it) and node2 (64 KiB) is below what NCCL registers; node3 has no
# RDMA and gets none. Then a port in Polling on node1 is a down port there.
t_check_puts_each_rdma_finding_on_exactly_its_node() {
	local rows='[(f["id"], sorted(f.get("nodes") or [])) for f in d["findings"] if f["id"].startswith(("rdma-", "nccl-ib-", "gpudirect-"))]'
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	expect_eq "$(jget "sorted($rows)")" \
		"[('nccl-ib-hca-stale', ['node1']), ('rdma-memlock-low', ['node1', 'node2'])]" "the RDMA findings ($err)" || return 1
	echo "$DIR/port-polling" >"$DIR/root1"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	expect_eq "$(jget "[r for r in sorted($rows) if r[0] == 'rdma-port-down']")" \
		"[('rdma-port-down', ['node1'])]" "a port in Polling"
}

# A job whose collectives use Gloo alone (`run --backend gloo`, `mnist --backend gloo`) never opens
# a verbs device: the findings of NCCL's IB transport alone (node1's and node2's rdma-memlock-low,
# node1's nccl-ib-hca-stale) are printed, not refused; the same job that may use NCCL (run's
# default, mnist --backend nccl) is refused on them as before. mnist stops after the gate, on its
# missing data directory.
t_a_gloo_job_is_not_refused_for_findings_of_nccls_ib_transport_alone() {
	cd_head run -w 'node[1-2]' --launcher none --dry-run -- true
	expect_eq "$rc" 2 "run's exit status without --backend" || return 1
	expect_match "$err" "^  rdma-memlock-low: " "run's refusal" || return 1
	cd_head run -w 'node[1-2]' --launcher none --backend gloo --dry-run -- true
	expect_eq "$rc" 0 "run's exit status with --backend gloo ($err)" || return 1
	expect_match "$err" "^# not for this job: rdma-memlock-low \(NCCL's IB transport only\): " \
		"run's line for rdma-memlock-low" || return 1
	cd_head mnist -w 'node[1-2]' --mode torch --backend gloo --data-dir /nonexistent
	expect_match "$err" "^# not for this job: rdma-memlock-low \(NCCL's IB transport only\): " \
		"mnist's line for rdma-memlock-low" || return 1
	expect_eq "$(grep -c 'would break the job' <<<"$err")" 0 "mnist refused a Gloo job ($err)" || return 1
	cd_head mnist -w 'node[1-2]' --mode torch --backend nccl --data-dir /nonexistent
	expect_eq "$rc" 2 "mnist's exit status with --backend nccl" || return 1
	expect_match "$err" "^  rdma-memlock-low: " "mnist's refusal" || return 1
	# the TUI's R judges the line it is given the same way: a Gloo run starts without asking
	TUI_SIZE=160x40 tui_start -- tui -w 'node[1-2]' --probe-timeout 1000 || return 1
	tui_wait 'check done: 2 node\(s\)' 60 || { tui_stop; return 1; }
	tui_keys 6 R
	tui_wait '^Run:' 5 || { tui_stop; return 1; }
	tui_keys C-u
	tui_keys -l -- "--backend gloo none: echo gloo-ran"
	tui_keys Enter
	tui_wait 'ok: exit 0 on every node, 2 rank\(s\)' 60 || { tui_stop; return 1; }
	expect_eq "$(tui_screen | grep -c 'Start anyway')" 0 "R asked about a Gloo run" || { tui_stop; return 1; }
	tui_keys R
	tui_wait '^Run:' 5 || { tui_stop; return 1; }
	tui_keys C-u
	tui_keys -l -- "none: echo nccl-run"
	tui_keys Enter
	tui_wait 'may break the job: rdma-memlock-low.*Start anyway\?' 5 || { tui_stop; return 1; }
	tui_keys n Enter
	tui_keys q
	tui_stop
}

# node3 reads the tree its file $DIR/root3 names and sources $DIR/env3, each only while it exists
# (the cases below remove them), so the cases before see node3 without RDMA.
node3_reads_root3() {
	[[ -e $DIR/node3-env ]] && return
	cluster_node_env 3 "[ -f $DIR/root3 ] && export CLUSTERDOC_SYSFS_ROOT=\$(cat $DIR/root3)" \
		"[ -f $DIR/env3 ] && . $DIR/env3" && touch "$DIR/node3-env"
}

# What NCCL would pick (probes/nccl_ib.c) on node2 (roce-v2-idx3: the IPv4 RoCE v2 GID at index 3)
# and node3 (roce-v2-idx1: at index 1): the same kind at another index is no mismatch. Then
# node3's login sets NCCL_IB_GID_INDEX=0, its RoCE v2 link-local entry: a mismatch on node3 alone,
# the evidence naming what each node picks. node1's NCCL_IB_HCA matches none of its HCAs, so it
# uses sockets and is not among the RoCE nodes.
t_roce_gids_of_one_kind_at_other_indexes_match_and_a_link_local_one_does_not() {
	local gid='[(f["severity"], sorted(f.get("nodes") or []), f["evidence"]) for f in d["findings"] if f["id"] == "roce-gid-mismatch"]'
	node3_reads_root3 || return 1
	echo "$DIR/roce-v2-idx1" >"$DIR/root3"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	local same=$out
	echo "export NCCL_IB_GID_INDEX=0" >"$DIR/env3"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	rm -f "$DIR/root3" "$DIR/env3"
	local forced=$out
	out=$same
	expect_eq "$(jget "$gid")" "[]" "index 3 and index 1, both IPv4 RoCE v2 ($err)" || return 1
	expect_eq "$(jget "[f['id'] for f in d['findings'] if f['id'] == 'nccl-ib-fallback']")" "[]" \
		"no fallback but node1's, named by nccl-ib-hca-stale" || return 1
	out=$forced
	expect_eq "$(jget "$gid")" \
		"[('error', ['node3'], ['node2 mlx5_0:1 GID 3 RoCE v2 ipv4 10.0.11.12', 'node3 mlx5_0:1 GID 0 RoCE v2 link-local fe80::ac0:ebff:fe12:3457'])]" \
		"NCCL_IB_GID_INDEX=0 on node3"
}

# The no-verbs tree (an ACTIVE port, no libibverbs.so.1) on node3 beside node2's RoCE: NCCL falls
# back to sockets there, an error as node2 uses RDMA.
t_a_node_without_libibverbs_is_nccl_ib_fallback() {
	node3_reads_root3 || return 1
	echo "$DIR/no-verbs" >"$DIR/root3"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	rm -f "$DIR/root3"
	expect_eq "$(jget "[(f['severity'], sorted(f.get('nodes') or []), f['evidence']) for f in d['findings'] if f['id'] == 'nccl-ib-fallback']")" \
		"[('error', ['node3'], ['node3: 1 RDMA port, NCCL will use NET/Socket: no libibverbs'])]" "node3 ($err)"
}

# The suggested NCCL_IB_GID_INDEX (probes/ib_suggest.c) on roce-v2-idx1 (node1) and roce-v2-idx3
# (node2): no index holds a RoCE v2 IPv4 GID on both, so each node gets its own, said so, and each
# value is, in that node's own facts, a RoCE v2 IPv4 entry. node1's stale NCCL_IB_HCA (mlx5_9)
# would leave it on sockets, so NCCL_IB_HCA==mlx5_0 is suggested too, the same on both nodes.
t_check_suggests_a_roce_gid_index_valid_on_each_node_idx1_and_idx3() {
	local sugg='d["suggestions"]' facts
	echo "$DIR/roce-v2-idx1" >"$DIR/root1"
	cd_head facts -w 'node[1-2]' --json
	facts=$out
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	expect_eq "$(jget "[$sugg['per_node'][h].get('NCCL_IB_GID_INDEX') for h in ('node1', 'node2', 'node3')]")" \
		"['1', '3', None]" "the GID index per node ($err)" || return 1
	expect_eq "$(jget "($sugg['env'].get('NCCL_IB_GID_INDEX'), $sugg['env'].get('NCCL_IB_HCA'))")" \
		"(None, '=mlx5_0')" "the values common to every node" || return 1
	expect_match "$(jget "$sugg['notes']")" "NCCL_IB_GID_INDEX: no index holds a RoCE v2 GID of the same family on every RoCE node, so it is given per node" \
		"the note" || return 1
	out=$facts
	expect_eq "$(jget "[[(g['type'], g['family']) for g in n['rdma'][0]['gids'] if g['index'] == i] for n, i in zip(d['nodes'], (1, 3))]")" \
		"[[('RoCE v2', 'ipv4')], [('RoCE v2', 'ipv4')]]" "each index in its node's own GID table"
}

# The same in check's text and in `clusterdoc env`: one line per node for the GID index.
t_check_text_and_env_give_each_node_its_own_gid_index() {
	echo "$DIR/roce-v2-idx1" >"$DIR/root1"
	cd_head check -w 'node[1-3]' --probe-timeout 1000
	local text=$out
	cd_head env -w 'node[1-3]' --probe-timeout 1000
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	expect_match "$text" '^  all nodes:  NCCL_IB_HCA==mlx5_0$' "check's common NCCL_IB_HCA" || return 1
	expect_match "$text" '^  node1:  NCCL_IB_GID_INDEX=1$' "check's line for node1" || return 1
	expect_match "$text" '^  node2:  NCCL_IB_GID_INDEX=3$' "check's line for node2" || return 1
	expect_eq "$(awk '/^# node/{n=$2} /NCCL_IB_/{print n, $2}' <<<"$out" | tr '\n' ' ')" \
		"node1 NCCL_IB_HCA==mlx5_0 node1 NCCL_IB_GID_INDEX=1 node2 NCCL_IB_HCA==mlx5_0 node2 NCCL_IB_GID_INDEX=3 " \
		"env's lines"
}

# NCCL_IB_HCA on ib-hdr-8 only where it changes NCCL's pick: node1's stale NCCL_IB_HCA=mlx5_9
# leaves NCCL on sockets there, so node1 gets its 8 ACTIVE HCAs (and node2, roce-v2-idx3, its
# one: the two differ, so each node has its own line), and nccl-ib-hca-stale is avoided by it. Then ib-hdr-8 on node2, whose login sets no
# NCCL_IB_HCA, beside a node1 without RDMA: NCCL already takes every port, nothing is suggested.
t_check_suggests_nccl_ib_hca_on_ib_hdr_8_only_where_it_changes_nccls_pick() {
	local sugg='d["suggestions"]' hdr8='=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7'
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	expect_eq "$(jget "[$sugg['per_node'][h].get('NCCL_IB_HCA') for h in ('node1', 'node2', 'node3')]")" \
		"['$hdr8', '=mlx5_0', None]" "NCCL_IB_HCA per node ($err)" || return 1
	expect_eq "$(jget "$sugg['env'].get('NCCL_IB_HCA')")" None "no common value" || return 1
	expect_eq "$(jget "[f['avoided_by'] for f in d['findings'] if f['id'] == 'nccl-ib-hca-stale']")" \
		"['on node1 by NCCL_IB_HCA=$hdr8']" "the stale value is what the suggestion avoids" || return 1
	echo "/" >"$DIR/root1"
	echo "$DIR/ib-hdr-8" >"$DIR/root2"
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	echo "$DIR/ib-hdr-8" >"$DIR/root1"
	echo "$DIR/roce-v2-idx3" >"$DIR/root2"
	# rdma-memlock-low is only found on a node with RDMA ports: node2 read ib-hdr-8
	expect_eq "$(jget "[f['nodes'] for f in d['findings'] if f['id'] == 'rdma-memlock-low']")" \
		"[['node2']]" "node2 has RDMA ports, node1 none" || return 1
	expect_eq "$(jget "[k for h in ('node1', 'node2', 'node3') for k in $sugg['per_node'][h] if k.startswith('NCCL_IB_')]")" \
		"[]" "nothing suggested ($err)"
}

# The two ways the verbs library can be missing for NCCL although ports exist (issue 36, second
# round): no-provider on node3 installs libibverbs only in /opt/rdma-core/lib, which the tree's
# /etc/ld.so.conf names through an include of ld.so.conf.d/*.conf (found as ldconfig would), and
# only the rxe provider, none for its mlx5_core HCA: libibverbs lists no device, so NCCL falls back
# to sockets "no verbs provider for mlx5_0", beside node2's RoCE (an error). node1's ib-hdr-8 HCAs
# name mlx5_core and mlx5.
t_verbs_library_through_ld_so_conf_and_a_missing_provider_per_hca() {
	node3_reads_root3 || return 1
	echo "$DIR/no-provider" >"$DIR/root3"
	cd_head facts -w 'node[1-3]' --json
	local facts=$out
	cd_head check -w 'node[1-3]' --json --probe-timeout 1000
	rm -f "$DIR/root3"
	local checked=$out
	out=$facts
	expect_eq "$(jget "($(node 3)['rdma_node']['verbs_lib'], $(node 3)['rdma_node']['verbs_providers'])")" \
		"('/opt/rdma-core/lib/libibverbs.so.1', ['rxe'])" "node3's library and providers ($err)" || return 1
	expect_eq "$(jget "[(p['device'], p['driver'], p['provider']) for p in $(node 3)['rdma']]")" \
		"[('mlx5_0', 'mlx5_core', None)]" "node3's HCA without its provider" || return 1
	expect_eq "$(jget "sorted({(p['driver'], p['provider']) for p in $(node 1)['rdma']})")" \
		"[('mlx5_core', 'mlx5')]" "node1's HCAs" || return 1
	out=$checked
	expect_eq "$(jget "[(f['severity'], f['nodes'], f['evidence']) for f in d['findings'] if f['id'] == 'nccl-ib-fallback']")" \
		"[('error', ['node3'], ['node3: 1 RDMA port, NCCL will use NET/Socket: no verbs provider for mlx5_0'])]" \
		"the fallback's reason"
}

itest_need_root
itest_run_all
