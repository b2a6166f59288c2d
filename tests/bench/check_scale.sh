#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_scale.sh - how long `clusterdoc check` takes next to `clusterdoc facts` on the same
# namespace cluster (tests/cluster/cluster.sh: one network namespace and one real sshd per
# node, all on one bridge), and how many TCP attempts the matrix makes.
#
#   tests/bench/check_scale.sh [N ...]          default: 16
#
# For each N, on a clean cluster and then with node 2 dropping its ephemeral ports (so that
# some attempts must wait for the whole connect deadline):
#   facts   clusterdoc facts -w node[1-N]
#   check   clusterdoc check -w node[1-N] --json (default --probe-timeout 3000)
# RUNS (default 3) timed runs each after one warm-up; the median is printed. The budget from
# the issue: check <= 2 x facts + one connect deadline; issue 25's goal, check <= 2 x facts, is
# the check/facts column (above 64 nodes the matrix is sampled: --full-matrix-max). facts_MiB
# and check_MiB are the head's peak RSS in one more run of each (GNU time's maximum resident
# set size; the check run is the one that counts the attempts); issue 25's goal is < 64 MiB at
# 512 nodes. WARMUP (default 1) warm-up runs come before the timed ones. N is 1..1000 (above 240 nodes the
# cluster has a /22). VARIANTS (default "clean ephemeral-dropped") picks the cluster variants.
# Needs root; all traffic stays inside the cluster's namespaces.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}
RUNS=${RUNS:-3}
VARIANTS=${VARIANTS:-clean ephemeral-dropped}
# SEED_TORCH (default 1): node1 imports torch once and every node gets its cached facts
# (cluster_seed_torch_cache); 0: every node imports torch cold in the first run
DEADLINE_MS=3000

[ "$(id -u)" -eq 0 ] || { echo "check_scale: needs root" >&2; exit 2; }

# ms CMD...: wall time of one run in ms (output discarded)
ms() {
	local t0 t1
	t0=$(date +%s%N)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# median CMD...: WARMUP (default 1) warm-up runs, then the median of RUNS runs
median() {
	local i v=()
	for ((i = 0; i < ${WARMUP:-1}; i++)); do ms "$@" >/dev/null; done
	# cold torch imports past the warm-up's deadline go on and warm the caches: wait for them
	cluster_wait_torch_imports >/dev/null || echo "check_scale: torch imports still running" >&2
	for ((i = 0; i < RUNS; i++)); do v+=("$(ms "$@")"); done
	printf '%s\n' "${v[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p"
}

# attempts N: "ATTEMPTS FAILED KIB" of one more check run: the matrix's attempts, those that
# failed, and the head's peak RSS (GNU time's maximum resident set size)
attempts() {
	local t
	t=$(mktemp /tmp/check_scale.XXXXXX)
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" /usr/bin/time -f '%M' -o "$t" \
		"$CLUSTERDOC" check -w "node[1-$1]" --json 2>/dev/null |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["matrix"]), sum(m["result"] != "ok" for m in d["matrix"]))' |
		tr '\n' ' '
	tail -1 "$t"
	rm -f "$t"
}

# rss_kib ARGS...: peak RSS of the head for one run
rss_kib() {
	cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" /usr/bin/time -f '%M' "$CLUSTERDOC" "$@" 2>&1 >/dev/null | tail -1
}

for n in "${@:-16}"; do
	[ "$n" -ge 1 ] && [ "$n" -le 1000 ] || { echo "check_scale: N=$n: the test cluster holds 1..1000 nodes" >&2; exit 2; }
done
printf '%-5s %-22s %9s %9s %11s %9s %12s %10s %9s %9s\n' N cluster facts_ms check_ms check/facts budget_ms attempts failed facts_MiB check_MiB
for n in "${@:-16}"; do
	CD_QUIET=1 cluster_up "$n" >/dev/null || exit 1
	if [ "${SEED_TORCH:-1}" = 1 ]; then
		# one cold torch import (node1), then every node warm from it: n cold imports at
		# once would take minutes of this machine's CPUs before the first timed run
		ms facts -w node1 >/dev/null
		cluster_wait_torch_imports >/dev/null
		cluster_seed_torch_cache || exit 1
	fi
	for variant in $VARIANTS; do
		if [ "$variant" = ephemeral-dropped ]; then
			cluster_trap_firewall_port 2 30000-65535 || exit 1
		fi
		f=$(median facts -w "node[1-$n]")
		c=$(median check -w "node[1-$n]" --json)
		read -r a bad kb <<<"$(attempts "$n")"
		fkb=$(rss_kib facts -w "node[1-$n]")
		printf '%-5s %-22s %9s %9s %11s %9s %12s %10s %9s %9s\n' "$n" "$variant" "$f" "$c" \
			"$(awk -v c="$c" -v f="$f" 'BEGIN { printf "%.2f", (f > 0 ? c / f : 0) }')" \
			$((2 * f + DEADLINE_MS)) "$a" "$bad" "$(awk -v k="$fkb" 'BEGIN { printf "%.1f", k / 1024 }')" \
			"$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')"
	done
	cluster_down
done
