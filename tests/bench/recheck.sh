#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# recheck.sh - how long a re-check over connected agents takes (`clusterdoc check --watch`,
# the TUI's r), side by side with a fresh `clusterdoc check` of the same nodes, on a namespace
# cluster (tests/cluster/cluster.sh: one network namespace and one real sshd per node).
#
#   tests/bench/recheck.sh [N ...]          default: 128
#
# For each N, after one warm-up check (the agents uploaded, their caches warm):
#   fresh     clusterdoc check -w node[1-N] --json: wall time, the median of RUNS (default 3)
#   first     round 1 of clusterdoc check --watch 0.1 --count RUNS+1 --json: it connects
#   recheck   rounds 2.. of the same watch (their elapsed_ms, the head's own clock from the
#             round's start to its diagnosis): the median, and the slowest
#   probe     of that median round, its probe phase (facts and netprobe on every node); the
#             rest is the reach matrix (listen, connect, confirm)
#   syn       SYNs to port 22 on every node during rounds 2.. (an nft counter): must be 0
# SEED_TORCH (default 1): node1 imports torch once and every node gets its cached facts
# (cluster_seed_torch_cache), so the warm-up does not wait for N cold imports on this machine.
# CHECK_ARGS (default none) go to every check, e.g. CHECK_ARGS="--python /nonexistent" to see
# what the rounds cost without the agents' Python start for the torch facts' cache key.
# The goal (issue 25): a re-check of 128 connected nodes <= 1000 ms. Needs root; all traffic
# stays inside the cluster's namespaces. The machine's load is printed with the figures.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}
RUNS=${RUNS:-3}
read -r -a XARGS <<<"${CHECK_ARGS:-}"
GOAL_MS=1000

[ "$(id -u)" -eq 0 ] || { echo "recheck: needs root" >&2; exit 2; }

head_run() { cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@"; }

# ms CMD...: wall time of one run in ms (output discarded)
ms() {
	local t0 t1
	t0=$(date +%s%N)
	head_run "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

printf '%-5s %9s %9s %11s %9s %11s %8s %6s %6s %s\n' N fresh_ms first_ms recheck_ms probe_ms \
	slowest_ms ratio syn goal load
for n in "${@:-128}"; do
	CD_QUIET=1 cluster_up "$n" >/dev/null || exit 1
	if [ "${SEED_TORCH:-1}" = 1 ]; then # node1 imports torch once; every node gets its cache
		head_run facts -w node1 >/dev/null 2>&1
		cluster_wait_torch_imports >/dev/null
		cluster_seed_torch_cache || exit 1
	fi
	head_run check -w "node[1-$n]" --json "${XARGS[@]}" >/dev/null 2>&1 # warm-up
	# cold torch imports past the warm-up's deadline go on, and warm the nodes' caches
	waited=$(cluster_wait_torch_imports) || echo "recheck: torch imports still running after ${waited} s" >&2
	head_run check -w "node[1-$n]" --json "${XARGS[@]}" >/dev/null 2>&1 # warm
	v=()
	for ((i = 0; i < RUNS; i++)); do v+=("$(ms check -w "node[1-$n]" --json "${XARGS[@]}")"); done
	fresh=$(printf '%s\n' "${v[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p")
	cluster_ssh_syns_start || exit 1
	out=$(head_run check -w "node[1-$n]" --watch 0.1 --count $((RUNS + 1)) --json "${XARGS[@]}" \
		2>/dev/null)
	syn=$(($(cluster_ssh_syns) - n)) # round 1 logs in to each node once
	read -r first re probe slow kept <<<"$(python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin if l.strip()]
r = [x for x in r if x["event"] == "round"]
re = sorted(r[1:], key=lambda x: x["elapsed_ms"])
mid = re[(len(re) - 1) // 2]
print(r[0]["elapsed_ms"], mid["elapsed_ms"], mid["phases_ms"]["probe"], re[-1]["elapsed_ms"],
      min(x["kept"] for x in r[1:]))
' <<<"$out")"
	[[ $kept == "$n" ]] || echo "recheck: only $kept of $n nodes stayed connected" >&2
	printf '%-5s %9s %9s %11s %9s %11s %8s %6s %6s %s\n' "$n" "$fresh" "$first" "$re" "$probe" "$slow" \
		"$(python3 -c "print(f'{$re / $fresh:.3f}')")" "$syn" \
		"$( ((re <= GOAL_MS)) && echo met || echo missed)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	cluster_down
done
