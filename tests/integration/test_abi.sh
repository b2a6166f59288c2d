#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agents start on glibc 2.17 and newer: every agent binary (the native one,
# $CLUSTERDOC_AGENT, and each $CLUSTERDOC_AGENT-* beside it) needs no symbol
# version above GLIBC_2.17, runs its constructors exactly once, and answers.
# docs/architecture.md, "The agent's glibc floor", has the why.
# No cluster: this reads and runs the binaries on the head.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=abi
GLIBC_FLOOR=2.17
BUILD_DIR=${CD_BUILD:-$CD_TOP/build}
# A Debian 11 root, when tests/cluster has made one: its glibc 2.31 runs the agent directly.
OLD_ROOT=${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}/bullseye-amd64

# glibc_offenders FILE: one line per dynamic symbol (or bare version need)
# above the floor, "name@GLIBC_x.y"; nothing when FILE keeps the floor.
glibc_offenders() {
	python3 - "$1" "$GLIBC_FLOOR" <<'EOF'
import re, subprocess, sys
path, floor = sys.argv[1], tuple(int(x) for x in sys.argv[2].split("."))
def above(v):
    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", v)
    # GLIBC_PRIVATE and GLIBC_ABI_* (GLIBC_ABI_DT_RELR, 2.36) count as above.
    return m is None or tuple(int(x) for x in m.group(1).split(".")) > floor
out = set()
syms = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True, check=True).stdout
for m in re.finditer(r"\s(\S+?)@+(GLIBC_\S+)", syms):
    if above(m.group(2)):
        out.add(f"{m.group(1)}@{m.group(2)}")
needs = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True, check=True).stdout
for v in re.findall(r"Name: (GLIBC_\S+)", needs):
    if above(v) and not any(o.endswith("@" + v) for o in out):
        out.add(f"(version need)@{v}")
print("\n".join(sorted(out)))
EOF
}

agents() {
	local a
	echo "$CLUSTERDOC_AGENT"
	for a in "$CLUSTERDOC_AGENT"-*; do
		[ -f "$a" ] && echo "$a"
	done
}

elf_arch() { # FILE -> x86_64 / aarch64 / other, from e_machine
	case $(readelf -h "$1" | sed -n 's/^ *Machine: *//p') in
	*X86-64*) echo x86_64 ;;
	*AArch64*) echo aarch64 ;;
	*) echo other ;;
	esac
}

# run_arch ARCH CMD...: runs CMD here, or through qemu-user for another architecture, with
# the distribution's own libc for ARCH (multiarch, /lib/ARCH-linux-gnu, what `make deps`
# installs with the arm64 -dev packages) where it is there: the cross toolchain's copy in
# /usr/ARCH-linux-gnu (libc6-arm64-cross 2.36-8cross1) hangs in pthread_create under
# qemu-user 7.2, and the agent starts a thread to read its stdin.
run_arch() {
	local arch=$1
	shift
	if [ "$arch" = "$(uname -m)" ]; then
		"$@"
	elif [ -e "/lib/ld-linux-$arch.so.1" ]; then
		"qemu-$arch-static" -L / "$@"
	else
		"qemu-$arch-static" -L "/usr/$arch-linux-gnu" "$@"
	fi
}

hello_line='{"id":1,"type":"hello","protocol":1}'

t_every_agent_needs_nothing_above_glibc_2_17() {
	local a bad fail=0
	for a in $(agents); do
		bad=$(glibc_offenders "$a") || return 1
		if [ -n "$bad" ]; then
			echo "    $a needs versions above GLIBC_$GLIBC_FLOOR:"
			sed 's/^/      /' <<<"$bad"
			fail=1
		fi
	done
	return $fail
}

t_the_check_rejects_a_normally_linked_agent() {
	# The first, ordinary link of the native agent binds dlopen to GLIBC_2.34:
	# the check must see it, or it proves nothing.
	local full bad
	full="$BUILD_DIR/abi/$(uname -m)/agent.full"
	[ -f "$full" ] || { echo "    $full missing (make builds it)"; return 1; }
	bad=$(glibc_offenders "$full")
	expect_match "$bad" '^dlopen@GLIBC_2\.34$' "offenders of the ordinary link"
}

t_both_architectures_are_built() {
	local a archs=""
	[[ -f $CLUSTERDOC_AGENT-aarch64 ]] || {
		itest_skip "no $CLUSTERDOC_AGENT-aarch64: make built no aarch64 agent without its cross toolchain (make deps-cross)"
		return
	}
	for a in $(agents); do
		archs="$archs $(elf_arch "$a")"
	done
	expect_match "$archs" "x86_64" "agent architectures" || return 1
	expect_match "$archs" "aarch64" "agent architectures"
}

t_constructors_run_once_on_every_architecture() {
	local probe arch
	for probe in "$BUILD_DIR"/abi/*/ctor-probe; do
		arch=$(basename "$(dirname "$probe")")
		expect_eq "$(run_arch "$arch" "$probe")" "ctor 1 main dtor" "$arch probe output" || return 1
	done
}

t_every_agent_answers_hello() {
	local a arch out
	for a in $(agents); do
		arch=$(elf_arch "$a")
		out=$(run_arch "$arch" "$a" --stdio <<<"$hello_line")
		expect_match "$out" "\"arch\": ?\"$arch\"" "$arch agent's hello" || return 1
	done
}

# environ and __environ are one variable in libc: a stub that made them two
# left the agent with an empty environment (libc sets __environ at start-up,
# the agent read its own environ). Every object the agent copies from libc must
# come with each alias libc has for it, at the copy's address.
copied_without_aliases() { # AGENT LIBC
	python3 - "$1" "$2" <<'EOF'
import subprocess, sys
def objects(path):
    text = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "OBJECT" and f[6] != "UND":
            rows.append((int(f[1], 16), f[7].split("@")[0]))
    return rows
at, by_addr = {}, {}
for addr, name in objects(sys.argv[1]):
    at.setdefault(addr, set()).add(name)
for addr, name in objects(sys.argv[2]):
    by_addr.setdefault(addr, set()).add(name)
alias = {n: names for names in by_addr.values() for n in names}
for names in at.values():
    for n in sorted(names):
        missing = alias.get(n, {n}) - names
        if missing:
            print(f"{n}: copied without {', '.join(sorted(missing))}")
EOF
}

t_every_copied_libc_object_keeps_its_aliases() {
	local a arch libc bad
	for a in $(agents); do
		arch=$(elf_arch "$a")
		libc=/usr/$arch-linux-gnu/lib/libc.so.6
		[ "$arch" = "$(uname -m)" ] && libc=/lib/$arch-linux-gnu/libc.so.6
		bad=$(copied_without_aliases "$a" "$libc")
		expect_eq "$bad" "" "$arch agent's copied libc objects" || return 1
	done
}

t_the_agent_sees_its_environment() {
	local out
	out=$(NCCL_SOCKET_IFNAME=abi-probe "$CLUSTERDOC" facts -w localhost --json 2>&1)
	expect_match "$out" '"NCCL_SOCKET_IFNAME": ?"abi-probe"' "the agent's environment in facts" || return 1
}

t_the_agent_runs_on_debian_11_glibc() {
	local ld="$OLD_ROOT/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" out
	if [ ! -x "$ld" ] || [ "$(uname -m)" != x86_64 ]; then
		echo "    skipped: no $OLD_ROOT (tests/cluster makes it)"
		return 0
	fi
	out=$("$ld" --library-path "$OLD_ROOT/lib/x86_64-linux-gnu" "$CLUSTERDOC_AGENT" --stdio <<<"$hello_line")
	expect_match "$out" '"ok": ?true' "hello on glibc 2.31" || return 1
	expect_eq "$("$ld" --library-path "$OLD_ROOT/lib/x86_64-linux-gnu" "$BUILD_DIR/abi/x86_64/ctor-probe")" \
		"ctor 1 main dtor" "probe on glibc 2.31"
}

# The sanitizer build links the agent normally (it only runs here): nothing to check.
if readelf --dyn-syms -W "$CLUSTERDOC_AGENT" | grep -q '__asan_init'; then
	result SKIP "$ITEST_FILE" "the sanitizer build's agent is not linked for the glibc floor"
	exit 0
fi
[[ ! -f $CLUSTERDOC_AGENT-aarch64 ]] || command -v qemu-aarch64-static >/dev/null ||
	{ result FAIL "$ITEST_FILE" "qemu-aarch64-static is missing: make deps-test"; exit 1; }
for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
	[[ -z ${ONLY:-} || $t =~ $ONLY ]] && run_test "$t"
done
exit $ITEST_STATUS
