#!/usr/bin/env bash
# `clusterdoc mpi-check` on a namespace cluster of real sshd nodes: the agent on every node runs
# `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` toward every other node, as
# mpirun's rsh launcher does. Broken (the nodes know neither each other's host keys nor a key
# to log in with) -> every pair named with ssh's reason; half set up -> permission denied; a
# wrong recorded key -> host key changed; set up -> all green, and a real `mpirun` (Debian's
# openmpi-bin) started ON node1 runs one rank on each node; the set-up removed -> every touched
# file byte-identical to before.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=mpi_ssh

# generous: on a loaded machine one ssh login takes seconds
PT=(--pair-timeout 30)

# snapshot: the login user's ~/.ssh files node-to-node SSH reads, on every node
snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		for f in authorized_keys known_hosts config id_ed25519 id_ed25519.pub; do
			f=$CD_RUN/n$i/home/.ssh/$f
			if [[ -e $f ]]; then printf 'node%s %s %s\n' "$i" "${f##*/}" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s %s absent\n' "$i" "${f##*/}"; fi
		done
	done
}

# pairs REASON: the "from->to" pairs of the JSON matrix with that reason, space-separated
pairs() { jget "' '.join(p['from'] + '->' + p['to'] for p in d['peer_ssh']['pairs'] if p['reason'] == '$1')"; }
finding_ids() { jget "' '.join(f['id'] for f in d['findings'])"; }

BEFORE=
t_nodes_that_know_nothing_of_each_other_are_named_per_pair() {
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	BEFORE=$(snapshot)
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(pairs hostkey-unknown)" \
		"node1->node2 node1->node3 node2->node1 node2->node3 node3->node1 node3->node2" \
		"the pairs whose host key is unknown" || return 1
	expect_eq "$(jget "[p['detail'] for p in d['peer_ssh']['pairs'] if p['from'] == 'node1' and p['to'] == 'node2'][0]")" \
		"No ED25519 host key is known for node2 and you have requested strict checking." "ssh's words" || return 1
	expect_eq "$(finding_ids)" "peer-ssh-hostkey-unknown" "the findings"
}

t_the_text_report_shows_the_matrix() {
	cd_head mpi-check -w 'node[1-3]' "${PT[@]}"
	expect_eq "$rc" 1 "exit status" || return 1
	expect_match "$out" "node-to-node SSH \(what mpirun needs\): 0 of 6 pairs log in, 6 fail" "the summary" || return 1
	expect_match "$out" "^node1 +- +host key unknown +host key unknown" "node1's row" || return 1
	expect_match "$out" "node3 -> node1: host key unknown \(ssh: \"No ED25519 host key is known for node1" "a failing pair" || return 1
	expect_match "$out" "error peer-ssh-hostkey-unknown" "the finding"
}

# known_hosts I: node I's ~/.ssh/known_hosts gets every node's verified host key lines
known_hosts() { mkdir -p "$CD_RUN/n$1/home/.ssh" && cp "$CD_RUN/known_hosts" "$CD_RUN/n$1/home/.ssh/known_hosts"; }

t_known_host_keys_without_a_key_are_permission_denied() {
	local i
	for ((i = 1; i <= 3; i++)); do known_hosts "$i" || return 1; done
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(pairs denied)" \
		"node1->node2 node1->node3 node2->node1 node2->node3 node3->node1 node3->node2" \
		"the pairs refused" || return 1
	expect_match "$(jget "d['peer_ssh']['pairs'][0]['detail']")" "Permission denied \(publickey" "ssh's words" || return 1
	expect_eq "$(finding_ids)" "peer-ssh-denied" "the findings"
}

t_set_up_by_hand_every_pair_logs_in() {
	local i
	ssh-keygen -q -t ed25519 -N '' -C mpi-test -f "$CD_RUN/mpikey" </dev/null || return 1
	for ((i = 1; i <= 3; i++)); do
		install -m 600 "$CD_RUN/mpikey" "$CD_RUN/n$i/home/.ssh/id_ed25519" &&
			install -m 644 "$CD_RUN/mpikey.pub" "$CD_RUN/n$i/home/.ssh/id_ed25519.pub" &&
			install -m 600 "$CD_RUN/mpikey.pub" "$CD_RUN/n$i/home/.ssh/authorized_keys" || return 1
	done
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($out $err)" || return 1
	expect_eq "$(pairs ok | wc -w)" 6 "the pairs that log in" || return 1
	expect_eq "$(finding_ids)" "" "the findings"
}

t_a_changed_host_key_is_named_as_such() {
	local kh=$CD_RUN/n1/home/.ssh/known_hosts
	cp "$kh" "$CD_RUN/kh1.saved" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$CD_RUN/otherkey" </dev/null || return 1
	# node3's names now carry another key in node1's known_hosts
	awk -v k="$(cut -d' ' -f1-2 "$CD_RUN/otherkey.pub")" '$1 ~ /^node3$|,node3$|^node3,/ { $2 = ""; $3 = ""; sub(/ +$/, ""); print $1 " " k; next } { print }' \
		"$CD_RUN/kh1.saved" >"$kh" || return 1
	grep -q "^node3" "$kh" || { echo "    no node3 line in $kh: $(cat "$kh")"; return 1; }
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(pairs hostkey-changed)" "node1->node3" "the pair with a changed key" || return 1
	expect_eq "$(pairs ok | wc -w)" 5 "the other pairs" || return 1
	expect_eq "$(finding_ids)" "peer-ssh-hostkey-changed" "the findings" || return 1
	cp "$CD_RUN/kh1.saved" "$kh"
}

t_mpirun_from_node1_runs_a_rank_on_every_node() {
	local nic
	mpicc -O2 -o "$CD_RUN/mpi_hostname" "$CD_TOP/tests/integration/mpi_hostname.c" || return 1
	nic=$(cluster_node_nic 1)
	out=$(cluster_node_exec 1 timeout 60 mpirun --allow-run-as-root -np 3 --host node1,node2,node3 \
		--mca plm_rsh_agent "ssh -o BatchMode=yes -o StrictHostKeyChecking=yes" \
		--mca btl tcp,self --mca btl_tcp_if_include "$nic" --mca oob_tcp_if_include "$nic" \
		--mca pml ob1 "$CD_RUN/mpi_hostname" 2>&1)
	rc=$?
	expect_eq "$rc" 0 "mpirun's exit status ($out)" || return 1
	expect_eq "$(grep -E '^rank [0-2] of 3 on ' <<<"$out" | sort | sed 's/.* on //' | tr '\n' ' ')" \
		"node1 node2 node3 " "each rank's hostname"
}

t_removing_the_set_up_restores_every_byte() {
	local i
	for ((i = 1; i <= 3; i++)); do
		rm -f "$CD_RUN/n$i/home/.ssh/"{id_ed25519,id_ed25519.pub,authorized_keys,known_hosts}
	done
	expect_eq "$(snapshot)" "$BEFORE" "the nodes' ~/.ssh files" || return 1
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$(pairs hostkey-unknown | wc -w)" 6 "the pairs, broken again"
}

itest_need_root
# In file order: each test continues on the cluster and state the previous one left.
itest_run_all
