#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc fix`'s ssh-key fixer on a namespace cluster of real sshd nodes: nodes that refuse
# the head's key are reached once by password (node1, PasswordAuthentication) or
# keyboard-interactive (node2, through PAM, and its host key is unknown), get the head's key
# in a marked block of their own ~/.ssh/authorized_keys, and `check` then reaches them by key;
# `fix --undo` removes it again. node3 accepts the key from the start. The password comes from
# an SSH_ASKPASS program that counts how often it is asked.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fix_sshkey

PT=(--probe-timeout 1000)
PASSWORD='correct horse 42'

# askpass PASSWORD: the program SSH_ASKPASS names prints PASSWORD and counts its runs
askpass() {
	printf '%s\n' '#!/bin/sh' "echo x >>$CD_RUN/askpass.count" "printf '%s\\n' '$1'" >"$CD_RUN/askpass" &&
		chmod 700 "$CD_RUN/askpass" && : >"$CD_RUN/askpass.count"
}
asked() { wc -l <"$CD_RUN/askpass.count"; }

# cd_ask ARGS...: cd_head with the askpass program forced
cd_ask() { SSH_ASKPASS=$CD_RUN/askpass SSH_ASKPASS_REQUIRE=force cd_head "$@"; }

# snapshot: the files the ssh-key fixer may touch on the nodes
snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		f=$CD_RUN/n$i/home/.ssh/authorized_keys
		if [[ -e $f ]]; then printf 'node%s %s\n' "$i" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s absent\n' "$i"; fi
	done
}

codes() { jget "' '.join(n['host'] + ':' + (n['error_code'] or 'ok') for n in d['nodes'])"; }

t_check_reports_the_refused_key_and_the_unknown_host_key() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	cluster_node_password 1 "$PASSWORD" password || return 1
	cluster_node_password 2 "$PASSWORD" kbdint || return 1
	cluster_forget_hostkey 2 || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$(codes)" "node1:auth node2:hostkey-unknown node3:ok" "each node's state" || return 1
}

BEFORE=
KH_BEFORE=
t_plan_shows_the_logins_and_changes_nothing() {
	askpass "$PASSWORD" || return 1
	BEFORE=$(snapshot)
	KH_BEFORE=$(sha256sum <"$CD_HOME/.ssh/known_hosts")
	cd_ask fix -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status (changes planned): $err" || return 1
	expect_eq "$(jget '[(n["host"], n["error_code"], n["password"]) for n in d["login"]["nodes"]]')" \
		"[('node1', 'auth', True), ('node2', 'hostkey-unknown', False)]" "the nodes to log in to" || return 1
	local fp
	fp=$(ssh-keygen -lf "$CD_RUN/n2/ssh_host_ed25519_key.pub" | awk '{print $2}')
	expect_eq "$(jget 'd["login"]["nodes"][1]["record_hostkey"]["fingerprint"]')" "$fp" "node2's host key" || return 1
	expect_eq "$(jget 'd["login"]["head_key"]["fingerprint"]')" \
		"$(ssh-keygen -lf "$CD_HOME/.ssh/id_ed25519.pub" | awk '{print $2}')" "the head's key" || return 1
	expect_eq "$(asked)" 0 "password prompts during a plan" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after a plan" || return 1
	expect_eq "$(sha256sum <"$CD_HOME/.ssh/known_hosts")" "$KH_BEFORE" "known_hosts after a plan"
}

t_no_terminal_and_no_askpass_is_a_clear_error() {
	local ef
	ef=$(mktemp)
	# setsid: no controlling terminal, as under cron or CI
	out=$(setsid -w ip netns exec "$CD_NS_HEAD" env -u SSH_AUTH_SOCK -u SSH_ASKPASS HOME="$CD_HOME" \
		CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" fix -w 'node[1-3]' --apply --yes "${PT[@]}" 2>"$ef")
	rc=$?
	err=$(cat "$ef")
	rm -f "$ef"
	expect_match "$err" "a password is needed and there is no terminal to ask on" "the message" || return 1
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes"
}

t_a_wrong_password_is_tried_once_and_changes_nothing() {
	askpass 'not the password' || return 1
	cluster_forget_hostkey 2 || return 1
	cd_ask fix -w 'node[1-3]' --only ssh-key --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(asked)" 1 "password prompts" || return 1
	expect_match "$(jget '[n["error"] for n in d["login_applied"]]')" \
		"node1: the password for root was refused .*it was tried once" "node1's reason" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes"
}

RUN=
t_apply_logs_in_once_adds_the_key_and_check_passes() {
	askpass "$PASSWORD" || return 1
	cluster_forget_hostkey 2 || return 1
	cd_ask fix -w 'node[1-3]' --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_eq "$(asked)" 1 "password prompts" || return 1
	expect_eq "$(jget '[(n["host"], [a["status"] for a in n["actions"]]) for n in d["login_applied"]]')" \
		"[('node1', ['applied']), ('node2', ['applied'])]" "the key added" || return 1
	expect_eq "$(jget '[(v["node"], v["verified"]) for v in d["verify"] if v["fixer"] == "ssh-key"]')" \
		"[('node1', True), ('node2', True)]" "verification" || return 1
	local f=$CD_RUN/n1/home/.ssh/authorized_keys
	expect_eq "$(cat "$f")" "# >>> clusterdoc ssh-key >>>
$(cat "$CD_HOME/.ssh/id_ed25519.pub")
# <<< clusterdoc ssh-key <<<" "node1's authorized_keys" || return 1
	expect_eq "$(stat -c %a "$f") $(stat -c %a "${f%/*}")" "600 700" "modes of the file and ~/.ssh" || return 1
	expect_match "$(ssh-keygen -F node2 -f "$CD_HOME/.ssh/known_hosts")" "ssh-ed25519" "node2 in known_hosts" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$(codes)" "node1:ok node2:ok node3:ok" "the check after the fix"
}

t_a_second_apply_asks_nothing_and_changes_nothing() {
	local now
	now=$(snapshot)
	askpass "$PASSWORD" || return 1
	cd_ask fix -w 'node[1-3]' --only ssh-key --apply --yes "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(asked)" 0 "password prompts" || return 1
	expect_eq "$(snapshot)" "$now" "the nodes"
}

t_undo_restores_every_byte_and_the_key_is_refused_again() {
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo" || return 1
	cd_head check -w 'node[1-3]' --json "${PT[@]}"
	# the recorded host key stays (docs/fixes.md): node2 now refuses the key as node1 does
	expect_eq "$(codes)" "node1:auth node2:auth node3:ok" "the check after undo"
}

t_a_head_without_a_key_gets_one() {
	local key=$CD_RUN/newkey/id_ed25519
	askpass "$PASSWORD" || return 1
	cd_ask fix -w node1 -i "$key" --apply --yes "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($out $err)" || return 1
	expect_match "$out" "head: created $key \(ssh-ed25519 SHA256:" "the key created" || return 1
	expect_eq "$(stat -c %a "$key")" 600 "the private key's mode" || return 1
	cd_head check -w node1 -i "$key" --json "${PT[@]}"
	expect_eq "$(codes)" "node1:ok" "node1 by the new key"
}

itest_need_root
# In file order: each test continues on the cluster and state the previous one left.
itest_run_all
