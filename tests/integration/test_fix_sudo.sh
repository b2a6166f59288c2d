#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sudoers fragment that `clusterdoc fix --sudoers` prints is not root: on 3 real sshd nodes
# with real sudo, cdadmin (tests/cluster/sudoers.cdadmin, the fragment verbatim) logs in to
# node3, which has real nft rules dropping its ephemeral ports, and tries each escape of
# fault-run-3.md case 1 through sudo:
#   - nft rules and listings carrying `; flush ruleset` or `include "/etc/shadow"`;
#   - `nft flush ruleset`, and `nft -f /etc/shadow`;
#   - a `tee` into the port-range file in /etc/sysctl.d (kernel.core_pattern at boot), and
#     `sysctl -w` of kernel.core_pattern alone or after the port range.
# Each is refused by sudo, and the ruleset, /etc/shadow's secrecy, the sysctl.d directory and
# kernel.core_pattern are as before. The fix flow itself still works as cdadmin: `fix --only
# port-range,firewall --apply` sets every node's range and opens node3's firewall through sudo,
# writing no sysctl.d file, and `fix --undo` puts the ranges and the ruleset back.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fix_sudo
itest_need_root

PT=(--probe-timeout 1000)
W='node[1-3]'
NARROW=(--only port-range,firewall --port-range 40000-40999)
SYSCTL_FILE=60-clusterdoc-port-range.conf
# the shape the fixer builds for node3's chain, with a tail an attacker appends
RULE="iifname '{ eth0, lo }' ip saddr 10.0.0.0/24 meta l4proto tcp accept"

admin() { # i CMD: CMD run by cdadmin's login shell on node i, over ssh; sets $out, $rc
	out=$(cluster_head_exec ssh -F "$CD_SSH_CONFIG_ADMIN" "node$1" "$2" 2>&1)
	rc=$?
}

as_admin() { # clusterdoc ARGS as cdadmin, like cd_head
	cd_head "$1" -F "$CD_SSH_CONFIG_ADMIN" "${@:2}"
}

ruleset() { cluster_node_exec 3 nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/' | sha256sum | cut -c1-16; }
sysctl_dir() { ls -A "/etc/netns/$(cluster_node_ns "$1")/sysctl.d" 2>/dev/null | tr '\n' ' '; }
range_of() { cluster_node_exec "$1" cat /proc/sys/net/ipv4/ip_local_port_range | tr '\t' ' '; }

snapshot() { # every node's range and sysctl.d, and node3's ruleset
	local i
	for ((i = 1; i <= CD_N; i++)); do
		printf 'node%s range %s sysctl.d [%s]\n' "$i" "$(range_of "$i")" "$(sysctl_dir "$i")"
	done
	printf 'node3 nft %s\n' "$(ruleset)"
}

# refused CMD WHAT: cdadmin's `sudo -n ...` on node3 is refused by sudo itself, the command
# never ran (sudo's message, status 1), and nothing of /etc/shadow was printed
refused() {
	admin 3 "$1"
	expect_eq "$rc" 1 "the exit status of $2 ($out)" || return 1
	expect_match "$out" "^sudo: a password is required$" "what sudo said to $2" || return 1
	[[ $out != *root:* ]] || { echo "    $2 printed /etc/shadow: $out"; return 1; }
}

BEFORE=
CORE=
t_cluster_with_cdadmin_and_a_dropping_firewall() {
	CD_QUIET=1 cluster_up 3 --users >/dev/null || return 1
	cluster_trap_firewall_port 3 1024-29499 || return 1
	cluster_trap_firewall_port 3 29511-65535 || return 1
	CORE=$(cat /proc/sys/kernel/core_pattern)
	BEFORE=$(snapshot)
}

t_sudo_allows_the_fixers_own_nft_rule() {
	# the escapes below are this rule with a tail appended
	admin 3 "sudo -n -l /usr/sbin/nft --echo --handle insert rule inet clusterdoc_test input $RULE comment '\"clusterdoc fix 20261204-211500-0a1b2c3d4e\"'"
	expect_eq "$rc" 0 "sudo -l of the fixer's own rule ($out)"
}

t_nft_rule_with_flush_ruleset_appended_is_refused() {
	refused "sudo -n /usr/sbin/nft --echo --handle insert rule inet clusterdoc_test input $RULE comment '\"x\"; flush ruleset'" "a rule with '; flush ruleset'" || return 1
	expect_eq "$(ruleset)" "$(tail -1 <<<"$BEFORE" | cut -d' ' -f3)" "node3's ruleset"
}

t_nft_rule_with_include_etc_shadow_is_refused() {
	refused "sudo -n /usr/sbin/nft --echo --handle insert rule inet clusterdoc_test input 'accept;' include '\"/etc/shadow\"'" "a rule with 'include'"
}

t_nft_listing_and_delete_with_include_or_flush_are_refused() {
	refused "sudo -n /usr/sbin/nft --handle list chain inet clusterdoc_test 'input;' include '\"/etc/shadow\"'" "a listing with 'include'" || return 1
	refused "sudo -n /usr/sbin/nft delete rule inet clusterdoc_test input handle '1;' flush ruleset" "a delete with 'flush ruleset'" || return 1
	expect_eq "$(ruleset)" "$(tail -1 <<<"$BEFORE" | cut -d' ' -f3)" "node3's ruleset"
}

t_nft_flush_ruleset_is_refused() {
	refused "sudo -n /usr/sbin/nft flush ruleset" "nft flush ruleset" || return 1
	expect_eq "$(ruleset)" "$(tail -1 <<<"$BEFORE" | cut -d' ' -f3)" "node3's ruleset"
}

t_nft_reading_etc_shadow_as_a_rule_file_is_refused() {
	refused "sudo -n /usr/sbin/nft -f /etc/shadow" "nft -f /etc/shadow"
}

t_sysctl_d_file_cannot_be_written_through_sudo() {
	local f=/etc/sysctl.d/$SYSCTL_FILE
	refused "printf 'kernel.core_pattern=|/bin/true\n' | sudo -n /usr/bin/tee $f" "tee $f" || return 1
	refused "printf 'kernel.core_pattern=|/bin/true\n' | sudo -n /usr/bin/tee /etc/sysctl.d/.$SYSCTL_FILE.clusterdoc" "tee of the temporary" || return 1
	expect_eq "$(sysctl_dir 3)" "" "node3's sysctl.d"
}

t_sysctl_of_kernel_core_pattern_is_refused() {
	# the value written is the one there: were sudo to allow it, nothing would change
	refused "sudo -n /usr/sbin/sysctl -w 'kernel.core_pattern=$CORE'" "sysctl -w kernel.core_pattern" || return 1
	refused "sudo -n /usr/sbin/sysctl -w 'net.ipv4.ip_local_port_range=40000 40999' 'kernel.core_pattern=$CORE'" "the port range and kernel.core_pattern" || return 1
	expect_eq "$(cat /proc/sys/kernel/core_pattern)" "$CORE" "kernel.core_pattern"
}

t_every_node_is_as_before_after_the_escapes() {
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after every escape"
}

RUN=
t_cdadmin_fix_sets_the_range_and_opens_the_firewall_through_sudo() {
	as_admin fix -w "$W" "${NARROW[@]}" --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_eq "$(jget '[[(a["fixer"], a["status"], a["sudo"]) for a in n["actions"]] for n in d["nodes"]]')" \
		"[[('port-range', 'applied', True)], [('port-range', 'applied', True)], [('firewall', 'applied', True), ('port-range', 'applied', True)]]" \
		"actions per node" || return 1
	expect_match "$(jget 'd["nodes"][0]["notes"]')" "through sudo the range is set until the next reboot only" "node1's note" || return 1
	local i
	for i in 1 2 3; do
		expect_eq "$(range_of "$i")" "40000 40999" "node$i's range" || return 1
		expect_eq "$(sysctl_dir "$i")" "" "node$i's sysctl.d" || return 1
	done
	expect_match "$(cluster_node_exec 3 nft list chain inet clusterdoc_test input)" \
		"iifname \{ \"lo\", \"eth0\" \} ip saddr [0-9./]+ tcp dport \{ 29500, 40000-40999 \} accept comment \"clusterdoc fix $RUN\"" "node3's rule"
}

t_cdadmin_undo_restores_every_range_and_the_ruleset() {
	as_admin fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo"
}

itest_run_all
