#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The journey a user takes, check -> run -> mnist -> hang, on one namespace cluster with every
# classic trap at once: node1 (the master) drops TCP 29500 and has an IPv6-only second NIC ens6,
# node2's hostname is on 127.0.1.1, node3's NIC is enp1s0, node4 drops 29500 too, docker0 with
# one address on every node. And RDMA (issue 36): each node reads its own RoCE v2 fixture tree
# (tests/fixtures/rdma/), the IPv4 v2 GID at index 3 on node1 and node3 and at index 1 on node2
# and node4, and node3's login names an HCA it lacks (NCCL_IB_HCA=mlx5_9); every login has an
# unlimited memlock, as limits.conf gives it on an RDMA cluster (tests/fakes/memlock_unlimited.c:
# the sandbox cannot raise it). What the check proves is what every job gets (jobs/jobplan.h):
# no command here needs --force, and each prints the values `env` prints.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=journey
itest_need_root

JOBS=""  # the test's scripts, in the /tmp the nodes share
DATA=""  # an MNIST-format dataset (tests/fixtures/make_mnist.py)
STATE="" # the head's saved plans and runs

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 4 --nic-names "eth0 eth0 enp1s0 eth0" >/dev/null || return 1
	cluster_trap_ipv6_only_nic 1 ens6
	cluster_trap_hostname_loopback 2
	cluster_trap_docker0 all
	cluster_trap_firewall_port 1 29500
	cluster_trap_firewall_port 4 29500
	JOBS=$(mktemp -d /tmp/cdjourney.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/run/*.py "$CD_TOP"/tests/fixtures/hang/*.py "$JOBS/"
	DATA="$JOBS/mnist"
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$DATA" 2000 200 >/dev/null || return 1
	cp -a "$CD_TOP/tests/fixtures/rdma/." "$JOBS/rdma/" || return 1
	chmod -R a+rX "$JOBS"
	local i tree
	for i in 1 2 3 4; do
		tree=roce-v2-idx3
		((i % 2)) || tree=roce-v2-idx1
		cluster_node_env "$i" "export CLUSTERDOC_SYSFS_ROOT=$JOBS/rdma/$tree" \
			"export LD_PRELOAD=$CD_TOP/build/fakes/libmemlock_unlimited.so" || return 1
	done
	cluster_node_env 3 "export NCCL_IB_HCA=mlx5_9"
	STATE="$CD_RUN/home/.local/state/clusterdoc/runs"
}

cleanup() { [[ -n $JOBS ]] && rm -rf "$JOBS"; }
trap cleanup EXIT

# the plan's variables of every node, "node VAR=value" sorted, from `env` or a dry run's
# "# by hand on NODE:" blocks
plan_vars() {
	awk '/^# by hand on /{node=$5; sub(":", "", node); next} /^# node[0-9]+$/{node=$2; next}
	     /^export (NCCL_SOCKET_IFNAME|NCCL_SOCKET_FAMILY|GLOO_SOCKET_IFNAME|NCCL_IB_HCA|NCCL_IB_GID_INDEX|MASTER_ADDR|MASTER_PORT)=/ {
	         sub("^export ", ""); print node, $0 }' | sort
}

t_check_names_every_trap_and_the_environment_that_avoids_it() {
	setup_cluster || return 1
	cd_head check -w 'node[1-4]' --json
	expect_eq "$rc" 1 "check's exit status (error findings)" || return 1
	expect_eq "$(jget 'sorted(f["id"] for f in d["findings"] if f["severity"] == "error")')" \
		"['hostname-loopback', 'ipv6-no-route', 'master-port-blocked', 'nccl-ib-hca-stale']" "the errors" || return 1
	expect_eq "$(jget '[f["avoided_by"] for f in d["findings"] if f["id"] == "nccl-ib-hca-stale"]')" \
		"['on node3 by NCCL_IB_HCA==mlx5_0']" "nccl-ib-hca-stale's avoided_by" || return 1
	expect_eq "$(jget 'sorted(f["id"] for f in d["findings"] if f["id"].startswith(("rdma-", "nccl-ib-", "roce-", "gpudirect-")))')" \
		"['nccl-ib-hca-stale']" "the RDMA findings (index 3 and index 1 are one kind of GID)" || return 1
	expect_eq "$(jget '[d["suggestions"]["per_node"][h].get("NCCL_IB_GID_INDEX") for h in ("node1", "node2", "node3", "node4")]')" \
		"['3', '1', '3', '1']" "each node's own GID index" || return 1
	expect_eq "$(jget '[f["avoided_by"] for f in d["findings"] if f["id"] == "hostname-loopback"]')" \
		"['on node2 by GLOO_SOCKET_IFNAME=eth0']" "hostname-loopback's avoided_by" || return 1
	expect_eq "$(jget '[f["avoided_by"] for f in d["findings"] if f["id"] == "master-port-blocked"]')" \
		"['on node1 by MASTER_PORT=29501 (proved; 29500 is not usable)']" "master-port-blocked's avoided_by" || return 1
	expect_eq "$(jget '[f["avoided_by"] is not None for f in d["findings"] if f["severity"] == "error"]')" \
		"[True, True, True, True]" "every error avoided by the plan" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_port"]')" 29501 "the proved MASTER_PORT"
}

# `check --drain` as a HealthCheckProgram run from the head (docs/slurm.md): every error above is
# what the suggested environment avoids or node3's login sets, none is the node's own state, so
# no node would be drained; each is named with why.
t_drain_dry_run_drains_no_node_for_what_the_plan_avoids_or_a_login_sets() {
	cd_head check -w 'node[1-4]' --drain --dry-run
	expect_eq "$rc" 1 "check's exit status (error findings)" || return 1
	expect_eq "$(grep -c '^would drain' <<<"$out")" 0 "drains ($(grep '^would drain' <<<"$out"))" || return 1
	expect_match "$out" "^not drained for node1's ipv6-no-route: the environment clusterdoc suggests \(run, mnist, env\) avoids it$" \
		"node1's ipv6-no-route" || return 1
	expect_match "$out" "^not drained for node1's master-port-blocked: the environment clusterdoc suggests" \
		"node1's master-port-blocked" || return 1
	expect_match "$out" "^not drained for node3's nccl-ib-hca-stale: it comes from the checking user's login environment, not the node$" \
		"node3's nccl-ib-hca-stale"
}

t_env_and_run_dry_run_print_identical_values_for_every_node() {
	local env_vars dry_vars
	cd_head env -w 'node[1-4]'
	env_vars=$(plan_vars <<<"$out")
	expect_eq "$(wc -l <<<"$env_vars")" 28 "env's variables (7 on each of 4 nodes)" || return 1
	expect_match "$env_vars" "^node1 MASTER_PORT=29501$" "env's MASTER_PORT" || return 1
	expect_match "$env_vars" "^node3 NCCL_IB_HCA==mlx5_0$" "env's NCCL_IB_HCA on node3" || return 1
	expect_match "$env_vars" "^node4 NCCL_IB_GID_INDEX=1$" "env's GID index on node4" || return 1
	# the plan `env`'s check saved: what the run reads with --no-check
	cd_head run -w 'node[1-4]' --no-check --dry-run --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 0 "dry run's exit status ($err)" || return 1
	expect_match "$err" "^# using the check of these nodes saved 0 min" "the saved plan read" || return 1
	dry_vars=$(plan_vars <<<"$out")
	expect_eq "$dry_vars" "$env_vars" "the dry run's variables against env's" || return 1
	expect_match "$out" "--master_port 29501 allreduce.py" "torchrun's --master_port" || return 1
	expect_match "$err" "^# avoided: hostname-loopback on node2 by GLOO_SOCKET_IFNAME=eth0$" "the avoided line"
}

t_a_torchrun_job_starts_without_force_and_finishes() {
	cd_head run -w 'node[1-4]' --json --chdir "$JOBS" --stall-timeout 60 -- allreduce_ib.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep -c 'rank [0-3]/4 sum 6' <<<"$err")" 4 "ranks with the right sum" || return 1
	expect_match "$err" "^node3 r2: rank 2/4 sum 6 iface enp1s0 NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=3$" \
		"node3 on its own NIC, with the plan's IB variables over its login's stale one" || return 1
	expect_match "$err" "^node2 r1: rank 1/4 sum 6 iface eth0 NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=1$" \
		"node2's own GID index" || return 1
	expect_match "$err" "^# MASTER_PORT=29501: the port the check proved" "the port said" || return 1
	itest_expect_no_run_left
}

t_bench_measures_the_interfaces_the_check_proved() {
	cd_head bench -w 'node[1-4]' --backend tcp -b 1K -e 16K --iters 3 --warmup 1
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^# on the interfaces the check of these nodes proved" "the plan said" || return 1
	expect_match "$out" "^#  node3 +rank 2  enp1s0 $CD_SUBNET\.13  \(the interface the check proved\)$" "node3's line"
}

t_a_launcher_none_job_with_placeholders_starts_and_finishes() {
	cd_head run -w 'node[1-4]' --json --no-check --launcher none --chdir "$JOBS" --stall-timeout 60 -- \
		python3 main_002.py --dist-url 'tcp://{master_addr}:{master_port}' --world-size '{nnodes}' --rank '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^node4 r3: rank 3 of 4 via tcp://[0-9.]+:29501: 4$" "node4's line" || return 1
	expect_match "$err" "using the check of these nodes saved" "--no-check's plan" || return 1
	itest_expect_no_run_left
}

t_mnist_in_torch_mode_starts_without_force_and_trains() {
	cd_head mnist -w 'node[1-4]' --mode torch --backend gloo --epochs 1 --data-dir "$DATA" \
		--data-md5 "$DATA/MD5SUMS" --stall-timeout 60 --json
	expect_eq "$rc" 0 "exit status ($(tail -c 600 <<<"$err"))" || return 1
	expect_match "$err" "^# MASTER_PORT=29501: the port the check proved" "the port said" || return 1
	expect_eq "$(jget 'd["mode"], d["nranks"], d["test"]["accuracy"] > 0.9')" "('torch', 4, True)" "mode, ranks, accuracy"
}

t_a_one_node_run_on_the_loopback_hostname_node_starts() {
	cd_head run -w node2 --json --chdir "$JOBS" --stall-timeout 60 -- allreduce.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^# avoided: hostname-loopback in a one-node job: nothing crosses a network$" "why it is not refused" || return 1
	expect_match "$err" "^node2 r0: rank 0/1 sum 0" "the rank's line"
}

t_a_blocked_explicit_master_port_is_named_before_anything_starts() {
	cd_head run -w 'node[1-4]' --master-port 29500 --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "--master-port 29500 is not reachable on the master node1 from every node .*the check proved 29501: use --master-port 29501" "the refusal" || return 1
	expect_eq "$(itest_run_procs)" 0 "processes started"
}

# cd_head with the configuration file $1 ($CLUSTERDOC_CONFIG) beside the head's own
cd_head_conf() {
	local conf=$1 ef
	shift
	ef=$(mktemp)
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" CLUSTERDOC_CONFIG="$conf" \
		"$CLUSTERDOC" "$@" 2>"$ef")
	rc=$?
	err=$(cat "$ef")
	rm -f "$ef"
}

# The check run and mnist make first reads the site's [expect] as `check` does: a node unlike
# what it declares (every NIC here has MTU 1500) refuses the job, and the plan saved for
# --no-check and bench has the finding; a bad [expect] line stops the run before any node is
# contacted, naming the file, the line and the value.
t_run_and_mnist_refuse_nodes_unlike_the_sites_expect() {
	local conf=$JOBS/expect.conf plan
	printf '[expect]\nmtu = 9000\n' >"$conf"
	cd_head_conf "$conf" run -w 'node[1-2]' --dry-run --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 2 "run's exit status ($err)" || return 1
	expect_match "$err" "^  expect-mtu: " "run's refusal" || return 1
	plan=$(ls -t "$STATE"/check-*.json | head -1)
	expect_eq "$(python3 -c 'import json,sys; print(sorted(f["id"] for f in json.load(open(sys.argv[1]))["findings"] if f["id"].startswith("expect-")))' "$plan")" \
		"['expect-mtu']" "the saved plan's expect findings" || return 1
	cd_head_conf "$conf" mnist -w 'node[1-2]' --mode torch --data-dir "$DATA"
	expect_eq "$rc" 2 "mnist's exit status" || return 1
	expect_match "$err" "^  expect-mtu: " "mnist's refusal" || return 1
	printf '[expect]\nmtu = jumbo\n' >"$conf"
	cd_head_conf "$conf" run -w 'node[1-2]' --dry-run --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 2 "exit status of a bad [expect]" || return 1
	expect_match "$err" "^clusterdoc run: $conf:2: mtu = jumbo: " "the bad line named" || return 1
	expect_eq "$(grep -c "checking the nodes' network" <<<"$err")" 0 "a check started"
}

t_no_check_refuses_a_plan_made_for_another_port_or_version() {
	# the last check was made for --master-port 29500 (the test above)
	cd_head run -w 'node[1-4]' --no-check --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "the saved check of these nodes does not fit this job: it was made for --master-port 29500: run once without --no-check" "another port" || return 1
	cd_head run -w 'node[1-4]' --dry-run -- x.py # a fresh plan without --master-port
	local f
	f=$(ls "$STATE"/check-*.json | head -1)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["version"]=1; json.dump(d, open(sys.argv[1], "w"))' "$f"
	cd_head run -w 'node[1-4]' --no-check --dry-run -- x.py
	expect_eq "$rc" 2 "exit status (old version)" || return 1
	expect_match "$err" "cannot be used: it was saved by another version of clusterdoc \(plan version 1, this one reads 2\)" "another version"
}

t_an_env_that_overrides_a_planned_variable_is_refused_without_force() {
	cd_head run -w 'node[1-4]' --env GLOO_SOCKET_IFNAME=docker0 --dry-run -- x.py
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "--env GLOO_SOCKET_IFNAME overrides the value the plan sets" "the refusal" || return 1
	cd_head run -w 'node[1-4]' --no-check --force --env GLOO_SOCKET_IFNAME=docker0 --dry-run -- x.py
	expect_eq "$rc" 0 "exit status with --force ($err)" || return 1
	expect_match "$out" "GLOO_SOCKET_IFNAME=docker0" "the forced value"
}

t_a_master_that_is_not_a_node_is_refused() {
	cd_head run -w 'node[1-4]' --master node7 -- x.py
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc run: --master node7 is not one of the nodes given with -w (or --hostfile)" "the refusal"
}

t_master_chooses_rank_0_and_the_check_follows_it() {
	cd_head run -w 'node[1-4]' --master node3 --dry-run --chdir "$JOBS" -- allreduce.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" "--node_rank 0 .*--master_addr $CD_SUBNET\.13 --master_port 29500 allreduce.py" "node3 is rank 0 on its free 29500"
}

t_hang_names_the_stuck_rank_of_a_launcher_none_job_five_times_alike() {
	local bgerr bg i verdict first=""
	bgerr=$(mktemp)
	# the last rank sleeps before the allreduce the others wait in (argv's rank, no RANK)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run --json -w 'node[1-4]' \
		--launcher none --chdir "$JOBS" --stall-timeout 600 -- \
		python3 argv_job.py '{node_rank}' '{nnodes}' sleep-last >/dev/null 2>"$bgerr" &
	bg=$!
	for ((i = 0; i < 300; i++)); do
		[[ $(grep -c 'ready$' "$bgerr") -ge 4 ]] && break
		sleep 0.2
	done
	[[ $(grep -c 'ready$' "$bgerr") -ge 4 ]] || { echo "    the job did not start: $(tail -5 "$bgerr")"; kill -INT "$bg"; wait "$bg"; return 1; }
	sleep 1
	for i in 1 2 3 4 5; do
		cd_head hang -w 'node[1-4]' --json
		expect_eq "$rc" 1 "call $i: exit status ($err)" || break
		verdict=$(jget '(d["status"], len(d["ranks"]), d["suspects"][0]["rank"], d["suspects"][0]["node"])')
		[[ -n $first ]] || first=$verdict
		expect_eq "$verdict" "$first" "call $i: the same verdict" || break
	done
	kill -INT "$(pgrep -P "$bg" -f "$CLUSTERDOC run" || echo "$bg")"
	wait "$bg"
	rm -f "$bgerr"
	[[ $i == 5 && $rc == 1 ]] || return 1
	expect_eq "$first" "('hung', 4, 3, 'node4')" "the verdict" || return 1
	itest_expect_no_run_left
}

t_ctrl_c_leaves_nothing_behind() {
	local bgerr bg i
	bgerr=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-4]' --no-check \
		--master node3 --launcher none -- sleep 300 >/dev/null 2>"$bgerr" &
	bg=$!
	for ((i = 0; i < 200; i++)); do
		[[ $(itest_run_procs) -ge 4 ]] && break
		sleep 0.1
	done
	expect_eq "$(itest_run_procs)" 4 "the job's processes before Ctrl-C" || { kill "$bg"; return 1; }
	kill -INT "$(pgrep -P "$bg" -f "$CLUSTERDOC run" || echo "$bg")"
	wait "$bg"
	expect_eq "$?" 130 "exit status after Ctrl-C ($(tail -c 300 "$bgerr"))" || return 1
	rm -f "$bgerr"
	itest_expect_no_run_left
}

itest_run_all
