#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every tests/integration/test_*.sh. Each file brings up its own namespace test cluster
# (a random prefix, its own /24, its own $CD_RUN) and tears it down, so files run
# CD_TEST_JOBS at a time (default: twice the CPUs + 1, at most 8: most of a file's time is
# spent waiting on deadlines, handshakes and Python starting, not on a CPU; 7 at once on 2 CPUs
# was no faster: every file's time grew by half). Files that measure time or load say so in
# their header and run after the others:
#     # itest: quiet (REASON)   two at a time, each beside at most one other quiet file
#                               (files that use little CPU and judge time loosely)
#     # itest: alone (REASON)   then one by one, with nothing beside them
# Each file's output is printed whole when it ends, with its duration. Needs root for network
# namespaces; without root the integration tests are recorded as skipped.
#   CD_TEST_JOBS=1     one file at a time (the result is the same)
#   CD_TORCH_COLD=1    do not warm the nodes' torch facts (see below)
source "$(dirname "$0")/lib.sh"
echo "== integration tests"
status=0
# The GPU run (tests/gpu/run.sh) needs no root and no cluster: on a machine
# without a GPU it records a SKIP, which proves that it still starts cleanly.
bash "$CD_TOP/tests/gpu/run.sh" || status=1
if [ "$(id -u)" -ne 0 ]; then
	result SKIP "integration" "needs root for network namespaces"
	exit $status
fi

work=$(mktemp -d /tmp/cd-itest.XXXXXX)
trap 'rm -rf "$work"' EXIT
# the JSON documents every file prints, validated once at the end (tests/integration/itest.sh)
export CD_JSON_SPOOL=$work/json
mkdir -p "$CD_JSON_SPOOL"

# The torch facts, warmed once for the whole run: every node of every test cluster runs this
# host's /usr/bin/python3 and torch, so one answer (probes/facts_python.c's cache file, whose key
# names no host) serves them all. cluster_up copies it into each new node's cache unless the
# test asks for a cold import (CD_TORCH_COLD=1 before cluster_up).
if [[ ${CD_TORCH_COLD:-0} != 1 ]]; then
	mkdir -p "$work/torch-home"
	printf '%s\n' '{"id":0,"type":"hello","protocol":1}' \
		'{"id":1,"type":"facts","python_timeout_ms":120000}' |
		env -i HOME="$work/torch-home" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			"${CLUSTERDOC_AGENT:-$CD_TOP/clusterdoc-agent}" --stdio >/dev/null 2>&1
	seed=$(echo "$work"/torch-home/.cache/clusterdoc/python-facts-*.json)
	[[ -f $seed ]] && export CD_TORCH_FACTS_SEED=$seed
fi

# Files: the ones that must run alone last; the others longest first (by the last run's
# durations in build/integration-file-times.txt, else by the durations of a full run kept in
# tests/integration/file-times.txt, for a fresh checkout such as CI's, else by their number of
# tests), so that no long file starts last and runs on alone.
FILE_TIMES=$CD_TOP/build/integration-file-times.txt
ORDER_TIMES=$FILE_TIMES
[[ -s $ORDER_TIMES ]] || ORDER_TIMES=$CD_TOP/tests/integration/file-times.txt
pool=() quiet=() alone=()
for t in "$CD_TOP"/tests/integration/test_*.sh; do
	if grep -q '^# itest: alone' "$t"; then
		alone+=("$t")
	elif grep -q '^# itest: quiet' "$t"; then
		quiet+=("$t")
	else
		pool+=("$t")
	fi
done
weight() { # weight FILE: the last duration in ms, else 1000 x its number of tests
	local w
	w=$(awk -v f="${1##*/}" '$2 == f { w = $1 } END { print w }' "$ORDER_TIMES" 2>/dev/null)
	echo "${w:-$(($(grep -c '^t_[a-z0-9_]*()' "$1") * 1000))}"
}
longest_first() { for t in "$@"; do echo "$(weight "$t") $t"; done | sort -rn | cut -d' ' -f2-; }
mapfile -t pool < <(longest_first "${pool[@]}")
mapfile -t quiet < <(longest_first "${quiet[@]}")

# Where the cgroup v1 cpuacct controller is writable, each file runs in a group of its own
# and its line says the CPU time it and everything it started used (sshd nodes, agents,
# Python ranks): with more files than CPUs at once, that is what a file costs the others.
CPUACCT=/sys/fs/cgroup/cpuacct
[[ -w $CPUACCT ]] || CPUACCT=

# run_file FILE: run one test file, its output into its log; print the log whole when done
run_file() {
	local t=$1 name=${1##*/} t0 rc ms cg= cpu=
	if [[ $CPUACCT ]] && mkdir "$CPUACCT/cd-itest-$$-$name" 2>/dev/null; then
		cg=$CPUACCT/cd-itest-$$-$name
	fi
	t0=$(cd_now_ms)
	(
		[[ $cg ]] && echo "$BASHPID" >"$cg/tasks"
		exec bash "$t"
	) >"$work/$name.log" 2>&1
	rc=$?
	ms=$(($(cd_now_ms) - t0))
	if [[ $cg ]]; then
		cpu=$(<"$cg/cpuacct.usage")
		cpu=", cpu $(cd_secs $((cpu / 1000000))) s"
		rmdir "$cg" 2>/dev/null || cpu+=" (processes left behind: $(tr '\n' ' ' <"$cg/tasks"))"
	fi
	echo "$ms $name" >>"$work/file-times"
	((rc == 0)) || echo "$name" >>"$work/failed"
	{
		flock 9
		echo "-- $name ($(cd_secs "$ms") s$cpu)"
		cat "$work/$name.log"
	} 9>"$work/print.lock"
}

# run_files JOBS FILE...: the files, JOBS at a time, each started as soon as one ends. The
# running files are counted, not the returns of `wait -n`: after an earlier call's `wait`, bash's
# first `wait -n` can return at once, and the files that must run alone ran two at a time.
run_files() {
	local jobs=$1 t
	shift
	for t in "$@"; do
		while (($(jobs -pr | wc -l) >= jobs)); do wait -n; done
		run_file "$t" &
	done
	wait
}

jobs=${CD_TEST_JOBS:-$((2 * $(nproc) + 1))}
((jobs > 8 && ${CD_TEST_JOBS:-0} == 0)) && jobs=8
((jobs >= 1)) || jobs=1
run_files "$jobs" "${pool[@]}"
run_files $((jobs < 2 ? jobs : 2)) "${quiet[@]}"
run_files 1 "${alone[@]}"

# every file's JSON documents against docs/schema/, one Python start for them all
if compgen -G "$CD_JSON_SPOOL/*.json" >/dev/null; then
	t0=$(cd_now_ms)
	if "$CD_PY" -c 'import jsonschema' 2>/dev/null; then
		if log=$("$CD_PY" "$CD_TOP/tests/schema_check.py" "$CD_TOP/docs/schema" "$CD_JSON_SPOOL" 2>&1); then
			result_took $(($(cd_now_ms) - t0)) PASS "integration/json_output_matches_its_schema"
		else
			result_took $(($(cd_now_ms) - t0)) FAIL "integration/json_output_matches_its_schema"
			tail -40 <<<"$log"
			status=1
		fi
	else
		result SKIP "integration/json_output_matches_its_schema" "python3-jsonschema is not installed (make deps-test)"
	fi
fi
[[ -s $work/failed ]] && status=1
# keep the durations for the next run's order
[[ -s $work/file-times ]] && sort -rn "$work/file-times" >"$FILE_TIMES"
exit $status
