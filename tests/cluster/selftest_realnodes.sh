# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# tests/cluster/selftest_realnodes.sh - the real-node options of cluster.sh, sourced by
# selftest.sh (uses its ok/bad/down_and_check): a 4-node cluster with --shared-home --users,
# node 2 a Debian 11 root, node 3 an arm64 root under qemu. The roots come from the cache
# (${CD_ROOT_CACHE:-/var/cache/clusterdoc-test}); a first run builds them (minutes).
# cdadmin gets this test's own sudoers fragment (CD_SUDOERS_ADMIN), so that `sudo -n true`
# has a known answer whatever tests/cluster/sudoers.cdadmin allows.

echo "== real nodes: cluster_up 4 --shared-home --users --old-node 2 --arm-node 3"
for p in debootstrap qemu-user-static sudo; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		{ bad "package $p is installed (scripts/deps.sh)"; exit 1; }
done
SUDOERS_TEST=$(mktemp /tmp/cdselftest.sudoers.XXXXXX)
printf '%s\n' '# selftest: cdadmin may run true as root' 'cdadmin ALL=(root) NOPASSWD: /usr/bin/true, /bin/true' >"$SUDOERS_TEST"
if ! CD_SUDOERS_ADMIN=$SUDOERS_TEST CD_VERBOSE=1 cluster_up 4 --shared-home --users --old-node 2 --arm-node 3; then
	rm -f "$SUDOERS_TEST"
	bad "cluster_up 4 --shared-home --users --old-node 2 --arm-node 3"
	exit 1
fi
# shellcheck disable=SC2034 # read by down_and_check (selftest.sh)
PREFIX=$CD_PREFIX RUN=$CD_RUN
ok "real-node cluster up in ${CD_UP_SECONDS}s (roots: $(cat "$CD_RUN"/n2/rootdir) $(cat "$CD_RUN"/n3/rootdir))"
[[ $CD_SHARED_HOME == 1 && $CD_USERS == 1 && $CD_OLD_NODE == 2 && $CD_ARM_NODE == 3 ]] &&
	ok "CD_SHARED_HOME=1 CD_USERS=1 CD_OLD_NODE=2 CD_ARM_NODE=3" || bad "state variables" "$CD_SHARED_HOME $CD_USERS $CD_OLD_NODE $CD_ARM_NODE"

as() { # ADMIN|PLAIN i CMD : ssh from the head to node i as that user
	local v=CD_SSH_CONFIG_$1
	cluster_head_exec ssh -F "${!v}" "node$2" "$3"
}

echo "== real nodes: the roots"
out=$(cluster_ssh 2 'ldd --version | head -1' 2>&1) || true
[[ $out == *" 2.31" ]] && ok "node2: ldd --version says glibc 2.31 ($out)" || bad "node2 ldd" "$out"
out=$(cluster_ssh 2 '. /etc/os-release; echo "$VERSION_ID $VERSION_CODENAME"; dpkg-query -W -f="\${Version}" openssh-server' 2>&1) || true
[[ $out == $'11 bullseye\n1:8.4'* ]] && ok "node2: Debian 11 bullseye, bullseye's own sshd (OpenSSH 8.4)" || bad "node2 os/sshd" "$out"
out=$(cluster_ssh 2 'python3 -c "import sys; print(sys.version_info[:2])"' 2>&1) || true
[[ $out == "(3, 9)" ]] && ok "node2: its own python3 (3.9)" || bad "node2 python3" "$out"
out=$(cluster_ssh 3 'uname -m; python3 -c "import platform; print(platform.machine())"; . /etc/os-release; echo $VERSION_ID' 2>&1) || true
[[ $out == $'aarch64\naarch64\n12' ]] && ok "node3: uname -m and python3 say aarch64 (Debian 12 arm64)" || bad "node3 arch" "$out"
out=$(cluster_ssh 3 'head -c 20 /bin/true | od -An -tx1 | tr -d " \n"' 2>&1) || true
[[ $out == 7f454c46020101*b700 ]] && ok "node3: its /bin/true is an aarch64 ELF (e_machine 0xb7)" || bad "node3 ELF" "$out"
for i in 1 4; do
	out=$(cluster_ssh "$i" '. /etc/os-release; echo "$VERSION_ID $(uname -m) $(hostname)"' 2>&1) || true
	[[ $out == "$(. /etc/os-release; echo "$VERSION_ID") x86_64 node$i" ]] && ok "node$i: the host's root ($out)" || bad "node$i root" "$out"
done
out=$(cluster_node_exec 2 sh -c '. /etc/os-release; echo $VERSION_ID; hostname' 2>&1) || true
[[ $out == $'11\nnode2' ]] && ok "cluster_node_exec 2 runs in node2's root" || bad "cluster_node_exec 2" "$out"
out=$(cluster_head_exec sftp -F "$CD_SSH_CONFIG_PLAIN" -b - node3 <<<'pwd' 2>&1) || true
[[ $out == *"Remote working directory: /home/cdplain"* ]] && ok "sftp as cdplain to the arm64 node" || bad "sftp node3" "$out"
cluster_ssh 2 'touch /usr/local/dirty-by-selftest' || true
[[ -n $(cluster_ssh 2 'ls /usr/local/dirty-by-selftest' 2>/dev/null) &&
	! -e $(cat "$CD_RUN/n2/rootdir")/usr/local/dirty-by-selftest ]] &&
	ok "a write in node2's root goes to the run's overlay, not to the cache" || bad "cache dirtied by a run"
[[ -f $(cat "$CD_RUN/n2/rootdir")/.clusterdoc-root && -f $(cat "$CD_RUN/n3/rootdir")/.clusterdoc-root ]] &&
	ok "cached roots carry their completion marker" || bad "root markers"
out=$(cluster_ssh 2 'cat /sys/class/net/eth0/address >/dev/null && ip -o -4 addr show dev eth0' 2>&1) || true
[[ $out == *"inet $CD_SUBNET.12/24"* ]] && ok "node2 sees its own netns in /sys and ip" || bad "node2 net" "$out"

echo "== real nodes: users"
good=0 detail=""
for i in 1 2 3 4; do
	for u in ADMIN PLAIN; do
		name=cd${u,,}
		out=$(as "$u" "$i" 'echo "$(id -un) $(id -u) $HOME $(hostname)"' 2>&1) || true
		if [[ $out == "$name "*" /home/$name node$i" ]]; then good=$((good + 1)); else detail+=" [$name@node$i: $out]"; fi
	done
done
((good == 8)) && ok "cdadmin and cdplain log in on all 4 nodes with the run's key, home /home/USER" || bad "user logins" "$detail"
uids=$(for i in 1 2 3 4; do as PLAIN "$i" 'id -u'; done 2>&1 | sort -u)
[[ $uids =~ ^[0-9]+$ ]] && ok "cdplain has the same uid ($uids) on every node" || bad "uids" "$uids"
good=0 detail=""
for i in 1 2 3 4; do
	out=$(as ADMIN "$i" 'sudo -n true && echo allowed' 2>&1) || true
	if [[ $out == allowed ]]; then good=$((good + 1)); else detail+=" [node$i: $out]"; fi
done
((good == 4)) && ok "cdadmin: sudo -n true works on all 4 nodes (real sudo, sudoers.d fragment)" || bad "cdadmin sudo" "$detail"
good=0 detail=""
for i in 1 2 3 4; do
	out=$(as ADMIN "$i" 'sudo -n id -u 2>&1; echo rc=$?' 2>&1) || true
	if [[ $out == *"rc=1" && $out != *$'\n0\n'* ]]; then good=$((good + 1)); else detail+=" [node$i: $out]"; fi
	out=$(as PLAIN "$i" 'sudo -n true 2>&1; echo rc=$?' 2>&1) || true
	if [[ $out == *"a password is required"*"rc=1" ]]; then good=$((good + 1)); else detail+=" [plain node$i: $out]"; fi
done
((good == 8)) && ok "sudo refuses what the fragment does not list (cdadmin: id) and everything to cdplain" || bad "sudo refusals" "$detail"
out=$(cluster_ssh 1 'cat /etc/sudoers.d/clusterdoc-cdadmin; stat -c "%U %a" /etc/sudoers.d/clusterdoc-cdadmin' 2>&1) || true
[[ $out == "$(cat "$SUDOERS_TEST")"$'\nroot 440' ]] && ok "the sudoers fragment is installed verbatim, root 0440" || bad "fragment" "$out"
rm -f "$SUDOERS_TEST"
grep -q cdadmin /etc/passwd /etc/group /etc/shadow 2>/dev/null && bad "the host's passwd/group/shadow name cdadmin" ||
	ok "the host's /etc/passwd, group, shadow are untouched"
[[ ! -e /etc/sudoers.d/clusterdoc-cdadmin ]] && ok "the host's /etc/sudoers.d is untouched" || bad "host sudoers.d"
grep -q '^  User cdplain$' "$CD_SSH_CONFIG_PLAIN" && grep -q '^  User cdadmin$' "$CD_SSH_CONFIG_ADMIN" &&
	ok "CD_SSH_CONFIG_ADMIN / CD_SSH_CONFIG_PLAIN name the users" || bad "user ssh configs"

echo "== real nodes: shared home"
cluster_ssh 1 'mkdir -p ~/.cache/clusterdoc && echo one >~/.cache/clusterdoc/mark' || true
good=0
for i in 2 3 4; do [[ $(cluster_ssh "$i" 'cat ~/.cache/clusterdoc/mark' 2>&1) == one ]] && good=$((good + 1)); done
((good == 3)) && ok "root's ~/.cache written on node1 is seen on nodes 2 (Debian 11), 3 (arm64), 4" || bad "shared root home" "$good/3"
[[ -s $CD_SHARED_DIR/root/.cache/clusterdoc/mark ]] && ok "the shared home is \$CD_SHARED_DIR/root" || bad "CD_SHARED_DIR"
as PLAIN 3 'echo from-arm >~/f' || true
out=$(as PLAIN 2 'cat ~/f; stat -c %U ~/f' 2>&1) || true
[[ $out == $'from-arm\ncdplain' ]] && ok "cdplain's home is shared: a file written on node3 is read on node2" || bad "shared user home" "$out"
out=$(as ADMIN 4 'cat ~/f 2>&1; ls ~/.ssh' 2>&1) || true
[[ $out == *"No such file"*authorized_keys ]] && ok "cdadmin's home is its own" || bad "cdadmin home" "$out"
cluster_node_env 2 'export CD_SELFTEST_MARK=two'
out=$(for i in 1 2 3; do cluster_ssh "$i" 'echo "${CD_SELFTEST_MARK:-none}"'; done 2>&1 | tr '\n' ' ')
[[ $out == "none two none " ]] && ok "cluster_node_env 2 on a shared ~/.bashrc applies to node2 only" || bad "node env on shared home" "$out"

echo "== real nodes: a restart of the arm64 node's sshd"
t1=$(date +%s.%N)
cluster_node_stop_sshd 3 && cluster_node_start_sshd 3 && out=$(cluster_ssh 3 hostname 2>&1) || true
[[ $out == node3 ]] && ok "node3's sshd (under qemu) restarts in $(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')s" ||
	bad "node3 sshd restart" "$out"

echo "== real nodes: teardown"
down_and_check
