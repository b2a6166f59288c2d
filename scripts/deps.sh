#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages of the named lists. Idempotent, and quiet when
# everything is already there.
#
#   scripts/deps.sh LIST...     LIST: build | cross | test
#   scripts/deps.sh --print LIST...   print their packages, one a line; install nothing
#     build   what `make` needs for the head and the native agent (make deps)
#     cross   the aarch64 agent's cross build: Debian's cross gcc and the arm64
#             (multiarch) jansson and zlib (make deps-cross)
#     test    what `make test` needs beyond them: the namespace cluster (sshd,
#             nft, sudo, Slurm, munge, Open MPI), Prometheus, the debootstrapped
#             roots run by qemu, cmocka, clang, the .deb build (make deps-test,
#             with cross: the tests run the aarch64 agent), and NVIDIA's nvml.h
#             for test_nvml_abi (nvml_header below)
set -eu
BUILD_PKGS="build-essential libssh2-1-dev libssl-dev libncurses-dev libcurl4-openssl-dev
zlib1g-dev libjansson-dev python3"
CROSS_PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross libjansson-dev:arm64 zlib1g-dev:arm64"
TEST_PKGS="clang libcmocka-dev clang-format openssh-client openssh-server nftables iproute2 iputils-ping
python3-torch python3-jsonschema iperf3 tmux pdsh clustershell procps openssl
prometheus prometheus-pushgateway libxml2-utils slurmctld slurmd slurm-client munge
openmpi-bin libopenmpi-dev libibverbs-dev
debootstrap binfmt-support sudo qemu-user-static libc6:arm64
dpkg-dev debhelper fakeroot bash-completion zsh"
print=0
[ "${1:-}" = --print ] && print=1 && shift
[ $# -gt 0 ] || set -- build
PKGS=""
for list in "$@"; do
	case $list in
	build) PKGS="$PKGS $BUILD_PKGS" ;;
	cross) PKGS="$PKGS $CROSS_PKGS" ;;
	test) PKGS="$PKGS $TEST_PKGS" ;;
	*)
		echo "scripts/deps.sh: unknown list '$list' (build, cross, test)" >&2
		exit 2
		;;
	esac
done
# nvml_header: NVIDIA's nvml.h, against which test_nvml_abi checks clusterdoc's
# own NVML declarations (probes/nvml.h), into NVML_CACHE (the Makefile's
# NVML_INCLUDE is its include/), kept there between runs. No CUDA package of
# the build machine ships it, and Debian's libnvidia-ml-dev depends on a
# driver library, so the package is never installed: apt fetches the .deb
# through a configuration of its own (sources, lists and cache in a temporary
# folder; the machine's apt state is only read) and dpkg-deb takes the one
# header out of it. Best effort: without the mirror or the package it says so
# in one line and test_nvml_abi skips.
NVML_DEB_MIRROR=${NVML_DEB_MIRROR:-http://deb.debian.org/debian}
NVML_DEB_SUITE=${NVML_DEB_SUITE:-trixie}
NVML_DEB_VERSION=${NVML_DEB_VERSION:-12.4.127~12.4.1-2}
NVML_CACHE=${NVML_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterdoc/nvml-12.4}
nvml_header() {
	[ -s "$NVML_CACHE/include/nvml.h" ] && return 0
	tmp=$(mktemp -d /tmp/clusterdoc-nvml.XXXXXX)
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts" "$tmp/deb"
	echo "deb $NVML_DEB_MIRROR $NVML_DEB_SUITE non-free" >"$tmp/sources.list"
	cat >"$tmp/apt.conf" <<-EOF
		Dir::Etc::SourceList "$tmp/sources.list";
		Dir::Etc::SourceParts "$tmp/parts";
		Dir::State::Lists "$tmp/lists";
		Dir::Cache "$tmp/cache";
		Dir::Cache::pkgcache "";
		Dir::Cache::srcpkgcache "";
		APT::Architectures { "$(dpkg --print-architecture)"; };
		APT::Sandbox::User "$(id -un)";
		Acquire::Languages "none";
		Acquire::Retries "0";
		Acquire::http::Timeout "20";
		Debug::NoLocking "true";
	EOF
	if APT_CONFIG="$tmp/apt.conf" apt-get update -qq >"$tmp/log" 2>&1 &&
		(cd "$tmp/deb" && APT_CONFIG="$tmp/apt.conf" apt-get download -qq \
			"libnvidia-ml-dev=$NVML_DEB_VERSION" >>"$tmp/log" 2>&1) &&
		dpkg-deb --fsys-tarfile "$tmp"/deb/libnvidia-ml-dev_*.deb |
		tar -x -C "$tmp" ./usr/include/nvml.h 2>>"$tmp/log"; then
		mkdir -p "$NVML_CACHE/include"
		mv "$tmp/usr/include/nvml.h" "$NVML_CACHE/include/nvml.h"
		echo "clusterdoc: nvml.h $NVML_DEB_VERSION (libnvidia-ml-dev, $NVML_DEB_SUITE non-free) into $NVML_CACHE"
	else
		echo "clusterdoc: no nvml.h (libnvidia-ml-dev=$NVML_DEB_VERSION from $NVML_DEB_MIRROR $NVML_DEB_SUITE non-free: $(grep -m1 -E '^(E|W):' "$tmp/log" || echo 'not fetched')); test_nvml_abi will skip" >&2
	fi
	rm -rf "$tmp"
}

if [ $print = 1 ]; then
	# shellcheck disable=SC2086 # one package a word
	printf '%s\n' $PKGS
	exit 0
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	case " $* " in *" test "*) nvml_header ;; esac
	exit 0
fi
echo "clusterdoc: installing:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# The aarch64 agent links the arm64 jansson and zlib (multiarch, packages NAME:arm64).
case $missing in
*:arm64*)
	dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
	;;
esac
$SUDO apt-get update -qq
# Some packages ship daemons (prometheus, the pushgateway, slurmctld, slurmd, munge): the tests start
# their own on loopback, so keep the packages from starting theirs.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e $policy ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee $policy >/dev/null
	$SUDO chmod 755 $policy
	own_policy=1
fi
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || status=$?
[ $own_policy = 1 ] && $SUDO rm -f $policy
case " $* " in *" test "*) nvml_header ;; esac
exit ${status:-0}
