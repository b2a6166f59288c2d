# SPDX-License-Identifier: MIT
# itest.sh - helpers for integration tests. Source it after tests/lib.sh.
#   CLUSTERDOC / CLUSTERDOC_AGENT: the binaries under test (set by make).
#   run_test NAME: runs the function t_NAME, records PASS/FAIL (SKIP when it returns 77:
#   itest_skip) and how long it took; itest_run_all runs them all.
#   Assertions print what differed and return 1.
source "$CD_TOP/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$CD_TOP/clusterdoc}
CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$CD_TOP/clusterdoc-agent}
export CLUSTERDOC_AGENT

# cd_head ARGS...: run clusterdoc in the head namespace; sets $out, $err, $rc, $elapsed_ms
cd_head() {
	local t0 t1 ef
	ef=$(mktemp)
	t0=$(date +%s%N)
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" 2>"$ef")
	rc=$?
	t1=$(date +%s%N)
	err=$(cat "$ef")
	rm -f "$ef"
	elapsed_ms=$(((t1 - t0) / 1000000))
	itest_json_keep "$@"
}

# Every JSON document a command prints through cd_head is kept and validated against its
# schema in docs/schema/ (tests/schema_check.py), with one Python start for many documents:
# tests/run-integration.sh sets CD_JSON_SPOOL and validates once after every file; a file run
# by itself keeps its own and validates them when it takes its cluster down (below).
ITEST_JSON_OWN=
if [[ -z ${CD_JSON_SPOOL:-} ]]; then
	CD_JSON_SPOOL=/tmp/cd-json.$$ # made by the first document kept, removed by cluster_down
	ITEST_JSON_OWN=1
fi
ITEST_JSON_N=0
# itest_json_keep ARGS...: keep $out when ARGS asked a command for --json (the kind is the
# command's name; check --watch prints one document a line)
itest_json_keep() {
	local a kind= json= watch= where=${ITEST_FILE:-${0##*/}}
	[[ $out == '{'* ]] || return 0
	for a in "$@"; do
		case $a in
		--json) json=1 ;;
		--watch) watch=1 ;;
		facts | check | env | bench | gpu-burn | run | mnist | fix | hang | mpi-check | config) [[ $kind ]] || kind=$a ;;
		esac
	done
	[[ $json && $kind ]] || return 0
	[[ $kind == check && $watch ]] && kind=check-watch-lines
	for a in "${FUNCNAME[@]}"; do [[ $a == t_* ]] && where+=:${a#t_} && break; done
	ITEST_JSON_N=$((ITEST_JSON_N + 1))
	mkdir -p "$CD_JSON_SPOOL"
	printf '%s\n' "$out" >"$CD_JSON_SPOOL/$kind.${where//./_}.$BASHPID-$ITEST_JSON_N.json"
}

# itest_json_check: validate what CD_JSON_SPOOL holds (python3-jsonschema, make deps-test)
itest_json_check() {
	"$CD_PY" -c 'import jsonschema' 2>/dev/null ||
		itest_skip "python3-jsonschema is not installed (make deps-test)" || return
	"$CD_PY" "$CD_TOP/tests/schema_check.py" "$CD_TOP/docs/schema" "$CD_JSON_SPOOL"
}
t_json_output_matches_its_schema() { itest_json_check; }
# A file run by itself validates what it kept each time it takes its cluster down (every file
# ends so, whether by itest_run_all or by its own loop), then starts afresh.
if [[ $ITEST_JSON_OWN ]]; then
	eval "itest_cluster_down_only() $(declare -f cluster_down | tail -n +2)"
	cluster_down() {
		if compgen -G "$CD_JSON_SPOOL/*.json" >/dev/null; then
			run_test json_output_matches_its_schema
			rm -rf "$CD_JSON_SPOOL"
		fi
		itest_cluster_down_only "$@"
	}
fi

# jq-like queries without jq: Python ($CD_PY) reads $out
# (when $out is not JSON, the command's stderr is shown: what it said instead)
jget() {
	"$CD_PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {"d": d}))' "$out" "$1" && return 0
	"$CD_PY" -c 'import json,sys; json.loads(sys.argv[1])' "$out" 2>/dev/null ||
		echo "    stdout is not JSON (exit status ${rc:-?}); stderr: $(tail -c 600 <<<"${err:-}")" >&2
	return 1
}

expect_eq() { # actual expected what
	[ "$1" = "$2" ] && return 0
	echo "    expected $3 = '$2', got '$1'"
	return 1
}
expect_match() { # text regex what
	grep -Eq -- "$2" <<<"$1" && return 0
	echo "    expected $3 to match /$2/, got: $(head -c 400 <<<"$1")"
	return 1
}

# itest_skip REASON: from a test, `itest_skip "..."; return`: the test is
# recorded as skipped with REASON (what it lacks, and how to get it).
itest_skip() {
	echo "$*"
	return 77
}

# (its status is not in a variable a test may set: tests set rc, out and err of their callers)
run_test() {
	local name=$1 log t0 _run_test_status=0
	log=$(mktemp)
	t0=$(cd_now_ms)
	"t_$name" >"$log" 2>&1 || _run_test_status=$?
	if ((_run_test_status == 0)); then
		result_took $(($(cd_now_ms) - t0)) PASS "$ITEST_FILE/$name"
	elif ((_run_test_status == 77)); then
		result_took $(($(cd_now_ms) - t0)) SKIP "$ITEST_FILE/$name" "$(tail -1 "$log")"
	else
		result_took $(($(cd_now_ms) - t0)) FAIL "$ITEST_FILE/$name"
		sed 's/^/    /' "$log" | tail -25
		ITEST_STATUS=1
	fi
	rm -f "$log"
}
ITEST_STATUS=0

# itest_run_procs: how many processes of a clusterdoc run (CLUSTERDOC_RUN in their environment)
# are alive on the cluster's nodes
itest_run_procs() {
	local i pid n=0
	for ((i = 1; i <= CD_N; i++)); do
		for pid in $(ip netns pids "$(cluster_node_ns "$i")" 2>/dev/null); do
			tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^CLUSTERDOC_RUN=' && n=$((n + 1))
		done
	done
	echo "$n"
}

# itest_expect_no_run_left [TENTHS]: none of them within TENTHS x 0.1 s (default 50), or say how many
itest_expect_no_run_left() {
	local i
	for ((i = 0; i < ${1:-50}; i++)); do
		[[ $(itest_run_procs) == 0 ]] && return 0
		sleep 0.1
	done
	echo "    $(itest_run_procs) process(es) of a run left on the nodes"
	return 1
}

# A run in the background (the file's own start_run sets bg, bgout and bgerr):
# finish_run waits for it and sets rc, out and err; wait_for_line RE waits (up to 30 s) until a
# line of its stderr matches RE.
finish_run() {
	wait "$bg"
	rc=$?
	out=$(cat "$bgout")
	err=$(cat "$bgerr")
	rm -f "$bgout" "$bgerr"
}

wait_for_line() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -Eq -- "$1" "$bgerr" && return 0
		sleep 0.1
	done
	echo "    no line /$1/ in: $(head -c 600 "$bgerr")"
	return 1
}

# itest_need_root: a test file that builds namespaces records a SKIP and ends without root.
itest_need_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	result SKIP "$ITEST_FILE (needs root for network namespaces)"
	exit 0
}

# itest_run_all: run every t_NAME of the calling file in file order (a test may reuse the
# cluster an earlier one brought up; ONLY=REGEX runs the matching ones), then take the
# cluster down and exit with the file's status.
itest_run_all() {
	local t
	for t in $(grep -oE '^t_[a-z0-9_]+' "$0" | sed 's/^t_//'); do
		[[ -z ${ONLY:-} || $t =~ $ONLY ]] && run_test "$t"
	done
	cluster_down
	exit "$ITEST_STATUS"
}

# itest_fix_snapshot: every file and ruleset a fix may touch, on every node (counters left out)
itest_fix_snapshot() {
	local i f
	for ((i = 1; i <= CD_N; i++)); do
		for f in "$CD_RUN/n$i/bashrc" "$CD_RUN/n$i/home/.config/clusterdoc/env.sh" \
			"$CD_RUN/n$i/home/.nccl.conf" "/etc/netns/$(cluster_node_ns "$i")/hosts"; do
			if [[ -e $f ]]; then printf 'node%s %s %s\n' "$i" "${f##*/}" "$(sha256sum <"$f" | cut -c1-16)"; else printf 'node%s %s absent\n' "$i" "${f##*/}"; fi
		done
		printf 'node%s nft %s\n' "$i" "$(cluster_node_exec "$i" nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/' | sha256sum | cut -c1-16)"
	done
}
