#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# itest: quiet (its pairs test names the slowest link by timing: a node limited to 200 Mbit/s)
# `clusterdoc bench` on namespace clusters of real sshd nodes: the TCP ring's results are
# exact for 1 to 5 nodes, every size shape and type; the output is nccl-tests'; --progress
# shows the sizes done while the ring runs; pairs name a slowed node; a killed rank ends the
# run naming it and leaves no process behind; NCCL says why it cannot run here and auto falls
# back to tcp; on a node given the fake NCCL (tests/fakes/fake_nccl.c) and a RoCE fixture tree,
# the bench names the network NCCL said it used against the prediction.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=bench

# Short runs: the point here is exactness and behaviour, not speed (tests/bench/ measures it).
SHORT=(--backend tcp --iters 2 --warmup 1 --stall-timeout 3000)

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

# every size of the report: its count, and no wrong element
all_exact() { # expected-number-of-sizes
	expect_eq "$(jget 'len(d["results"])')" "$1" "sizes reported ($err)" || return 1
	expect_eq "$(jget 'sum(r["wrong"] for r in d["results"])')" 0 "wrong elements" || return 1
	expect_eq "$(jget 'all(r["time_us"] > 0 and r["busbw_gbps"] >= 0 for r in d["results"])')" True "timings"
}

# agents still running in the cluster's node namespaces (uploaded as ~/.cache/clusterdoc/agent-SHA)
agents_left() {
	local i pid n=0
	for ((i = 1; i <= CD_N; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			[[ $(cat "/proc/$pid/comm" 2>/dev/null) == agent-* ]] && n=$((n + 1))
		done
	done
	echo "$n"
}

t_ring_is_exact_for_1_to_5_nodes_at_odd_sizes() {
	up 5 || return 1
	local n
	# factor 7 from 4 bytes: 1, 7, 49, ... 7^7 floats: never divisible by N, 2 or the chunk
	for n in 1 2 3 4 5; do
		cd_head bench -w "node[1-$n]" "${SHORT[@]}" -b 4 -e 4M -f 7 --json
		expect_eq "$rc" 0 "exit status with $n node(s) ($err)" || return 1
		expect_eq "$(jget 'd["nranks"]')" "$n" "ranks" || return 1
		expect_eq "$(jget '[r["count"] for r in d["results"]]')" \
			"[1, 7, 49, 343, 2401, 16807, 117649, 823543]" "element counts" || return 1
		all_exact 8 || return 1
	done
	expect_eq "$(jget 'd["backend"]')" tcp "backend"
}

t_every_dtype_is_exact() {
	local t
	for t in float double int32 bfloat16; do
		cd_head bench -w 'node[1-3]' "${SHORT[@]}" --dtype "$t" -b 2 -e 1M -f 9 --json
		expect_eq "$rc" 0 "exit status for $t ($err)" || return 1
		expect_eq "$(jget 'd["results"][0]["type"]')" "$t" "type" || return 1
		all_exact 6 || return 1
	done
}

t_several_ranks_per_node_form_one_ring() {
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" --ranks-per-node 3 -b 1K -e 1M -f 32 --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nranks"]')" 6 "ranks" || return 1
	expect_eq "$(jget '[n["first_rank"] for n in d["nodes"]]')" "[0, 3]" "first ranks" || return 1
	all_exact 3
}

t_text_output_is_nccl_tests_format() {
	cd_head bench -w 'node[1-3]' "${SHORT[@]}" -b 8 -e 32K -f 4
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" '^#\s+size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw\s+#wrong$' "header" || return 1
	expect_match "$out" '^\s+32768\s+8192\s+float\s+sum\s+-1\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+0$' "a row" || return 1
	expect_match "$out" '^# Out of bounds values : 0 OK$' "check line" || return 1
	expect_match "$out" '^# Avg bus bandwidth    : [0-9.e+-]+ $' "average line" || return 1
	expect_match "$out" "node2 +rank 1 +eth0 $(cluster_node_ip 2) +\(NCCL's pick" "node line"
}

# --progress: "sizes N/M done, now B bytes" on stderr, N rising one line per change, B the
# size after the N done; lines before the last (the agents streamed them while the ring ran,
# two ranks per node, so each node reports its slower rank) and the last one N = M.
t_progress_shows_the_sizes_done_while_the_ring_runs() {
	cd_head bench -w 'node[1-3]' "${SHORT[@]}" --iters 20 --ranks-per-node 2 -b 4K -e 8M --progress --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	all_exact 12 || return 1
	python3 - "$err" <<-'EOF' || return 1
		import re, sys
		lines = [l for l in sys.argv[1].splitlines() if " sizes " in l]
		pat = re.compile(r"^clusterdoc bench: sizes (\d+)/12 done(?:, now (\d+) bytes)?$")
		done = []
		for l in lines:
		    m = pat.match(l)
		    if not m:
		        sys.exit(f"    not a progress line: {l!r}")
		    n = int(m.group(1))
		    if n < 12 and int(m.group(2) or 0) != 4096 << n:
		        sys.exit(f"    line {l!r}: the size after {n} done is {4096 << n}")
		    done.append(n)
		if done != sorted(set(done)) or not done or done[-1] != 12:
		    sys.exit(f"    sizes done: {done}, expected rising to 12")
		if len(done) < 2:
		    sys.exit(f"    only {done}: no progress before the end of the sweep")
	EOF
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" -b 4K -e 64K --json
	expect_eq "$rc" 0 "exit status without --progress ($err)" || return 1
	expect_eq "$(grep -c ' sizes ' <<<"$err")" 0 "progress lines without --progress"
}

t_busbw_is_algbw_times_2_n_minus_1_over_n() {
	cd_head bench -w 'node[1-4]' "${SHORT[@]}" -b 1M -e 1M --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'abs(d["results"][0]["busbw_gbps"] - d["results"][0]["algbw_gbps"] * 1.5) < 1e-6')" True "busbw" || return 1
	expect_eq "$(jget 'abs(d["results"][0]["algbw_gbps"] - 1048576 / d["results"][0]["time_us"] / 1e3) < 1e-6')" True "algbw"
}

t_check_min_bw_exits_1_when_too_slow() {
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" -b 1M -e 1M --check-min-bw 100000
	expect_eq "$rc" 1 "exit status with an impossible minimum" || return 1
	expect_match "$err" 'busbw .* is below 0.9 x 100000' "message" || return 1
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" -b 1M -e 1M --check-min-bw 0.0001
	expect_eq "$rc" 0 "exit status with a tiny minimum ($err)"
}

t_iface_picks_the_network_and_a_missing_one_names_the_node() {
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" --iface eth0 -b 1K -e 1K --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][1]["address_rule"]')" "--iface eth0" "rule" || return 1
	cd_head bench -w 'node[1-2]' "${SHORT[@]}" --iface nosuch0 -b 1K -e 1K --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" '^node1: no usable address on interface nosuch0' "error"
}

t_nccl_is_unavailable_here_and_auto_falls_back_to_tcp() {
	cd_head bench -w 'node[1-2]' --iters 2 --warmup 1 -b 1K -e 1K --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	if [[ $(jget 'd["nodes"][0]["nccl"]["available"]') == True ]]; then
		echo "    (this machine has a GPU: the fallback is not tested)"
		return 0
	fi
	expect_eq "$(jget 'd["backend"]')" tcp "backend" || return 1
	expect_match "$(jget 'd["backend_note"]')" '^nccl unavailable on node1: .+; using tcp$' "note" || return 1
	cd_head bench -w 'node[1-2]' --backend nccl -b 1K -e 1K --json
	expect_eq "$rc" 2 "exit status with --backend nccl" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" '^node1: unavailable: ' "error"
}

# node5 (no later test uses it): the fake NCCL and CUDA runtime, copied where the nodes see
# them, a RoCE v2 sysfs tree (tests/fixtures/rdma/roce-v2-idx3: mlx5_0 port 1 ACTIVE, a verbs
# library) and what the fake NCCL says it used, from $dir/net5.
t_nccl_on_a_node_names_the_network_it_used_against_the_prediction() {
	local dir
	dir=$(mktemp -d /tmp/cdbenchnet.XXXXXX) || return 1
	cp "$CD_TOP/build/fakes/libfake_nccl.so" "$CD_TOP/build/fakes/libfake_cudart.so" "$dir/" &&
		cp -a "$CD_TOP/tests/fixtures/rdma/roce-v2-idx3" "$dir/root" && chmod -R a+rX "$dir" || return 1
	echo "IB mlx5_0:1/RoCE" >"$dir/net5"
	cluster_node_env 5 "export CLUSTERDOC_NCCL_LIB=$dir/libfake_nccl.so" \
		"export CLUSTERDOC_CUDART_LIB=$dir/libfake_cudart.so" \
		"export CLUSTERDOC_SYSFS_ROOT=$dir/root" "export FAKE_NCCL_NET=\"\$(cat $dir/net5)\"" || return 1
	cd_head bench -w node5 --backend nccl --iters 1 --warmup 0 -b 1K -e 1K --json
	expect_eq "$rc" 0 "exit status ($err)" || { rm -rf "$dir"; return 1; }
	expect_eq "$(jget 'd["nodes"][0]["network"]["agrees"]')" True "agrees" || { rm -rf "$dir"; return 1; }
	expect_eq "$(jget 'd["nodes"][0]["network"]["nccl"]["devices"]')" \
		"[{'device': 'mlx5_0', 'port': 1, 'link_layer': 'RoCE'}]" "NCCL's devices" || { rm -rf "$dir"; return 1; }
	expect_eq "$(jget 'd["nodes"][0]["network"]["predicted"]["devices"][0]["gid_index"]')" 3 \
		"the predicted GID index" || { rm -rf "$dir"; return 1; }
	# NCCL falls back to sockets where IB was predicted: the text says both, after the table
	echo "Socket eth0" >"$dir/net5"
	cd_head bench -w node5 --backend nccl --iters 1 --warmup 0 -b 1K -e 1K
	rm -rf "$dir"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(sed -n '/^# Avg bus bandwidth/,$p' <<<"$out" | tail -n +2)" "#
# NCCL's variables (each node's login: no check's plan):
#  node5: none (the login sets none)
#
# NCCL's network (its NCCL_DEBUG=INFO lines):
#  node5: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device found.); predicted NET/IB mlx5_0:1/RoCE" \
		"the lines after the table"
}

# A node i with the fake NCCL whose hardware is mlx5_0:1/RoCE (the RoCE fixture tree), and a
# login with a stale NCCL_IB_HCA=mlx5_9 and the link-local GID index 0 (the fault run's node4
# and node2 in one): the fake NCCL leaves out the devices NCCL_IB_HCA does not name, as
# ncclIbInit does. Files in $dir.
stale_login_node() { # i
	cluster_node_env "$1" "export CLUSTERDOC_NCCL_LIB=$dir/libfake_nccl.so" \
		"export CLUSTERDOC_CUDART_LIB=$dir/libfake_cudart.so" \
		"export CLUSTERDOC_SYSFS_ROOT=$dir/root" "export FAKE_NCCL_NET='IB mlx5_0:1/RoCE'" \
		"export NCCL_IB_HCA=mlx5_9 NCCL_IB_GID_INDEX=0"
}
stale_login_dir() {
	dir=$(mktemp -d /tmp/cdbenchenv.XXXXXX) || return 1
	cp "$CD_TOP/build/fakes/libfake_nccl.so" "$CD_TOP/build/fakes/libfake_cudart.so" "$dir/" &&
		cp -a "$CD_TOP/tests/fixtures/rdma/roce-v2-idx3" "$dir/root" && chmod -R a+rX "$dir"
}

# No check of node5 is saved: NCCL runs with the login's variables, falls back to sockets as
# predicted, and the text gives the prediction's reason, the variables, and what a check's
# plan would set instead.
t_nccl_falling_back_to_sockets_as_predicted_says_why_and_what_a_checks_plan_would_avoid() {
	local dir
	stale_login_dir && stale_login_node 5 || return 1
	cd_head bench -w node5 --backend nccl --iters 1 --warmup 0 -b 1K -e 1K
	rm -rf "$dir"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(sed -n '/^# Avg bus bandwidth/,$p' <<<"$out" | tail -n +2)" "#
# NCCL's variables (each node's login: no check's plan):
#  node5: NCCL_IB_HCA=mlx5_9 NCCL_IB_GID_INDEX=0 (environment)
#
# NCCL's network (its NCCL_DEBUG=INFO lines):
#  node5: NCCL used NET/Socket [0]eth0:10.0.0.1<0> (NET/IB : No device found.) (predicted: the same, as NCCL_IB_HCA=mlx5_9 (from environment) matches no HCA of the node (mlx5_0)); a check's plan would avoid it: with NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=3 NCCL would use NET/IB mlx5_0:1/RoCE (\`clusterdoc check\` of these nodes saves the plan; bench then sets it)" \
		"the lines after the table" || return 1
	expect_match "$err" "^# NCCL with each node's login variables: no check of these nodes is saved" \
		"what the bench says it measures"
}

# The journey: `check -w node[4-5]` (its plan verified NCCL_IB_HCA==mlx5_0 and index 3 over
# the logins' stale values), then `bench` of the same nodes: each node's NCCL gets the plan's
# variables, not its login's: the fake NCCL, given =mlx5_0, uses IB; the JSON says what was
# set and from where; the prediction is made under those values (GID index 3, not 0). The
# fake NCCL never completes a communicator of two ranks, so the run itself stalls (exit 2).
t_nccl_after_a_check_runs_with_the_plans_ib_variables_not_the_logins_stale_ones() {
	local dir i
	stale_login_dir && stale_login_node 4 && stale_login_node 5 || return 1
	cd_head check -w 'node[4-5]'
	expect_match "$out" "NCCL_IB_HCA==mlx5_0" "the check's suggestion ($err)" || { rm -rf "$dir"; return 1; }
	cd_head bench -w 'node[4-5]' --backend nccl --iters 1 --warmup 0 -b 1K -e 1K --stall-timeout 1000 --json
	rm -rf "$dir"
	expect_eq "$rc" 2 "exit status (the stand-in's two-rank stall: $err)" || return 1
	for i in 0 1; do
		expect_eq "$(jget "d['nodes'][$i]['network']['nccl']['devices']")" \
			"[{'device': 'mlx5_0', 'port': 1, 'link_layer': 'RoCE'}]" "NCCL's devices on node$((i + 4)) (it got =mlx5_0)" || return 1
		expect_eq "$(jget "d['nodes'][$i]['network']['agrees']")" True "agrees" || return 1
		expect_eq "$(jget "d['nodes'][$i]['network']['predicted']['devices'][0]['gid_index']")" 3 \
			"the predicted GID index (the plan's, not the login's 0)" || return 1
		expect_eq "$(jget "d['nodes'][$i]['nccl_env']['from']")" plan "where the variables came from" || return 1
		expect_eq "$(jget "[(v['name'], v['value'], v['source']) for v in d['nodes'][$i]['nccl_env']['vars'] if v['name'].startswith('NCCL_IB')]")" \
			"[('NCCL_IB_HCA', '=mlx5_0', 'plan'), ('NCCL_IB_GID_INDEX', '3', 'plan')]" "the variables set" || return 1
	done
	expect_match "$err" "^# on the interfaces the check of these nodes proved, NCCL with its plan's variables" \
		"what the bench says it measures"
}

t_a_dead_node_is_left_out_and_the_others_measured() {
	cluster_node_stop_sshd 3 || return 1
	cd_head bench -w 'node[1-3]' "${SHORT[@]}" -b 1K -e 64K -f 8 --json
	cluster_node_start_sshd 3 || return 1
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nranks"]')" 2 "ranks of the others" || return 1
	expect_match "$(jget 'd["nodes"][2]["error"]')" 'node3' "node3's error" || return 1
	all_exact 3
}

t_pairs_name_the_slowed_node() {
	# node4's NIC limited to 200 Mbit/s: every link of node4 is slow
	cluster_node_exec 4 tc qdisc add dev "$(cluster_node_nic 4)" root tbf rate 200mbit burst 64kb latency 50ms || return 1
	cd_head bench -w 'node[1-4]' --backend tcp --pairs -e 4M --iters 3 --warmup 1 --json
	cluster_node_exec 4 tc qdisc del dev "$(cluster_node_nic 4)" root
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'len(d["links"])')" 6 "links (all pairs)" || return 1
	expect_eq "$(jget 'sorted(l["a"] + "-" + l["b"] for l in d["links"] if l["slow"])')" \
		"$(jget 'sorted(l["a"] + "-" + l["b"] for l in d["links"] if "node4" in (l["a"], l["b"]))')" "slow links" || return 1
	expect_match "$(jget 'd["slow_nodes"]')" '^node4 \(3 of 3 links slow\)$' "slow nodes"
}

t_a_killed_rank_ends_the_run_naming_it_and_leaves_nothing() {
	local ef pid i t0 elapsed
	ef=$(mktemp)
	t0=$(date +%s%N)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" bench -w 'node[1-3]' \
		--backend tcp -b 16M -e 16M --iters 100000 --warmup 0 --stall-timeout 3000 --json >"$ef.out" 2>"$ef" &
	local bg=$!
	# node2's agent, once the ring runs (it uses CPU)
	pid=""
	for ((i = 0; i < 100; i++)); do
		for p in $(ip netns pids "$(cluster_node_ns 2)"); do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) == agent-* ]] && pid=$p
		done
		[[ -n $pid ]] && break
		sleep 0.1
	done
	[[ -n $pid ]] || { kill "$bg"; echo "    no agent on node2"; return 1; }
	sleep 1.5
	kill -9 "$pid"
	wait "$bg"
	rc=$?
	elapsed=$((($(date +%s%N) - t0) / 1000000))
	out=$(cat "$ef.out")
	err=$(cat "$ef")
	rm -f "$ef" "$ef.out"
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget '[f["node"] + " " + f["kind"] for f in d["failures"]]')" "'node2 died'" "node2 reported dead" || return 1
	# its neighbours say which rank left them
	expect_match "$(jget '[f["message"] for f in d["failures"] if f["rank"] >= 0]')" "rank 1" "neighbours name rank 1" || return 1
	((elapsed < 1500 + 100 + 3000 + 5000 + 5000)) || { echo "    took ${elapsed} ms"; return 1; }
	sleep 0.5
	expect_eq "$(agents_left)" 0 "agents left on the nodes"
}

itest_need_root
# In file order: the tests after the first reuse its cluster.
itest_run_all
