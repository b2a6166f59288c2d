#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Saying what it does (issue 37, item 5): --version names the commit, the libraries the head
# runs with and each agent's build id, after any command too; -v and -vv trace each SSH step
# and agent request per node on stderr, with no secret in it; facts, check and bench show their
# progress on a terminal (under a pseudo-terminal here) and nothing without one. --version
# needs no cluster; the rest runs on a namespace cluster of real sshd nodes.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=verbose

# The versions the libraries the head is linked with say of themselves, asked through ctypes
# from the very files the dynamic linker gives the head (ldd), in --version's words.
lib_versions() {
	local libs
	libs=$(ldd "$CLUSTERDOC" | awk '$3 ~ /^\// { print $1 "=" $3 }')
	"$CD_PY" - "$libs" <<'PY'
import ctypes, sys
path = {l.split("=")[0].split(".so")[0]: l.split("=")[1] for l in sys.argv[1].split()}
def call(lib, fn, *args):
    f = getattr(ctypes.CDLL(path[lib]), fn)
    f.restype = ctypes.c_char_p
    return f(*args).decode()
print("libssh2:", call("libssh2", "libssh2_version", 0))
print("OpenSSL:", call("libcrypto", "OpenSSL_version", 0).split(" ", 1)[1])
print("jansson:", call("libjansson", "jansson_version_str"))
print("libcurl:", call("libcurl", "curl_version").split()[0].split("/")[1])
print("ncurses:", call("libncursesw", "curses_version").split(" ", 1)[1])
PY
}

t_version_names_the_commit_the_libraries_and_each_agents_build_id() {
	local commit want id bin arch
	out=$("$CLUSTERDOC" --version 2>&1)
	expect_eq "$(sed -n 1p <<<"$out")" "clusterdoc $(sed -n 's/^#define CLUSTERDOC_VERSION "\(.*\)"/\1/p' "$CD_TOP/core/cd.h")" "the first line" || return 1
	commit=$(sed -n 's/^commit: //p' <<<"$out")
	if [[ -e $CD_TOP/.git ]]; then
		expect_match "$commit" '^[0-9a-f]{12}(-dirty)?$' "the commit" || return 1
		git -C "$CD_TOP" cat-file -e "${commit%-dirty}^{commit}" ||
			{ echo "    $commit is no commit of $CD_TOP"; return 1; }
	else
		expect_eq "$commit" unknown "the commit outside a git tree" || return 1
	fi
	want=$(lib_versions) || return 1
	expect_eq "$(grep -E '^(libssh2|OpenSSL|jansson|libcurl|ncurses): ' <<<"$out")" "$want" "the library lines" || return 1
	for bin in "$CLUSTERDOC_AGENT" "$CLUSTERDOC_AGENT"-*; do
		[[ -f $bin ]] || continue
		id=$(readelf -n "$bin" | awk '/Build ID/ { print $3 }')
		arch=$(readelf -h "$bin" | awk -F: '/Machine/ { print $2 }')
		case $arch in *X86-64*) arch=x86_64 ;; *AArch64*) arch=aarch64 ;; esac
		expect_match "$out" "^agent $arch: build id $id \\($bin\\)$" "$bin's line" || return 1
	done
}

t_version_is_taken_after_any_command() {
	local want cmd
	want=$("$CLUSTERDOC" --version 2>&1)
	for cmd in facts check env fix bench mnist run hang gpu-burn mpi-check tui nodeset; do
		out=$("$CLUSTERDOC" "$cmd" -w node1 --version 2>&1)
		rc=$?
		expect_eq "$rc" 0 "$cmd --version: exit status" || return 1
		expect_eq "$out" "$want" "$cmd --version" || return 1
	done
	# `clusterdoc version`, as kubectl and docker spell it
	expect_eq "$("$CLUSTERDOC" version 2>&1)" "$want" "clusterdoc version"
}

# ---------------------------------------------------------------- -v and -vv on a cluster

PASSWORD='trace-secret 7f3a9c'

t_minus_v_traces_each_ssh_step_and_request_per_node_with_elapsed_ms() {
	local i node
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	cd_head facts -w 'node[1-2]' -v --json
	expect_eq "$rc" 0 "exit status: $err" || return 1
	expect_eq "$(jget 'len(d["nodes"])')" 2 "the JSON on stdout" || return 1
	for i in 1 2; do
		node=node$i
		for line in "TCP connect to $(cluster_node_ip $i) port 22" "TCP connected; SSH handshake" \
			"host key ssh-ed25519 SHA256:[A-Za-z0-9+/]+ accepted; asking the server's auth methods" \
			"auth: publickey with the (key files|ssh agent's keys) \(the server offers: [a-z,-]+\)" \
			"auth: (the key file [^ ]+|the ssh agent's key [0-9]+) accepted" \
			"agent start: running the bootstrap" "request 1 hello answered in [0-9]+ ms: ok" \
			"the agent is ready" "request [0-9]+ facts sent \([0-9]+ bytes\)" \
			"request [0-9]+ facts answered in [0-9]+ ms: ok"; do
			expect_match "$err" "^clusterdoc: $node \+[0-9]+ms: $line\$" "$node's trace" || return 1
		done
		# one line per step, in the order they happen: libssh2's own steps, not the
		# pool's coarser "connected; authenticating" before its TCP connect line
		expect_eq "$(grep -c "^clusterdoc: $node +[0-9]*ms: \(connected; authenticating\|logged in; starting the agent\)$" <<<"$err")" 0 \
			"$node's coarse steps beside libssh2's" || return 1
		expect_eq "$(grep "^clusterdoc: $node +" <<<"$err" | sed 's/^[^+]*+\([0-9]*\)ms:.*/\1/' | sort -n -c 2>&1 && echo sorted)" \
			"sorted" "$node's lines in the order of their times"
	done
	[[ $err != *keepalive* ]] || { echo "    -v traced a keepalive: $err"; return 1; }
}

t_minus_vv_before_or_after_the_command_adds_keepalives() {
	# a job of a second outlives a few keepalives of 200 ms
	CLUSTERDOC_KEEPALIVE_MS=200 cd_head -vv run -w node1 --launcher none -- sleep 1
	expect_eq "$rc" 0 "exit status: $err" || return 1
	expect_match "$err" "^clusterdoc: node1 \+[0-9]+ms: request 0 keepalive sent \([0-9]+ bytes\)\$" "-vv's keepalive" || return 1
	CLUSTERDOC_KEEPALIVE_MS=200 cd_head facts -w node1 -v
	expect_match "$err" "^clusterdoc: node1 \+[0-9]+ms: the agent is ready\$" "-v after the command" || return 1
	[[ $err != *keepalive* ]] || { echo "    -v traced a keepalive"; return 1; }
}

t_without_v_nothing_is_traced() {
	cd_head facts -w node1
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$err" "" "stderr"
}

t_a_node_that_does_not_answer_is_traced_to_its_failure() {
	cluster_node_stop_sshd 2 || return 1
	cd_head facts -w 'node[1-2]' -v
	cluster_node_start_sshd 2
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "^clusterdoc: node2 \+[0-9]+ms: TCP connect to $(cluster_node_ip 2) port 22\$" "node2's connect" || return 1
	expect_match "$err" "^clusterdoc: node2 \+[0-9]+ms: failed \(refused\): .*Connection refused\$" "node2's failure"
}

# ---------------------------------------------------------------- progress on a terminal

# pty_head FILE ARGS...: clusterdoc ARGS in the head namespace with its stderr on a
# pseudo-terminal of 200 columns (stdin /dev/null, stdout into $out); every byte the terminal
# received goes into FILE; sets rc
pty_head() {
	local file=$1 of
	shift
	of=$(mktemp)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CD_PY" -c '
import fcntl, os, pty, struct, subprocess, sys, termios
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
with open(sys.argv[2], "wb") as out:
    p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=s)
os.close(s)
got = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    got += d
open(sys.argv[1], "wb").write(got)
sys.exit(p.wait())' "$file" "$of" "$CLUSTERDOC" "$@"
	rc=$?
	out=$(cat "$of")
	rm -f "$of"
}

# progress_lines FILE: each state the line was drawn in, one a line (the text between a
# carriage return and the erase to the end of the line)
progress_lines() {
	"$CD_PY" -c 'import re, sys; [print(m.decode()) for m in re.findall(rb"\r([^\r\x1b]+)\x1b\[K", open(sys.argv[1], "rb").read())]' "$1"
}

# what the terminal shows last: the progress line erased ("\r\e[K" at the very end)
ends_erased() {
	[[ $(tail -c 4 "$1" | od -An -c | tr -d ' ') == '\r033[K' ]] ||
		{ echo "    the terminal's last bytes are not an erase: $(tail -c 80 "$1" | od -An -c | tr -s ' ' | head -3)"; return 1; }
}

t_facts_on_a_terminal_shows_the_phase_the_count_and_the_node_waited_for_then_erases_it() {
	local f=$CD_RUN/facts.pty lines
	{
		printf 'Host silent\n  HostName node2\n  Port 2222\n\n'
		cat "$CD_SSH_CONFIG"
	} >"$CD_SSH_CONFIG.new" && mv "$CD_SSH_CONFIG.new" "$CD_SSH_CONFIG"
	cluster_node_silent 2 2222 || return 1
	pty_head "$f" facts -w node1,silent --auth-timeout 2 --json
	cluster_node_silent_stop 2 2222
	expect_eq "$rc" 2 "exit status (silent never answers)" || return 1
	expect_eq "$(jget 'len(d["nodes"])')" 2 "the JSON on stdout" || return 1
	lines=$(progress_lines "$f")
	expect_match "$lines" '^clusterdoc facts: connecting, 0/2 nodes answered, waiting [0-9.]+ s for (node1|silent) \(' "the first line" || return 1
	expect_match "$lines" '^clusterdoc facts: connecting, 1/2 nodes answered, waiting [0-9.]+ s for silent \(authenticating\)$' "the line while silent is waited for" || return 1
	expect_match "$lines" 'waiting 1\.[0-9] s for silent' "the time waited, updated in place" || return 1
	ends_erased "$f"
}

t_check_on_a_terminal_names_its_phases_and_counts() {
	local f=$CD_RUN/check.pty lines
	pty_head "$f" check -w 'node[1-2]'
	lines=$(progress_lines "$f")
	expect_match "$lines" '^clusterdoc check: probe, [0-2]/2 nodes answered' "the probe phase" || return 1
	expect_match "$lines" '^clusterdoc check: (listen|connect|confirm), [0-2]/2 nodes answered' "a later phase" || return 1
	ends_erased "$f"
}

t_bench_on_a_terminal_names_its_phases_and_sizes() {
	local f=$CD_RUN/bench.pty lines
	pty_head "$f" bench -w 'node[1-2]' -e 64K --iters 2 --json
	expect_eq "$rc" 0 "exit status" || return 1
	lines=$(progress_lines "$f")
	expect_match "$lines" '^clusterdoc bench: probe, [0-2]/2 nodes answered' "the probe phase" || return 1
	expect_match "$lines" '^clusterdoc bench: run, [0-2]/2 nodes answered, sizes [0-9]+/[0-9]+' "the run phase" || return 1
	ends_erased "$f"
}

t_without_a_terminal_facts_check_and_bench_print_no_progress() {
	local cmd
	for cmd in facts check "bench -e 64K --iters 2"; do
		# shellcheck disable=SC2086
		cd_head $cmd -w 'node[1-2]' --json
		[[ $err != *"nodes answered"* && $err != *$'\r'* ]] ||
			{ echo "    $cmd printed progress without a terminal: $(head -c 300 <<<"$err")"; return 1; }
	done
}

t_the_trace_never_holds_the_password() {
	printf '%s\n' '#!/bin/sh' "printf '%s\\n' '$PASSWORD'" >"$CD_RUN/askpass" && chmod 700 "$CD_RUN/askpass" || return 1
	cluster_node_password 1 "$PASSWORD" password || return 1
	SSH_ASKPASS=$CD_RUN/askpass SSH_ASKPASS_REQUIRE=force cd_head fix -w node1 --only ssh-key --apply --yes -vv --probe-timeout 1000
	expect_match "$err" "^clusterdoc: node1 \+[0-9]+ms: auth: the password was accepted\$" "the password step" || return 1
	if grep -qF -- "$PASSWORD" <<<"$err$out"; then
		echo "    the password is in the output: $(grep -F -- "$PASSWORD" <<<"$err$out" | head -3)"
		return 1
	fi
}

itest_need_root
itest_run_all
