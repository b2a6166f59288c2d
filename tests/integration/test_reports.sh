#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Reports and schedulers on namespace clusters of real sshd nodes: --prom checked by Debian's
# promtool, --push received by a real prometheus-pushgateway on the head's loopback, --junit
# validated against tests/fixtures/junit.xsd, --drain/--undrain through a stand-in scontrol
# that records its arguments (tests/fakes/scontrol) and through a real slurmctld on the head's
# loopback (tests/cluster/slurm.sh), the Slurm Prolog verdict, --deadline.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/cluster/slurm.sh"
ITEST_FILE=reports

PT=(--probe-timeout 1000)
WORK=$(mktemp -d /tmp/cdreports.XXXXXX)
GW_PORT=9091
GW_PID=""

up() {
	cluster_down
	CD_QUIET=1 cluster_up "$@" >/dev/null
}

# metric NAME LABELS FILE: the value of the one sample with exactly these labels ("" if none)
metric() { awk -v k="$1{$2}" '$1 == k { print $2 }' "$3"; }

promtool_ok() { # file
	local o
	o=$(promtool check metrics <"$1" 2>&1) && return 0
	echo "    promtool check metrics: $o"
	return 1
}

junit_ok() { # file
	local o
	o=$(xmllint --noout --schema "$CD_TOP/tests/fixtures/junit.xsd" "$1" 2>&1) && return 0
	echo "    $o"
	return 1
}

# xq FILE XPATH: xmllint --xpath, empty when nothing matches
xq() { xmllint --xpath "$2" "$1" 2>/dev/null; }

# scontrol_state NODE STATE [REASON]: what the stand-in scontrol knows of NODE
scontrol_state() { printf '%s\t%s\n' "$2" "${3:-}" >"$WORK/slurm/$1"; }
scontrol_reset() {
	rm -rf "$WORK/slurm" && mkdir -p "$WORK/slurm" && : >"$WORK/scontrol.log"
	export SCONTROL_STATE=$WORK/slurm SCONTROL_LOG=$WORK/scontrol.log
	export CLUSTERDOC_SCONTROL=$CD_TOP/tests/fakes/scontrol
}

# node1_gpu_ecc on|off: node1's GPU 1 with (on) or without uncorrectable ECC errors, through the
# NVML stand-in (tests/fakes/fake_nvml.c): the node's own state, which drains it, where node1's
# ipv6-no-route (the suggested interfaces avoid it) does not (docs/slurm.md)
node1_gpu_ecc() {
	local lib=$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1
	if [[ ! -f $CD_RUN/libnvidia-ml.so.1 ]]; then
		[[ -f $lib ]] || make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 >/dev/null || return 1
		cp "$lib" "$CD_RUN/" && : >"$CD_RUN/n1/kmsg" || return 1
		cluster_node_env 1 "export CLUSTERDOC_NVML_LIB=$CD_RUN/libnvidia-ml.so.1" \
			"export CLUSTERDOC_FAKE_NVML_SCENARIO=$CD_RUN/n1/nvml.sc" \
			"export CLUSTERDOC_KMSG=$CD_RUN/n1/kmsg" || return 1
	fi
	if [[ $1 == on ]]; then
		printf 'count 2\ngpu 1 ecc.volatile.uncorrected 2\n' >"$CD_RUN/n1/nvml.sc"
	else
		echo 'count 2' >"$CD_RUN/n1/nvml.sc"
	fi
}

gateway_up() {
	# not through the cluster_head_exec function: $! must be the gateway itself (ip execs it);
	# in memory only (Debian's default persists to /var/lib/prometheus)
	ip netns exec "$CD_NS_HEAD" prometheus-pushgateway --web.listen-address="127.0.0.1:$GW_PORT" --persistence.file= \
		</dev/null >"$WORK/gateway.log" 2>&1 &
	GW_PID=$!
	for _ in $(seq 100); do
		cluster_head_exec python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$GW_PORT/-/ready', timeout=1)" \
			2>/dev/null && return 0
		sleep 0.1
	done
	echo "    the pushgateway did not start: $(cat "$WORK/gateway.log")"
	return 1
}
gateway_down() { [[ -n $GW_PID ]] && kill "$GW_PID" 2>/dev/null && wait "$GW_PID" 2>/dev/null; GW_PID=""; }
gateway_metrics() { # the gateway's /metrics, into $WORK/gw.txt
	cluster_head_exec python3 -c "import urllib.request as u, sys; sys.stdout.write(u.urlopen('http://127.0.0.1:$GW_PORT/metrics', timeout=5).read().decode())" \
		>"$WORK/gw.txt"
}

SLURM_DIR=""
cleanup() {
	[[ -n $SLURM_DIR ]] && slurm_down "$SLURM_DIR"
	gateway_down
	cluster_down
	rm -rf "$WORK"
}
trap cleanup EXIT

t_prom_file_of_a_clean_check_passes_promtool_with_every_series() {
	up 3 || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --prom "$WORK/cd.prom"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	promtool_ok "$WORK/cd.prom" || return 1
	expect_eq "$(stat -c %a "$WORK/cd.prom")" 644 "file mode" || return 1
	expect_eq "$(ls -A "$WORK" | grep -c tmp)" 0 "temporary files left" || return 1
	expect_eq "$(metric clusterdoc_check_node_up 'node="node2"' "$WORK/cd.prom")" 1 "node2 up" || return 1
	expect_eq "$(metric clusterdoc_check_finding 'node="node1",id="ipv6-no-route",severity="error"' "$WORK/cd.prom")" 0 \
		"node1's ipv6-no-route" || return 1
	expect_eq "$(metric clusterdoc_check_nodes_checked '' "$WORK/cd.prom")" "" "no braces without labels" || return 1
	expect_eq "$(awk '$1 == "clusterdoc_check_nodes_checked" { print $2 }' "$WORK/cd.prom")" 3 "nodes checked" || return 1
	# every catalogue id on every node
	expect_eq "$(grep -c '^clusterdoc_check_finding{node="node3"' "$WORK/cd.prom")" \
		"$(grep -c '^| `' "$CD_TOP/docs/findings.md")" "node3's finding series" || return 1
	expect_eq "$(grep -cE '^[a-z_]+(\{[^}]*\})? [^ ]+ [0-9]+$' "$WORK/cd.prom")" 0 "samples with a timestamp"
}

t_junit_of_a_clean_check_validates_and_has_no_failures() {
	cd_head check -w 'node[1-3]' "${PT[@]}" --junit "$WORK/cd.xml"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	junit_ok "$WORK/cd.xml" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'string(/testsuites/@failures)')" 0 "failures" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'count(/testsuites/testsuite)')" 3 "one suite per node" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'string(/testsuites/testsuite[2]/@name)')" node2 "suite name" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'count(/testsuites/testsuite[1]/testcase[@name="ipv6-no-route"])')" 1 "a case per check"
}

t_undrain_resumes_only_the_passing_nodes_clusterdoc_drained() {
	scontrol_reset
	scontrol_state node1 IDLE+DRAIN "clusterdoc: ipv6-no-route"
	scontrol_state node2 IDLE+DRAIN "NHC: disk full"
	scontrol_state node3 IDLE
	cd_head check -w 'node[1-3]' "${PT[@]}" --undrain
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^update' "$WORK/scontrol.log")" "update|NodeName=node1|State=RESUME" "scontrol updates" || return 1
	expect_eq "$(cut -f1 "$WORK/slurm/node2")" IDLE+DRAIN "node2's state" || return 1
	expect_match "$err" "node2 is drained for another reason \(\"NHC: disk full\"\); not resumed" "what it said of node2"
}

t_push_puts_each_node_to_its_own_group_on_a_real_pushgateway() {
	gateway_up || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --push "http://127.0.0.1:$GW_PORT"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	gateway_metrics || return 1
	expect_match "$(cat "$WORK/gw.txt")" \
		'^clusterdoc_check_node_up\{command="check",instance="node2",job="clusterdoc",node="node2"\} 1$' "node2's series" || return 1
	expect_match "$(cat "$WORK/gw.txt")" \
		'^push_time_seconds\{command="check",instance="node3",job="clusterdoc"\} ' "node3's group" || return 1
	expect_match "$(cat "$WORK/gw.txt")" \
		'^clusterdoc_check_nodes_checked\{command="check",instance="[^"]+",job="clusterdoc"\} 3$' "the run's group" || return 1
	expect_eq "$(grep '^push_failure_time_seconds.* [1-9]' "$WORK/gw.txt")" "" "failed pushes"
}

t_push_to_no_gateway_names_the_url_exits_2_and_still_writes_the_file() {
	gateway_down
	rm -f "$WORK/cd.prom"
	cd_head check -w 'node[1-3]' "${PT[@]}" --push "http://127.0.0.1:$GW_PORT" --prom "$WORK/cd.prom"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "--push: .*http://127.0.0.1:$GW_PORT/metrics/job/clusterdoc/.*refused" "the error" || return 1
	[[ -s $WORK/cd.prom ]] || { echo "    --prom was not written"; return 1; }
}

t_a_finding_is_1_for_its_node_in_prom_and_a_failure_in_junit() {
	up 3 || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --prom "$WORK/cd.prom" --junit "$WORK/cd.xml"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	promtool_ok "$WORK/cd.prom" || return 1
	expect_eq "$(metric clusterdoc_check_finding 'node="node1",id="ipv6-no-route",severity="error"' "$WORK/cd.prom")" 1 \
		"node1's ipv6-no-route" || return 1
	expect_eq "$(metric clusterdoc_check_finding 'node="node2",id="ipv6-no-route",severity="error"' "$WORK/cd.prom")" 0 \
		"node2's ipv6-no-route" || return 1
	expect_eq "$(metric clusterdoc_check_node_findings 'node="node1",severity="error"' "$WORK/cd.prom")" 1 "node1's errors" || return 1
	junit_ok "$WORK/cd.xml" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'string(/testsuites/@failures)')" 1 "failures" || return 1
	expect_match "$(xq "$WORK/cd.xml" 'string(/testsuites/testsuite[@name="node1"]/testcase[@name="ipv6-no-route"]/failure/@message)')" \
		"^node1: .*IPv6" "the failure's message" || return 1
	expect_match "$(xq "$WORK/cd.xml" 'string(/testsuites/testsuite[@name="node1"]/testcase[@name="ipv6-no-route"]/failure)')" \
		"fix: .*NCCL_SOCKET_IFNAME" "the failure's fix"
}

t_drain_drains_failing_nodes_and_leaves_other_reasons_alone() {
	scontrol_reset
	scontrol_state node1 IDLE
	scontrol_state node2 MIXED
	scontrol_state node3 IDLE
	node1_gpu_ecc on || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --drain
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(grep '^update' "$WORK/scontrol.log")" \
		"update|NodeName=node1|State=DRAIN|Reason=clusterdoc: gpu-ecc-uncorrectable" "scontrol updates" || return 1
	expect_eq "$(cat "$WORK/slurm/node1")" "IDLE+DRAIN	clusterdoc: gpu-ecc-uncorrectable" "node1's state" || return 1
	expect_match "$err" "^not drained for node1's ipv6-no-route: the environment clusterdoc suggests" \
		"node1's ipv6-no-route named, not drained" || return 1
	# again: nothing to change; and a node somebody else drained keeps its reason
	scontrol_state node1 IDLE+DRAIN "NHC: check_fs_mount /scratch"
	: >"$WORK/scontrol.log"
	cd_head check -w 'node[1-3]' "${PT[@]}" --drain
	expect_eq "$(grep -c '^update' "$WORK/scontrol.log")" 0 "updates of a node drained by NHC" || return 1
	expect_match "$err" "node1 is already IDLE\+DRAIN for another reason" "what it said" || return 1
	# a health check run on node2 acts on node2 alone, even though node1 fails
	scontrol_state node1 IDLE
	: >"$WORK/scontrol.log"
	cd_head check -w 'node[1-3]' "${PT[@]}" --drain --node node2
	expect_eq "$rc" 1 "exit status with --node node2" || return 1
	expect_eq "$(grep -c '^update' "$WORK/scontrol.log")" 0 "updates with --node node2" || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --drain --node node1
	expect_eq "$(grep '^update' "$WORK/scontrol.log")" \
		"update|NodeName=node1|State=DRAIN|Reason=clusterdoc: gpu-ecc-uncorrectable" "updates with --node node1"
}

t_drain_changes_nothing_when_no_node_could_be_checked() {
	scontrol_reset
	scontrol_state node7 IDLE
	cd_head check -w 'node[7-8]' "${PT[@]}" --drain --connect-timeout 2
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(grep -c '^update' "$WORK/scontrol.log")" 0 "scontrol updates" || return 1
	expect_match "$err" "no node could be checked.*nothing drained" "the refusal"
}

t_slurm_prolog_fails_only_the_node_its_errors_name_and_prints_nothing() {
	SLURM_JOB_NODELIST='node[1-3]' SLURMD_NODENAME=node2 cd_head check --slurm-prolog "${PT[@]}"
	expect_eq "$rc" 0 "node2's exit status ($err)" || return 1
	expect_eq "$out" "" "stdout" || return 1
	SLURM_JOB_NODELIST='node[1-3]' SLURMD_NODENAME=node1 cd_head check --slurm-prolog "${PT[@]}"
	expect_eq "$rc" 1 "node1's exit status" || return 1
	expect_eq "$out" "" "stdout" || return 1
	expect_eq "$(grep -o '^clusterdoc check: node1: [a-z0-9-]*: ' <<<"$err")" \
		"clusterdoc check: node1: gpu-ecc-uncorrectable: " "the reason on stderr (not ipv6-no-route)" || return 1
	# --node wins over SLURMD_NODENAME
	SLURM_JOB_NODELIST='node[1-3]' SLURMD_NODENAME=node1 cd_head check --slurm-prolog --node node3 "${PT[@]}"
	expect_eq "$rc" 0 "node3's exit status"
}

t_unreachable_node_is_an_error_case_with_its_checks_skipped() {
	cluster_node_stop_sshd 3 || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --junit "$WORK/cd.xml" --prom "$WORK/cd.prom" --connect-timeout 2
	cluster_node_start_sshd 3 || return 1
	expect_eq "$rc" 2 "exit status" || return 1
	junit_ok "$WORK/cd.xml" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'string(/testsuites/testsuite[@name="node3"]/testcase[@name="node-unreachable"]/error/@type)')" \
		refused "node3's error type" || return 1
	expect_eq "$(xq "$WORK/cd.xml" 'count(/testsuites/testsuite[@name="node3"]/testcase/skipped)')" \
		"$(($(xq "$WORK/cd.xml" 'count(/testsuites/testsuite[@name="node3"]/testcase)') - 1))" "node3's skipped cases" || return 1
	expect_eq "$(metric clusterdoc_check_node_up 'node="node3"' "$WORK/cd.prom")" 0 "node3 up" || return 1
	# nothing else is claimed about node3: only its unreachable finding
	expect_eq "$(grep -c '^clusterdoc_check_finding{node="node3"' "$WORK/cd.prom")" 1 "node3's finding series"
}

t_deadline_reports_a_hung_node_and_ends_in_time() {
	local sshd
	sshd=$(cluster_node_sshd_pid 3)
	kill -STOP "$sshd" || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --deadline 3 --json
	kill -CONT "$sshd"
	expect_eq "$rc" 2 "exit status" || return 1
	((elapsed_ms < 12000)) || { echo "    took $elapsed_ms ms with --deadline 3"; return 1; }
	expect_eq "$(jget 'd["nodes"][2]["error_code"]')" deadline "node3's error code" || return 1
	expect_match "$(jget 'd["nodes"][2]["error"]')" "^node3: no answer within the check's deadline" "node3's error" || return 1
	expect_eq "$(jget '[n["checked"] for n in d["nodes"]]')" "[True, True, False]" "checked nodes" || return 1
	expect_match "$err" "the deadline \(3 s\) passed" "the notice"
}

# A real slurmctld (tests/cluster/slurm.sh) in the head's namespace, on its loopback: --drain
# and --undrain through the real scontrol. node1 still has its IPv6 trap and its GPU's ECC errors.
t_drain_and_undrain_with_a_real_slurmctld() {
	local dir=$WORK/slurmctld show
	if ! slurm_available; then
		echo "    slurmctld, scontrol or munged is missing: make deps"
		return 1
	fi
	unset CLUSTERDOC_SCONTROL
	# the head's namespace is this test's own, with no route out: the wildcard address is fine
	SLURM_NETNS=$CD_NS_HEAD SLURM_LISTEN_ANY=1 slurm_up "$dir" || return 1
	SLURM_DIR=$dir
	export SLURM_CONF=$dir/slurm.conf
	cd_head check -w 'node[1-3]' "${PT[@]}" --drain
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	show=$(cluster_head_exec scontrol show node -o node1)
	expect_match "$show" " State=IDLE\+DRAIN\+NOT_RESPONDING " "node1's state" || return 1
	expect_match "$show" " Reason=clusterdoc: gpu-ecc-uncorrectable \[root@" "node1's reason" || return 1
	expect_match "$(cluster_head_exec scontrol show node -o node2)" " State=IDLE\+NOT_RESPONDING " "node2's state" || return 1
	# node1 made healthy (its GPU, and the suggested environment): --undrain brings it back
	node1_gpu_ecc off || return 1
	cd_head env -w 'node[1-3]' --node node1 "${PT[@]}"
	cluster_node_env 1 "$(grep '^export ' <<<"$out")" || return 1
	cd_head check -w 'node[1-3]' "${PT[@]}" --undrain
	expect_eq "$rc" 0 "exit status after the fix ($err)" || return 1
	show=$(cluster_head_exec scontrol show node -o node1)
	expect_match "$show" " State=IDLE\+NOT_RESPONDING " "node1's state after --undrain" || return 1
	[[ $show != *Reason=* ]] || { echo "    node1 kept a reason: $show"; return 1; }
	expect_match "$err" "resumed node1 \(was: clusterdoc: gpu-ecc-uncorrectable\)" "what it said"
}

t_bench_prom_and_junit_have_every_size() {
	up 2 || return 1
	cd_head bench -w 'node[1-2]' -b 1K -e 64K --iters 3 --warmup 1 --prom "$WORK/b.prom" --junit "$WORK/b.xml"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	promtool_ok "$WORK/b.prom" || return 1
	expect_eq "$(grep -c '^clusterdoc_bench_busbw_bytes_per_second{backend="tcp",dtype="float",size_bytes="[0-9]*"} [0-9.e+]*$' "$WORK/b.prom")" \
		7 "busbw series (1K..64K)" || return 1
	expect_eq "$(metric clusterdoc_bench_wrong_elements 'backend="tcp",dtype="float",size_bytes="65536"' "$WORK/b.prom")" 0 "wrong at 64K" || return 1
	expect_eq "$(metric clusterdoc_bench_node_in_run 'node="node2"' "$WORK/b.prom")" 1 "node2 in the run" || return 1
	junit_ok "$WORK/b.xml" || return 1
	expect_eq "$(xq "$WORK/b.xml" 'count(/testsuites/testsuite[@name="allreduce"]/testcase)')" 7 "a case per size" || return 1
	expect_eq "$(xq "$WORK/b.xml" 'string(/testsuites/@failures)')" 0 "failures" || return 1
	# a bandwidth no loopback reaches: the largest size fails, the run says why
	cd_head bench -w 'node[1-2]' -b 64K -e 64K --iters 3 --warmup 1 --check-min-bw 100000 --junit "$WORK/b.xml"
	expect_eq "$rc" 1 "exit status with --check-min-bw" || return 1
	expect_match "$(xq "$WORK/b.xml" 'string(//testcase[@name="65536 bytes float sum"]/failure/@message)')" \
		"below 0.9 x 100000" "the slow case"
}

itest_need_root
for tool in promtool prometheus-pushgateway xmllint; do
	command -v "$tool" >/dev/null || { result FAIL "$ITEST_FILE" "$tool is missing: make deps"; exit 1; }
done
# In file order: some tests continue on the cluster the previous one made.
for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
	[[ -z ${ONLY:-} || $t =~ $ONLY ]] && run_test "$t"
done
exit $ITEST_STATUS
