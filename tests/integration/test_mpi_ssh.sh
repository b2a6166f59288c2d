#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc mpi-check` and its peer-ssh fixer on a namespace cluster of real sshd nodes: the
# agent on every node runs `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true`
# toward every other node, as mpirun's rsh launcher does. Broken (the nodes know neither each
# other's host keys nor a key to log in with) -> every pair named with ssh's reason; known host
# keys without a key -> permission denied, and a wrong recorded key -> host key changed; the
# fixer's dry run changes nothing; --fix --apply -> all green, and a real `mpirun` (Debian's
# openmpi-bin) started ON node1 runs one rank on each node, and so does `clusterdoc run
# --launcher mpirun`; `fix --undo` -> every touched file byte-identical to before.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=mpi_ssh

# generous: on a loaded machine one ssh login takes seconds
PT=(--pair-timeout 30)

# snapshot: the login user's ~/.ssh files node-to-node SSH reads, on every node
snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		for f in authorized_keys known_hosts config id_clusterdoc_mpi; do
			f=$CD_RUN/n$i/home/.ssh/$f
			if [[ -e $f ]]; then printf 'node%s %s %s\n' "$i" "${f##*/}" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s %s absent\n' "$i" "${f##*/}"; fi
		done
	done
}

# pairs REASON: the "from->to" pairs of the JSON matrix with that reason, space-separated
pairs() { jget "' '.join(p['from'] + '->' + p['to'] for p in d['peer_ssh']['pairs'] if p['reason'] == '$1')"; }
finding_ids() { jget "' '.join(f['id'] for f in d['findings'])"; }
ALL6="node1->node2 node1->node3 node2->node1 node2->node3 node3->node1 node3->node2"
KEY=  # the cluster key on the head
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

t_known_host_keys_without_a_key_are_denied_and_a_wrong_one_changed() {
	local i kh=$CD_RUN/n1/home/.ssh/known_hosts
	for ((i = 1; i <= 3; i++)); do
		mkdir -p "$CD_RUN/n$i/home/.ssh" && cp "$CD_RUN/known_hosts" "$CD_RUN/n$i/home/.ssh/known_hosts" || return 1
	done
	ssh-keygen -q -t ed25519 -N '' -f "$CD_RUN/otherkey" </dev/null || return 1
	# node1 holds another key for node3
	awk -v k="$(cut -d' ' -f1-2 "$CD_RUN/otherkey.pub")" '$1 == "node3" { print $1 " " k; next } { print }' \
		"$CD_RUN/known_hosts" >"$kh" || return 1
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status ($err)" || return 1
	expect_eq "$(pairs hostkey-changed)" "node1->node3" "the pair with a changed key" || return 1
	expect_eq "$(pairs denied)" "node1->node2 node2->node1 node2->node3 node3->node1 node3->node2" \
		"the pairs refused" || return 1
	expect_match "$(jget "d['peer_ssh']['pairs'][0]['detail']")" "Permission denied \(publickey" "ssh's words" || return 1
	expect_eq "$(finding_ids)" "peer-ssh-hostkey-changed peer-ssh-denied" "the findings" || return 1
	for ((i = 1; i <= 3; i++)); do rm -f "$CD_RUN/n$i/home/.ssh/known_hosts"; done
	expect_eq "$(snapshot)" "$BEFORE" "the nodes, put back"
}

t_the_fixers_dry_run_changes_nothing() {
	KEY=$CD_HOME/.local/state/clusterdoc/mpi/id_ed25519
	cd_head mpi-check -w 'node[1-3]' --fix --json "${PT[@]}"
	expect_eq "$rc" 1 "exit status (changes planned): $err" || return 1
	expect_eq "$(jget "[len(n['actions']) for n in d['fix']['nodes']]")" "[3, 3, 3]" "changes per node" || return 1
	expect_eq "$(jget "d['fix']['applied']")" False "applied" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes after a dry run" || return 1
	[[ ! -e $KEY ]] || { echo "    the dry run made $KEY"; return 1; }
}

# fault-run-3 case 15: --fix --apply asks as `fix --apply` does; without a terminal and without
# --yes it is refused before anything is checked, and nothing changes
t_fix_apply_without_a_terminal_or_yes_is_refused_and_changes_nothing() {
	cd_head mpi-check -w 'node[1-3]' --fix --apply "${PT[@]}" </dev/null
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc mpi-check: --apply asks before changing anything and there is no terminal to ask on: add --yes" "the refusal" || return 1
	expect_eq "$out" "" "nothing checked" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes" || return 1
	[[ ! -e $KEY ]] || { echo "    $KEY was made"; return 1; }
}

# on a terminal it shows the plan and asks; "n" changes nothing on the nodes (the head's cluster
# key, made so that the plan asked about is the one applied, stays for the next apply)
t_fix_apply_asks_on_a_terminal_and_no_changes_nothing() {
	local log
	log=$(mktemp)
	printf 'n\n' | cluster_head_exec script -qec "env CLUSTERDOC_AGENT='$CLUSTERDOC_AGENT' '$CLUSTERDOC' mpi-check -w 'node[1-3]' --fix --apply ${PT[*]}" /dev/null >"$log" 2>&1
	rc=$?
	out=$(tr -d '\r' <"$log")
	rm -f "$log"
	expect_eq "$rc" 2 "exit status ($out)" || return 1
	expect_match "$out" "peer-ssh fix \([0-9a-f-]+\): 12 changes planned$" "the plan shown first (no dry run)" || return 1
	expect_match "$out" "Apply 12 changes on 3 nodes\? \[y/N\]" "the question" || return 1
	expect_match "$out" "clusterdoc mpi-check: nothing was changed" "the answer taken" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes"
}

RUN=
t_fix_apply_makes_every_pair_log_in() {
	cd_head mpi-check -w 'node[1-3]' --fix --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	RUN=$(jget "d['fix']['run']")
	expect_eq "$(jget "[a['status'] for n in d['fix']['nodes'] for a in n['actions']]")" \
		"$(python3 -c "print(['applied'] * 12)")" "every change" || return 1
	expect_eq "$(stat -c %a "$KEY")" 600 "the head's cluster key's mode" || return 1
	expect_eq "$(stat -c %a "$CD_RUN/n2/home/.ssh/id_clusterdoc_mpi")" 600 "node2's copy's mode" || return 1
	cmp -s "$KEY" "$CD_RUN/n2/home/.ssh/id_clusterdoc_mpi" || { echo "    node2's key differs"; return 1; }
	if grep -q "PRIVATE KEY" <<<"$out$err"; then echo "    the private key was printed"; return 1; fi
	expect_match "$(cat "$CD_RUN/n3/home/.ssh/config")" "^Host node1 node2 node3$" "node3's ssh config" || return 1
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$rc" 0 "the check after the fix ($out $err)" || return 1
	expect_eq "$(pairs ok)" "$ALL6" "the pairs that log in" || return 1
	expect_eq "$(finding_ids)" "" "the findings"
}

t_fix_apply_again_changes_nothing() {
	cd_head mpi-check -w 'node[1-3]' --fix --apply --yes --json "${PT[@]}"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget "d['fix']['changes']")" 0 "the changes"
}

t_mpirun_from_node1_runs_a_rank_on_every_node() {
	local nic
	mpicc -O2 -o "$CD_RUN/mpi_hostname" "$CD_TOP/tests/integration/mpi_hostname.c" || return 1
	nic=$(cluster_node_nic 1)
	out=$(cluster_node_exec 1 timeout 90 mpirun --allow-run-as-root -np 3 --host node1,node2,node3 \
		--mca plm_rsh_agent "ssh -o BatchMode=yes -o StrictHostKeyChecking=yes" \
		--mca btl tcp,self --mca btl_tcp_if_include "$nic" --mca oob_tcp_if_include "$nic" \
		--mca pml ob1 "$CD_RUN/mpi_hostname" 2>&1)
	rc=$?
	expect_eq "$rc" 0 "mpirun's exit status ($out)" || return 1
	expect_eq "$(grep -E '^rank [0-2] of 3 on ' <<<"$out" | sort | sed 's/.* on //' | tr '\n' ' ')" \
		"node1 node2 node3 " "each rank's hostname"
}

t_run_launcher_mpirun_starts_every_rank_from_the_first_node() {
	# root's mpirun needs Open MPI's own consent; the TCP BTL as in the namespace path
	cd_head run -w 'node[1-3]' --launcher mpirun --no-hang-ready --job-timeout 120 \
		--env OMPI_ALLOW_RUN_AS_ROOT=1 --env OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		--env OMPI_MCA_pml=ob1 --env 'OMPI_MCA_btl=tcp,self' -- "$CD_RUN/mpi_hostname"
	expect_eq "$rc" 0 "exit status ($out $err)" || return 1
	expect_eq "$(grep -oE '^node1 r0: rank [0-2] of 3 on node[1-3]$' <<<"$out" | sort | sed 's/.* on //' | tr '\n' ' ')" \
		"node1 node2 node3 " "every rank's line, all through node1's mpirun"
}

t_undo_restores_every_byte() {
	cd_head fix --undo "$RUN"
	expect_eq "$rc" 0 "undo ($out $err)" || return 1
	expect_eq "$(snapshot)" "$BEFORE" "the nodes' ~/.ssh files after undo" || return 1
	cd_head mpi-check -w 'node[1-3]' --json "${PT[@]}"
	expect_eq "$(pairs hostkey-unknown)" "$ALL6" "the pairs, broken again"
}

itest_need_root
# In file order: each test continues on the cluster and state the previous one left.
itest_run_all
