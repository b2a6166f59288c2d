#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fixing from the TUI's Findings view, driven through tmux on a namespace cluster of real sshd
# nodes: node1 refuses the head's key (password only), node2's host key is unknown, node3's
# firewall drops MASTER_PORT (29500). `f` plans the fix and changes nothing, Esc cancels it,
# `y` applies it (the password typed into a prompt that shows nothing), a new check verifies
# it, and `clusterdoc fix --undo RUN` restores what the TUI changed. On the fixed cluster, the
# Bench view counts the sizes done while the ring runs. The head is the ASan +
# UBSan build when there is one, and no sanitizer may report anything.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=tui_fix
trap 'tui_stop' EXIT

PT=(--probe-timeout 1000)
PASSWORD='correct horse 42'
SAN_LOG=

# snapshot: what the fixes may touch: the nodes' authorized_keys and node3's ruleset
snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		f=$CD_RUN/n$i/home/.ssh/authorized_keys
		if [[ -e $f ]]; then printf 'node%s %s\n' "$i" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s absent\n' "$i"; fi
	done
	cluster_node_exec 3 nft list ruleset | grep -c 'clusterdoc fix'
}

# the undo command the panel shows, as its run id
shown_run() { tui_screen | sed -nE 's/.*undo with: clusterdoc fix --undo ([0-9a-f-]+).*/\1/p' | head -1; }

BEFORE=
t_the_check_names_the_refused_key_and_the_unknown_host_key() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_node_password 1 "$PASSWORD" password || return 1
	cluster_forget_hostkey 2 || return 1
	cluster_trap_firewall_port 3 29500 || return 1
	BEFORE=$(snapshot)
	local head=$CLUSTERDOC
	SAN_LOG=$(mktemp -d)
	[[ -x ${CLUSTERDOC_ASAN:-} ]] && head=$CLUSTERDOC_ASAN
	CLUSTERDOC=$head tui_start CLUSTERDOC_TUI_TRACE="$CD_RUN/trace" \
		ASAN_OPTIONS="log_path=$SAN_LOG/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$SAN_LOG/ubsan:halt_on_error=1:print_stacktrace=1" \
		-- tui -w 'node[1-3]' "${PT[@]}" --bench-max 64M --bench-iters 10 || return 1
	tui_wait 'check done: 3 node\(s\)' 90 || return 1
	tui_keys 3
	tui_wait '^ ERROR +node-unreachable +1 node1 ' 10 || return 1
	expect_match "$(tui_screen)" '^ ERROR +node-unreachable +1 node2 ' "node2's row"
}

t_f_plans_the_logins_with_the_host_key_and_esc_changes_nothing() {
	local fp
	fp=$(ssh-keygen -lf "$CD_RUN/n2/ssh_host_ed25519_key.pub" | awk '{print $2}')
	tui_keys g f
	tui_wait 'y applies 3 changes on 2 nodes, recording the 1 host key shown; Esc cancels' 30 || return 1
	expect_match "$(tui_screen)" '^ Fix node-unreachable with ssh-key +\(planned\)' "the panel's title" || return 1
	tui_keys G
	tui_wait 'record its host key ssh-ed25519 SHA256:' 5 || return 1
	# the fingerprint may wrap: the screen's lines joined without their indent
	tui_screen | sed 's/^ *//' | tr -d '\n' | grep -qF "record its host key ssh-ed25519 $fp in known_hosts" ||
		{ echo "    node2's fingerprint $fp is not the one shown"; return 1; }
	tui_keys Escape
	tui_wait 'fix cancelled: nothing was changed' 5 || return 1
	tui_wait '^ ERROR +node-unreachable' 5 || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after a plan and a cancel" || return 1
	expect_eq "$(ssh-keygen -F node2 -f "$CD_HOME/.ssh/known_hosts" | grep -c ed25519)" 0 "node2 in known_hosts"
}

t_y_asks_the_password_without_showing_it_and_the_new_check_verifies_the_logins() {
	tui_keys g f
	tui_wait 'y applies 3 changes' 30 || return 1
	tui_keys y
	tui_wait '^Password for root on node1:$' 5 || return 1
	tui_keys -l "$PASSWORD"
	sleep 0.3
	expect_match "$(tui_screen | tail -1)" '^Password for root on node1:$' "the prompt, with nothing typed shown" || return 1
	tui_keys Enter
	tui_wait 'ok applied and verified; Esc closes' 90 || return 1
	RUN_KEY=$(shown_run)
	expect_match "$RUN_KEY" '^[0-9]{8}-[0-9]{6}-' "the run's id in the undo line" || return 1
	tui_keys G
	tui_wait 'node2: ssh-key verified' 5 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" 'node1: ssh-key verified \(logged in by key\)' "node1 verified" || return 1
	expect_match "$s" 'node2: ssh-key verified \(logged in by key\)' "node2 verified" || return 1
	expect_eq "$(cat "$CD_RUN/n1/home/.ssh/authorized_keys")" "# >>> clusterdoc ssh-key >>>
$(cat "$CD_HOME/.ssh/id_ed25519.pub")
# <<< clusterdoc ssh-key <<<" "node1's authorized_keys" || return 1
	expect_match "$(ssh-keygen -F node2 -f "$CD_HOME/.ssh/known_hosts")" "ssh-ed25519" "node2 in known_hosts" || return 1
	grep -qF "$PASSWORD" "$CD_RUN/trace" && { echo "    the password is in the TUI's trace"; return 1; }
	grep -q '^key - ' "$CD_RUN/trace" || { echo "    the trace has no hidden keys"; return 1; }
}

t_the_firewall_fix_opens_the_port_and_its_finding_is_gone() {
	tui_keys Escape
	# all three nodes are checked now: node3's dropped port shows
	tui_wait '^ WARN +firewall-blocks-port +1 node3 ' 10 || return 1
	tui_keys / firewall-blocks-port Enter
	tui_wait '/firewall-blocks-port' 5 || return 1
	tui_keys g f
	tui_wait 'y applies 1 change on 1 node; Esc cancels' 30 || return 1
	tui_keys G
	tui_wait '\$ nft .*(add|insert) rule inet' 5 || return 1
	expect_eq "$(cluster_node_exec 3 nft list ruleset | grep -c 'clusterdoc fix')" 0 "rules added before y" || return 1
	tui_keys y
	tui_wait 'ok applied and verified; Esc closes' 90 || return 1
	RUN_FW=$(shown_run)
	expect_match "$RUN_FW" '^[0-9]{8}-[0-9]{6}-' "the run's id in the undo line" || return 1
	tui_keys G
	tui_wait 'firewall-blocks-port is gone from the new check' 5 || return 1
	expect_eq "$(cluster_node_exec 3 nft list ruleset | grep -c 'clusterdoc fix')" 1 "the rule added on node3" || return 1
	tui_keys Escape Escape
}

# 8 B to 64 MiB: 24 sizes, the largest ones long enough on veth to be seen while they run
t_the_bench_view_counts_the_sizes_done_while_the_ring_runs() {
	tui_keys 5
	tui_wait 'r runs' 5 || return 1
	tui_keys r
	# one screen with both: the view's sizes row and the status bar, mid-run
	local i scr
	for ((i = 0; i < 1200; i++)); do
		scr=$(tui_screen)
		grep -Eq 'sizes .* [1-9][0-9]* of 24 done, now [0-9]' <<<"$scr" &&
			grep -Eq 'bench: run, sizes [1-9][0-9]*/24' <<<"$scr" && break
		sleep 0.05
	done
	expect_match "$scr" 'sizes .* [1-9][0-9]* of 24 done, now [0-9]' "the sizes row while the ring runs" || return 1
	expect_match "$scr" 'bench: run, sizes [1-9][0-9]*/24' "the status bar while the ring runs" || return 1
	tui_wait '^ Allreduce bench +done' 120 || return 1
	tui_keys 3
}

t_q_quits_clean_and_no_sanitizer_reported_anything() {
	tui_keys q
	tui_ended_clean "$SAN_LOG" || return 1
	rm -rf "$SAN_LOG"
}

t_clusterdoc_fix_undo_restores_what_the_tui_changed() {
	cd_head fix --undo "$RUN_FW"
	expect_eq "$rc" 0 "undo of the firewall run ($out $err)" || return 1
	cd_head fix --undo "$RUN_KEY"
	expect_eq "$rc" 0 "undo of the ssh-key run ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after both undos"
}

itest_need_root
# In file order: each test continues on the cluster and the TUI the previous one left.
for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
	run_test "$t"
done
tui_stop
cluster_down
exit "$ITEST_STATUS"
