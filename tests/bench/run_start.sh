#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_start.sh [RUNS] [N] - what `clusterdoc run` adds to starting a torchrun job, for
# docs/performance.md: on one namespace test cluster of N nodes (default 4), RUNS rounds
# (default 5), each round timing, one after the other on the same warm nodes:
#   direct     the node command lines of `clusterdoc run --dry-run --no-hang-ready` (torchrun,
#              with the proved environment) started at once on every node with nsenter: no SSH,
#              no clusterdoc, no hang-ready;
#   run        `clusterdoc run --no-check -- allreduce.py`: hang-ready's file put, the job;
#   run-nohr   the same with --no-hang-ready: nothing to put.
# Prints one CSV line per timed run (what,round,wall_ms,plan_ms,put_ms,start_ms,outside_job_ms:
# the wall time less --json's timing_ms.job, i.e. what clusterdoc spends before the job starts
# and after its last rank is seen to end: head start-up, connect, probe, put, orphan check) and
# a median table. The job is tests/fixtures/run/allreduce.py (one rank per node, one Gloo allreduce).
# Needs root and Debian's python3-torch on the host; all traffic stays inside the namespaces.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}
RUNS=${1:-5}
N=${2:-4}
[ "$(id -u)" -eq 0 ] || { echo "run_start: needs root" >&2; exit 2; }

JOBS=$(mktemp -d /tmp/cdrun-bench.XXXXXX)
chmod 755 "$JOBS"
cp "$top/tests/fixtures/run/allreduce.py" "$JOBS/"
CD_QUIET=1 cluster_up "$N" >/dev/null || exit 1
trap 'cluster_down; rm -rf "$JOBS"' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
cdrun() { cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run "$@"; }
W="node[1-$N]"

# warm-up: the agents uploaded, the check saved, torch's files in the page cache
cdrun -w "$W" --chdir "$JOBS" --quiet -- allreduce.py >/dev/null 2>&1 ||
	{ echo "run_start: the warm-up run failed" >&2; exit 1; }

# each node's command line as clusterdoc would run it: from "cd ... && env \" to "# by hand on"
plan=$(cdrun -w "$W" --no-check --no-hang-ready --chdir "$JOBS" --dry-run -- allreduce.py 2>/dev/null)
for ((i = 1; i <= N; i++)); do
	awk -v n="# node$i:" 'index($0, n) == 1 { on = 1; next }
		on && /^cd / { take = 1 }
		take && /^# by hand on / { exit }
		take { print }' <<<"$plan" >"$JOBS/node$i.sh"
	[[ -s $JOBS/node$i.sh ]] || { echo "run_start: no command line for node$i" >&2; exit 1; }
done

direct() {
	local i pids=() rc=0
	for ((i = 1; i <= N; i++)); do
		cluster_node_exec "$i" bash "$JOBS/node$i.sh" >"$JOBS/direct$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}

timed_run() { # WHAT ARGS...
	local what=$1 t0 t1 out
	shift
	t0=$(now_ms)
	out=$(cdrun -w "$W" --no-check --chdir "$JOBS" --quiet --json "$@" -- allreduce.py 2>/dev/null)
	t1=$(now_ms)
	python3 -c '
import json, sys
d = json.loads(sys.argv[1]); t = d["timing_ms"]
if d.get("failed"): sys.exit("run_start: %s failed: %s" % (sys.argv[2], d.get("failure")))
print("%s,%s,%s,%d,%d,%d,%d" % (sys.argv[2], sys.argv[3], sys.argv[4], t["plan"], t.get("put", 0),
                               t["start"], int(sys.argv[4]) - t["job"]))
' "$out" "$what" "$round" "$((t1 - t0))"
}

results=$JOBS/results.csv
echo "what,round,wall_ms,plan_ms,put_ms,start_ms,outside_job_ms" | tee "$results"
for ((round = 1; round <= RUNS; round++)); do
	t0=$(now_ms)
	direct || {
		echo "run_start: the direct start failed:" >&2
		tail -n 5 "$JOBS"/node1.sh "$JOBS"/direct*.log >&2
		exit 1
	}
	echo "direct,$round,$(($(now_ms) - t0)),,,," | tee -a "$results"
	timed_run run | tee -a "$results"
	timed_run run-nohr --no-hang-ready | tee -a "$results"
done
python3 - "$results" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(what, col):
    v = [int(r[col]) for r in rows if r["what"] == what and r[col]]
    return (statistics.median(v), " ".join(map(str, v))) if v else (0, "")
print("\n| what | median wall (ms) | runs (ms) | plan | put | start | outside the job |")
print("|---|---:|---|---:|---:|---:|---:|")
base = med("direct", "wall_ms")[0]
for what in ("direct", "run", "run-nohr"):
    m, runs = med(what, "wall_ms")
    extra = [med(what, c)[0] for c in ("plan_ms", "put_ms", "start_ms", "outside_job_ms")]
    print("| %s | %d | %s | %s |" % (what, m, runs, " | ".join("%d" % x if what != "direct" else "-" for x in extra)))
for what in ("run", "run-nohr"):
    print("%s - direct: %+d ms (median against median)" % (what, med(what, "wall_ms")[0] - base))
EOF
