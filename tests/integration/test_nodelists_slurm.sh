#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ClusterShell's Slurm group sources (its slurm.conf.example: @sp:PARTITION through sinfo -p,
# @sj:JOBID through squeue -j) answered by the test cluster's real Slurm: a real slurmctld in
# the head's namespace, a real slurmd per node (cluster_up --slurm). A job's group is its
# nodes while it runs; facts reaches them; a job or partition Slurm does not know is an error
# naming the command and what Slurm said, and nothing is reached.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=nodelists_slurm
itest_need_root
if ! slurm_available || ! command -v slurmd >/dev/null; then
	result SKIP "$ITEST_FILE" "slurmd, slurmctld or munged is missing: make deps"
	exit 0
fi
SUBNET=10.97.54
# no ClusterShell files of this machine's: the built-in Slurm sources answer
EMPTY=$(mktemp -d /tmp/cdnlslurm.XXXXXX)
export CLUSTERSHELL_CFGDIR=$EMPTY XDG_CONFIG_HOME=$EMPTY

# in_head CMD...: in the head namespace, from /tmp, bounded; sets $out, $err, $rc
in_head() {
	local of ef
	of=$(mktemp) ef=$(mktemp)
	(cd /tmp && cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" \
		CLUSTERSHELL_CFGDIR="$EMPTY" timeout 60 "$@" >"$of" 2>"$ef")
	rc=$?
	out=$(cat "$of") err=$(cat "$ef")
	rm -f "$of" "$ef"
}

t_setup() {
	cluster_down
	CD_QUIET=1 cluster_up 2 --slurm --subnet "$SUBNET" >/dev/null
}

t_sp_gives_the_nodes_of_a_partition_as_sinfo_does() {
	in_head "$CLUSTERDOC" nodeset -f @sp:debug
	expect_eq "$rc:$out" "0:node[1-2]" "nodeset -f @sp:debug ($err)" || return 1
	in_head "$CLUSTERDOC" nodeset -e '@slurmpart:debug!node1'
	expect_eq "$rc:$out" "0:node2" "the alias and an operator ($err)"
}

t_sj_gives_the_nodes_of_a_running_job_and_facts_reaches_them() {
	local script
	script='"$1" nodeset -f "@sj:$SLURM_JOB_ID" && "$1" facts -w "@sj:$SLURM_JOB_ID" --json'
	in_head salloc -N2 sh -c "$script" sh "$CLUSTERDOC"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(head -1 <<<"$out")" "node[1-2]" "the job's nodes" || return 1
	out=$(tail -n +2 <<<"$out")
	expect_eq "$(jget '" ".join(sorted(n["host"] for n in d["nodes"]))')" "node1 node2" "the hosts facts reached"
}

t_an_unknown_job_is_an_error_naming_squeue_and_its_message() {
	in_head "$CLUSTERDOC" facts -w @sj:999999
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" '^clusterdoc facts: @sj:999999: squeue -h -j 999999 -o %N exited with status 1: .*Invalid job id' "the message"
}

t_an_unknown_partition_is_an_error_naming_sinfo() {
	in_head "$CLUSTERDOC" nodeset -f @sp:nosuch
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" '^clusterdoc nodeset: @sp:nosuch: sinfo -h -p nosuch -o %N ' "the message"
}

cleanup() { rm -rf "$EMPTY"; }
trap cleanup EXIT
itest_run_all
