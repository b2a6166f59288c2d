#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent cache on nodes that share it, or cannot write it: 8 nodes whose ~/.cache is one
# directory (bound over each node's own cache inside its mount namespace, until the cluster
# has --shared-home), a planted broken agent, full and read-only caches, unknown architectures.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=agent_cache
N=8

CD_QUIET=1 cluster_up $N >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
SHARED=$CD_RUN/shared-cache
mkdir -p "$SHARED"
for ((i = 1; i <= N; i++)); do cluster_node_exec $i mount --bind "$SHARED" /root/.cache || exit 1; done
SHA=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
SIZE=$(stat -c %s "$CLUSTERDOC_AGENT")
TMPDIR0=/tmp/clusterdoc-0
[ -e $TMPDIR0 ] && TMP_WAS_THERE=1 || TMP_WAS_THERE=0

# cold [torch]: an empty shared cache. The torch facts every node starts with (cluster_up's
# seed) are put back unless "torch": the agent cache is what these cases test, and a cold
# torch import on each of the 8 nodes per run would only cost the machine a CPU-minute.
cold() {
	local i
	rm -rf "${SHARED:?}"/* "$SHARED"/.[!.]*
	[[ ${1:-} == torch ]] && return 0
	for ((i = 1; i <= N; i++)); do cluster_torch_seed "$SHARED" "$i"; done
}
ok_count() { jget 'sum(1 for n in d["nodes"] if n["reachable"])'; }
uploads() { jget 'sum(1 for n in d["nodes"] if n["agent_uploaded"])'; }
leftovers() { find "$@" -name '.agent-*' 2>/dev/null; }

t_cold_shared_cache_ten_runs_every_node_answers() {
	local run total=0
	for run in 1 2 3 4 5 6 7 8 9 10; do
		# the first run as cold as a new cluster's: no agent and no torch facts
		if ((run == 1)); then cold torch; else cold; fi
		cd_head facts -w "node[1-$N]" --json
		expect_eq "$(ok_count)" $N "nodes that answered in run $run: $(head -c 600 <<<"$out") $err" || return 1
		total=$((total + $(uploads)))
		expect_eq "$(jget 'd["nodes"][0]["agent_dir_shared_by"]')" $N "shared_by in run $run" || return 1
	done
	echo "    uploads over 10 cold runs of $N nodes: $total"
	[ "$total" -lt $((10 * N / 2)) ] || { echo "    the shared cache got $total uploads for 10 runs"; return 1; }
	[ -z "$(leftovers "$SHARED")" ] || { echo "    temp files left: $(leftovers "$SHARED")"; return 1; }
}

t_cold_shared_cache_openssh_backend() {
	cold
	cd_head facts -w "node[1-$N]" --ssh openssh --json
	expect_eq "$(ok_count)" $N "nodes that answered: $err" || return 1
	[ -z "$(leftovers "$SHARED")" ] || { echo "    temp files left: $(leftovers "$SHARED")"; return 1; }
}

t_table_says_the_cache_is_shared() {
	cd_head facts -w "node[1-$N]"
	expect_eq "$rc" 0 "exit status" || return 1
	expect_match "$out" "agent cache /root/.cache/clusterdoc: shared by $N nodes" "shared line"
}

# The issue's first symptom: every node pushed train-images-idx3-ubyte to one .part file in the
# shared home and failed the SHA-256 check. Now each agent writes its own part file.
t_mnist_embedded_on_a_cold_shared_cache_trains() {
	local data=$CD_RUN/mnist run
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 1000 200 >/dev/null || return 1
	for run in 1 2 3; do
		cold
		cd_head mnist -w 'node[1-4]' --mode embedded --epochs 1 --data-dir "$data" \
			--data-md5 "$data/MD5SUMS" --cache-dir "$CD_RUN/head-cache" --json
		expect_eq "$rc" 0 "exit status of run $run ($(tail -c 600 <<<"$err"))" || return 1
		# a put another node's copy made unneeded is removed by its agent as it exits, once the
		# head has gone: none may be left then
		local k
		for ((k = 0; k < 50; k++)); do
			[ -z "$(find "$SHARED" -name '*.part*')" ] && break
			sleep 0.1
		done
		[ -z "$(find "$SHARED" -name '*.part*')" ] || { echo "    part files left: $(find "$SHARED" -name '*.part*')"; return 1; }
	done
}

t_zero_filled_agent_is_replaced_by_a_fresh_upload() {
	cold
	mkdir -p "$SHARED/clusterdoc" && head -c "$SIZE" /dev/zero >"$SHARED/clusterdoc/agent-$SHA" &&
		chmod 700 "$SHARED/clusterdoc/agent-$SHA"
	cd_head facts -w "node[1-$N]" --json
	expect_eq "$(ok_count)" $N "nodes that answered: $(head -c 600 <<<"$out")" || return 1
	cmp -s "$SHARED/clusterdoc/agent-$SHA" "$CLUSTERDOC_AGENT" || { echo "    the zeros are still there"; return 1; }
	cd_head facts -w "node[1-$N]" --ssh openssh --json
	expect_eq "$(ok_count)" $N "nodes that answered on the next run" || return 1
	expect_eq "$(uploads)" 0 "uploads on the next run"
}

# A small tmpfs over node 2's ~/.cache, filled up: the agent goes to /tmp/clusterdoc-0 and the
# node says so; nothing is left in the full cache.
t_full_cache_falls_back_to_tmp_and_says_so() {
	cluster_node_exec 2 sh -c 'mount -t tmpfs -o size=256k tmpfs /root/.cache &&
		dd if=/dev/zero of=/root/.cache/fill bs=4k 2>/dev/null; true'
	cd_head facts -w node2 --json
	expect_eq "$(ok_count)" 1 "node2 answered: $(head -c 600 <<<"$out")" || return 1
	expect_match "$(jget 'd["nodes"][0]["agent_note"]')" "no space left on device.*$TMPDIR0" "note" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_dir"]')" $TMPDIR0 "agent_dir" || return 1
	[ -z "$(cluster_node_exec 2 find /root/.cache -name '.agent-*')" ] || { echo "    partial file left"; return 1; }
	expect_eq "$(stat -c '%a %U' $TMPDIR0)" "700 root" "mode and owner of $TMPDIR0" || return 1
	cd_head facts -w node2
	expect_match "$out" "node2: the agent is kept in $TMPDIR0" "table note on the warm run"
}

# Node 7's ~/.cache a full tmpfs: its agent runs from /tmp/clusterdoc-0, so mnist puts the
# dataset in /tmp/clusterdoc-0/data there (not in the full cache) and trains on every rank.
t_mnist_on_a_node_with_a_full_cache_uses_the_fallback_dir() {
	local data=$CD_RUN/mnist
	[ -f "$data/MD5SUMS" ] || /usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 1000 200 >/dev/null || return 1
	cold && rm -rf $TMPDIR0
	cluster_node_exec 7 sh -c 'mount -t tmpfs -o size=256k tmpfs /root/.cache &&
		dd if=/dev/zero of=/root/.cache/fill bs=4k 2>/dev/null; true'
	cd_head mnist -w 'node[6-7]' --mode embedded --epochs 1 --data-dir "$data" \
		--data-md5 "$data/MD5SUMS" --cache-dir "$CD_RUN/head-cache" --json
	local full
	full=$(cluster_node_exec 7 sh -c 'find /root/.cache -mindepth 1 | sort | tr "\n" " "; umount /root/.cache')
	expect_eq "$rc" 0 "exit status ($(jget 'd["failure"]'); $(tail -c 600 <<<"$err"))" || return 1
	expect_eq "$(jget '[n["exit_code"] for n in d["nodes"]]')" "[0, 0]" "exit codes" || return 1
	expect_eq "$(jget 'len(d["epochs"])')" 1 "epochs done" || return 1
	expect_eq "$(jget '[bool(n["param_sha256"]) for n in d["nodes"]]+[d["params_identical"]]')" \
		"[True, True, True]" "every rank's final parameters, identical" || return 1
	expect_eq "$(cluster_node_exec 7 sh -c "cd $TMPDIR0/data/MNIST/raw && ls" | tr '\n' ' ')" \
		"t10k-images-idx3-ubyte t10k-labels-idx1-ubyte train-images-idx3-ubyte train-labels-idx1-ubyte " \
		"files in $TMPDIR0/data/MNIST/raw on node7" || return 1
	# the bootstrap's empty clusterdoc directory, from before it fell back, and nothing else
	expect_eq "$full" "/root/.cache/clusterdoc /root/.cache/fill " "what the full cache holds"
}

t_read_only_cache_falls_back_and_says_so() {
	cold && rm -rf $TMPDIR0
	cluster_node_exec 3 mount -o remount,bind,ro /root/.cache
	cd_head facts -w node3 --ssh openssh --json
	expect_eq "$(ok_count)" 1 "node3 answered: $(head -c 600 <<<"$out")" || return 1
	expect_match "$(jget 'd["nodes"][0]["agent_note"]')" "read-only file system" "note"
}

# An agent left in /tmp/clusterdoc-0 by an earlier run (its cache was full then) is not used
# once ~/.cache can take one again: the agent goes back home, and no note blames the cache.
t_agent_goes_back_home_once_the_cache_can_take_it() {
	cold && rm -rf $TMPDIR0
	mkdir -m 700 $TMPDIR0 && cp "$CLUSTERDOC_AGENT" "$TMPDIR0/agent-$SHA" && chmod 700 "$TMPDIR0/agent-$SHA"
	cd_head facts -w node5 --json
	expect_eq "$(ok_count)" 1 "node5 answered: $(head -c 600 <<<"$out")" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_dir"]')" /root/.cache/clusterdoc "agent_dir" || return 1
	expect_eq "$(jget 'd["nodes"][0]["agent_note"]')" None "note" || return 1
	expect_eq "$(uploads)" 1 "uploads" || return 1
	cd_head facts -w node5 --json
	expect_eq "$(jget 'd["nodes"][0]["agent_dir"]')" /root/.cache/clusterdoc "agent_dir on the warm run" || return 1
	expect_eq "$(uploads)" 0 "uploads on the warm run"
}

# /tmp/clusterdoc-0 as a symlink or someone else's directory is never used.
t_tmp_fallback_that_is_a_symlink_is_not_followed() {
	cold && rm -rf $TMPDIR0
	mkdir -p "$CD_RUN/elsewhere" && ln -s "$CD_RUN/elsewhere" $TMPDIR0
	cd_head facts -w node3 --json
	rm -f $TMPDIR0
	expect_eq "$(ok_count)" 0 "node3 answered" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" "read-only file system.*$TMPDIR0: not a 0700 directory" "error" || return 1
	[ -z "$(ls -A "$CD_RUN/elsewhere")" ] || { echo "    wrote through the symlink"; return 1; }
}

# Node 4: a read-only cache and a read-only /tmp/clusterdoc-0: a plain-words error, nothing left.
t_nothing_writable_is_a_clear_error() {
	cold && rm -rf $TMPDIR0
	mkdir -p "$CD_RUN/rotmp" && chmod 700 "$CD_RUN/rotmp"
	mkdir -p $TMPDIR0 && chmod 700 $TMPDIR0
	cluster_node_exec 4 sh -c "mount -o remount,bind,ro /root/.cache && mount --bind '$CD_RUN/rotmp' $TMPDIR0 &&
		mount -o remount,bind,ro $TMPDIR0"
	cd_head facts -w node4 --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$(jget 'd["nodes"][0]["error"]')" \
		"node4: no directory can take the agent: /root/.cache/clusterdoc: read-only file system; $TMPDIR0: read-only file system" \
		"error" || return 1
	[ -z "$(ls -A "$CD_RUN/rotmp")" ] || { echo "    left: $(ls -A "$CD_RUN/rotmp")"; return 1; }
}

# An agent that dies before its hello even when freshly uploaded: one clear error, no loop.
t_agent_failing_after_a_fresh_upload_is_a_clear_error() {
	printf '#!/bin/sh\nexit 1\n' >"$CD_RUN/dying-agent" && chmod 755 "$CD_RUN/dying-agent"
	cd_head facts -w node8 --agent "$CD_RUN/dying-agent" --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error"]')" \
		"node8: the agent in /root/.cache/clusterdoc ended before its hello, even after a fresh upload" "error"
}

# Agents per architecture: the node's uname -m picks the agent; an unknown one is named.
t_agent_is_chosen_by_uname_m() {
	local d=$CD_RUN/agents asha
	mkdir -p "$d" && cp "$CLUSTERDOC_AGENT" "$d/clusterdoc-agent" || return 1
	printf 'int main(void) { return 3; }\n' >"$d/a.c"
	aarch64-linux-gnu-gcc -static -o "$d/clusterdoc-agent-aarch64" "$d/a.c" 2>/dev/null ||
		{ itest_skip "no aarch64 cross compiler (make deps-cross)"; return; }
	asha=$(sha256sum "$d/clusterdoc-agent-aarch64" | cut -c1-64)
	# uname -m answers aarch64 on node 5 and ppc64le on node 6 (bound over /bin/uname there)
	cp /bin/uname "$CD_RUN/uname.real" || return 1
	fake_uname() { printf '#!/bin/sh\n[ "$1" = -m ] && echo %s && exit 0\nexec %s "$@"\n' "$1" "$CD_RUN/uname.real"; }
	fake_uname aarch64 >"$CD_RUN/uname-a" && fake_uname ppc64le >"$CD_RUN/uname-p" &&
		chmod 755 "$CD_RUN/uname-a" "$CD_RUN/uname-p" || return 1
	cluster_node_exec 5 mount --bind "$CD_RUN/uname-a" /usr/bin/uname || return 1
	cluster_node_exec 6 mount --bind "$CD_RUN/uname-p" /usr/bin/uname || return 1
	cd_head facts -w 'node[5-7]' --agent "$d/clusterdoc-agent" --json
	expect_eq "$(jget '[n["reachable"] for n in d["nodes"]]')" "[False, False, True]" "reachable" || return 1
	[ -f "$SHARED/clusterdoc/agent-$asha" ] || { echo "    the aarch64 agent was not uploaded"; return 1; }
	expect_match "$(jget 'd["nodes"][1]["error"]')" "node6: the node's architecture is ppc64le and there is no agent for it \(agents: x86_64, aarch64\)" "error" || return 1
	expect_eq "$(jget 'd["nodes"][1]["error_code"]')" arch "error_code"
}

for t in cold_shared_cache_ten_runs_every_node_answers cold_shared_cache_openssh_backend \
	table_says_the_cache_is_shared mnist_embedded_on_a_cold_shared_cache_trains \
	zero_filled_agent_is_replaced_by_a_fresh_upload \
	full_cache_falls_back_to_tmp_and_says_so mnist_on_a_node_with_a_full_cache_uses_the_fallback_dir \
	read_only_cache_falls_back_and_says_so agent_goes_back_home_once_the_cache_can_take_it \
	tmp_fallback_that_is_a_symlink_is_not_followed nothing_writable_is_a_clear_error \
	agent_failing_after_a_fresh_upload_is_a_clear_error \
	agent_is_chosen_by_uname_m; do
	run_test "$t"
done
for ((i = 1; i <= N; i++)); do cluster_node_exec $i sh -c "umount $TMPDIR0 2>/dev/null; true"; done
cluster_down
[ "$TMP_WAS_THERE" = 1 ] || rm -rf "$TMPDIR0"
exit $ITEST_STATUS
