#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults of input and output: a report that cannot be written (a full disk, a closed pipe) is an
# error with exit status 2 and a message; every file the head reads is capped (an endless
# stream fails fast, in bounded memory); a NUL byte in a host file is refused naming the line;
# an overlong host name keeps the reason of its error; the `ssh -G` hint names the -F FILE given;
# bad inputs under ASan end in a message, never a crash. On 2 nodes: a full disk for the MNIST
# dataset on one node and a read-only home are reported as such, and leave nothing running.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=fault_io
itest_need_root

CD_QUIET=1 cluster_up 2 >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# bounded HEAD ARGS...: the head under a 1 GiB address-space limit and a 10 s deadline, in the
# head namespace; sets out, err, rc, elapsed_ms like cd_head
bounded() {
	local t0 t1 ef
	ef=$(mktemp)
	t0=$(date +%s%N)
	out=$(cluster_head_exec bash -c 'ulimit -v 1048576; exec timeout 10 "$@"' _ "$@" 2>"$ef" </dev/null)
	rc=$?
	t1=$(date +%s%N)
	err=$(cat "$ef")
	rm -f "$ef"
	elapsed_ms=$(((t1 - t0) / 1000000))
}

# full CMD ARGS...: run `clusterdoc CMD ARGS...` in the head namespace with stdout on /dev/full;
# sets err and rc
full() {
	err=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" 2>&1 >/dev/full </dev/null)
	rc=$?
}

t_a_report_written_to_a_full_disk_is_an_error_for_every_command() {
	local cmd
	for cmd in check facts env; do
		full "$cmd" -w 'node[1-2]' --json
		expect_eq "$rc" 2 "$cmd --json >/dev/full: exit status ($err)" || return 1
		expect_eq "$err" "clusterdoc $cmd: cannot write the output to standard output: No space left on device" \
			"$cmd: message" || return 1
	done
	full nodeset -e 'node[1-4]'
	expect_eq "$rc" 2 "nodeset >/dev/full: exit status" || return 1
	expect_eq "$err" "clusterdoc nodeset: cannot write the output to standard output: No space left on device" \
		"nodeset: message" || return 1
	full --help
	expect_eq "$rc" 2 "--help >/dev/full: exit status" || return 1
}

t_a_report_whose_reader_went_away_is_an_error() {
	local st
	# `true` exits at once: the check's report meets a closed pipe (SIGPIPE is ignored: EPIPE)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" check -w 'node[1-2]' \
		2>"$WORK/err" </dev/null | true
	st=${PIPESTATUS[0]}
	expect_eq "$st" 2 "check | true: exit status" || return 1
	expect_eq "$(cat "$WORK/err")" "clusterdoc check: cannot write the output to standard output: Broken pipe" \
		"message" || return 1
	"$CLUSTERDOC" nodeset -e 'n[1-200000]' 2>/dev/null | head -c 1 >/dev/null
	st=${PIPESTATUS[0]}
	expect_eq "$st" 2 "nodeset | head -c 1: exit status"
}

t_output_that_goes_out_is_unchanged_and_exits_0() {
	out=$("$CLUSTERDOC" nodeset -e 'n[1-3]' 2>&1)
	expect_eq "$?" 0 "exit status" || return 1
	expect_eq "$out" "n1 n2 n3" "output"
}

t_an_endless_host_file_fails_fast_in_bounded_memory() {
	local how
	for how in "--hostfile /dev/zero" "-w ^/dev/zero"; do
		# shellcheck disable=SC2086
		bounded "$CLUSTERDOC" check $how
		expect_eq "$rc" 2 "check $how: exit status ($err)" || return 1
		expect_eq "$err" "clusterdoc check: /dev/zero is larger than 33554432 bytes" "check $how: message" || return 1
		[[ $elapsed_ms -lt 5000 ]] || { echo "    check $how took $elapsed_ms ms"; return 1; }
	done
	bounded "$CLUSTERDOC" nodeset -e ^/dev/zero
	expect_eq "$rc" 2 "nodeset -e ^/dev/zero: exit status ($err)" || return 1
	expect_match "$err" "^clusterdoc nodeset: /dev/zero is larger than 33554432 bytes" "nodeset: message" || return 1
	[[ $elapsed_ms -lt 5000 ]] || { echo "    nodeset took $elapsed_ms ms"; return 1; }
}

t_a_host_file_from_a_pipe_is_still_read() {
	out=$("$CLUSTERDOC" nodeset -e ^<(printf 'a[1-2]\nb1\n') 2>&1)
	expect_eq "$out" "a1 a2 b1" "hosts read from a pipe"
}

t_a_nul_byte_in_a_host_file_is_refused_naming_the_line() {
	printf 'node1\nno\0de2\n' >"$WORK/nul"
	bounded "$CLUSTERDOC" check --hostfile "$WORK/nul"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc check: $WORK/nul:2: a NUL byte at column 3 (not a text file?)" "message" || return 1
	bounded "$CLUSTERDOC" nodeset -e "^$WORK/nul"
	expect_eq "$rc" 2 "nodeset: exit status" || return 1
	expect_match "$err" "nul:2: a NUL byte at column 3" "nodeset: message"
}

t_a_host_name_over_255_bytes_is_refused_with_its_reason() {
	local name
	name=$(printf 'a%.0s' $(seq 400))
	bounded "$CLUSTERDOC" check -w "$name"
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" '": a host name of 400 bytes, longer than the 255 a host name can have \(at column 1\)$' \
		"message" || return 1
	[[ ${#err} -lt 300 ]] || { echo "    the message has ${#err} bytes"; return 1; }
}

t_a_long_host_name_that_does_not_resolve_keeps_the_reason() {
	local name
	name=$(printf 'b%.0s' $(seq 250))
	cd_head check -w "$name" --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" \
		"^$name: name b+\.\.\.b+ does not resolve: .*; check the name, /etc/hosts or DNS$" "error"
}

t_the_ssh_g_hint_names_the_ssh_config_given() {
	printf 'Host *\n  NoSuchOption yes\n' >"$WORK/bad config"
	cd_head facts -w node1 -F "$WORK/bad config" --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" \
		"the ssh_config for this host is invalid \(run \`ssh -F '$WORK/bad config' -G -- node1\` to see why\)$" "error"
}

# libssh2 reads a key file whole and blocking: `-i /dev/zero` hung the head. A key file that
# is not a regular file of at most 1 MiB is passed over, and the failure says so.
t_a_key_file_that_never_ends_is_passed_over_and_said() {
	bounded "$CLUSTERDOC" facts -w node1 -i /dev/zero --json
	expect_eq "$rc" 2 "exit status ($err)" || return 1
	[[ $elapsed_ms -lt 8000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
	expect_match "$(jget 'd["nodes"][0]["error"]')" \
		"authentication as root failed .*skipped key files that are not regular files of at most 1 MiB\)$" "error"
}

# Bad inputs under ASan+UBSan: every one ends in a message and exit status 2; no sanitizer report.
t_bad_inputs_under_asan_end_in_a_message() {
	[[ -x ${CLUSTERDOC_ASAN:-} ]] || { echo "    no ASan build of the head (CLUSTERDOC_ASAN)"; return 1; }
	local logdir=$WORK/asan i long name
	mkdir -p "$logdir"
	long=$(printf 'x%.0s' $(seq 5000))
	printf 'node1\nno\0de2\n' >"$WORK/nul"
	local -a cases=(
		"nodeset -e n[5-3]" "nodeset -e n[" "nodeset -e ]" "nodeset -e n[1-2]]" "nodeset -e ,,"
		"nodeset -e n[0-99999999]" "nodeset -e a[1-1000]b[1-1001]" "nodeset -e n[1-2/0]"
		"nodeset -e n[18446744073709551615-18446744073709551616]" "nodeset -e n[1234567890123456789]"
		"nodeset -e ${long}[1-3]x]" "nodeset -e ^" "nodeset -e ^/nonexistent" "nodeset -e ^/"
		"nodeset --bogus"
		"check -w node1 --port 0" "check -w node1 --deadline -1" "check -w node1 --json --json=x"
		"bench -w node1 -b 1X" "mnist -w node1 --epochs 1000" "check -w n[1-99999999]"
		"fix -w node1 --undo" "nosuchcommand"
	)
	for ((i = 0; i < ${#cases[@]}; i++)); do
		# shellcheck disable=SC2086
		err=$(ASAN_OPTIONS="log_path=$logdir/asan:halt_on_error=1:detect_leaks=1" \
			UBSAN_OPTIONS="log_path=$logdir/ubsan:halt_on_error=1" \
			timeout 20 "$CLUSTERDOC_ASAN" ${cases[i]} 2>&1 >/dev/null </dev/null)
		rc=$?
		expect_eq "$rc" 2 "\`${cases[i]:0:80}\`: exit status ($err)" || return 1
		[[ -n $err ]] || { echo "    \`${cases[i]:0:80}\`: no message"; return 1; }
	done
	# invalid UTF-8, control bytes, overlong names, NUL bytes: refused or taken, never a crash
	for name in $'\xff\xfe' $'n\xc3[1-2]' $'\xe2\x82' $'a\x01b' $'tab\there' "$long" "^$WORK/nul"; do
		ASAN_OPTIONS="log_path=$logdir/asan:halt_on_error=1:detect_leaks=1" \
			UBSAN_OPTIONS="log_path=$logdir/ubsan:halt_on_error=1" \
			timeout 20 "$CLUSTERDOC_ASAN" nodeset -e "$name" >/dev/null 2>&1
		rc=$?
		[[ $rc == 0 || $rc == 2 ]] || { echo "    nodeset -e $(printf %q "${name:0:40}"): exit status $rc"; return 1; }
	done
	if compgen -G "$logdir/*" >/dev/null; then
		echo "    sanitizer reports:"
		head -30 "$logdir"/*
		return 1
	fi
}

# processes of clusterdoc (agents, training ranks) still alive in the node namespaces
left_behind() {
	local i pid n=0 comm
	for ((i = 1; i <= CD_N; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			comm=$(cat "/proc/$pid/comm" 2>/dev/null)
			[[ $comm == agent-* || $comm == clusterdoc* || $comm == python* || $comm == pt_* ]] && n=$((n + 1))
		done
	done
	echo "$n"
}

expect_nothing_left() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ $(left_behind) == 0 ]] && return 0
		sleep 0.1
	done
	echo "    $(left_behind) process(es) left on the nodes"
	return 1
}

# A 64 KiB tmpfs over node2's dataset directory (--remote-dir, so that where the agent runs
# does not matter): the run stops before training, names node2 and the full disk, leaves no
# partial file there and no process on any node.
t_a_full_disk_for_the_dataset_on_a_node_is_reported_and_leaves_nothing() {
	local data=$WORK/mnist dir=/root/cdfault-data left
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 1000 200 >/dev/null || return 1
	cluster_node_exec 2 sh -c "mkdir -p $dir && mount -t tmpfs -o size=64k tmpfs $dir" || return 1
	cd_head mnist -w 'node[1-2]' --mode embedded --epochs 1 --data-dir "$data" --remote-dir "$dir" \
		--data-md5 "$data/MD5SUMS" --cache-dir "$WORK/head-cache" --retries 1 --stall-timeout 30 --json
	left=$(cluster_node_exec 2 sh -c "find $dir -type f -printf '%P %s\n'; umount $dir")
	[[ $rc == 1 || $rc == 2 ]] || { echo "    exit status $rc"; return 1; }
	expect_match "$(jget 'd["failure"]')$err" "node2.*[Nn]o space left on device" "the failure names node2's full disk" || return 1
	[[ $elapsed_ms -lt 60000 ]] || { echo "    took $elapsed_ms ms"; return 1; }
	expect_eq "$left" "" "files left in node2's full data dir" || return 1
	expect_nothing_left
}

# Node 1's whole home read-only: the agent runs from its fallback directory, the node answers
# and says why, and nothing is written into the home. The fallback directory is a tmpfs of
# node1's own, so that the host's /tmp (shared by every test cluster) is left as it was.
TMPDIR0=/tmp/clusterdoc-0
t_a_read_only_home_is_worked_around_and_said() {
	local before after made=0
	[[ -e $TMPDIR0 ]] || { mkdir -m 700 "$TMPDIR0" && made=1; } || return 1
	cluster_node_exec 1 sh -c "mount --bind /root /root && mount -o remount,bind,ro /root &&
		mount -t tmpfs -o mode=0700,size=16m tmpfs $TMPDIR0" || return 1
	before=$(cluster_node_exec 1 sh -c 'find /root -newer /proc/1 2>/dev/null | wc -l')
	cd_head facts -w node1 --json
	after=$(cluster_node_exec 1 sh -c 'find /root -newer /proc/1 2>/dev/null | wc -l')
	expect_nothing_left
	cluster_node_exec 1 sh -c "umount $TMPDIR0; umount /root"
	((made)) && rmdir "$TMPDIR0"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nodes"][0]["reachable"]')" True "node1 answered" || return 1
	expect_match "$(jget 'd["nodes"][0]["agent_note"]')" "read-only file system.*$TMPDIR0" "agent note" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_dir"]')" "$TMPDIR0" "agent_dir" || return 1
	expect_eq "$after" "$before" "files changed in the read-only home"
}

itest_run_all
