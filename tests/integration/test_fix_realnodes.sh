#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc fix` as non-root logins and on a shared home, on 4 real sshd nodes:
#   - as cdadmin (sudo for exactly tests/cluster/sudoers.cdadmin): --apply fixes node2's
#     127.0.1.1 hostname through sudo and `fix --undo` restores every byte;
#   - as cdplain (no sudo): every node that needs root is refused before its first change,
#     with the node, the command and the sudoers line in the message; nothing changes on any
#     node (files and `nft list ruleset` compared); the home-only fixer (--only env) works;
#     with the default fixers node1's home changes while node2, refused, changes nothing;
#   - with the shared home: the env fixer changes the one ~/.bashrc once, with per-host values
#     in env.sh (node3's NIC has another name, and ssh to it sees its own), and --list /
#     --undo restore it byte for byte.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fix_realnodes

PT=(--probe-timeout 1000)
W='node[1-4]'

as() { # USER ARGS...: clusterdoc as that user, like cd_head
	local cfg=$CD_SSH_CONFIG_PLAIN
	[[ $1 == cdadmin ]] && cfg=$CD_SSH_CONFIG_ADMIN
	shift
	cd_head "$1" -F "$cfg" "${@:2}"
}

snapshot() { # every file a fix may touch, on every node, and each ruleset
	local i f u
	for ((i = 1; i <= CD_N; i++)); do
		for u in cdadmin cdplain; do
			for f in .bashrc .nccl.conf .config/clusterdoc/env.sh; do
				printf 'node%s %s %s %s\n' "$i" "$u" "$f" "$(cluster_node_exec "$i" sh -c "sha256sum </home/$u/$f 2>/dev/null || echo absent" | cut -c1-16)"
			done
		done
		printf 'node%s hosts %s\n' "$i" "$(cluster_node_exec "$i" sha256sum </dev/null /etc/hosts | cut -c1-16)"
		printf 'node%s nft %s\n' "$i" "$(cluster_node_exec "$i" nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/' | sha256sum | cut -c1-16)"
	done
}

t_cluster_with_users_and_traps() {
	CD_QUIET=1 cluster_up 4 --users >/dev/null || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	cluster_trap_hostname_loopback 2 || return 1
	cluster_trap_firewall_port 3 1024-29499 || return 1
	cluster_trap_firewall_port 3 29511-65535 || return 1
}

BEFORE=
t_cdplain_is_refused_on_each_node_that_needs_root_and_nothing_changes() {
	BEFORE=$(snapshot)
	as cdplain fix -w "$W" --only hosts,port-range --port-range 40000-40999 --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(jget 'sorted(set(a["status"] for n in d["nodes"] for a in n["actions"]))')" "['failed']" "statuses" || return 1
	for i in 1 2 3 4; do
		expect_match "$(jget "d['nodes'][$((i - 1))]['actions'][0]['message']")" \
			"^node$i: sudo refused \`.*\` for cdplain .*allow it with the sudoers line: cdplain ALL=\(root\) NOPASSWD: /.*; nothing was changed on node$i" "node$i's message" || return 1
	done
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after the refusal"
}

t_cdplain_home_only_fixer_still_works() {
	as cdplain fix -w "$W" --only env --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'sorted(set(a["status"] for n in d["nodes"] for a in n["actions"]))')" "['applied']" "statuses" || return 1
	as cdplain fix --undo "$(jget 'd["run"]')"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo"
}

t_cdplain_default_fixers_stop_the_refused_node_and_the_others_go_on() {
	# node1 needs only its home (env); node2 needs root for /etc/hosts, so
	# none of its changes is made, its env ones included; node3's firewall
	# cannot even be read
	as cdplain fix -w "$W" --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	local run
	run=$(jget 'd["run"]')
	expect_eq "$(jget '[sorted(set(a["status"] for a in n["actions"])) for n in d["nodes"]]')" \
		"[['applied'], ['failed'], [], []]" "statuses per node" || return 1
	expect_match "$(jget "d['nodes'][1]['actions'][0]['message']")" \
		"^node2: sudo refused \`.*\` for cdplain .*allow it with the sudoers line: cdplain ALL=\(root\) NOPASSWD: /.*; nothing was changed on node2" "node2's message" || return 1
	expect_match "$(jget "d['nodes'][2]['notes']")" \
		"node3: sudo refused \`nft -j list ruleset\` for cdplain .*cdplain ALL=\(root\) NOPASSWD: /usr/sbin/nft -j list ruleset" "node3's note" || return 1
	expect_eq "$(snapshot | grep -v '^node1 cdplain')" "$(grep -v '^node1 cdplain' <<<"$BEFORE")" "every file but node1's home" || return 1
	as cdplain fix --list
	expect_match "$out" "^$run  3 changes on 1 node$" "--list" || return 1
	as cdplain fix --undo "$run"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo"
}

RUN=
t_cdadmin_applies_through_sudo_and_undo_restores_every_byte() {
	as cdadmin fix -w "$W" --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_eq "$(jget 'sorted(set(a["status"] for n in d["nodes"] for a in n["actions"]))')" "['applied']" "statuses" || return 1
	expect_eq "$(jget '[a["sudo"] for a in d["nodes"][1]["actions"] if a["fixer"] == "hosts"]')" "[True]" "hosts through sudo" || return 1
	expect_eq "$(cluster_node_exec 2 getent ahostsv4 node2 | head -1 | cut -d' ' -f1)" "$(cluster_node_ip 2)" "node2's hostname" || return 1
	expect_eq "$(cluster_node_exec 2 stat -c '%U %a' /etc/hosts)" "root 644" "/etc/hosts keeps owner and mode" || return 1
	as cdadmin fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after undo"
}

t_shared_home_bashrc_changes_once_with_per_host_values() {
	cluster_down
	# node3's NIC is named differently: its GLOO_SOCKET_IFNAME differs
	CD_QUIET=1 cluster_up 4 --shared-home --nic-names "eth0 eth0 eno1 eth0" >/dev/null || return 1
	cluster_trap_ipv6_only_nic 1 ens6 || return 1
	local rc_before
	rc_before=$(sha256sum <"$CD_SHARED_DIR/root/.bashrc")
	cd_head fix -w "$W" --only env --json "${PT[@]}"
	expect_eq "$(jget '[len(n["actions"]) for n in d["nodes"]]')" "[3, 0, 0, 0]" "one change per file" || return 1
	expect_eq "$(jget 'sorted(set(a.get("shared_by") for a in d["nodes"][0]["actions"]))')" "['node[1-4]']" "shared by" || return 1
	cd_head fix -w "$W" --only env --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget 'd["run"]')
	expect_match "$(cat "$CD_SHARED_DIR/root/.config/clusterdoc/env.sh")" 'case "\$\(uname -n\)" in' "env.sh keyed by host" || return 1
	local i want
	for i in 1 2 3 4; do # what a command run by ssh sees, through the one ~/.bashrc
		want=eth0
		((i == 3)) && want=eno1
		expect_eq "$(cluster_ssh "$i" 'echo $GLOO_SOCKET_IFNAME')" "$want" "node$i's GLOO_SOCKET_IFNAME" || return 1
	done
	cd_head fix --list
	expect_match "$out" "^$RUN  3 changes on 4 nodes" "--list" || return 1
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(sha256sum <"$CD_SHARED_DIR/root/.bashrc")" "$rc_before" "~/.bashrc after undo" || return 1
	[[ ! -e $CD_SHARED_DIR/root/.config/clusterdoc/env.sh ]] || { echo "    env.sh left behind"; return 1; }
}

# Two nodes made from one image: separate homes that carry the same home-id token. Each
# plans and gets its own change, never "changed once, there" on the other's home.
t_separate_homes_with_one_copied_home_id_each_get_their_own_change() {
	local i tok=.local/state/clusterdoc/home-id
	cluster_down
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	for i in 1 2; do
		cluster_trap_ipv6_only_nic "$i" ens6 || return 1
		mkdir -p -m 700 "$CD_RUN/n$i/home/.local" "$CD_RUN/n$i/home/.local/state" \
			"$CD_RUN/n$i/home/.local/state/clusterdoc" || return 1
		printf '0123456789abcdef0123456789abcdef\n' >"$CD_RUN/n$i/home/$tok" && chmod 600 "$CD_RUN/n$i/home/$tok" || return 1
	done
	cd_head fix -w 'node[1-2]' --only env --json "${PT[@]}"
	expect_eq "$(jget '[len(n["actions"]) for n in d["nodes"]]')" "[3, 3]" "changes per node" || return 1
	expect_eq "$(jget '[a.get("shared_by") for n in d["nodes"] for a in n["actions"]]')" \
		"[None, None, None, None, None, None]" "no change said to be shared" || return 1
	cd_head fix -w 'node[1-2]' --only env --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	for i in 1 2; do
		[[ -f $CD_RUN/n$i/home/.config/clusterdoc/env.sh ]] || { echo "    node$i has no env.sh"; return 1; }
		expect_eq "$(cluster_ssh "$i" 'echo $GLOO_SOCKET_IFNAME')" eth0 "node$i's GLOO_SOCKET_IFNAME" || return 1
	done
	[[ $(cat "$CD_RUN/n1/home/$tok") != "$(cat "$CD_RUN/n2/home/$tok")" ]] || { echo "    the copied token stayed on both"; return 1; }
}

if [ "$(id -u)" -ne 0 ]; then
	result SKIP "$ITEST_FILE (needs root for network namespaces)"
	exit 0
fi
for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
	run_test "$t"
done
cluster_down
exit $ITEST_STATUS
