#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# agents_2000.sh - one head, N agents that connect back to it (`--launcher local-connect`:
# plain local processes, no SSH, no namespaces; docs/scale.md). For `facts` and a sampled
# `check` (above --full-matrix-max 64 nodes check tests a sample of the pairs), the head
# process's own CPU (utime + stime from /proc/PID/stat, its children not counted) and
# peak RSS (VmHWM), sampled every 20 ms until it exits, then per node.
#
#   tests/bench/agents_2000.sh [N ...]        default: 100 2000
#
# The agents run on this machine, so their own work is kept small: no python3 on their
# PATH (a directory of links to everything else in the usual bin directories) and an
# empty HOME, so the Python/torch probe finds only the system python and runs no pyenv
# shims. The head's work per node is what is measured: connection, handshake, hello,
# one request and its reply (facts), or the check's probes and matrix rounds.
# All traffic is on 127.0.0.1. Kills only the heads it started (by PID); their agents
# end when the head closes their sockets.
#
# env: OUT=DIR (default a new /tmp/agents_2000.XXXXXX)  TIMEOUT=S (-t, --connect-timeout and
#      --auth-timeout: a loaded machine starts 2,000 processes slowly; default 300)
# Prints a table (and OUT/agents.md); the same-run ratios are 2000-vs-100 per node.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTERDOC=${CLUSTERDOC:-$TOP/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$TOP/clusterdoc-agent}
OUT=${OUT:-$(mktemp -d /tmp/agents_2000.XXXXXX)}
TIMEOUT=${TIMEOUT:-300}
Ns=("$@")
[[ ${#Ns[@]} -eq 0 ]] && Ns=(100 2000)
mkdir -p "$OUT/bin" "$OUT/home"
TCK=$(getconf CLK_TCK)

# PATH without python: links to every other program of the usual directories
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	for f in "$d"/*; do
		b=${f##*/}
		case $b in python* | pip* | pydoc*) continue ;; esac
		[[ -e $OUT/bin/$b ]] || ln -s "$f" "$OUT/bin/$b"
	done
done

# measure NAME N ARGS...: run the head in the background, sample it until it exits
measure() {
	local name=$1 n=$2 pid t0 t1 cpu=0 hwm=0 s v rc
	shift 2
	t0=$(date +%s%N)
	env -u CONDA_PREFIX -u VIRTUAL_ENV HOME="$OUT/home" PATH="$OUT/bin" \
		"$CLUSTERDOC" "$@" -w "n[1-$n]" --launcher local-connect -t "$TIMEOUT" \
		--connect-timeout "$TIMEOUT" --auth-timeout "$TIMEOUT" --json \
		>"$OUT/$name-$n.json" 2>"$OUT/$name-$n.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		s=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) && cpu=$(( ${s% *} + ${s#* } ))
		v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [[ -n $v ]] && hwm=$v
		sleep 0.02
	done
	rc=0
	wait "$pid" || rc=$?
	t1=$(date +%s%N)
	local ok
	ok=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for x in d["nodes"] if x.get("reachable", x.get("checked"))))' \
		"$OUT/$name-$n.json" 2>/dev/null || echo "?")
	printf '%s %s %s %s %s %s %s\n' "$name" "$n" "$(((t1 - t0) / 1000000))" \
		"$((cpu * 1000 / TCK))" "$hwm" "$rc" "$ok" >>"$OUT/raw.txt"
}

: >"$OUT/raw.txt"
{
	echo "# agents_2000.sh $(date -u +%FT%TZ)"
	echo "uptime: $(uptime)"
	echo "nofile: soft $(ulimit -Sn) hard $(ulimit -Hn); somaxconn $(cat /proc/sys/net/core/somaxconn)"
} >"$OUT/env.txt"
cat "$OUT/env.txt" >&2
for n in "${Ns[@]}"; do
	measure facts "$n" facts
	measure check "$n" check
done
echo "uptime after: $(uptime)" >>"$OUT/env.txt"

python3 - "$OUT/raw.txt" >"$OUT/agents.md" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
print("| command | agents | wall s | head CPU s | head CPU ms/agent | head peak RSS MiB | KiB/agent | exit | answered |")
print("|---|---|---|---|---|---|---|---|---|")
by = {}
for name, n, wall, cpu, hwm, rc, ok in rows:
    n, wall, cpu, hwm = int(n), int(wall), int(cpu), int(hwm)
    by[(name, n)] = (cpu, hwm)
    print("| %s | %d | %.1f | %.2f | %.2f | %.1f | %.1f | %s | %s |" % (
        name, n, wall / 1000, cpu / 1000, cpu / n, hwm / 1024, hwm / n, rc, ok))
ns = sorted({k[1] for k in by})
if len(ns) >= 2:
    lo, hi = ns[0], ns[-1]
    print()
    for name in ("facts", "check"):
        if (name, lo) in by and (name, hi) in by:
            (c0, m0), (c1, m1) = by[(name, lo)], by[(name, hi)]
            print("%s, %d vs %d agents: CPU per added agent %.2f ms, RSS per added agent %.1f KiB" % (
                name, hi, lo, (c1 - c0) / (hi - lo), (m1 - m0) / (hi - lo)))
PY
cat "$OUT/agents.md"
echo "results in $OUT" >&2
