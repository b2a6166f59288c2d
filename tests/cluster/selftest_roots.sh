# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# (runs under selftest.sh's set -euo pipefail)
# tests/cluster/selftest_roots.sh - the root cache of tests/cluster/roots.sh, sourced by
# selftest.sh (uses its ok/bad). No network: a stand-in `debootstrap` first in PATH makes a
# tiny root (or fails, or hangs), in a throw-away CD_ROOT_CACHE. Checks that only a complete
# build is ever renamed into place, that an interrupted or failed one leaves nothing that a
# later run would use, that the next build removes its leftovers (mounts included), and that
# two builds at once debootstrap once.

echo "== root cache (stand-in debootstrap, throw-away cache)"
RC_TMP=$(mktemp -d /tmp/cdselftest.roots.XXXXXX)
mkdir -p "$RC_TMP/bin" "$RC_TMP/cache"
# FAKE_MODE: ok | fail | hang; every call appends a line to $RC_TMP/calls
cat >"$RC_TMP/bin/debootstrap" <<'EOF'
#!/bin/sh
for a; do dir=$last; last=$a; done # ... SUITE DIR MIRROR: DIR is the second last
echo "$*" >>"$FAKE_CALLS"
mkdir -p "$dir/etc/ssh" "$dir/var/cache/apt/archives" || exit 1
echo "root:x:0:0:root:/root:/bin/bash" >"$dir/etc/passwd"
: >"$dir/etc/ssh/ssh_host_ed25519_key" && : >"$dir/var/cache/apt/archives/x.deb"
case $FAKE_MODE in
fail) echo "E: stand-in failure" >&2; exit 1 ;;
hang) : >"$FAKE_CALLS.hanging"; exec sleep 600 ;;
esac
sleep "${FAKE_SLEEP:-0}"
exit 0
EOF
chmod 755 "$RC_TMP/bin/debootstrap"
rc_ensure() { # MODE : cluster_root_ensure bullseye-amd64 in a child bash with the stand-in
	CD_QUIET=1 FAKE_MODE=$1 FAKE_CALLS=$RC_TMP/calls CD_ROOT_CACHE=$RC_TMP/cache PATH=$RC_TMP/bin:$PATH \
		bash -c 'source "$1"; cluster_root_ensure bullseye-amd64' rc "$HERE/roots.sh"
}
C=$RC_TMP/cache

# 1. an interrupted build (killed while debootstrap runs) leaves no usable root
setsid bash -c 'CD_QUIET=1 FAKE_MODE=hang FAKE_CALLS=$1/calls CD_ROOT_CACHE=$1/cache PATH=$1/bin:$PATH \
	bash -c "source \"\$2\"; cluster_root_ensure bullseye-amd64" rc "$1" "$2"' rc "$RC_TMP" "$HERE/roots.sh" \
	</dev/null >/dev/null 2>&1 &
hang_pid=$!
for ((t = 0; t < 200; t++)); do
	[[ -e $RC_TMP/calls.hanging ]] && break
	sleep 0.05
done
kill -KILL -- -"$hang_pid" 2>/dev/null || true
wait "$hang_pid" 2>/dev/null || true
left=$(ls -d "$C"/.bullseye-amd64.build.* 2>/dev/null | head -1) || true
[[ -e $RC_TMP/calls.hanging && ! -e $C/bullseye-amd64 && -n $left ]] &&
	ok "a build killed during debootstrap leaves only its temp dir, no bullseye-amd64" || bad "interrupted build" "$(ls -a "$C")"
# a mount left inside it (debootstrap's /proc when it ran in our namespace) must not stop the cleanup
mkdir -p "$left/root/proc" "$RC_TMP/mnt" && : >"$RC_TMP/mnt/keep" && mount --bind "$RC_TMP/mnt" "$left/root/proc" ||
	bad "a mount inside the interrupted build's dir"

# 2. a failed build: nothing in place, its log kept
out=$(rc_ensure fail 2>&1) && bad "a failed debootstrap reported success" "$out" ||
	{ [[ ! -e $C/bullseye-amd64 && -s $C/.bullseye-amd64.failed.log && $out == *"stand-in failure"* ]] &&
		ok "a failed build puts nothing in place and says why (log kept)" || bad "failed build" "$out"; }

# 3. a good build: renamed into place with its marker, leftovers and their mounts gone
: >"$RC_TMP/calls"
out=$(rc_ensure ok 2>&1) || true
[[ $out == "$C/bullseye-amd64" && -f $C/bullseye-amd64/.clusterdoc-root && -d $C/bullseye-amd64/run/sshd ]] &&
	ok "a complete build is renamed into place with its marker" || bad "good build" "$out"
[[ -z $(ls -d "$C"/.bullseye-amd64.build.* 2>/dev/null) ]] && ! grep -q " $RC_TMP/cache/" /proc/self/mountinfo &&
	[[ -f $RC_TMP/mnt/keep ]] && ok "the leftovers of earlier builds are gone, mounts first (what was mounted is untouched)" ||
	bad "leftovers" "$(ls -a "$C"; grep "$RC_TMP" /proc/self/mountinfo)"
[[ ! -e $C/bullseye-amd64/etc/ssh/ssh_host_ed25519_key && -z $(ls "$C"/bullseye-amd64/var/cache/apt/archives) ]] &&
	ok "the cached root keeps no host keys and no .deb files" || bad "root cleanup"
[[ $(wc -l <"$RC_TMP/calls") == 1 && $(cat "$RC_TMP/calls") == *"--variant=minbase"*"--include="*openssh-server*python3*sudo*" bullseye $C/.bullseye-amd64.build."*"/root http"* ]] &&
	ok "debootstrap --variant=minbase --include=openssh-server,...,python3,...,sudo bullseye into the temp dir, from apt's mirror" ||
	bad "debootstrap arguments" "$(cat "$RC_TMP/calls")"

# 4. cached: no debootstrap at all
: >"$RC_TMP/calls"
out=$(rc_ensure fail 2>&1) || true
[[ $out == "$C/bullseye-amd64" && ! -s $RC_TMP/calls ]] && ok "a cached root is reused without debootstrap" || bad "reuse" "$out"

# 5. two builds at once: one debootstrap, both get the root
rm -rf "$C/bullseye-amd64"
: >"$RC_TMP/calls"
FAKE_SLEEP=1 rc_ensure ok >"$RC_TMP/a" 2>&1 &
a=$!
FAKE_SLEEP=1 rc_ensure ok >"$RC_TMP/b" 2>&1 &
b=$!
wait "$a" "$b" || true
[[ $(wc -l <"$RC_TMP/calls") == 1 && $(cat "$RC_TMP/a") == "$C/bullseye-amd64" && $(cat "$RC_TMP/b") == "$C/bullseye-amd64" ]] &&
	ok "two builds at once: one debootstrap (lock), both get the root" || bad "concurrent builds" "$(cat "$RC_TMP/calls" "$RC_TMP/a" "$RC_TMP/b")"
umount -l "$C"/.bullseye-amd64.build.*/root/proc 2>/dev/null || true
rm -rf --one-file-system "$RC_TMP"
