#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --python and the search for an interpreter with torch, on a namespace cluster of real sshd
# nodes whose login python3 has no torch: on every node it is a virtualenv made without the
# system site-packages (as a conda base or a bare venv without torch is), first in the PATH of
# the non-interactive login; torch is in ~/.venv, a virtualenv that sees the system
# site-packages and so Debian's python3-torch, where facts must find it and name it.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=python
VENV=/root/.venv/bin/python

t_facts_finds_the_venv_with_torch_and_names_the_python_to_pass() {
	local i
	CD_QUIET=1 cluster_up 2 >/dev/null || return 1
	for i in 1 2; do
		/usr/bin/python3 -m venv --without-pip "$CD_RUN/n$i/home/notorch" || return 1
		/usr/bin/python3 -m venv --without-pip --system-site-packages "$CD_RUN/n$i/home/.venv" || return 1
		cluster_node_env "$i" 'export PATH=/root/notorch/bin:$PATH' || return 1
	done
	cd_head facts -w 'node[1-2]' --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[n["python"]["path"] for n in d["nodes"]]')" \
		"['/root/notorch/bin/python3', '/root/notorch/bin/python3']" "the login python3" || return 1
	expect_eq "$(jget '[n["torch"] for n in d["nodes"]]')" "[None, None]" "torch of the login python3" || return 1
	expect_eq "$(jget '[[c["path"] for c in n["python_candidates"]] for n in d["nodes"]]')" \
		"[['$VENV', '/usr/bin/python3'], ['$VENV', '/usr/bin/python3']]" "what was found (the venv, then Debian's python3 with python3-torch, hidden by the login PATH)" || return 1
	cd_head facts -w 'node[1-2]'
	expect_match "$out" "^node1: /root/notorch/bin/python3 has no torch; torch is in $VENV \(Python [0-9.]+\) and others: pass --python $VENV$" \
		"the table's hint"
}

t_check_names_the_venv_in_torch_missing() {
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000
	expect_eq "$(jget '[f["severity"] for f in d["findings"] if f["id"] == "torch-missing"]')" "['warning']" \
		"torch-missing (missing everywhere)" || return 1
	expect_match "$(jget '[f["evidence"] for f in d["findings"] if f["id"] == "torch-missing"][0][0]')" \
		"^node1: /root/notorch/bin/python3 [0-9.]+ has no torch; torch is in $VENV \(Python [0-9.]+\) and 1 more$" "evidence" || return 1
	expect_match "$(jget '[f["fix"] for f in d["findings"] if f["id"] == "torch-missing"][0]')" \
		"^Pass --python $VENV to clusterdoc facts, check, mnist, run and tui" "fix"
}

t_python_makes_facts_report_torch() {
	cd_head facts -w 'node[1-2]' --python "$VENV" --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[n["python"]["path"] for n in d["nodes"]]')" "['$VENV', '$VENV']" "the interpreter" || return 1
	expect_eq "$(jget '[n["torch"]["version"] for n in d["nodes"]]')" \
		"['$TORCH', '$TORCH']" "torch of --python" || return 1
	expect_eq "$(jget '[n.get("python_candidates") for n in d["nodes"]]')" "[None, None]" "no search with --python"
}

t_python_clears_torch_missing_in_check() {
	cd_head check -w 'node[1-2]' --json --probe-timeout 1000 --python "$VENV"
	expect_eq "$(jget '[f["id"] for f in d["findings"] if f["id"] == "torch-missing"]')" "[]" "torch-missing"
}

t_a_missing_python_is_a_per_node_error() {
	rm -f "$CD_RUN/n2/home/.venv/bin/python"
	cd_head facts -w 'node[1-2]' --python "$VENV" --json
	ln -s python3 "$CD_RUN/n2/home/.venv/bin/python"
	expect_eq "$(jget 'd["nodes"][0]["torch"]["version"]')" "$TORCH" "node1's torch" || return 1
	expect_eq "$(jget 'd["nodes"][1]["errors"]["python"]')" "cannot run $VENV: No such file or directory" "node2's error"
}

# A torch import slower than the request's deadline goes on in the background on the node (as
# a cold import from NFS does) and warms its cache: the command does not wait for it (sshd
# would, if the import held the channel), and the next facts are cached. /root/slowpy is a fake
# interpreter whose import takes 7 s; -t 4 gives the python probe 2.7 s.
t_slow_torch_import_goes_on_and_the_next_facts_are_warm() {
	local i n
	for i in 1 2; do
		mkdir -p "$CD_RUN/n$i/home/slowtorch/torch" || return 1
		: >"$CD_RUN/n$i/home/slowtorch/torch/__init__.py"
		cat >"$CD_RUN/n$i/home/slowpy" <<-'EOS'
			#!/bin/sh
			case "$2" in
			*'import torch'*)
				sleep 7
				echo '{"version": "9.9.9", "cuda_available": false, "cuda_version": null, "nccl_version": null, "import_ms": 7000}' ;;
			*)
				echo '{"executable": "/root/slowpy", "version": "3.11.2", "executable_mtime_ns": 1, "torch_origin": "/root/slowtorch/torch/__init__.py", "torch_mtime_ns": 2, "paths": ["/root/slowtorch"]}' ;;
			esac
		EOS
		chmod 755 "$CD_RUN/n$i/home/slowpy" || return 1
	done
	cd_head facts -w 'node[1-2]' --python /root/slowpy -t 4 --json
	expect_eq "$(jget '[n["torch"] for n in d["nodes"]]')" "[None, None]" "torch while the import runs" || return 1
	for i in 0 1; do
		expect_match "$(jget "d['nodes'][$i]['errors']['torch']")" \
			"^importing torch took longer than [0-9.]+ s; the import goes on in the background \(pid [0-9]+\) and its facts are cached when it ends$" \
			"node$((i + 1))'s torch error" || return 1
	done
	((elapsed_ms < 7000)) || { echo "    facts took $elapsed_ms ms: it waited for the import"; return 1; }
	# the finisher holds the lock until it has stored the cache and exited
	for i in 1 2; do
		for ((n = 0; n < 150; n++)); do
			compgen -G "$CD_RUN/n$i/home/.cache/clusterdoc/python-facts-*.json" >/dev/null &&
				flock -n "$(compgen -G "$CD_RUN/n$i/home/.cache/clusterdoc/python-facts-*.json.lock")" true &&
				break
			sleep 0.1
		done
	done
	cd_head facts -w 'node[1-2]' --python /root/slowpy -t 4 --json
	expect_eq "$(jget '[(n["torch"]["version"], n["torch"]["cached"]) for n in d["nodes"]]')" \
		"[('9.9.9', True), ('9.9.9', True)]" "the next facts, from the cache the import stored"
}

t_mnist_torch_mode_names_the_python_then_trains_with_it() {
	local data
	data=$(mktemp -d -p "$CD_HOME")
	/usr/bin/python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$data" 600 100 >/dev/null || return 1
	cd_head mnist -w 'node[1-2]' --mode torch --data-dir "$data" --data-md5 "$data/MD5SUMS" --json
	expect_eq "$rc" 2 "exit status without --python" || return 1
	expect_match "$(jget 'd["failure"]')" "pass --python $VENV" "failure names the python" || return 1
	cd_head mnist -w 'node[1-2]' --mode torch --backend gloo --epochs 1 --data-dir "$data" --data-md5 "$data/MD5SUMS" --python "$VENV" --json
	expect_eq "$rc" 0 "exit status with --python ($(jget 'd.get("failure")'))" || return 1
	expect_eq "$(jget 'd["mode"], len(d["epochs"]), d["nodes"][0]["torch_version"]')" "('torch', 1, '$TORCH')" \
		"mode, epochs and the torch of --python"
}

itest_need_root
if ! TORCH=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null); then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1; then
	result SKIP "$ITEST_FILE (python3's venv module is missing)"
	exit 0
fi
itest_run_all
