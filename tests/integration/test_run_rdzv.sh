#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rendezvous watch of `clusterdoc run` and the root cause of a torchrun job, on a
# namespace cluster of two real sshd nodes with Debian's torch over Gloo: a job whose master
# drops MASTER_PORT (torchrun, and --launcher none with the rendezvous in placeholders) is
# stopped within --rendezvous-timeout and a few seconds, naming each node and the address and
# port it cannot reach; jobs that join, and a job that never uses the port, run to their end;
# a torchrun rank that exits 3 is the root cause (node, rank, exit 3), every time; and
# `clusterdoc mnist --mode torch` on the same blocked port is stopped the same way.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=run_rdzv

JOBS=""   # the test's scripts, in the /tmp the nodes share
SUBNET=10.97.43
TIMEOUT=8

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 2 --subnet "$SUBNET" >/dev/null || return 1
	JOBS=$(mktemp -d /tmp/cdrdzv-test.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/run/*.py "$JOBS/"
}

# the cluster of the tests before, or a new one (ONLY=REGEX runs one test alone)
ensure_cluster() { [[ -n $JOBS ]] || setup_cluster; }

run() { cd_head run --json -w 'node[1-2]' --chdir "$JOBS" --stall-timeout 120 "$@"; }

# the job phase's length, in whole seconds (the check before it not counted)
job_seconds() { jget 'd["timing_ms"]["job"] // 1000'; }

t_a_job_whose_ranks_join_runs_to_its_end() {
	ensure_cluster || return 1
	run --rendezvous-timeout "$TIMEOUT" -- allreduce.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["rendezvous"]["state"], [n["joined"] for n in d["rendezvous"]["nodes"]]')" \
		"('joined', [True, True])" "the rendezvous state and who joined" || return 1
	expect_eq "$(grep -c 'sum 1 iface' <<<"$err")" 2 "ranks with the right sum"
}

t_a_job_that_never_uses_the_port_is_not_stopped() {
	ensure_cluster || return 1
	run --launcher none --no-check --rendezvous-timeout 2 -- sh -c 'sleep 5; echo slept'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["rendezvous"]["state"]')" "unused" "the rendezvous state" || return 1
	expect_eq "$(grep -c '^node[12] r[01]: slept$' <<<"$err")" 2 "nodes that ran to the end"
}

t_the_rank_that_exits_3_is_the_root_cause_three_runs_in_a_row() {
	local k
	ensure_cluster || return 1
	for k in 1 2 3; do
		# the first run's check is the plan of the next two
		if ((k == 1)); then run --nproc-per-node 2 -- fail_rank.py; else run --no-check --nproc-per-node 2 -- fail_rank.py; fi
		expect_eq "$(jget 'd["root_cause"], d["root_cause_rank"], d["exit_status"]')" "('node2', 3, 3)" \
			"run $k: root cause node, rank, exit status" || return 1
		expect_eq "$rc" 3 "run $k: clusterdoc's own exit status" || return 1
		expect_eq "$(jget '[r["exit_code"] for r in d["ranks"] if r["rank"] == 3]')" "[3]" "run $k: rank 3's exit code" || return 1
		expect_match "$out" '"failure": "node2 r3: ' "run $k: the headline names node2 r3" || return 1
	done
}

# the master (node1) drops new TCP connections to MASTER_PORT, its own included
t_a_torchrun_job_whose_master_drops_the_port_is_stopped_naming_each_node() {
	ensure_cluster || return 1
	cluster_trap_firewall_port 1 29500 || return 1
	# the blocked port asked for and forced: the plan would otherwise take the proved 29501
	run --force --master-port 29500 --rendezvous-timeout "$TIMEOUT" -- allreduce.py
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["rendezvous"]["state"], [n["test"]["result"] for n in d["rendezvous"]["nodes"]]')" \
		"('unreachable', ['timeout', 'timeout'])" "the verdict and each node's connect test" || return 1
	expect_match "$(jget 'd["failure"]')" "node1 cannot reach its own $SUBNET\.11:29500: timed out \(a firewall drops it\?\)" "node1 named" || return 1
	expect_match "$(jget 'd["failure"]')" "node2 cannot reach $SUBNET\.11:29500: timed out" "node2 named" || return 1
	(($(job_seconds) <= TIMEOUT + 6)) || { echo "    the job ran $(job_seconds) s"; return 1; }
}

# the master's firewall of the test before stays
t_a_launcher_none_job_whose_master_drops_the_port_is_stopped_naming_each_node() {
	[[ -n $JOBS ]] || { setup_cluster && cluster_trap_firewall_port 1 29500; } || return 1
	run --launcher none --force --no-check --master-port 29500 --rendezvous-timeout "$TIMEOUT" -- \
		python3 main_002.py --dist-url 'tcp://{master_addr}:{master_port}' --world-size '{nnodes}' --rank '{node_rank}'
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["rendezvous"]["state"], d["rendezvous"]["nodes"][0]["listening"]')" \
		"('unreachable', True)" "the verdict, and the master's listener seen" || return 1
	expect_match "$(jget 'd["failure"]')" "node1 cannot reach its own $SUBNET\.11:29500: timed out.*node2 cannot reach $SUBNET\.11:29500: timed out" "both nodes named" || return 1
	(($(job_seconds) <= TIMEOUT + 6)) || { echo "    the job ran $(job_seconds) s"; return 1; }
}

# the master's firewall of the tests before stays
t_an_mnist_torch_job_whose_master_drops_the_port_is_stopped_naming_each_node() {
	[[ -n $JOBS ]] || { setup_cluster && cluster_trap_firewall_port 1 29500; } || return 1
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$JOBS/mnist" 3000 500 >/dev/null || return 1
	cd_head mnist --json -w 'node[1-2]' --mode torch --backend gloo --rendezvous-timeout "$TIMEOUT" \
		--force --master-port 29500 \
		--data-dir "$JOBS/mnist" --data-md5 "$JOBS/mnist/MD5SUMS"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["rendezvous"]["state"], [n["test"]["result"] for n in d["rendezvous"]["nodes"]]')" \
		"('unreachable', ['timeout', 'timeout'])" "the verdict and each node's connect test" || return 1
	expect_match "$(jget 'd["failure"]')" "node1 cannot reach its own $SUBNET\.11:29500: timed out.*node2 cannot reach $SUBNET\.11:29500: timed out" "both nodes named" || return 1
	(($(jget 'd["timing_ms"]["train"] // 1000') <= TIMEOUT + 6)) || { echo "    the job ran $(jget 'd["timing_ms"]["train"]') ms"; return 1; }
}

cleanup() { [[ -n $JOBS && -d $JOBS ]] && rm -rf "$JOBS"; }

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap cleanup EXIT
itest_run_all
