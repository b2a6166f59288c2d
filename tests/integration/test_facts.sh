#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc facts` against a namespace cluster of real sshd nodes, healthy and broken.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=facts

CD_QUIET=1 cluster_up 6 >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
# Aliases in the user's ssh_config are honoured by both transports.
{
	printf 'Host silent\n  HostName node1\n  Port 2222\nHost web2\n  HostName node2\nHost via1\n  HostName node2\n  ProxyJump node1\nHost port2\n  HostName node2\n  Port 2022\n\n'
	cat "$CD_SSH_CONFIG"
} >"$CD_SSH_CONFIG.new" && mv "$CD_SSH_CONFIG.new" "$CD_SSH_CONFIG"
cluster_node_silent 1 2222

t_four_nodes_answer_with_their_hostnames() {
	cd_head facts -w 'node[1-4]' --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["version"]')" 1 "version" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" "['node1', 'node2', 'node3', 'node4']" \
		"hostnames" || return 1
	expect_eq "$(jget 'all(n["reachable"] and n["error"] is None for n in d["nodes"])')" True "all reachable"
}

t_first_contact_uploads_the_agent_then_reuses_it() {
	cd_head facts -w node3 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_uploaded"]')" False "agent_uploaded on the second run" || return 1
	local sha
	sha=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
	cluster_node_exec 3 test -x "/root/.cache/clusterdoc/agent-$sha" || { echo "    agent-$sha missing on node3"; return 1; }
}

t_facts_include_os_cpus_python_and_skew() {
	cd_head facts -w node2 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["cpus"] == '"$(nproc)")" True "cpus" || return 1
	expect_match "$(jget 'd["nodes"][0]["os"]')" "Debian|Ubuntu" "os" || return 1
	expect_match "$(jget 'd["nodes"][0]["os_short"]')" "^(Debian|Ubuntu) [0-9.]+$" "os_short" || return 1
	expect_eq "$(jget 'abs(d["nodes"][0]["clock_skew_ms"]) < 1000')" True "clock skew on one machine" || return 1
	expect_eq "$(jget 'type(d["nodes"][0]["env"]).__name__')" dict "env"
}

t_table_has_a_row_per_node() {
	cd_head facts -w 'node[1-2]'
	expect_eq "$rc" 0 "exit status" || return 1
	expect_match "$out" '^node1 +node1 ' "row for node1" || return 1
	expect_match "$out" '^node2 +node2 ' "row for node2"
}

t_ssh_config_alias_is_resolved() {
	cd_head facts -w web2 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["host"] + " " + d["nodes"][0]["hostname"]')" "web2 node2" "host and hostname"
}

t_proxyjump_alias_goes_through_the_jump_host() {
	cd_head facts -w via1 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["hostname"] + " " + d["nodes"][0]["transport"]')" "node2 openssh" \
		"hostname and transport"
}

t_proxyjump_checks_the_jump_hosts_key_whatever_the_config_says() {
	local saved=$CD_SSH_CONFIG.saved
	cp "$CD_SSH_CONFIG" "$saved"
	{ printf 'Host node1\n  StrictHostKeyChecking no\n\n'; cat "$saved"; } >"$CD_SSH_CONFIG"
	cluster_forget_hostkey 1
	cd_head facts -w via1 --json
	cluster_learn_hostkey 1
	cp "$saved" "$CD_SSH_CONFIG"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" hostkey-unknown "error_code"
}

t_port_from_ssh_config_is_used_by_both_transports() {
	local backend
	for backend in libssh2 openssh; do
		cd_head facts -w port2 --ssh $backend --json
		expect_eq "$rc" 2 "exit status ($backend)" || return 1
		expect_eq "$(jget 'd["nodes"][0]["error_code"]')" refused "error_code ($backend)" || return 1
		expect_match "$(jget 'd["nodes"][0]["error"]')" 2022 "error names port 2022 ($backend)" || return 1
	done
}

t_silent_port_is_a_handshake_timeout_and_others_still_answer() {
	cd_head facts -w 'node[2-3],silent' --auth-timeout 2 --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget '[n["reachable"] for n in d["nodes"]]')" "[True, True, False]" "reachable" || return 1
	expect_eq "$(jget 'd["nodes"][2]["error_code"]')" handshake-timeout "error_code" || return 1
	expect_match "$(jget 'd["nodes"][2]["error"]')" "^silent: " "error names the node" || return 1
	[ "$elapsed_ms" -lt 6000 ] || { echo "    took ${elapsed_ms} ms, deadline was 2 s"; return 1; }
}

t_stopped_sshd_is_connection_refused() {
	cluster_node_stop_sshd 5
	cd_head facts -w 'node[4-5]' --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["reachable"]')" True "node4 reachable" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" refused "node5 error_code"
}

t_unknown_name_does_not_resolve() {
	cd_head facts -w 'nosuchnode' --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["nodes"][0]["error_code"]')" "^(resolve|ssh)$" "error_code"
}

t_changed_host_key_is_refused_and_nothing_runs() {
	cluster_node_rekey 6
	cd_head facts -w node6 --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" hostkey-changed "error_code" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" 'SHA256:[A-Za-z0-9+/]{43}.*SHA256:[A-Za-z0-9+/]{43}' \
		"both fingerprints" || return 1
	if cluster_node_exec 6 sh -c 'ls /root/.cache/clusterdoc/agent-* 2>/dev/null' | grep -q .; then
		echo "    an agent reached node6 despite the changed key"; return 1
	fi
}

t_changed_host_key_is_refused_by_openssh_backend_too() {
	cd_head facts -w node6 --ssh openssh --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" hostkey-changed "error_code"
}

t_unknown_host_key_is_refused_without_accept_new() {
	cluster_forget_hostkey 4
	cd_head facts -w node4 --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" hostkey-unknown "error_code" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" 'SHA256:.*--accept-new' "fingerprint and advice"
}

t_accept_new_records_the_key_hashed_and_appends() {
	local kh=$CD_HOME/.ssh/known_hosts before
	before=$(cat "$kh")
	cd_head facts -w node4 --accept-new --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(head -c ${#before} "$kh")" "$before" "existing known_hosts content kept" || return 1
	expect_eq "$(wc -l <"$kh")" "$(($(wc -l <<<"$before") + 1))" "one line appended" || return 1
	expect_match "$(tail -n 1 "$kh")" '^\|1\|[^ ]+ ssh-ed25519 ' "hashed entry" || return 1
	cd_head facts -w node4 --json
	expect_eq "$rc" 0 "exit status without --accept-new afterwards"
}

t_openssh_backend_answers() {
	cd_head facts -w 'node[1-3],web2' --ssh openssh --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" "['node1', 'node2', 'node3', 'node2']" "hostnames"
}

t_openssh_backend_uploads_by_stream() {
	cluster_node_exec 1 sh -c 'rm -f /root/.cache/clusterdoc/agent-*'
	cd_head facts -w node1 --ssh openssh --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_uploaded"]')" True "agent_uploaded"
}

t_rsa_only_key_says_to_use_openssh() {
	cluster_head_exec ssh-keygen -q -t rsa -b 2048 -N '' -f "$CD_RUN/rsa_key" >/dev/null
	cd_head facts -w node2 -i "$CD_RUN/rsa_key" --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" auth-rsa-sha1 "error_code" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" '--ssh openssh' "advice"
}

# Put a fake agent where node 3 caches the real one: the head runs it.
fake_agent() { # script-body
	local sha
	sha=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
	cluster_node_exec 3 sh -c "mkdir -p /root/.cache/clusterdoc && printf '%s\n' '#!/bin/sh' '$1' >/root/.cache/clusterdoc/agent-$sha && chmod 700 /root/.cache/clusterdoc/agent-$sha"
}
restore_agent() { cluster_node_exec 3 sh -c 'rm -f /root/.cache/clusterdoc/agent-*'; }

t_agent_printing_garbage_is_a_protocol_error() {
	fake_agent 'echo "this is not json"; sleep 5'
	cd_head facts -w 'node[2-3]' --json
	restore_agent
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["reachable"]')" True "node2 reachable" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" protocol "error_code" || return 1
	[ "$elapsed_ms" -lt 4000 ] || { echo "    took ${elapsed_ms} ms: the garbage should fail at once"; return 1; }
}

# A cached agent that dies before its hello is not trusted: a fresh upload replaces it.
t_cached_agent_that_crashes_is_replaced() {
	fake_agent 'kill -SEGV $$'
	cd_head facts -w node3 --json
	restore_agent
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_uploaded"]')" True "agent_uploaded"
}

t_agent_oversized_line_is_refused() {
	fake_agent 'head -c 3000000 /dev/zero | tr "\\000" x; sleep 5'
	cd_head facts -w node3 --json
	restore_agent
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["nodes"][0]["error_code"]')" '^(protocol|agent)$' "error_code" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" 'bytes' "mentions the cap"
}

t_agent_that_hangs_hits_the_request_deadline() {
	fake_agent 'sleep 30'
	cd_head facts -w node3 -t 2 --json
	restore_agent
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" request-timeout "error_code" || return 1
	[ "$elapsed_ms" -lt 6000 ] || { echo "    took ${elapsed_ms} ms with -t 2"; return 1; }
}

t_malformed_hostlists_exit_2_with_position() {
	local expr
	for expr in 'n[5-3]' 'n[1-' 'n[a]'; do
		cd_head facts -w "$expr"
		expect_eq "$rc" 2 "exit status for $expr" || return 1
		expect_match "$err" 'column [0-9]+' "message for $expr" || return 1
	done
}

# A node's strings reach the terminal escaped (fault run 3, case 10): node3's hostname holds a
# clear-screen and an OSC title set; the table shows them as \xHH and no ESC byte is written,
# while --json still gives the name as it is.
t_terminal_escapes_in_a_hostname_are_shown_escaped() {
	local name tout terr trc
	name=$(cluster_node_exec 3 hostname) || return 1
	cluster_node_exec 3 python3 -c 'import socket, sys; socket.sethostname(sys.argv[1])' \
		"$(printf 'n3\033[2J\033]0;X\007')" || return 1
	cd_head facts -w node3
	tout=$out terr=$err trc=$rc
	cd_head facts -w node3 --json
	cluster_node_exec 3 hostname "$name"
	expect_eq "$trc" 0 "exit status ($terr)" || return 1
	[[ $tout == *'n3\x1b[2J\x1b]0;X\x07 '* ]] || { echo "    no escaped hostname in: $tout"; return 1; }
	[[ $tout$terr != *$'\e'* && $tout$terr != *$'\a'* ]] || { echo "    an ESC or BEL byte reached the terminal"; return 1; }
	expect_eq "$(jget 'd["nodes"][0]["hostname"] == "n3\x1b[2J\x1b]0;X\x07"')" True "the JSON's hostname"
}

t_localhost_uses_the_local_transport() {
	cd_head facts -w localhost --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["transport"]')" local "transport"
}

for t in four_nodes_answer_with_their_hostnames first_contact_uploads_the_agent_then_reuses_it \
	facts_include_os_cpus_python_and_skew table_has_a_row_per_node ssh_config_alias_is_resolved proxyjump_alias_goes_through_the_jump_host \
	proxyjump_checks_the_jump_hosts_key_whatever_the_config_says \
	port_from_ssh_config_is_used_by_both_transports \
	silent_port_is_a_handshake_timeout_and_others_still_answer stopped_sshd_is_connection_refused \
	unknown_name_does_not_resolve changed_host_key_is_refused_and_nothing_runs \
	changed_host_key_is_refused_by_openssh_backend_too unknown_host_key_is_refused_without_accept_new \
	accept_new_records_the_key_hashed_and_appends openssh_backend_answers openssh_backend_uploads_by_stream \
	rsa_only_key_says_to_use_openssh agent_printing_garbage_is_a_protocol_error cached_agent_that_crashes_is_replaced \
	agent_oversized_line_is_refused agent_that_hangs_hits_the_request_deadline \
	malformed_hostlists_exit_2_with_position terminal_escapes_in_a_hostname_are_shown_escaped \
	localhost_uses_the_local_transport; do
	run_test "$t"
done
cluster_down
exit $ITEST_STATUS
