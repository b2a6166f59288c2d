#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The node lists users already have (issue 37, item 3): Open MPI/DeepSpeed hostfiles with slots=
# and MPICH's host:N, ClusterShell's @groups (groups.conf, groups.d, map upcalls), -w - and
# nodeset reading standard input, pdsh's -g from a genders file. First the parsing, with the
# real binary and no cluster (compared with ClusterShell's own nodeset where it is installed);
# then, on a namespace cluster of two real sshd nodes, facts and a run --dry-run reaching the
# nodes those lists name. Every bad input is an error naming the file, the line and the value,
# and nothing is reached.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=nodelists

WORK=$(mktemp -d /tmp/cdnodelists.XXXXXX)
chmod 755 "$WORK"
SUBNET=10.97.53

# A ClusterShell configuration of its own: [Main] default, a map upcall reading a file through
# $CFGDIR, a YAML file with groups naming groups (ClusterShell's documented syntax).
CS=$WORK/clustershell
mkdir -p "$CS/groups.d"
cat >"$CS/groups.conf" <<'EOF'
[Main]
default: roles

[flat]
map: sed -n 's/^$GROUP: *//p' $CFGDIR/flat.txt
EOF
printf 'web: w[1-2]\nnodes: node[1-2]\n' >"$CS/flat.txt"
cat >"$CS/groups.d/cluster.yaml" <<'EOF'
roles:
    gpu: 'g[1-4]'
    io: '@racks:rack2,g9'
    first: node1
racks:
    rack1: 'n[0,2]'
    rack2: n[4-5]
    old: '@rack[1-2]'
    rack5:
        - 'x[1-2]'   # a block list
        - x9
EOF
export CLUSTERSHELL_CFGDIR=$CS

# cd_local ARGS...: clusterdoc on this machine (no cluster); sets $out, $err, $rc
cd_local() {
	local ef
	ef=$(mktemp)
	out=$("$CLUSTERDOC" "$@" 2>"$ef")
	rc=$?
	err=$(cat "$ef")
	rm -f "$ef"
}

t_nodeset_reads_hosts_from_standard_input_given_dash() {
	cd_local nodeset -f - < <(printf 'n1 n2,n3\nn[5-6] # a comment\n')
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$out" "n[1-3,5-6]" "the folded hosts"
}

t_nodeset_without_an_expression_reads_standard_input() {
	cd_local nodeset -f < <(printf 'b2\nb1\n')
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$out" "b[1-2]" "the folded hosts"
}

t_nodeset_at_groups_give_what_clustershells_nodeset_gives() {
	local expr want ref
	while IFS='|' read -r expr want; do
		cd_local nodeset -f "$expr"
		expect_eq "$rc:$out" "0:$want" "nodeset -f '$expr' ($err)" || return 1
		if command -v nodeset >/dev/null && [[ $(nodeset --version) =~ ^nodeset\ 1\.(9|[1-9][0-9]) ]]; then
			ref=$(nodeset -f "$expr")
			expect_eq "$out" "$ref" "ClusterShell's nodeset -f '$expr'" || return 1
		fi
	done <<'EOF'
@gpu|g[1-4]
@roles:io|g9,n[4-5]
@racks:old|n[0,2,4-5]
@racks:rack5|x[1-2,9]
@racks:rack[1-2]!n0|n[2,4-5]
@flat:web,@gpu&g[1-2]|g[1-2]
@flat:nodes|node[1-2]
EOF
}

t_an_unknown_group_is_an_error_naming_it_and_where_it_looked() {
	cd_local facts -w 'node1,@nosuch' --connect-timeout 1
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "^clusterdoc facts: unknown node group @nosuch; looked in: clusterdoc config \\(\\[groups\\] of its files\\), ClusterShell \(default source roles; sources .*from $CS/groups.conf.*\), Slurm \(@sj:JOBID, @sp:PARTITION\)$" "the message" || return 1
	if grep -q ssh_config <<<"$err"; then
		echo "    the message blames ssh_config: $err"
		return 1
	fi
	# a typo of a configuration's group: the group it may have meant
	printf '[groups]\ntrain = node[1-2]\n' >"$WORK/groups.conf"
	CLUSTERDOC_CONFIG=$WORK/groups.conf cd_local nodeset -f @trian
	expect_match "$err" "^clusterdoc nodeset: unknown node group @trian \(did you mean @train\?\); looked in: " "a typo of @train"
}

t_a_failing_map_upcall_names_its_file_line_and_stderr() {
	mkdir -p "$WORK/cs2"
	printf '[Main]\ndefault: bad\n[bad]\nmap: echo no such table >&2; exit 4\n' >"$WORK/cs2/groups.conf"
	CLUSTERSHELL_CFGDIR=$WORK/cs2 cd_local nodeset -f @x
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc nodeset: $WORK/cs2/groups.conf:4: the map upcall of [bad] for @x exited with status 4: no such table" "the message"
}

t_a_hostfile_with_a_malformed_slots_names_the_file_line_and_value() {
	printf 'node1 slots=8\nnode2 slots=eight\n' >"$WORK/bad-slots"
	cd_local facts --hostfile "$WORK/bad-slots"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc facts: $WORK/bad-slots:2: \"slots=eight\": slots takes a whole number from 1 to 1024" "the message" || return 1
	cd_local run --hostfile - --dry-run -- true < <(printf 'node1:0\n')
	expect_eq "$rc:$err" "2:clusterdoc run: <stdin>:1: \"node1:0\": host:N takes a whole number N from 1 to 1024" "host:0 on standard input"
}

# "no nodes" says which source named none, or that the exclusion took them all; an Open MPI
# hostfile fed to -w - points at --hostfile -. Nothing reaches a node.
t_no_nodes_says_which_source_gave_none_and_slots_on_w_dash_point_at_hostfile() {
	printf '# nothing yet\n' >"$WORK/empty-hosts"
	cd_local facts --hostfile "$WORK/empty-hosts"
	expect_eq "$rc:$err" "2:clusterdoc facts: no nodes: --hostfile $WORK/empty-hosts names none; give -w HOSTLIST, --hostfile FILE or -g ATTR (e.g. -w 'node[01-04]')" "an empty hostfile" || return 1
	cd_local facts -w - < <(printf '')
	expect_eq "$rc:$err" "2:clusterdoc facts: no nodes: -w - (standard input) names none; give -w HOSTLIST, --hostfile FILE or -g ATTR (e.g. -w 'node[01-04]')" "an empty pipe" || return 1
	cd_local facts -w 'node[1-2]' -x 'node[1-2]'
	expect_eq "$rc:$err" "2:clusterdoc facts: no nodes: the 2 node(s) given are all excluded (-x, or the configuration's exclude: \`clusterdoc config\` shows where it is set)" "all excluded" || return 1
	cd_local facts -w - < <(printf 'node1 slots=2\nnode2\n')
	expect_eq "$rc:$err" "2:clusterdoc facts: <stdin>: \"slots=2\" is not a host name: a hostfile with slots is read by --hostfile - (-w - takes host names)" "slots on -w -"
}

t_a_genders_file_that_is_not_one_names_the_file_line_and_value() {
	printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$WORK/not-genders"
	CLUSTERDOC_GENDERS=$WORK/not-genders cd_local facts -g compute
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc facts: $WORK/not-genders:2: \"ip6-localhost\": a genders line is NODES [ATTRS]; this one has 4 fields (is it a genders file?)" "the message" || return 1
	printf 'node1 compute\n' >"$WORK/genders"
	CLUSTERDOC_GENDERS=$WORK/genders cd_local facts -g gpu
	expect_eq "$rc:$err" "2:clusterdoc facts: -g gpu: no node of $WORK/genders has it" "an attribute no node has"
}

# ---- on a namespace cluster

t_setup() {
	cluster_down
	CD_QUIET=1 cluster_up 2 --subnet "$SUBNET" >/dev/null
}

# the hosts facts --json reached, sorted, space separated
facts_hosts() {
	jget '" ".join(sorted(n["host"] for n in d["nodes"]))'
}

t_facts_with_an_open_mpi_and_mpich_hostfile_reaches_each_host_once() {
	printf '# an Open MPI hostfile\nnode1 slots=2 max_slots=4\nnode2:3\n' >"$WORK/hostfile"
	cd_head facts --hostfile "$WORK/hostfile" --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(facts_hosts)" "node1 node2" "the hosts facts reached"
}

t_facts_reads_w_dash_from_standard_input() {
	cd_head facts -w - --json < <(printf 'node1,\nnode2\n')
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(facts_hosts)" "node1 node2" "the hosts facts reached"
}

t_facts_reaches_a_clustershell_group() {
	cd_head facts -w '@flat:nodes!node2' --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(facts_hosts)" "node1" "the hosts facts reached"
}

t_facts_g_selects_the_nodes_of_a_genders_attribute() {
	printf '# genders\nnode[1-2] compute,rack=r1\nnode2 gpu\nlogin1 login\n' >"$WORK/genders"
	CLUSTERDOC_GENDERS=$WORK/genders cd_head facts -g gpu --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(facts_hosts)" "node2" "the hosts facts reached"
}

t_run_dry_run_takes_each_nodes_slots_as_its_ranks() {
	printf 'node1 slots=2\nnode2:3\n' >"$WORK/slots"
	cd_head run --hostfile "$WORK/slots" --launcher none --no-hang-ready --dry-run -- python3 main.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^# node[12]: ' <<<"$out" | sed 's/, eth0.*//')" $'# node1: node_rank 0, ranks 0-1\n# node2: node_rank 1, ranks 2-4' "each node's ranks" || return 1
	expect_eq "$(grep -c '^export WORLD_SIZE=5$' <<<"$out")" 2 "WORLD_SIZE on both nodes" || return 1
	expect_match "$err" "the slots of $WORK/slots differ \(node1 has 2 slots, node2 has 3\): each node runs as many ranks as its slots" "what run says" || return 1
	printf 'node1 slots=2\nnode2 slots=2\n' >"$WORK/slots2"
	cd_head run --hostfile "$WORK/slots2" --launcher none --no-hang-ready --dry-run -- python3 main.py
	expect_eq "$(grep -c '^export NPROC_PER_NODE=2$' <<<"$out")" 2 "NPROC_PER_NODE from equal slots ($err)" || return 1
	expect_match "$err" "clusterdoc run: 2 ranks per node, the slots of $WORK/slots2" "what run says"
}

t_nproc_per_node_given_wins_over_the_slots() {
	cd_head run --hostfile "$WORK/slots" --nproc-per-node 1 --launcher none --no-hang-ready --dry-run -- python3 main.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep -c '^export NPROC_PER_NODE=1$' <<<"$out")" 2 "NPROC_PER_NODE as given" || return 1
	if grep -q slots <<<"$err"; then
		echo "    run spoke of slots: $err"
		return 1
	fi
}

# A configured nproc-per-node is a default, not a choice made for this hostfile: the slots win.
t_a_configured_nproc_per_node_yields_to_the_slots() {
	mkdir -p "$CD_HOME/.config/clusterdoc"
	printf '[run]\nnproc-per-node = 1\n' >"$CD_HOME/.config/clusterdoc/config"
	printf 'node1 slots=2\nnode2:3\n' >"$WORK/slots-conf"
	cd_head run --hostfile "$WORK/slots-conf" --launcher none --no-hang-ready --dry-run -- python3 main.py
	rm -f "$CD_HOME/.config/clusterdoc/config"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^# node[12]: ' <<<"$out" | sed 's/, eth0.*//')" $'# node1: node_rank 0, ranks 0-1\n# node2: node_rank 1, ranks 2-4' "each node's ranks"
}

t_mnist_refuses_slots_that_differ_and_reaches_no_node() {
	cd_head mnist --hostfile "$WORK/slots" --no-check
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc mnist: the slots of $WORK/slots do not give one rank count (node1 has 2 slots, node2 has 3): mnist runs the same count on every node; give --nproc-per-node" "the message"
}

cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
itest_need_root
itest_run_all
