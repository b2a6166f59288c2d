#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The RDMA proof between every pair of nodes (issue 36, item 4), inside check's reachability
# matrix (docs/protocol.md, "The RDMA proof"), on a namespace cluster whose nodes have the stand-in
# HCA (tests/fakes/fake_ibverbs.c, built as libibverbs.so.1): each node reads its own fixture tree
# ($DIR/nI: roce-v2-idx3 with the node's own namespace IPv4 in its IPv4 GIDs, 2 (v1) and 3 (v2)),
# with the stand-in where the tree keeps libibverbs (usr/lib64/libibverbs.so.1). The stand-in's
# wire goes to port 4791 of the address the destination GID encodes, so a real nft rule between
# two namespaces makes that pair's write fail as a fabric would. The tree a node reads is the one
# its file $DIR/rootI names, none when the file is absent (the node's own /sys: no RDMA here); its
# login also reads $DIR/envI where a test writes one.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=rdma_pairs

DIR="" # the trees, in the /tmp the nodes share
trap 'tui_stop; [[ -n $DIR ]] && rm -rf "$DIR"' EXIT

FAKE=$CD_TOP/build/fakes/ibverbs/libibverbs.so.1
CHECK=(check -w 'node[1-3]' --json --probe-timeout 3000)

# gid_of_ip A.B.C.D: the IPv4-mapped GID as sysfs writes it
gid_of_ip() {
	local IFS=.
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

# tree NAME NODE [no-verbs|polling]: $DIR/NAME from roce-v2-idx3 with NODE's IPv4 in its GIDs
tree() {
	local t=$DIR/$1 ip gid port
	rm -rf "$t"
	cp -a "$CD_TOP/tests/fixtures/rdma/roce-v2-idx3" "$t" || return 1
	port=$t/sys/class/infiniband/mlx5_0/ports/1
	gid=$(gid_of_ip "$(cluster_node_ip "$2")")
	echo "$gid" >"$port/gids/2"
	echo "$gid" >"$port/gids/3"
	case ${3:-} in
	no-verbs) rm -f "$t/usr/lib64/libibverbs.so.1" ;;
	polling)
		echo "2: INIT" >"$port/state"
		echo "2: Polling" >"$port/phys_state"
		cp "$FAKE" "$t/usr/lib64/libibverbs.so.1"
		;;
	*) cp "$FAKE" "$t/usr/lib64/libibverbs.so.1" ;;
	esac
	chmod -R a+rX "$t"
}

t_setup_cluster_with_a_stand_in_hca_per_node() {
	[[ -f $FAKE ]] || make -s -C "$CD_TOP" build/fakes/ibverbs/libibverbs.so.1 >/dev/null || return 1
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	DIR=$(mktemp -d /tmp/cdrdmapairs.XXXXXX)
	chmod a+rx "$DIR"
	for i in 1 2 3; do
		tree "n$i" "$i" || return 1
		echo "$DIR/n$i" >"$DIR/root$i"
		cluster_node_env "$i" "[ -f $DIR/root$i ] && export CLUSTERDOC_SYSFS_ROOT=\$(cat $DIR/root$i)" \
			"[ -f $DIR/env$i ] && . $DIR/env$i" || return 1
	done
}

# [(from, to, rdma, why)] of the matrix rows that carry the proof
PAIRS='sorted((r["from"], r["to"], r["rdma"], r.get("rdma_why")) for r in d["matrix"] if "rdma" in r)'

t_every_pair_writes_ok_through_the_stand_in() {
	cd_head "${CHECK[@]}"
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'ok', None), ('node1', 'node3', 'ok', None), ('node2', 'node3', 'ok', None)]" \
		"one proof per pair ($err)" || return 1
	expect_eq "$(jget "sorted({(r['rdma_bytes'] > 0, r['rdma_ms'] >= 0, r['rdma_local']['gid_index'], r['rdma_peer']['gid_index'], r['active_mtu']) for r in d['matrix'] if 'rdma' in r})")" \
		"[(True, True, 3, 3, 4096)]" "bytes, time, NCCL's GID index 3 at both ends, the MTU" || return 1
	expect_eq "$(jget "[f['id'] for f in d['findings'] if f['id'] == 'rdma-pair-failed']")" "[]" \
		"no rdma-pair-failed" || return 1
	cd_head check -w 'node[1-3]' --probe-timeout 3000
	expect_match "$out" "RDMA PAIRS" "the text's section" || return 1
	expect_match "$out" "node1 -> node2  TCP ok  RDMA ok [0-9.]+ MiB in [0-9.]+ ms \([0-9]+ MB/s\), mlx5_0:1 gid 3 -> mlx5_0:1 gid 3, MTU 4096" \
		"the pair's line"
}

t_a_node_without_libibverbs_makes_its_pairs_not_tested() {
	tree n2x 2 no-verbs || return 1
	echo "$DIR/n2x" >"$DIR/root2"
	cd_head "${CHECK[@]}"
	echo "$DIR/n2" >"$DIR/root2"
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'not tested', 'peer has no libibverbs'), ('node1', 'node3', 'ok', None), ('node2', 'node3', 'not tested', 'no libibverbs')]" \
		"node2's pairs ($err)"
}

t_a_port_in_polling_makes_its_pairs_not_tested() {
	tree n2p 2 polling || return 1
	echo "$DIR/n2p" >"$DIR/root2"
	cd_head "${CHECK[@]}"
	echo "$DIR/n2" >"$DIR/root2"
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'not tested', 'peer has no ACTIVE port'), ('node1', 'node3', 'ok', None), ('node2', 'node3', 'not tested', 'no ACTIVE port')]" \
		"node2's pairs ($err)"
}

# RoCE v2 is UDP to port 4791 (the stand-in carries it in TCP to the same port): node2 drops it
# from node1 only. The pair's TCP connection still passes; its write gets no acknowledgement and
# the requester's retries run out.
t_an_nft_drop_between_two_nodes_fails_exactly_that_pair() {
	local ip1
	ip1=$(cluster_node_ip 1)
	cluster_node_exec 2 nft -f - <<EOF || return 1
add table inet cdrdma
add chain inet cdrdma input { type filter hook input priority 0; policy accept; }
add rule inet cdrdma input ip saddr $ip1 meta l4proto { tcp, udp } th dport 4791 drop
EOF
	cd_head "${CHECK[@]}"
	local json=$out
	cd_head check -w 'node[1-3]' --probe-timeout 3000
	cluster_node_exec 2 nft delete table inet cdrdma
	expect_match "$out" "node1 -> node2  TCP ok  RDMA failed: transport retry counter exceeded \(mlx5_0:1 gid 3 -> mlx5_0:1 gid 3, MTU 4096\)" \
		"the text's line" || return 1
	out=$json
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'failed', 'transport retry counter exceeded'), ('node1', 'node3', 'ok', None), ('node2', 'node3', 'ok', None)]" \
		"the dropped pair alone ($err)" || return 1
	expect_eq "$(jget "[(f['severity'], sorted(f['nodes'])) for f in d['findings'] if f['id'] == 'rdma-pair-failed']")" \
		"[('error', ['node1', 'node2'])]" "rdma-pair-failed on exactly that pair" || return 1
	expect_match "$(jget "[f['message'] for f in d['findings'] if f['id'] == 'rdma-pair-failed'][0]")" \
		"an RDMA write from node1 \(mlx5_0:1, GID index 3\) to node2 \(mlx5_0:1, GID index 3\) failed: transport retry counter exceeded" \
		"the message names both nodes and the verbs status" || return 1
	expect_match "$(jget "[f['message'] for f in d['findings'] if f['id'] == 'rdma-pair-failed'][0]")" \
		"the same way \(GID index 3 at both ends, the plan's and the login's\)$" \
		"the message says the indexes are the ones the job will use"
}

# node2's login sets NCCL_IB_GID_INDEX=0 (a link-local RoCE v1 GID, roce-gid-mismatch), as in the
# fault run's SETUP; the plan run and mnist apply sets 3 there. The pair is proven at the plan's
# index, the one the job uses: node1 -> node2 writes ok, its line says which index and why, and
# `run` is not refused for rdma-pair-failed (it was, when the proof wrote to the login's 0, which
# no job of clusterdoc uses). Every login has an unlimited memlock (as in test_journey.sh), so
# the dry run has nothing else to refuse.
t_a_login_gid_index_the_plan_replaces_is_not_what_the_pair_proves() {
	local i json text
	[[ -f $CD_TOP/build/fakes/libmemlock_unlimited.so ]] ||
		make -s -C "$CD_TOP" build/fakes/libmemlock_unlimited.so >/dev/null || return 1
	for i in 1 2 3; do
		echo "export LD_PRELOAD=$CD_TOP/build/fakes/libmemlock_unlimited.so" >"$DIR/env$i"
	done
	echo "export NCCL_IB_GID_INDEX=0" >>"$DIR/env2"
	cd_head "${CHECK[@]}"
	json=$out
	cd_head check -w 'node[1-3]' --probe-timeout 3000
	text=$out
	cd_head run -w 'node[1-3]' --dry-run -- x.py
	rm -f "$DIR"/env[123]
	expect_eq "$rc" 0 "run --dry-run's exit status ($err)" || return 1
	expect_eq "$(grep -c 'rdma-pair-failed' <<<"$err")" 0 "rdma-pair-failed in run's output" || return 1
	expect_match "$out" "NCCL_IB_GID_INDEX=3" "the index the dry run sets" || return 1
	expect_match "$text" "node1 -> node2  TCP ok  RDMA ok [0-9.]+ MiB in [0-9.]+ ms \([0-9]+ MB/s\), mlx5_0:1 gid 3 -> mlx5_0:1 gid 3, MTU 4096; node1 GID index 3, the plan's and the login's; node2 GID index 3, the plan's \(the login's 0 is what run and mnist replace\)$" \
		"the pair's line" || return 1
	out=$json
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'ok', None), ('node1', 'node3', 'ok', None), ('node2', 'node3', 'ok', None)]" \
		"every pair proven ok ($err)" || return 1
	expect_eq "$(jget "[(r['rdma_peer']['gid_index'], r['rdma_peer']['gid_from'], r['rdma_peer']['login_gid_index']) for r in d['matrix'] if 'rdma' in r and r['to'] == 'node2']")" \
		"[(3, 'plan', 0)]" "node2's end: the plan's 3, its login's 0" || return 1
	expect_eq "$(jget "[f['avoided_by'] for f in d['findings'] if f['id'] == 'roce-gid-mismatch']")" \
		"['on node2 by NCCL_IB_GID_INDEX=3']" "the login's index is still named, and avoided"
}

# node3 without a tree reads this machine's own /sys: libibverbs is installed (scripts/deps.sh),
# there is no RDMA device.
t_a_node_without_a_tree_has_no_rdma_device() {
	local lib
	lib=$(ls /usr/lib/*-linux-gnu/libibverbs.so.1 /usr/lib64/libibverbs.so.1 2>/dev/null | head -1)
	[[ -n $lib ]] || { echo "    SKIP: no libibverbs on this machine"; return 0; }
	rm -f "$DIR/root3"
	cd_head "${CHECK[@]}"
	echo "$DIR/n3" >"$DIR/root3"
	expect_eq "$(jget "$PAIRS")" \
		"[('node1', 'node2', 'ok', None), ('node1', 'node3', 'not tested', 'peer has no RDMA device'), ('node2', 'node3', 'not tested', 'peer has no RDMA device')]" \
		"node3's pairs ($err)"
}

# Without an RDMA port on any node the matrix carries no proof and no "not tested" row, and the
# text has no RDMA section: a cluster without RDMA reads as before.
t_a_cluster_without_rdma_ports_carries_no_proof() {
	rm -f "$DIR"/root[123]
	cd_head "${CHECK[@]}"
	local json=$out
	cd_head check -w 'node[1-3]' --probe-timeout 3000
	for i in 1 2 3; do echo "$DIR/n$i" >"$DIR/root$i"; done
	expect_eq "$(grep -c 'RDMA PAIRS' <<<"$out")" 0 "the text's RDMA section" || return 1
	out=$json
	expect_eq "$(jget "$PAIRS")" "[]" "no row with rdma ($err)"
}

# The TUI's Network grid sums up the selected pair with its RDMA proof.
t_the_tui_grid_shows_the_selected_pairs_rdma_proof() {
	tui_start -- -w 'node[1-3]' --probe-timeout 3000 || return 1
	tui_wait 'check done: 3 node\(s\)' 60 || return 1
	tui_keys 2 m
	tui_wait 'REACHABILITY from row to column' 5 || return 1
	tui_keys l
	tui_wait 'node1 -> node2: ok' 5 || return 1
	tui_wait '^   RDMA ok [0-9.]+ MiB in [0-9.]+ ms \([0-9]+ MB/s\), mlx5_0:1 gid 3 -> mlx5_0:1 gid 3' 5 ||
		return 1
	tui_keys q
	tui_stop
}

itest_need_root
itest_run_all
