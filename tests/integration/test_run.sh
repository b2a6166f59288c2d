#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `clusterdoc run` on namespace clusters of real sshd nodes whose NICs have different names
# (eth0, ens5), with Debian's torch over Gloo: a torchrun script, the seed-002 style (--launcher
# none, the rendezvous in placeholders), the seed-000 style (rank from argv, NIC from
# GLOO_SOCKET_IFNAME), live prefixed lines, logs and summary.json on the head, --group, and
# --dry-run compared exactly, with hang-ready's variables for the nodes' torch 1.13.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=run

JOBS=""   # the test's scripts, in the /tmp the nodes share
SUBNET=10.97.41

setup_cluster() {
	cluster_down
	CD_QUIET=1 cluster_up 2 --nic-names "eth0 ens5" --subnet "$SUBNET" >/dev/null || return 1
	JOBS=$(mktemp -d /tmp/cdrun-test.XXXXXX)
	chmod 755 "$JOBS"
	cp "$CD_TOP"/tests/fixtures/run/*.py "$JOBS/"
}

run() { cd_head run --json "$@"; }

t_a_torchrun_script_runs_on_every_rank_with_the_proved_interfaces() {
	setup_cluster || return 1
	run -w 'node[1-2]' --nproc-per-node 2 --chdir "$JOBS" --stall-timeout 60 -- allreduce.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nranks"], d["exit_status"], d["root_cause"]')" "(4, 0, None)" "ranks, status, root cause" || return 1
	# every rank got the sum 0+1+2+3, each node on its own NIC
	expect_eq "$(grep -c 'sum 6 iface' <<<"$err")" 4 "ranks with the right sum" || return 1
	expect_match "$err" "^node2 r[23]: rank [23]/4 sum 6 iface ens5" "node2's ranks on ens5" || return 1
	expect_match "$err" "^node1 r[01]: rank [01]/4 sum 6 iface eth0" "node1's ranks on eth0"
}

t_torchruns_workers_lines_carry_their_global_rank() {
	# torchrun --tee (PET_TEE): a worker's line is its own rank's, and --json lists every rank
	expect_match "$err" "^node2 r3: rank 3/4 sum 6 iface ens5$" "node2's second worker as r3" || return 1
	expect_match "$err" "^node2 r2: rank 2/4 sum 6 iface ens5$" "node2's first worker as r2" || return 1
	expect_match "$err" "^node1 r1: rank 1/4 sum 6 iface eth0$" "node1's second worker as r1" || return 1
	expect_eq "$(jget '[(r["rank"], r["node"], r["local_rank"], r["exit_code"]) for r in d["ranks"]]')" \
		"[(0, 'node1', 0, 0), (1, 'node1', 1, 0), (2, 'node2', 0, 0), (3, 'node2', 1, 0)]" "--json's ranks"
}

t_the_run_keeps_logs_and_a_summary_on_the_head() {
	local dir
	dir="$CD_RUN/home/.local/state/clusterdoc/runs/$(jget 'd["run_id"]')"
	[[ -s $dir/summary.json ]] || { echo "    no $dir/summary.json"; return 1; }
	expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_status"])' "$dir/summary.json")" 0 "saved status" || return 1
	grep -q 'sum 6' "$dir/node2.out" "$dir/node2.err" || { echo "    node2's log lacks its output"; return 1; }
	[[ -f $CD_RUN/home/.local/state/clusterdoc/runs/check-$(printf 'node1\0node2\0' | sha256sum | cut -c1-16).json ]] || {
		echo "    the check was not saved"
		return 1
	}
}

t_seed_002_style_takes_the_rendezvous_from_placeholders() {
	run -w 'node[1-2]' --launcher none --no-check --chdir "$JOBS" --stall-timeout 60 -- \
		python3 main_002.py --dist-url 'tcp://{master_addr}:{master_port}' --world-size '{nnodes}' --rank '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^node2 r1: rank 1 of 2 via tcp://$SUBNET\.11:29500: 2$" "node2's line" || return 1
	expect_match "$err" "^node1 r0: rank 0 of 2 via tcp://$SUBNET\.11:29500: 2$" "node1's line" || return 1
	expect_match "$err" "using the check of these nodes saved [0-9]+ min" "--no-check says the age"
}

t_seed_000_style_reads_its_rank_from_argv_and_its_nic_from_the_env() {
	run -w 'node[1-2]' --launcher none --no-check --chdir "$JOBS" --stall-timeout 60 -- python3 train_000.py '{node_rank}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$err" "^node1 r0: rank 0 up on eth0$" "node1" || return 1
	expect_match "$err" "^node2 r1: rank 1 up on ens5$" "node2"
}

t_quiet_shows_only_the_ranks_stderr() {
	cd_head run -w 'node[1-2]' --launcher none --no-check --quiet -- sh -c 'echo to-out; echo to-err >&2'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^node' <<<"$out" | sort)" "$(printf 'node1 r0: to-err\nnode2 r1: to-err')" "the live lines"
}

# A job's output reaches the terminal escaped (fault run 3, case 10): a clear-screen, an OSC
# title set and a C1 CSI are shown as \xHH, the tab is kept, no ESC byte is written; the
# head's node1.out log keeps the bytes the job wrote.
t_a_jobs_terminal_escapes_are_shown_escaped() {
	local log
	run -w 'node[1-2]' --launcher none --no-check -- sh -c 'printf "a\033[2J\033]0;X\007\tb\302\233c\n"'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(grep '^node1 r0:' <<<"$err")" "$(printf 'node1 r0: a\\x1b[2J\\x1b]0;X\\x07\tb\\xc2\\x9bc')" \
		"the live line" || return 1
	[[ $out$err != *$'\e'* && $out$err != *$'\a'* ]] || { echo "    an ESC or BEL byte reached the terminal"; return 1; }
	log="$CD_RUN/home/.local/state/clusterdoc/runs/$(jget 'd["run_id"]')/node1.out"
	expect_eq "$(od -An -c "$log" | tr -s ' ' | head -2)" "$(printf 'a\033[2J\033]0;X\007\tb\302\233c\n' | od -An -c | tr -s ' ' | head -2)" \
		"node1.out's raw bytes"
}

t_only_the_listed_variables_reach_the_nodes() {
	local f
	f=$(mktemp)
	printf '# a comment\n\nexport FROM_FILE=two words\n' >"$f"
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" HEAD_ONLY=leak "$CLUSTERDOC" run -w 'node[1-2]' \
		--launcher none --no-check --env FROM_CLI=1 --env-file "$f" -- \
		sh -c 'echo "${HEAD_ONLY:-unset} $FROM_CLI $FROM_FILE"' 2>/dev/null)
	rc=$?
	rm -f "$f"
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(grep '^node' <<<"$out" | sort)" "$(printf 'node1 r0: unset 1 two words\nnode2 r1: unset 1 two words')" "the nodes' environment"
}

t_group_folds_identical_output() {
	cd_head run -w 'node[1-2]' --launcher none --no-check --group -- sh -c 'echo same; echo {nnodes}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(sed -n '1,5p' <<<"$out")" "$(printf -- '---------------\nnode[1-2] (2)\n---------------\nsame\n2')" "grouped output"
}

t_dry_run_prints_each_nodes_exact_command_and_starts_nothing() {
	local want
	# the runs above left their run directories (hang-ready's files): none before this one
	rm -rf "$CD_RUN"/n[12]/cache/clusterdoc/runs
	cd_head run -w 'node[1-2]' --launcher none --no-check --no-hang-ready --env 'A=x y' --dry-run -- python3 main.py --rank '{node_rank}' --dist-url 'tcp://{master_addr}:{master_port}'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	want="# node1: node_rank 0, ranks 0-0, eth0 $SUBNET.11 (proved by the check)
cd ~/ && env \\
    NCCL_SOCKET_IFNAME=eth0,ens5 \\
    GLOO_SOCKET_IFNAME=eth0 \\
    MASTER_ADDR=$SUBNET.11 \\
    MASTER_PORT=29500 \\
    NODE_RANK=0 \\
    NNODES=2 \\
    NPROC_PER_NODE=1 \\
    WORLD_SIZE=2 \\
    CLUSTERDOC_RUN=RUN \\
    PYTHONUNBUFFERED=1 \\
    'A=x y' \\
    python3 main.py --rank 0 --dist-url tcp://$SUBNET.11:29500
# by hand on node1:
export NCCL_SOCKET_IFNAME=eth0,ens5
export GLOO_SOCKET_IFNAME=eth0
export MASTER_ADDR=$SUBNET.11
export MASTER_PORT=29500
export NODE_RANK=0
export NNODES=2
export NPROC_PER_NODE=1
export WORLD_SIZE=2
export CLUSTERDOC_RUN=RUN
export PYTHONUNBUFFERED=1
export A='x y'
python3 main.py --rank 0 --dist-url tcp://$SUBNET.11:29500

# node2: node_rank 1, ranks 1-1, ens5 $SUBNET.12 (proved by the check)
cd ~/ && env \\
    NCCL_SOCKET_IFNAME=eth0,ens5 \\
    GLOO_SOCKET_IFNAME=ens5 \\
    MASTER_ADDR=$SUBNET.11 \\
    MASTER_PORT=29500 \\
    NODE_RANK=1 \\
    NNODES=2 \\
    NPROC_PER_NODE=1 \\
    WORLD_SIZE=2 \\
    CLUSTERDOC_RUN=RUN \\
    PYTHONUNBUFFERED=1 \\
    'A=x y' \\
    python3 main.py --rank 1 --dist-url tcp://$SUBNET.11:29500
# by hand on node2:
export NCCL_SOCKET_IFNAME=eth0,ens5
export GLOO_SOCKET_IFNAME=ens5
export MASTER_ADDR=$SUBNET.11
export MASTER_PORT=29500
export NODE_RANK=1
export NNODES=2
export NPROC_PER_NODE=1
export WORLD_SIZE=2
export CLUSTERDOC_RUN=RUN
export PYTHONUNBUFFERED=1
export A='x y'
python3 main.py --rank 1 --dist-url tcp://$SUBNET.11:29500"
	expect_eq "$(sed -E 's/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}/RUN/' <<<"$out")" "$want" "the plan" || return 1
	# nothing ran: no run directory, no process of a run on the nodes
	[[ ! -e $CD_RUN/n1/cache/clusterdoc/runs ]] || { echo "    a run directory on node1"; return 1; }
}

t_dry_run_with_torchrun_shows_the_torchrun_line() {
	cd_head run -w 'node[1-2]' --no-check --dry-run -- train.py --epochs 3
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" "^torchrun --nnodes 2 --node_rank 1 --nproc_per_node 1 --master_addr $SUBNET\.11 --master_port 29500 train\.py --epochs 3$" "node2's by-hand line"
}

t_dry_run_shows_hang_readys_variables_for_the_nodes_torch() {
	cd_head run -w 'node[1-2]' --launcher none --no-check --dry-run -- python3 main.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	local plan id
	plan=$(sed -E 's/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}/RUN/' <<<"$out")
	for id in node1 node2; do
		expect_eq "$(sed -n "/^# by hand on $id:/,/^python3/p" <<<"$plan" | tail -n 3)" \
			$'export PYTHONPATH=~/.cache/clusterdoc/runs/RUN/hang\nexport CLUSTERDOC_DUMP_SIGNAL=SIGUSR2\npython3 main.py' "$id's hang-ready lines" || return 1
	done
	expect_eq "$(grep -c '^    PYTHONPATH=~/.cache/clusterdoc/runs/RUN/hang \\$' <<<"$plan")" 2 "PYTHONPATH in each node's command" || return 1
	# Debian's torch 1.13 knows none of the TORCH_NCCL_* variables: they are left out
	if grep -q TORCH_NCCL_ <<<"$out"; then
		echo "    TORCH_NCCL_* for torch 1.13: $out"
		return 1
	fi
	[[ ! -e $CD_RUN/n1/cache/clusterdoc/runs/$(grep -oE '[0-9]{8}-[0-9]{6}-[0-9a-f]{4}' <<<"$out" | head -1) ]] ||
		{ echo "    a run directory on node1"; return 1; }
}

t_sync_to_nodes_with_their_own_homes_sends_the_tree_to_each() {
	local src
	src=$(mktemp -d "$JOBS/sync.XXXXXX")
	echo 'print("synced", open("note.txt").read().strip(), flush=True)' >"$src/show.py"
	echo "v1-$RANDOM" >"$src/note.txt"
	run -w 'node[1-2]' --launcher none --no-check --sync "$src" --stall-timeout 60 -- python3 show.py
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	# show.py, note.txt and hang/sitecustomize.py, on each node
	expect_eq "$(jget '[(n["put_by"], n["files_sent"]) for n in d["nodes"]]')" "[('node1', 3), ('node2', 3)]" "each node its own put" || return 1
	expect_eq "$(grep -c '^node[12] r[01]: synced v1-' <<<"$err")" 2 "ranks that read the synced file"
}

cleanup() { [[ -n $JOBS && -d $JOBS ]] && rm -rf "$JOBS"; }

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
trap cleanup EXIT
itest_run_all
