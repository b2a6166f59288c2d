#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults during `clusterdoc check` and `clusterdoc env` on a namespace cluster of real sshd nodes
# (node4's firewall drops TCP to 29500, so the connect phase lasts a whole --probe-timeout):
#   - a --deadline shorter than --probe-timeout: the phases are shortened to fit, the check ends
#     in time, the report says what was cut, no node that answered is blamed, and the firewall
#     finding stays; when it passes all the same (node3's agent stopped after its probe), the
#     report names the phase it cut and calls no node hung;
#   - a node whose sshd and agent are killed after its probe answered: it is partial, counted
#     apart in the header, left out of the suggestions (a note names it), never the suggested
#     master, and check and env exit 2.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_check

# cluster_up once: 4 nodes, node4 drops TCP to 29500
up_once() {
	[[ -n ${CD_RUN:-} && -d ${CD_RUN:-/nonexistent} ]] && return 0
	CD_QUIET=1 cluster_up 4 >/dev/null || return 1
	cluster_trap_firewall_port 4 29500
}

# run_killing_node2 ARGS...: clusterdoc ARGS in the head namespace; once node2 listens on the
# MASTER_PORT candidate (it answered its probe: the listen phase has begun), its sshd and every
# sshd session and agent on it are killed. Sets $out $err $rc $elapsed_ms; node2's sshd is
# started again afterwards.
run_killing_node2() {
	local ef t0 bg i p ns
	ns=$(cluster_node_ns 2)
	ef=$(mktemp)
	t0=$(date +%s%N)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" >"$ef.out" 2>"$ef" &
	bg=$!
	for ((i = 0; i < 600; i++)); do
		ip netns exec "$ns" ss -ltnH 'sport = :29500' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	cluster_node_stop_sshd 2
	for p in $(ip netns pids "$ns"); do
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		sshd* | agent* | clusterdoc*) kill -9 "$p" 2>/dev/null ;;
		esac
	done
	wait "$bg"
	rc=$?
	elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
	out=$(cat "$ef.out")
	err=$(cat "$ef")
	rm -f "$ef" "$ef.out"
	cluster_node_start_sshd 2
}

t_a_deadline_shorter_than_the_probe_timeout_shortens_the_phases_and_blames_no_node() {
	up_once || return 1
	cd_head check -w 'node[1-4]' --probe-timeout 8000 --deadline 6 --json
	expect_eq "$rc" 0 "exit status (the firewall finding is a warning; $err)" || return 1
	((elapsed_ms < 7000)) || { echo "    took $elapsed_ms ms with --deadline 6"; return 1; }
	expect_eq "$(jget '[f["id"] for f in d["findings"] if f["id"] == "node-unreachable"]')" "[]" \
		"no node blamed" || return 1
	expect_eq "$(jget '[n["host"] for n in d["nodes"] if not n["checked"] or n["partial"]]')" "[]" \
		"every node checked to the end" || return 1
	expect_eq "$(jget '[",".join(f["nodes"]) for f in d["findings"] if f["id"] == "firewall-blocks-port"]')" \
		"['node4']" "the firewall finding" || return 1
	expect_eq "$(jget 'd["deadline"]["cut"]')" True "the deadline cut something" || return 1
	expect_eq "$(jget 'd["deadline"]["passed"]')" False "the deadline did not pass" || return 1
	expect_eq "$(jget '0 < d["deadline"]["connect_timeout_ms"] < 8000')" True \
		"each attempt got less than --probe-timeout ($(jget 'd["deadline"]'))" || return 1
	expect_match "$err" "the deadline \(6 s\) shortened each TCP attempt to [0-9]+ ms" "the notice"
}

t_a_deadline_shorter_than_the_probe_timeout_says_so_in_the_text_report() {
	up_once || return 1
	cd_head check -w 'node[1-4]' --probe-timeout 8000 --deadline 6
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" "^DEADLINE \(--deadline 6 s\): the check was shortened to fit it" "the heading" || return 1
	expect_match "$out" "connect:  each TCP attempt got [0-9]+ ms instead of --probe-timeout 8000 ms" \
		"the connect phase's cut" || return 1
	! grep -q "may be hung" <<<"$out" || { echo "    a node called hung: $out"; return 1; }
}

t_a_deadline_passing_after_a_probe_names_the_phase_cut_and_calls_no_node_hung() {
	local ef t0 bg i p pids=() ns
	up_once || return 1
	ns=$(cluster_node_ns 3)
	ef=$(mktemp)
	t0=$(date +%s%N)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" check -w 'node[1-4]' \
		--probe-timeout 1000 --deadline 5 --json >"$ef.out" 2>"$ef" &
	bg=$!
	# node3 answered its probe (it listens on the MASTER_PORT candidate): its agent stops
	for ((i = 0; i < 600; i++)); do
		ip netns exec "$ns" ss -ltnH 'sport = :29500' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	for p in $(ip netns pids "$ns"); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == agent* ]] && kill -STOP "$p" && pids+=("$p")
	done
	wait "$bg"
	rc=$?
	elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; done
	out=$(cat "$ef.out")
	err=$(cat "$ef")
	rm -f "$ef" "$ef.out"
	((${#pids[@]} > 0)) || { echo "    no agent on node3 to stop"; return 1; }
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	((elapsed_ms < 7500)) || { echo "    took $elapsed_ms ms with --deadline 5"; return 1; }
	expect_eq "$(jget '[n["host"] for n in d["nodes"] if n["partial"]]')" "['node3']" "node3 partial" || return 1
	expect_match "$(jget 'd["nodes"][2]["error"]')" \
		"^node3: the check's deadline \(--deadline 5 s\) passed during the (listen|connect|confirm) phase, before its answers were in" \
		"node3's error" || return 1
	! grep -q "may be hung" <<<"$out" || { echo "    a node called hung"; return 1; }
	expect_eq "$(jget 'd["deadline"]["passed"]')" True "the deadline passed" || return 1
	expect_match "$(jget 'd["deadline"]["passed_in"]')" "^(listen|connect|confirm)$" "the phase it passed in"
}

t_a_node_killed_after_its_probe_is_partial_left_out_and_never_master() {
	up_once || return 1
	run_killing_node2 check -w 'node[1-4]' --master node2 --probe-timeout 4000 --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_eq "$(jget '[(n["host"], n["checked"], n["partial"]) for n in d["nodes"] if n["partial"]]')" \
		"[('node2', True, True)]" "node2 partial" || return 1
	expect_eq "$(jget '(d["nodes_checked"], d["nodes_partial"])')" "(3, 1)" "the counts" || return 1
	expect_eq "$(jget 'd["suggestions"]["master_addr"]')" None "no MASTER_ADDR on node2" || return 1
	expect_eq "$(jget 'sorted(d["suggestions"]["per_node"])')" "['node1', 'node3', 'node4']" \
		"node2 left out of per_node" || return 1
	expect_eq "$(jget 'sorted(d["suggestions"]["torchrun"])')" "[]" "no torchrun line without a master" || return 1
	expect_eq "$(jget 'd["suggestions"]["left_out"]')" "['node2']" "left_out" || return 1
	expect_match "$(jget 'd["suggestions"]["notes"]')" "node2: left out: it stopped answering during the check.*cannot be the master" \
		"the note naming node2"
}

t_a_node_killed_after_its_probe_is_counted_apart_in_the_header() {
	up_once || return 1
	run_killing_node2 check -w 'node[1-4]' --probe-timeout 4000
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$out" "^clusterdoc check: 4 node\(s\), 3 checked, 1 partial," "the header" || return 1
	! grep -Eq "^  node2:  (GLOO|NCCL|torchrun)" <<<"$out" || { echo "    node2 suggested: $out"; return 1; }
	expect_match "$out" "^  node1:  torchrun --nnodes=3 --node_rank=0 " "node1 still the master, of 3" || return 1
	expect_match "$out" "node2: left out: it stopped answering during the check" "the note"
}

t_env_with_a_node_killed_after_its_probe_exits_2_without_its_lines() {
	up_once || return 1
	run_killing_node2 env -w 'node[1-4]' --probe-timeout 4000
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$out" "^# not checked to the end \(partial results\): node2: " "node2's comment" || return 1
	expect_eq "$(sed -n '/^# node2$/,/^# node3$/p' <<<"$out" | grep -c '^export ')" 0 "node2's export lines" || return 1
	expect_eq "$(grep -c '^export GLOO_SOCKET_IFNAME=' <<<"$out")" 3 "the others' GLOO lines"
}

itest_need_root
itest_run_all
