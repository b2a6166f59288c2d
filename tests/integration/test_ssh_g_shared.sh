#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One `ssh -G` for every node when no ssh_config can tell the nodes apart (core/sshconfig_scan.c),
# one per node otherwise. `ssh` in PATH is a wrapper that logs its arguments and runs the real
# one; the nodes are loopback addresses on port 1, where nothing listens, so every node fails
# at its connect (its settings were taken) and nothing leaves the machine. No root needed.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=ssh_g_shared

D=$(mktemp -d /tmp/cd-ssh-g.XXXXXX)
trap 'rm -rf "$D"' EXIT
mkdir "$D/bin"
printf '#!/bin/sh\necho "$*" >>"%s/calls"\nexec /usr/bin/ssh "$@"\n' "$D" >"$D/bin/ssh"
chmod +x "$D/bin/ssh"

# facts CONFIG-TEXT: run facts on 127.0.0.[1-6] port 1 with -F that config; sets out, calls
facts() {
	printf '%b' "$1" >"$D/cfg"
	: >"$D/calls"
	out=$(PATH="$D/bin:$PATH" CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" facts -F "$D/cfg" \
		-w '127.0.0.[1-6]' -p 1 2>&1 </dev/null)
	calls=$(grep -c -- ' -G ' "$D/calls")
}

t_a_host_star_config_runs_ssh_g_once_and_every_node_gets_its_own_hostname() {
	facts 'Host *\n  User root\n  BatchMode yes\n'
	expect_eq "$calls" 1 "ssh -G runs" || return 1
	for i in 1 2 3 4 5 6; do
		expect_match "$out" "127\.0\.0\.$i: cannot connect to 127\.0\.0\.$i port 1" "node $i" || return 1
	done
}

t_a_host_block_for_one_node_runs_ssh_g_per_node() {
	facts 'Host *\n  User root\nHost 127.0.0.3\n  User other\n'
	expect_eq "$calls" 6 "ssh -G runs"
}

t_a_percent_token_runs_ssh_g_per_node() {
	facts 'Host *\n  IdentityFile /nonexistent/id_%h\n'
	expect_eq "$calls" 6 "ssh -G runs"
}

t_a_broken_config_is_named_on_every_node() {
	facts 'Host *\n  NoSuchOption yes\n'
	expect_eq "$(grep -c 'the ssh_config for this host is invalid' <<<"$out")" 6 "nodes naming the config" || return 1
	# the shared run failed, then each node ran its own to say why
	expect_eq "$calls" 6 "ssh -G runs"
}

itest_run_all
