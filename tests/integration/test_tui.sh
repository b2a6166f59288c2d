#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# itest: quiet (its scripted sessions wait on the screen with fixed deadlines, the ASan head the slowest: five files beside it once made it wait past one)
# The TUI, driven through tmux (send-keys, capture-pane) on a namespace cluster of real sshd
# nodes: node3's firewall drops MASTER_PORT (29500), and "ghost" does not resolve. Screens are
# compared with tests/integration/tui/*.txt ('~' there matches any one character: versions
# and timings). The same scripted session then runs under AddressSanitizer + UBSan.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=tui
trap 'tui_stop' EXIT

PT=(--probe-timeout 1000)
HOSTS='node[1-3],ghost'

t_the_check_runs_live_and_each_node_ends_ok_or_failed_with_its_reason() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_trap_firewall_port 3 29500 || return 1
	# the nodes cache their python/torch facts: a first import of torch on a loaded machine
	# can outlast the check's deadline, and the screens must not depend on it
	cd_head facts -w 'node[1-3]' -t 120
	expect_eq "$rc" 0 "the warm-up facts' exit status" || return 1
	# a small synthetic MNIST for the Job view (raw IDX files: no download, no MD5)
	mkdir -p "$CD_RUN/mnist" && python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$CD_RUN/mnist" 600 100 >/dev/null &&
		gzip -df "$CD_RUN"/mnist/*.gz || return 1
	TASKS=(--bench-max 64K --bench-iters 5 --mode embedded --epochs 1 --data-dir "$CD_RUN/mnist")
	tui_start -- tui -w "$HOSTS" "${PT[@]}" "${TASKS[@]}" || return 1
	tui_wait 'check done: 4 node\(s\)' 60 || return 1
	tui_expect nodes_done
}

# tui_home: from wherever a test left the TUI back to the Nodes list, no filter, no detail
tui_home() {
	tui_keys Escape Escape Escape 1
	tui_wait '^ NODE +STATE' 5
}

t_question_mark_shows_the_help_and_any_key_closes_it() {
	tui_home || return 1
	tui_keys '?'
	tui_wait 'clusterdoc TUI - keys' 5 || return 1
	tui_expect help || return 1
	tui_keys x
	tui_wait '^ NODE +STATE' 5
}

t_enter_opens_the_node_detail_and_esc_goes_back() {
	tui_home || return 1
	tui_keys j j j Enter
	tui_wait '^ node3  ok' 5 || return 1
	tui_expect node3_detail || return 1
	tui_keys Escape
	tui_wait '^ NODE +STATE' 5
}

t_the_failed_node_shows_why_in_its_row_and_detail() {
	tui_home || return 1
	expect_match "$(tui_screen)" ' ghost +FAIL resolve +ghost: ' "ghost's row" || return 1
	tui_keys g Enter
	tui_wait '^ ghost  FAIL resolve' 5 || return 1
	expect_match "$(tui_screen)" 'Error \(resolve\)' "the detail's error heading" || return 1
	tui_keys Escape
}

t_c_groups_identical_facts_as_clubak_does() {
	tui_home || return 1
	tui_keys c
	tui_wait '^ FACT +NODES +VALUE' 5 || return 1
	tui_expect nodes_grouped || return 1
	tui_keys c
	tui_wait '^ NODE +STATE' 5
}

t_slash_filters_rows_by_hostlist_and_esc_clears_it() {
	tui_home || return 1
	tui_keys / 'node[2-3]' Enter
	tui_wait '/node\[2-3\]' 5 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" '^ node2 ' "node2's row" || return 1
	expect_match "$s" '^ node3 ' "node3's row" || return 1
	grep -Eq '^ (node1|ghost) ' <<<"$s" && { echo "    filtered rows still shown"; return 1; }
	tui_keys / C-u zzz Enter
	tui_wait 'no node matches the filter' 5 || return 1
	tui_keys Escape
	tui_wait '^ node1 ' 5
}

t_tab_and_shift_tab_move_between_the_six_views() {
	tui_home || return 1
	local want
	for want in '2 Network' '3 Findings' '4 Env' '5 Bench' '6 Job' '1 Nodes'; do
		tui_keys Tab
		tui_wait "^ ?.*\\[$want\\]" 5 || return 1
	done
	tui_keys BTab
	tui_wait '\[6 Job\]' 5 || return 1
	tui_keys 1
	tui_wait '\[1 Nodes\]' 5
}

t_the_matrix_marks_the_filtered_port_and_drills_into_the_pair() {
	tui_home || return 1
	tui_keys 2 m
	tui_wait 'REACHABILITY from row to column' 5 || return 1
	# node1 is row 2 (ghost sorts first); node3's MASTER_PORT is dropped: filtered
	expect_match "$(tui_screen)" '^ +2 node1 +\.\. +-- +o[k*] +FF' "node1's row" || return 1
	tui_keys j l l l
	tui_wait 'node1 -> node3: 1 of [0-9]+ attempts failed: filtered \(timeout\)' 5 || return 1
	tui_keys Enter
	tui_wait '^ node1 -> node3: the attempts of the matrix' 5 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" '^  \*10\.[0-9.]+ +29500 fixed +timeout +ETIMEDOUT' "the filtered attempt" || return 1
	tui_keys G
	tui_wait 'tcp dport 29500 counter drop' 5 || return 1
	tui_keys Escape m
}

t_findings_come_worst_first_with_the_fix_command() {
	tui_home || return 1
	tui_keys 3
	tui_wait '^ 1 errors?, 1 warnings?' 5 || return 1
	expect_match "$(tui_screen)" '^ WARN +firewall-blocks-port +1 node3 ' "the firewall finding's row" || return 1
	tui_keys G Enter
	tui_wait 'Apply with clusterdoc' 5 || return 1
	tui_keys G
	tui_wait "clusterdoc fix -w 'ghost,node\[1-3\]' --probe-timeout 1000 --only firewall" 5
}

t_env_writes_the_same_lines_as_clusterdoc_env() {
	tui_home || return 1
	local file=$CD_RUN/tui.env
	tui_keys 4
	tui_wait '^ export GLOO_SOCKET_IFNAME=eth0' 5 || return 1
	tui_keys w C-u "$file" Enter
	tui_wait "wrote [0-9]+ lines to $file" 5 || return 1
	cd_head env -w "$HOSTS" "${PT[@]}"
	expect_eq "$(cat "$file")" "$out" "the file and clusterdoc env's output" || return 1
	expect_eq "$(stat -c %a "$file")" 644 "its mode"
}

# r on the Nodes view checks again over the agents the first check left connected: the same
# screen, and not one new TCP connection to any node's sshd (an nft counter of the SYNs to port
# 22 in each node's namespace, added before the re-check; a SYN, not conntrack's "new": a table
# that brings conntrack into a namespace takes the sessions already open there for new ones)
t_r_rechecks_over_the_connected_agents_without_a_new_login() {
	tui_home || return 1
	cluster_ssh_syns_start || return 1
	tui_keys r
	tui_wait 'check started on 4 node\(s\)' 5 || return 1
	tui_wait 'check done: 4 node\(s\)' 60 || return 1
	tui_expect nodes_done || return 1
	cluster_ssh_syns >/dev/null
	cluster_ssh_syns_stop
	expect_eq "$CD_SSH_SYNS" 0 "new SSH connections to the nodes during the re-check ($CD_SSH_SYNS_EACH)"
}

t_r_in_the_bench_view_runs_the_bench_on_the_nodes_that_answer() {
	tui_home || return 1
	tui_keys 5
	tui_wait 'r runs' 5 || return 1
	tui_keys r
	tui_wait '^ Allreduce bench +done' 60 || return 1
	local s
	s=$(tui_screen)
	expect_match "$s" 'tcp, 3 ranks on 4 node\(s\)' "the ring (ghost left out)" || return 1
	expect_match "$s" 'ghost +FAIL' "ghost, left out with its reason" || return 1
	tui_keys c G
	tui_wait 'Out of bounds values: 0 OK' 5 || return 1
	tui_wait '^ +65536 +64K +16384 ' 5 || return 1
	tui_keys c
}

t_r_in_the_job_view_refuses_to_train_without_every_node() {
	tui_home || return 1
	tui_keys 6
	tui_wait 'r runs' 5 || return 1
	tui_keys r
	tui_wait 'FAIL' 60 || return 1
	tui_wait 'ghost' 5
}

t_the_screen_follows_a_resize() {
	tui_home || return 1
	local i row
	tmux_ resize-window -x 100 -y 30 || return 1
	for ((i = 0; i < 100; i++)); do # the status bar moves to row 30, 100 columns wide
		row=$(tmux_ capture-pane -p | sed -n 30p)
		[[ $row == *'? help'* && ${#row} -ge 99 ]] && break
		sleep 0.05
	done
	expect_match "$row" '^ .* \? help  q quit *$' "row 30, the status bar" || return 1
	local before=${row%%\? help*}
	expect_eq "${#before}" 85 "the column of the key hints (right-aligned in 100)" || return 1
	expect_match "$(tui_screen)" '^ NODE {9,}STATE {13,}HOSTNAME' "the wider header" || return 1
	tmux_ resize-window -x 80 -y 24
	tui_wait '^ NODE {7}STATE {10}HOSTNAME' 5
}

t_colours_pair_with_words_and_no_color_turns_them_off() {
	expect_match "$(tmux_ capture-pane -p -e)" $'\e\\[3[0-7]m' "colour escapes with colours on" || return 1
	tui_keys q
	expect_eq "$(tui_exit_status 10)" 0 "exit status" || return 1
	tui_start NO_COLOR=1 -- tui -w "$HOSTS" "${PT[@]}" || return 1
	tui_wait 'check done: 4 node\(s\)' 60 || return 1
	grep -q $'\e\\[3[0-7]m' <<<"$(tmux_ capture-pane -p -e)" && { echo "    colour escapes under NO_COLOR"; return 1; }
	tui_expect nodes_done
}

t_q_quits_with_status_0_and_gives_the_terminal_back() {
	tui_keys q
	expect_eq "$(tui_exit_status 10)" 0 "exit status" || return 1
	grep -q 'Nodes' <<<"$(tui_screen)" && { echo "    the TUI's screen is still shown after quitting"; return 1; }
	return 0
}

t_options_without_a_command_open_the_tui_and_name_commands_without_a_terminal() {
	tui_start -- -w 'node[1-3]' "${PT[@]}" || return 1
	tui_wait 'check done: 3 node\(s\)' 60 || return 1
	tui_keys q
	expect_eq "$(tui_exit_status 10)" 0 "exit status" || return 1
	cd_head -w 'node[1-3]'
	expect_eq "$rc" 2 "exit status without a terminal" || return 1
	expect_match "$err" "needs a terminal" "the reason" || return 1
	expect_match "$err" "^  clusterdoc facts -w 'node\[1-3\]'$" "the command to run instead"
}

# the prompt, then a node group of the user's configuration typed as -w takes it
prompt_then_a_group() {
	tui_start -- || return 1
	tui_wait '^Nodes \(hostlist\):$' 10 || return 1
	tui_expect hosts_prompt || return 1
	tui_keys 'node[3-1]' Enter
	tui_wait 'range 3-1 goes backwards' 5 || return 1
	expect_match "$(tui_screen)" '^Nodes \(hostlist\): node\[3-1\]$' "the prompt, again with the text" || return 1
	tui_keys C-u '@pair' Enter
	tui_wait 'check: ' 10 || return 1
	expect_match "$(tui_screen)" 'node2' "the group's second node on the screen"
}

t_alone_on_a_terminal_it_asks_for_the_nodes_and_refuses_a_bad_hostlist() {
	local cfg=$CD_HOME/.config/clusterdoc/config rc=0
	# read as the TUI starts
	mkdir -p "$(dirname "$cfg")" && printf '[groups]\npair = node[1-2]\n' >"$cfg"
	prompt_then_a_group || rc=$?
	rm -f "$cfg"
	return "$rc"
}

t_q_while_the_check_runs_asks_again_before_quitting() {
	tui_keys q
	tui_wait 'something is running: press q again to stop it and quit' 5 || return 1
	tui_keys q
	expect_eq "$(tui_exit_status 10)" 0 "exit status" || return 1
}

t_make_demo_opens_the_tui_on_the_demo_cluster() {
	local dir i
	tui_stop
	dir=$(mktemp -d)
	# a shell of its own: none of this test's cluster variables (demo.sh makes its own cluster)
	cat >"$dir/run.sh" <<EOF
unset \${!CD_@}
DEMO_KEEP=0 CLUSTERDOC=$CLUSTERDOC CLUSTERDOC_AGENT=$CLUSTERDOC_AGENT bash $CD_TOP/tests/cluster/demo.sh 2>$dir/err
echo \$? >$dir/exit
EOF
	tmux_ -f /dev/null new-session -d -x 80 -y 24 "bash $dir/run.sh" || return 1
	tmux_ set-option -g remain-on-exit on >/dev/null
	tui_wait 'check done: 4 node\(s\), [0-9]+ error' 90 || { cat "$dir/err"; rm -rf "$dir"; return 1; }
	expect_match "$(tui_screen)" '^\[1 Nodes\] 2 Network' "the tabs" || return 1
	tui_keys q
	for ((i = 0; i < 200; i++)); do
		[[ -s $dir/exit ]] && break
		sleep 0.1
	done
	expect_eq "$(cat "$dir/exit")" 0 "demo's exit status" || { cat "$dir/err"; return 1; }
	rm -rf "$dir"
}

t_a_scripted_session_runs_clean_under_asan() {
	[[ -x $CLUSTERDOC_ASAN ]] || { echo "    no ASan build of the head (CLUSTERDOC_ASAN)"; return 1; }
	local log k
	log=$(mktemp -d)
	CLUSTERDOC=$CLUSTERDOC_ASAN tui_start ASAN_OPTIONS="log_path=$log/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$log/ubsan:halt_on_error=1:print_stacktrace=1" \
		-- tui -w "$HOSTS" "${PT[@]}" || return 1
	tui_wait 'check done: 4 node\(s\)' 90 || return 1
	# a re-check over the agents kept connected
	tui_keys r
	tui_wait 'check started on 4 node\(s\)' 5 || return 1
	tui_wait 'check done: 4 node\(s\)' 90 || return 1
	for k in j j Enter Escape c c '?' x / node2 Enter Escape Tab Enter Escape m Tab Enter \
		Escape Tab Tab Tab BTab 1 G g; do
		tui_keys "$k"
		sleep 0.1
	done
	tmux_ resize-window -x 60 -y 20
	sleep 0.3
	tmux_ resize-window -x 80 -y 24
	tui_keys q
	expect_eq "$(tui_exit_status 20)" 0 "exit status under ASan" || { cat "$log"/* 2>/dev/null | head -40; return 1; }
	if compgen -G "$log/*" >/dev/null; then
		echo "    sanitizer reports:"
		head -40 "$log"/* | sed 's/^/    /'
		rm -rf "$log"
		return 1
	fi
	rm -rf "$log"
}

for t in the_check_runs_live_and_each_node_ends_ok_or_failed_with_its_reason \
	question_mark_shows_the_help_and_any_key_closes_it \
	enter_opens_the_node_detail_and_esc_goes_back \
	the_failed_node_shows_why_in_its_row_and_detail \
	c_groups_identical_facts_as_clubak_does \
	slash_filters_rows_by_hostlist_and_esc_clears_it \
	tab_and_shift_tab_move_between_the_six_views \
	the_matrix_marks_the_filtered_port_and_drills_into_the_pair \
	findings_come_worst_first_with_the_fix_command \
	env_writes_the_same_lines_as_clusterdoc_env \
	r_rechecks_over_the_connected_agents_without_a_new_login \
	r_in_the_bench_view_runs_the_bench_on_the_nodes_that_answer \
	r_in_the_job_view_refuses_to_train_without_every_node \
	the_screen_follows_a_resize \
	colours_pair_with_words_and_no_color_turns_them_off \
	q_quits_with_status_0_and_gives_the_terminal_back \
	options_without_a_command_open_the_tui_and_name_commands_without_a_terminal \
	alone_on_a_terminal_it_asks_for_the_nodes_and_refuses_a_bad_hostlist \
	q_while_the_check_runs_asks_again_before_quitting \
	make_demo_opens_the_tui_on_the_demo_cluster \
	a_scripted_session_runs_clean_under_asan; do
	# TUI_TESTS="name ..." runs only those (the first brings the cluster up)
	[[ -n ${TUI_TESTS:-} && " $TUI_TESTS " != *" $t "* ]] && continue
	run_test "$t"
done
tui_stop
cluster_down
exit "$ITEST_STATUS"
