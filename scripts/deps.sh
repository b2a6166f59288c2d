#!/bin/sh
# Install the Debian packages clusterdoc needs to build and test. Idempotent,
# and quiet when everything is already there.
set -eu
PKGS="build-essential clang libssh2-1-dev libssl-dev libncurses-dev libcurl4-openssl-dev
zlib1g-dev libjansson-dev libcmocka-dev openssh-client openssh-server nftables iproute2 iputils-ping
python3 python3-torch iperf3 tmux pdsh clustershell clang-format procps openssl
prometheus prometheus-pushgateway libxml2-utils slurmctld slurmd slurm-client munge
openmpi-bin libopenmpi-dev libibverbs-dev
debootstrap binfmt-support sudo
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
libjansson-dev:arm64 zlib1g-dev:arm64 libc6:arm64"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
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
exit ${status:-0}
