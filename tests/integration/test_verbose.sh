#!/usr/bin/env bash
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
}

itest_run_all
