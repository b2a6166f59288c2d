#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package: `dpkg-buildpackage -us -uc -b` on a copy of the tree builds a .deb, whose
# dependencies come from the libraries the head links (${shlibs:Depends}); apt installs it, with
# them, into a clean Debian 12 root (debootstrap minbase, cached by tests/cluster/roots.sh as
# bookworm-amd64: the first run on a machine builds it, about 2 min), where the installed
# `clusterdoc --version` and `clusterdoc facts -w localhost` run. localhost is the local transport
# (no sshd in the root): the head starts the installed agent from /usr/libexec/clusterdoc.
# The root is the read-only lower layer of an overlay in a private mount namespace; apt's lists
# and downloaded packages are kept beside the cached root (deb-apt/), so that a later run fetches
# only what changed. Needs root (mounts, chroot), dpkg-buildpackage, debhelper and the network to
# the Debian mirror (make deps-test).
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=deb
itest_need_root
TMP=$(mktemp -d /tmp/cd-deb.XXXXXX)
trap 'rm -rf --one-file-system "$TMP"' EXIT
APT_CACHE=${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}/deb-apt

for p in dpkg-dev debhelper fakeroot debootstrap; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		result FAIL "$ITEST_FILE/package-$p" "not installed (make deps-test)"
		exit 1
	fi
done

# what git has of the tree, committed or not (no build outputs), built as a user would
t_dpkg_buildpackage_builds_a_deb_of_the_head_the_agent_the_man_page_and_completions() {
	local files
	mkdir -p "$TMP/src" || return 1
	(cd "$CD_TOP" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$TMP/src" || return 1
	# as a user runs it, not as a sub-make of make test's
	(cd "$TMP/src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc -b -j"$(nproc)") \
		>"$TMP/build.log" 2>&1 ||
		{ echo "    dpkg-buildpackage failed:"; tail -15 "$TMP/build.log"; return 1; }
	DEB=$(echo "$TMP"/clusterdoc_*_amd64.deb)
	[[ -f $DEB ]] || { echo "    no .deb in $TMP: $(ls "$TMP")"; return 1; }
	files=$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | grep -v '^./usr/share/doc/')
	expect_eq "$files" "./usr/bin/clusterdoc
./usr/libexec/clusterdoc/clusterdoc-agent
./usr/share/bash-completion/completions/clusterdoc
./usr/share/man/man1/clusterdoc.1.gz
./usr/share/zsh/vendor-completions/_clusterdoc" "the package's files" || return 1
	# dpkg-shlibdeps: one package for each library the head links
	expect_eq "$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort | tr '\n' ' ')" \
		"libc6 libcurl4 libjansson4 libncursesw6 libssh2-1 libssl3 libtinfo6 zlib1g " "Depends, from the libraries"
}

# in_root CMD...: CMD in the overlay root (see chroot_script), $out its stdout and stderr
in_root() {
	out=$(unshare --mount --propagation private bash "$TMP/enter.sh" "$@" 2>&1)
}

t_apt_installs_it_into_a_clean_debian_12_root_where_it_runs() {
	local root
	[[ -f ${DEB:-} ]] || { echo "    no package (the build failed)"; return 1; }
	root=$(CD_QUIET=1 cluster_root_ensure bookworm-amd64) || return 1
	mkdir -p "$TMP/upper" "$TMP/work" "$TMP/merged" "$APT_CACHE/lists/partial" "$APT_CACHE/archives/partial" || return 1
	cp "$DEB" "$TMP/upper.deb" || return 1
	# the mounts live as long as the namespace that one in_root call makes
	cat >"$TMP/enter.sh" <<EOS
set -e
m=$TMP/merged
mount -t overlay overlay -o lowerdir=$root,upperdir=$TMP/upper,workdir=$TMP/work "\$m"
mount -t proc proc "\$m/proc"
mount --rbind /dev "\$m/dev"
mount --bind $APT_CACHE/lists "\$m/var/lib/apt/lists"
mount --bind $APT_CACHE/archives "\$m/var/cache/apt/archives"
cp /etc/resolv.conf "\$m/etc/resolv.conf"
cp $TMP/upper.deb "\$m/tmp/${DEB##*/}"
exec chroot "\$m" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "\$@"
EOS
	in_root sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/'"${DEB##*/}" ||
		{ echo "    apt-get failed: $(tail -8 <<<"$out")"; return 1; }
	in_root dpkg-query -W -f='${Status}' clusterdoc
	expect_eq "$out" "install ok installed" "the package's state in the root" || return 1
	in_root sh -c 'command -v clusterdoc; ls /usr/libexec/clusterdoc'
	expect_eq "$out" $'/usr/bin/clusterdoc\nclusterdoc-agent' "the head and the agent in the root" || return 1
	in_root clusterdoc --version || { echo "    clusterdoc --version: $out"; return 1; }
	expect_match "$out" '^clusterdoc [0-9]+\.[0-9]+' "--version" || return 1
	in_root clusterdoc facts -w localhost --json
	expect_eq "$(jget '[(n["host"], n["error"]) for n in d["nodes"]]')" "[('localhost', None)]" "facts -w localhost: its nodes" || return 1
	expect_match "$(jget 'd["nodes"][0]["os"]')" "Debian GNU/Linux 12" "the node's OS"
}

run_test dpkg_buildpackage_builds_a_deb_of_the_head_the_agent_the_man_page_and_completions
run_test apt_installs_it_into_a_clean_debian_12_root_where_it_runs
exit $ITEST_STATUS
