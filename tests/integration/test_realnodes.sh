#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real nodes: `clusterdoc facts`, `check` and `bench` on one namespace cluster that has what
# real GPU clusters have and the other tests' nodes lack: a home directory shared by every
# node (root's and each user's), two non-root accounts (cdadmin with sudo for the fixers'
# commands, cdplain with none), a Debian 11 node (glibc 2.31, its own sshd and python3) and an
# aarch64 node (a Debian arm64 root under qemu-user). Every node must answer, as root and as
# either user, from a cold cache. The cluster's own parts (logins, sudo, the roots, the shared
# home) are checked first, so that a failure says whether the cluster or clusterdoc is at fault.
# The roots are built once into ${CD_ROOT_CACHE:-/var/cache/clusterdoc-test} (see
# tests/cluster/roots.sh); the first run on a machine takes minutes for that.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=realnodes

OLD=2 ARM=3
PT=(--probe-timeout 3000)

# node ARM runs the aarch64 agent, which make builds only with its cross toolchain
if [[ ! -f $CLUSTERDOC_AGENT-aarch64 ]]; then
	result SKIP "$ITEST_FILE" "no $CLUSTERDOC_AGENT-aarch64 for the aarch64 node: make built none without its cross toolchain (make deps-cross)"
	exit 0
fi
for p in debootstrap qemu-user-static sudo; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		result FAIL "$ITEST_FILE/package-$p" "not installed (make deps-test)"
		exit 1
	fi
done
CD_QUIET=1 cluster_up 4 --shared-home --users --old-node $OLD --arm-node $ARM >/dev/null ||
	{ result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
echo "  cluster up in ${CD_UP_SECONDS}s (4 nodes: shared home, users, node$OLD Debian 11, node$ARM arm64)"

# as USER ARGS...: clusterdoc as cdadmin or cdplain (their ssh configs), like cd_head
as() {
	local user=$1 cfg
	shift
	if [[ $user == cdadmin ]]; then cfg=$CD_SSH_CONFIG_ADMIN; else cfg=$CD_SSH_CONFIG_PLAIN; fi
	cd_head "$1" -F "$cfg" "${@:2}"
}
ssh_as() { # USER i CMD
	local cfg=$CD_SSH_CONFIG
	[[ $1 == cdadmin ]] && cfg=$CD_SSH_CONFIG_ADMIN
	[[ $1 == cdplain ]] && cfg=$CD_SSH_CONFIG_PLAIN
	cluster_head_exec ssh -F "$cfg" "node$2" "$3"
}
wipe_caches() { rm -rf "$CD_SHARED_DIR/root/.cache/clusterdoc" "$CD_SHARED_DIR/home/"*/.cache/clusterdoc; }

# every node answered; node OLD says Debian 11, node ARM aarch64, the others x86_64
facts_ok() { # what
	expect_eq "$(jget '[n["host"] + ": " + str(n["error"]) for n in d["nodes"] if n["error"] is not None]')" \
		"[]" "errors $1" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" "['node1', 'node2', 'node3', 'node4']" "hostnames $1" || return 1
	expect_eq "$rc" 0 "exit status of facts $1 ($err)" || return 1
	expect_match "$(jget "d['nodes'][$OLD - 1]['os']")" '^Debian GNU/Linux 11 \(bullseye\)$' "node$OLD's os $1" || return 1
	expect_eq "$(jget '[n["arch"] for n in d["nodes"]]')" "['x86_64', 'x86_64', 'aarch64', 'x86_64']" "arch $1"
}

# ---- the cluster itself

t_cluster_users_log_in_everywhere_and_only_cdadmin_has_sudo() {
	local i out frag=$CD_TOP/tests/cluster/sudoers.cdadmin
	for ((i = 1; i <= 4; i++)); do
		expect_eq "$(ssh_as cdadmin $i 'echo $(id -un) $HOME; sudo -n -l >/dev/null && echo sudo-ok' 2>&1)" \
			$'cdadmin /home/cdadmin\nsudo-ok' "cdadmin on node$i" || return 1
		out=$(ssh_as cdplain $i 'echo $(id -un) $HOME; sudo -n true 2>&1; echo rc=$?' 2>&1)
		expect_match "$out" '^cdplain /home/cdplain$' "cdplain on node$i" || return 1
		expect_match "$out" 'a password is required' "cdplain's sudo on node$i" || return 1
	done
	[[ -f $frag ]] || return 0
	out=$(ssh_as root 1 'cat /etc/sudoers.d/clusterdoc-cdadmin')
	expect_eq "$out" "$(cat "$frag")" "the node's sudoers.d fragment (tests/cluster/sudoers.cdadmin)"
}

t_cluster_old_node_is_debian_11_with_glibc_2_31() {
	expect_eq "$(ssh_as root $OLD 'ldd --version | head -1 | awk "{print \$NF}"; . /etc/os-release; echo $VERSION_ID')" \
		$'2.31\n11' "glibc and VERSION_ID on node$OLD"
}

t_cluster_arm_node_is_aarch64() {
	expect_eq "$(ssh_as cdplain $ARM 'uname -m; python3 -c "import platform; print(platform.machine())"')" \
		$'aarch64\naarch64' "uname -m and python3 on node$ARM"
}

t_cluster_home_is_shared_by_every_node() {
	local i
	ssh_as cdplain 1 'echo shared >~/.realnodes-mark' || return 1
	for i in 2 3 4; do
		expect_eq "$(ssh_as cdplain $i 'cat ~/.realnodes-mark')" shared "cdplain's home on node$i" || return 1
	done
	ssh_as root $ARM 'echo root-shared >~/.realnodes-mark' || return 1
	expect_eq "$(ssh_as root $OLD 'cat ~/.realnodes-mark')" root-shared "root's home on node$OLD"
}

# ---- clusterdoc on it (each first run starts from an empty cache in the shared home)

t_facts_as_root_from_a_cold_shared_cache() {
	wipe_caches
	cd_head facts -w 'node[1-4]' --json
	facts_ok "as root (cold)" || return 1
	cd_head facts -w 'node[1-4]' --json
	facts_ok "as root (warm)" || return 1
	expect_eq "$(jget '[n["agent_uploaded"] for n in d["nodes"]]')" "[False, False, False, False]" "uploads on the warm run"
}

t_facts_as_cdplain_and_cdadmin_from_a_cold_shared_cache() {
	local u
	wipe_caches
	for u in cdplain cdadmin; do
		as $u facts -w 'node[1-4]' --json
		facts_ok "as $u" || return 1
	done
}

# The roots have no torch and node2's python3 is 3.9: check says exactly that, and nothing else
t_check_reaches_every_node_and_finds_only_the_roots_differences() {
	local u
	for u in root cdplain; do
		if [[ $u == root ]]; then cd_head check -w 'node[1-4]' --json "${PT[@]}"; else as $u check -w 'node[1-4]' --json "${PT[@]}"; fi
		expect_eq "$(jget '[n["host"] + ": " + n["error"] for n in d["nodes"] if n.get("error")]')" "[]" \
			"node errors of check as $u" || return 1
		expect_eq "$(jget "sorted(f['severity'] + ' ' + f['id'] + ' ' + ','.join(f['nodes']) for f in d['findings'])")" \
			"['error torch-missing node2,node3', 'warning version-mismatch node1,node2,node3,node4']" \
			"findings as $u" || return 1
		expect_eq "$rc" 1 "exit status of check as $u (an error finding) ($err)" || return 1
		expect_eq "$(jget 'all(m["result"] == "ok" for m in d["matrix"])')" True "every reachability attempt ok as $u" || return 1
		expect_eq "$(jget '[n["nccl"]["log_line"].split("Using ")[1] for n in d["nodes"]]')" \
			"['[0]eth0:$(cluster_node_ip 1)<0>', '[0]eth0:$(cluster_node_ip 2)<0>', '[0]eth0:$(cluster_node_ip 3)<0>', '[0]eth0:$(cluster_node_ip 4)<0>']" \
			"NCCL's interface on each node as $u" || return 1
	done
}

t_bench_ring_is_exact_across_debian_11_and_aarch64_as_cdadmin() {
	as cdadmin bench -w 'node[1-4]' --backend tcp --iters 2 --warmup 1 --stall-timeout 20000 -b 4 -e 1M -f 8 --json
	expect_eq "$(jget '[n["host"] + ": " + n["error"] for n in d["nodes"] if n.get("error")]')" "[]" "node errors" || return 1
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget 'd["nranks"]')" 4 "ranks" || return 1
	expect_eq "$(jget '[r["count"] for r in d["results"]]')" "[1, 8, 64, 512, 4096, 32768, 262144]" "element counts" || return 1
	expect_eq "$(jget 'sum(r["wrong"] for r in d["results"])')" 0 "wrong elements"
}

# The agent's own trainer (no torch) as the user without sudo, from a cold data directory in
# the shared home, on the Debian 11 node and two Debian 12 nodes (not on node ARM: training
# under qemu-user is slow).
t_mnist_embedded_as_cdplain_across_debian_11_and_12() {
	local data=$CD_RUN/mnist uid
	uid=$(ssh_as cdplain 1 'id -u') || return 1
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 1000 200 >/dev/null || return 1
	rm -rf "$CD_SHARED_DIR/home/cdplain/.cache/clusterdoc/data"
	as cdplain mnist -w "node[1,$OLD,4]" --mode embedded --data-dir "$data" --data-md5 "$data/MD5SUMS" \
		--cache-dir "$CD_RUN/head-cache" --stall-timeout 120 --json
	expect_eq "$rc" 0 "exit status ($(tail -c 600 <<<"$err") $(jget 'd["failure"], [(n["host"], n["error"]) for n in d["nodes"] if n["error"]]' 2>/dev/null))" || return 1
	expect_eq "$(jget 'd["mode"], d["failed"], d["nranks"], len(d["epochs"])')" "('embedded', False, 3, 2)" \
		"mode, failed, ranks, epochs" || return 1
	expect_eq "$(jget '[(n["host"], n["started"], n["ended"], n["exit_code"], n["error"]) for n in d["nodes"]]')" \
		"[('node1', True, True, 0, None), ('node$OLD', True, True, 0, None), ('node4', True, True, 0, None)]" \
		"every rank started, ended and exited 0" || return 1
	expect_eq "$(jget 'd["epochs"][1]["loss"] < d["epochs"][0]["loss"]')" True "the loss drops ($(jget 'd["epochs"]'))" || return 1
	expect_eq "$(jget 'd["params_identical"] and d["test"]["total"] == 200')" True \
		"identical parameters, test set evaluated ($(jget 'd["test"]'))" || return 1
	expect_eq "$(find "$CD_SHARED_DIR/home/cdplain/.cache/clusterdoc/data" ! -uid "$uid" | head -3)" "" \
		"what in cdplain's data directory is not owned by cdplain (uid $uid)" || return 1
	expect_eq "$(find "$CD_SHARED_DIR" \( -name '*.part*' -o -name '*.tmp*' \) | head -3)" "" "temp files left"
}

run_test cluster_users_log_in_everywhere_and_only_cdadmin_has_sudo
run_test cluster_old_node_is_debian_11_with_glibc_2_31
run_test cluster_arm_node_is_aarch64
run_test cluster_home_is_shared_by_every_node
run_test facts_as_root_from_a_cold_shared_cache
run_test facts_as_cdplain_and_cdadmin_from_a_cold_shared_cache
run_test check_reaches_every_node_and_finds_only_the_roots_differences
run_test bench_ring_is_exact_across_debian_11_and_aarch64_as_cdadmin
run_test mnist_embedded_as_cdplain_across_debian_11_and_12
cluster_down
exit $ITEST_STATUS
