#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ctrl-C during `clusterdoc fix --apply` never loses a change. On a namespace cluster with
# test_fix.sh's three traps (node1 IPv6-only NIC: env files, node2 127.0.1.1 hostname:
# /etc/hosts and env files, node3 an nft drop: a rule), the head of a real
# `fix --apply --yes` gets SIGINT (or SIGTERM) at spread points of its apply; after each,
# `fix --list` says the run was interrupted, `fix --undo RUN` puts every file and nft rule
# back byte for byte, and `--list` then says "(interrupted; undone)".
# CLUSTERDOC_TEST_JOURNAL_PAUSE_MS spreads the apply out (each intent is saved, then the
# change waits that long before it is sent), so the delays after the journal appears land
# at different records of it.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_fix

PT=(--probe-timeout 1000)
PAUSE_MS=200

runs_dir() { echo "$CD_HOME/.local/state/clusterdoc/runs"; }

# apply_interrupted SIG DELAY [again] [PAUSE_MS]: start `fix --apply --yes`, wait until its
# journal appears (the first intent is on disk), sleep DELAY, send SIG to the head (twice,
# 50 ms apart, with "again"). Sets RUN, IRC, IERR (its stderr), elapsed_ms (from the first
# signal to its exit).
apply_interrupted() {
	local sig=$1 delay=$2 again=${3:-} pause=${4:-$PAUSE_MS} pidf=$CD_RUN/fix.pid ef=$CD_RUN/fix.err
	local old new k bg t0 t1
	old=$(ls "$(runs_dir)" 2>/dev/null)
	rm -f "$pidf"
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" CLUSTERDOC_TEST_JOURNAL_PAUSE_MS="$pause" \
		bash -c 'echo $$ >"$0"; exec "$@"' "$pidf" "$CLUSTERDOC" fix -w 'node[1-3]' --apply --yes "${PT[@]}" \
		>/dev/null 2>"$ef" &
	bg=$!
	new=
	for ((k = 0; k < 1500; k++)); do
		new=$(comm -13 <(echo "$old") <(ls "$(runs_dir)" 2>/dev/null) | head -1)
		[[ -z $new ]] || break
		sleep 0.01
	done
	RUN=${new%.json}
	[[ -n $RUN && -s $pidf ]] || { echo "    the apply made no journal"; kill "$(cat "$pidf")" 2>/dev/null; wait "$bg"; return 1; }
	sleep "$delay"
	t0=$(date +%s%N)
	kill -s "$sig" "$(cat "$pidf")"
	if [[ -n $again ]]; then
		sleep 0.05
		kill -s "$sig" "$(cat "$pidf")" 2>/dev/null
	fi
	wait "$bg"
	rc=$?
	t1=$(date +%s%N)
	elapsed_ms=$(((t1 - t0) / 1000000))
	IERR=$(cat "$ef")
	IRC=$rc
}

# after_interrupt WHAT EXPECTED_RC: the exit status, --list before undo, undo restores every
# byte, --list after.
after_interrupt() {
	local what=$1 want=$2 line
	expect_eq "$IRC" "$want" "$what: exit status ($IERR)" || return 1
	((elapsed_ms < 7000)) || { echo "    $what: exit took ${elapsed_ms} ms after the signal (bound: 5 s wait + 2 s)"; return 1; }
	cd_head fix --list
	line=$(grep "^$RUN " <<<"$out")
	if grep -q '"interrupted"' "$(runs_dir)/$RUN.json"; then
		expect_match "$IERR" "interrupted \((Interrupt|Terminated)\): [0-9]+ changes? made, [0-9]+ of unknown outcome|again: exiting now" "$what: what the head said" || return 1
		if [[ $line == "$RUN  0 changes "* ]]; then
			expect_eq "$line" "$RUN  0 changes on 0 nodes  (interrupted; nothing changed)" "$what: --list" || return 1
			expect_eq "$(itest_fix_snapshot)" "$BEFORE" "$what: the nodes" || return 1
			return 0
		fi
		expect_match "$line" "^$RUN  [0-9]+ changes? on [0-9]+ nodes?  \(interrupted: [0-9]+ of [0-9]+ made, [0-9]+ of unknown outcome; undo with clusterdoc fix --undo $RUN\)$" "$what: --list before undo" || return 1
	else
		# the signal came after the apply's last answer (during the verifying check)
		expect_match "$line" "^$RUN  [0-9]+ changes? on [0-9]+ nodes?$" "$what: --list before undo" || return 1
	fi
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "$what: undo's exit status ($out $err)" || return 1
	expect_eq "$(itest_fix_snapshot)" "$BEFORE" "$what: the nodes after undo" || return 1
	cd_head fix --list
	line=$(grep "^$RUN " <<<"$out")
	if grep -q '"interrupted"' "$(runs_dir)/$RUN.json"; then
		expect_match "$line" "^$RUN  [0-9]+ changes? on [0-9]+ nodes?  \(interrupted; undone\)$" "$what: --list after undo" || return 1
	else
		expect_match "$line" "^$RUN  [0-9]+ changes? on [0-9]+ nodes?  \(undone\)$" "$what: --list after undo" || return 1
	fi
}

BEFORE=
t_the_three_traps_are_set() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	cluster_trap_hostname_loopback 2 || return 1
	cluster_trap_firewall_port 3 1024-29499 || return 1
	cluster_trap_firewall_port 3 29511-65535 || return 1
	# node3's nft takes 1.5 s to insert: its change is in flight long enough to be cut off
	mkdir -p "$CD_RUN/n3/home/bin" || return 1
	printf '%s\n' '#!/bin/sh' 'case " $* " in *" insert "*) sleep 1.5;; esac' 'exec /usr/sbin/nft "$@"' \
		>"$CD_RUN/n3/home/bin/nft" && chmod +x "$CD_RUN/n3/home/bin/nft" || return 1
	cluster_node_env 3 'export PATH=$HOME/bin:$PATH' || return 1
	BEFORE=$(itest_fix_snapshot)
	cd_head fix -w 'node[1-3]' "${PT[@]}"
	expect_eq "$rc" 1 "the plan's exit status ($err)"
}

# SIGINT at spread points of the apply: before the first change is sent, between records,
# with changes in flight, after the last answer
t_sigint_at_spread_points_loses_no_change() {
	local d
	for d in 0 0.15 0.3 0.5 0.8 1.1; do
		apply_interrupted INT "$d" || return 1
		after_interrupt "SIGINT after ${d}s" 130 || return 1
	done
}

t_sigterm_exits_143_and_loses_no_change() {
	apply_interrupted TERM 0.3 || return 1
	after_interrupt "SIGTERM after 0.3s" 143
}

# The head waits for node3's slow nft answer (1.5 s, under the 5 s bound) and records it
t_sigint_waits_for_the_answer_in_flight() {
	apply_interrupted INT 0.3 "" 0 || return 1
	expect_match "$IERR" "waiting up to 5 s for the answers in flight" "the message" || return 1
	expect_match "$IERR" "[0-9]+ changes? made, 0 of unknown outcome" "every answer recorded" || return 1
	expect_eq "$(cluster_node_exec 3 nft list chain inet clusterdoc_test input | grep -c "clusterdoc fix $RUN")" 1 "node3's rule, made while the head waited" || return 1
	after_interrupt "SIGINT with nft in flight" 130
}

# A second SIGINT exits at once: node3's nft insert is in flight, its outcome unknown;
# undo finds the rule by the run's comment on the node and deletes it
t_a_second_sigint_exits_at_once_and_undo_asks_the_node() {
	apply_interrupted INT 0.3 again 0 || return 1
	expect_match "$IERR" "again: exiting now; the journal of run $RUN holds every change sent" "the message" || return 1
	((elapsed_ms < 1000)) || { echo "    the second SIGINT took ${elapsed_ms} ms to exit"; return 1; }
	expect_match "$(python3 -c 'import json,sys; print(" ".join(c.get("outcome", "applied") for c in json.load(open(sys.argv[1]))["changes"]))' "$(runs_dir)/$RUN.json")" \
		"unknown" "a change of unknown outcome in the journal" || return 1
	sleep 2 # the node's nft insert finishes without its head
	expect_eq "$(cluster_node_exec 3 nft list chain inet clusterdoc_test input | grep -c "clusterdoc fix $RUN")" 1 "node3's rule, made after the head left" || return 1
	after_interrupt "two SIGINTs" 130 || return 1
	expect_eq "$(cluster_node_exec 3 nft list chain inet clusterdoc_test input | grep -c "clusterdoc fix")" 0 "node3's rule after undo"
}

# fix --apply's question answered after 3 s on a terminal: with keepalives every 200 ms the
# agents' silence bound is 1.2 s, but the head told them to hold on (hold_ms), so the apply
# runs on the gather's agents and every change is made; then undo.
t_a_slow_answer_to_the_question_keeps_the_agents() {
	local old new ef=$CD_RUN/ask.err
	old=$(ls "$(runs_dir)" 2>/dev/null)
	out=$( (sleep 3; echo y; sleep 20) | cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" \
		CLUSTERDOC_KEEPALIVE_MS=200 timeout 60 script -qec "$CLUSTERDOC fix -w 'node[1-3]' ${PT[*]} --apply" \
		/dev/null 2>"$ef")
	rc=$?
	new=$(comm -13 <(echo "$old") <(ls "$(runs_dir)" 2>/dev/null) | head -1)
	RUN=${new%.json}
	[[ -n $RUN ]] || { echo "    no run was journalled: $(tail -c 800 <<<"$out") $(tail -c 300 "$ef")"; return 1; }
	expect_match "$out" "Apply [0-9]+ changes? on 3 nodes\? \[y/N\]" "the question" || return 1
	if grep -qiE "failed|closed|not ready|no agent" <<<"$out"; then
		echo "    a change failed after the slow answer: $(grep -iE 'failed|closed|not ready|no agent' <<<"$out" | head -3)"
		return 1
	fi
	expect_eq "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["changes"]; print(len(c) > 0 and all(x.get("outcome", "applied") == "applied" for x in c))' "$(runs_dir)/$RUN.json")" \
		True "every change of the run applied" || return 1
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "undo's exit status ($out $err)" || return 1
	expect_eq "$(itest_fix_snapshot)" "$BEFORE" "the nodes after undo"
}

itest_need_root
itest_run_all
