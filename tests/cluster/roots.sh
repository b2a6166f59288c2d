#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cluster/roots.sh - whole Debian root file systems for test nodes (sourced by cluster.sh).
#
# A root is built once with debootstrap (minbase + openssh-server, python3, iproute2, procps,
# sudo) from the Debian mirror apt uses here, and kept in a cache directory that every later run
# reuses read-only (the nodes mount it as the lower layer of an overlay with a per-run upper dir):
#     ${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}/NAME       NAME = bullseye-amd64 | bookworm-arm64
#                                                             | bookworm-amd64 (test_deb.sh's)
#     NAME/.clusterdoc-root    written last: "suite arch seconds-to-build date"; a root without it
#                              is never used
# A build runs in NAME's lock (flock on .NAME.lock: two tests never build it at once), in a temp
# dir .NAME.build.XXXXXX beside it, in a private mount namespace (the mounts debootstrap makes die
# with it), and is renamed into place only when complete; the leftovers of an interrupted build
# are removed by the next one. The arm64 root is debootstrapped --foreign and its second stage
# runs under qemu-aarch64-static through binfmt_misc.
#
# API
#   cluster_root_ensure NAME      build NAME if it is not cached yet; prints its directory
#   cluster_root_binfmt TAG [C]   make aarch64 binaries run through qemu-aarch64-static, also
#                                 inside a chroot (binfmt_misc "F" flag). An enabled handler that
#                                 has F (and C, when C is asked: setuid binaries such as sudo get
#                                 their own credentials) is used as it is; otherwise one named
#                                 clusterdoc-aarch64-TAG is registered and its name printed
#   cluster_root_unbinfmt NAME    unregister a handler cluster_root_binfmt registered
# Env: CD_ROOT_CACHE, CD_ROOT_MIRROR (default: the first Debian URI of apt's sources),
#      CD_ROOT_LOCK_WAIT (seconds to wait for another process's build, default 3600)

_CD_ROOT_PKGS=openssh-server,openssh-sftp-server,python3,iproute2,procps,sudo
_CD_QEMU_AARCH64=/usr/bin/qemu-aarch64-static
_CD_BINFMT=/proc/sys/fs/binfmt_misc

_cd_root_log() { [[ ${CD_QUIET:-0} == 1 ]] || printf 'cluster: %s\n' "$*" >&2; }
_cd_root_err() { printf 'cluster: ERROR: %s\n' "$*" >&2; }

_cd_root_cache() { printf '%s\n' "${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}"; }

# the Debian mirror apt uses here: first "URIs:" (deb822) or "deb URI" line that is not a
# security or updates archive
_cd_root_mirror() {
	local u
	if [[ -n ${CD_ROOT_MIRROR:-} ]]; then
		printf '%s\n' "$CD_ROOT_MIRROR"
		return 0
	fi
	u=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }')
	u+=$'\n'$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }')
	u=$(grep -E '/debian/?$' <<<"$u" | grep -v security | head -1)
	printf '%s\n' "${u:-http://deb.debian.org/debian}"
}

_cd_root_spec() { # NAME -> "suite arch"
	case $1 in
	bullseye-amd64) echo "bullseye amd64" ;;
	bookworm-arm64) echo "bookworm arm64" ;;
	bookworm-amd64) echo "bookworm amd64" ;;
	*) _cd_root_err "unknown root '$1' (bullseye-amd64 | bookworm-arm64 | bookworm-amd64)"; return 2 ;;
	esac
}

# _cd_root_rm DIR : unmount whatever is still mounted below DIR (deepest first), then remove it
# without ever crossing into another file system
_cd_root_rm() {
	local d=$1 m
	[[ -e $d ]] || return 0
	for m in $(awk -v d="$d" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf --one-file-system -- "$d"
}

# handler file of binfmt_misc that runs aarch64 ELF executables; prints "name flags"
_cd_binfmt_find() {
	local f flags
	for f in "$_CD_BINFMT"/*; do
		[[ -f $f && ${f##*/} != register && ${f##*/} != status ]] || continue
		grep -qx enabled "$f" 2>/dev/null || continue
		grep -q '^magic 7f454c460201010000000000000000000200b700' "$f" || continue
		flags=$(sed -n 's/^flags: //p' "$f")
		printf '%s %s\n' "${f##*/}" "$flags"
	done
}

cluster_root_binfmt() { # TAG [C]
	local tag=$1 need=F${2:-} name flags ok
	if [[ ! -e $_CD_BINFMT/register ]]; then
		mount -t binfmt_misc binfmt_misc "$_CD_BINFMT" ||
			{ _cd_root_err "cannot mount binfmt_misc on $_CD_BINFMT"; return 1; }
	fi
	[[ $(cat "$_CD_BINFMT/status" 2>/dev/null) == enabled ]] || { _cd_root_err "binfmt_misc is disabled"; return 1; }
	while read -r name flags; do
		[[ -n $name ]] || continue
		ok=1
		[[ $flags == *F* ]] || ok=0
		[[ $need != *C* || $flags == *C* ]] || ok=0
		((ok)) && return 0
	done < <(_cd_binfmt_find)
	[[ -x $_CD_QEMU_AARCH64 ]] || { _cd_root_err "$_CD_QEMU_AARCH64 missing (apt install qemu-user-static)"; return 1; }
	name=clusterdoc-aarch64-$tag
	# registered last, it is tried first; F: the kernel opens the interpreter now, so it works in
	# any chroot; P: argv[0] kept ("-bash" stays a login shell); C: setuid binaries (sudo) work
	printf '%s' ":$name:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:$_CD_QEMU_AARCH64:PFC" \
		>"$_CD_BINFMT/register" || { _cd_root_err "registering $name in binfmt_misc failed"; return 1; }
	_cd_root_log "registered binfmt handler $name (unregistered at down)"
	printf '%s\n' "$name"
}

cluster_root_unbinfmt() { # NAME
	[[ $1 == clusterdoc-aarch64-* && -e $_CD_BINFMT/$1 ]] || return 0
	echo -1 >"$_CD_BINFMT/$1"
}

cluster_root_ensure() { # NAME
	local name=${1:-} spec cache dir fd rc=0
	spec=$(_cd_root_spec "$name") || return 2
	cache=$(_cd_root_cache)
	dir=$cache/$name
	if [[ -f $dir/.clusterdoc-root ]]; then
		printf '%s\n' "$dir"
		return 0
	fi
	command -v debootstrap >/dev/null || { _cd_root_err "debootstrap missing (apt install debootstrap)"; return 1; }
	mkdir -p "$cache" || return 1
	exec {fd}>"$cache/.$name.lock" || return 1
	if ! flock -w "${CD_ROOT_LOCK_WAIT:-3600}" "$fd"; then
		exec {fd}>&-
		_cd_root_err "timed out waiting for another build of $dir (lock $cache/.$name.lock)"
		return 1
	fi
	if [[ ! -f $dir/.clusterdoc-root ]]; then
		# shellcheck disable=SC2086
		_cd_root_build "$name" $spec "$dir" || rc=1
	fi
	exec {fd}>&-
	((rc == 0)) && printf '%s\n' "$dir"
	return $rc
}

_cd_root_build() { # name suite arch dir   (called holding the lock)
	local name=$1 suite=$2 arch=$3 dir=$4 cache tmp mirror t0 secs old reg="" rc=0
	cache=${dir%/*}
	for old in "$cache/.$name.build."*; do _cd_root_rm "$old"; done # an interrupted build's
	tmp=$(mktemp -d "$cache/.$name.build.XXXXXX") || return 1
	mirror=$(_cd_root_mirror)
	t0=$(date +%s)
	_cd_root_log "building $dir: debootstrap $suite $arch from $mirror (once; later runs reuse it; log $tmp/log)"
	if [[ $arch == amd64 ]]; then
		unshare --mount --propagation private debootstrap --variant=minbase --arch=amd64 \
			--include=$_CD_ROOT_PKGS "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 || rc=1
	else
		reg=$(cluster_root_binfmt "build$$") || rc=1
		((rc)) || unshare --mount --propagation private debootstrap --variant=minbase --arch="$arch" --foreign \
			--include=$_CD_ROOT_PKGS "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 || rc=1
		((rc)) || unshare --mount --propagation private chroot "$tmp/root" /debootstrap/debootstrap --second-stage \
			>>"$tmp/log" 2>&1 || rc=1
		[[ -n $reg ]] && cluster_root_unbinfmt "$reg"
	fi
	if ((rc == 0)); then
		# host keys made by the package are never used (each run makes its own); no .deb files kept
		rm -f "$tmp/root"/etc/ssh/ssh_host_* "$tmp/root"/var/cache/apt/archives/*.deb
		mkdir -p "$tmp/root/run/sshd"
		secs=$(($(date +%s) - t0))
		printf '%s %s %s %s\n' "$suite" "$arch" "$secs" "$(date -u +%FT%TZ)" >"$tmp/root/.clusterdoc-root"
		_cd_root_rm "$dir" # a root without its marker is never used: someone else's leftover
		mv -T "$tmp/root" "$dir" || rc=1
		((rc == 0)) && _cd_root_log "built $dir in ${secs}s"
	else
		_cd_root_err "debootstrap $suite $arch failed; last lines of $tmp/log:"
		tail -5 "$tmp/log" | sed 's/^/    /' >&2
		cp "$tmp/log" "$cache/.$name.failed.log" 2>/dev/null
	fi
	_cd_root_rm "$tmp"
	return $rc
}
