#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# facts_fanout.sh - `clusterdoc facts` fan-out, side by side with pdsh and clush on the
# same "nodes" (see docs/performance.md for what it measures and the results).
#
#   tests/bench/facts_fanout.sh [N ...]        default: 32 128      (`make bench`)
#
# Nodes are distinct loopback addresses 127.0.x.y (x.y from 0.1 upward, 254 per /24), all
# served by ONE dedicated sshd (port 2222, key auth, its own host key, sshd_config and
# authorized_keys under results/work/) inside a network namespace "cdb<random>" that holds
# only `lo`. Every client runs inside that namespace too, so no packet leaves loopback.
# sshd runs in a private mount namespace in which root's ~/.bashrc is bind-mounted over by
# an empty file (the machine's pyenv init would cost every remote command ~136 ms) and
# root's ~/.cache by results/work/nodecache (where the agent caches itself and its
# python/torch facts), so nothing on disk outside results/ is touched. The namespace, the
# sshds and everything still running in the namespace are removed on exit (trap), by PID.
#
# Client settings: results/work/home/.ssh/config (Host *: User root, Port, IdentityFile,
# IdentitiesOnly, UserKnownHostsFile = a known_hosts generated for every "[127.0.x.y]:PORT",
# GlobalKnownHostsFile /dev/null, BatchMode, StrictHostKeyChecking yes, ControlMaster no).
# clusterdoc runs with HOME=results/work/home and `-F` that file (OpenSSH's `ssh -G` reads
# the passwd home's ~/.ssh/config, not $HOME's: see results/config_check.txt); pdsh and
# clush get it with `ssh -F`, as in /work/shared/bench/ssh_fanout.sh.
#
# Rows (TOOLS, default all):
#   clusterdoc          clusterdoc facts (libssh2), agent and python/torch facts cached on the node
#   clusterdoc_openssh  the same with --ssh openssh (one ssh process per node, OpenSSH's default KEX)
#   pdsh                pdsh -R ssh -f 32 'uname -a; ip -j addr'   (pdsh defaults, OpenSSH's default KEX)
#   pdsh_x25519         the same with -o KexAlgorithms=curve25519-sha256 (what libssh2 1.10 negotiates)
#   clush               clush -f 64 (its default) 'uname -a; ip -j addr'
#   clusterdoc_base     clusterdoc facts as the first row, with the build in BASE=DIR (its clusterdoc and
#                       clusterdoc-agent, e.g. main's), for a before/after in the same run
#   clusterdoc_check    clusterdoc check --json on the same nodes: every probe of every node, but
#                       no reach matrix (the nodes have only loopback addresses, which check does
#                       not test; the sampled matrix at scale is tests/bench/check_scale.sh's);
#                       its verification wants every node checked, whatever the findings
# First a cold run on one node (agent upload + torch import; all addresses share one cache).
# Before timing, every cell has one verification run (all N hosts answered; clusterdoc: one
# row per node, no UNREACHABLE, exit 0; then a --json check that nothing was uploaded and the
# torch facts came from the cache), which is also its warm-up; a failed verification is
# logged and retried once. Then hyperfine -N -i --runs RUNS --warmup 0: the median is
# reported, runs that exited non-zero are kept and counted ("runs exit != 0").
#
# env: RUNS=5  TOOLS="..."  PORT=2222
#      RSS_N="128 512": the N at which the head's peak RSS and CPU are measured, for each
#        clusterdoc row in TOOLS, in one extra run each (after the timings): results/rss.txt and
#        results/head_cost.md (wall; head CPU per node = user + sys of the head and of the
#        children it waited for, such as `ssh -G`; peak RSS of the head alone, VmHWM)
#      LOAD_MAX=1.5 LOAD_WAIT_S=600: before timing, wait (60 s steps) while the 1-minute load
#        average is above LOAD_MAX, at most LOAD_WAIT_S seconds, then go on and record it
#      BUSY_MAX=60 BUSY_WAIT_S=120: before each cell, wait (10 s steps) while the CPUs were more
#        than BUSY_MAX % busy over the last 2 s (someone else's test suite), at most BUSY_WAIT_S
#      KEX_CHECK=1: record which KEX each tool negotiates (a second sshd, LogLevel DEBUG1)
#      PROFILE=1: after the timings, one run per tool and N under `perf record -a` (CPU ms per
#        host, by process) and the cost of one `ssh -G` (needs perf; skipped without it)
# Results (git-ignored): results/facts_fanout.csv, results/facts_fanout.md (the table),
#   results/rss.txt, results/kex.txt, results/config_check.txt, results/env.txt,
#   results/profile_N*.md (CPU per host by process), results/ssh_G.txt,
#   results/raw/ (hyperfine JSON, outputs of the verification runs).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
RES=$HERE/results
W=$RES/work
RAW=$RES/raw
Ns=("$@")
[[ ${#Ns[@]} -eq 0 ]] && Ns=(32 128)
RUNS=${RUNS:-5}
PORT=${PORT:-2222}
KPORT=$((PORT + 1))
TOOLS=${TOOLS:-"clusterdoc clusterdoc_openssh pdsh pdsh_x25519 clush"}
RSS_N=${RSS_N:-128 512}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT_S=${LOAD_WAIT_S:-600}
BUSY_MAX=${BUSY_MAX:-60}
BUSY_WAIT_S=${BUSY_WAIT_S:-120}
KEX_CHECK=${KEX_CHECK:-1}
PROFILE=${PROFILE:-1}
CMD='uname -a; ip -j addr'
PY=/usr/bin/python3

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

for n in "${Ns[@]}"; do
	[[ $n =~ ^[1-9][0-9]*$ && $n -le 2540 ]] || die "N must be 1..2540, got \"$n\""
done
[[ $(id -u) == 0 ]] || die "needs root (it creates a network namespace)"

# --- tools --------------------------------------------------------------------------------
need() { # command debian-package
	command -v "$1" >/dev/null 2>&1 && return 0
	log "$1 is missing: apt-get install -y $2"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >/dev/null 2>&1 ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >/dev/null; }
	command -v "$1" >/dev/null 2>&1 || die "cannot install $2"
}
need hyperfine hyperfine
need pdsh pdsh
need clush clustershell
need /usr/bin/time time
need /usr/sbin/sshd openssh-server
need ssh openssh-client
need "$PY" python3
need ip iproute2
need unshare util-linux

# The remote and local commands must not source ~/.bashrc because we were started over ssh
# (Debian's bash does that for non-interactive shells when SSH_CLIENT is set).
unset SSH_CLIENT SSH_CONNECTION SSH2_CLIENT SSH_TTY BASH_ENV ENV SSH_AUTH_SOCK
export LC_ALL=C

mkdir -p "$RES" "$RAW" "$W/bin"
[[ -x $TOP/clusterdoc && -x $TOP/clusterdoc-agent ]] || (cd "$TOP" && make)
# A snapshot: other people may rebuild the tree while this runs. The agent is found next to
# the head (as after `make`), so the command line is the one a user types.
cp -f "$TOP/clusterdoc" "$TOP/clusterdoc-agent" "$W/bin/"
CD=$W/bin/clusterdoc
if [[ " $TOOLS " == *" clusterdoc_base "* ]]; then
	[[ -x ${BASE:-}/clusterdoc && -x $BASE/clusterdoc-agent ]] || die "clusterdoc_base needs BASE=DIR with clusterdoc and clusterdoc-agent"
	mkdir -p "$W/base"
	cp -f "$BASE/clusterdoc" "$BASE/clusterdoc-agent" "$W/base/"
fi

# --- namespace, sshd --------------------------------------------------------------------
NS=cdb$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
sshd_pids=()
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${sshd_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$NS"; then
		# Whatever still runs in our namespace (agents, sshd session children) was started by us.
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
		sleep 0.3
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
		ip netns del "$NS" 2>/dev/null || true
	fi
	for p in "${sshd_pids[@]}"; do wait "$p" 2>/dev/null || true; done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

addr() { local i=$(($1 - 1)); echo "127.0.$((i / 254)).$((i % 254 + 1))"; }
hostlist() { # N -> 127.0.0.[1-254],127.0.1.[1-K]
	local n=$1 x=0 k out=""
	while ((n > 0)); do
		k=$((n > 254 ? 254 : n))
		out+="${out:+,}127.0.$x.[1-$k]"
		n=$((n - k))
		x=$((x + 1))
	done
	echo "$out"
}

CFG=$W/home/.ssh/config
CFG_X=$W/ssh_config_x25519
RHOME=$(getent passwd root | cut -d: -f6)

setup_files() {
	local maxn=0 n i hk
	mkdir -p "$W/home/.ssh" "$W/sshd"
	chmod 700 "$W/home/.ssh"
	[[ -f $W/home/.ssh/id_ed25519 ]] ||
		ssh-keygen -q -t ed25519 -N '' -C cdb-bench-client -f "$W/home/.ssh/id_ed25519"
	[[ -f $W/sshd/ssh_host_ed25519_key ]] ||
		ssh-keygen -q -t ed25519 -N '' -C cdb-bench-host -f "$W/sshd/ssh_host_ed25519_key"
	cp "$W/home/.ssh/id_ed25519.pub" "$W/sshd/authorized_keys"
	: >"$W/sshd/empty_bashrc"
	# The nodes' ~/.cache: fresh every time, so the first run really uploads and imports torch.
	rm -rf "$W/nodecache"
	mkdir -p "$W/nodecache"
	for p in "$PORT" "$KPORT"; do
		cat >"$W/sshd/sshd_config_$p" <<EOC
# dedicated sshd for tests/bench/facts_fanout.sh (never the system one)
Port $p
ListenAddress 0.0.0.0
HostKey $W/sshd/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $W/sshd/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AcceptEnv LANG LC_*
MaxStartups 4096
MaxSessions 64
LogLevel $([[ $p == "$PORT" ]] && echo ERROR || echo DEBUG1)
Subsystem sftp /usr/lib/openssh/sftp-server
EOC
	done
	cat >"$CFG" <<EOC
# client config for tests/bench/facts_fanout.sh (clusterdoc: HOME=$W/home and -F this file;
# pdsh/clush: ssh -F this file)
Host *
  User root
  Port $PORT
  IdentityFile $W/home/.ssh/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $W/home/.ssh/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  CheckHostIP no
  BatchMode yes
  ControlMaster no
  ControlPath none
  ConnectTimeout 60
  LogLevel ERROR
EOC
	{
		echo "# as $CFG, with the KEX libssh2 1.10 negotiates"
		echo "KexAlgorithms curve25519-sha256"
		cat "$CFG"
	} >"$CFG_X"
	for n in "${Ns[@]}" $RSS_N; do ((n > maxn)) && maxn=$n; done
	hk=$(cut -d' ' -f1-2 "$W/sshd/ssh_host_ed25519_key.pub")
	{
		for ((i = 1; i <= maxn; i++)); do echo "[$(addr $i)]:$PORT $hk"; done
		echo "[127.0.0.1]:$KPORT $hk"
	} >"$W/home/.ssh/known_hosts"
	for n in "${Ns[@]}" $RSS_N; do
		for ((i = 1; i <= n; i++)); do addr $i; done >"$W/hosts_$n"
	done
}

# start_sshd PORT: sshd -D in namespace NS and a private mount namespace (empty ~/.bashrc,
# ~/.cache = results/work/nodecache for root). ip netns exec, unshare and sh all exec, so $!
# is sshd's PID.
start_sshd() {
	local p=$1 mounts=""
	[[ -f $RHOME/.bashrc ]] && mounts+="mount --bind '$W/sshd/empty_bashrc' '$RHOME/.bashrc' && "
	if [[ -d $RHOME/.cache ]]; then
		mounts+="mount --bind '$W/nodecache' '$RHOME/.cache' && "
	else
		log "note: $RHOME/.cache does not exist; the agent will create $RHOME/.cache/clusterdoc"
	fi
	[[ -d /run/sshd ]] || mkdir -p /run/sshd # privsep dir, normally made by sshd's unit
	ip netns exec "$NS" unshare -m --propagation private \
		sh -c "$mounts exec /usr/sbin/sshd -D -f '$W/sshd/sshd_config_$p' -E '$W/sshd/sshd_$p.log'" &
	sshd_pids+=($!)
	for _ in $(seq 50); do
		ip netns exec "$NS" ssh -F "$CFG" -p "$p" 127.0.0.1 true 2>/dev/null && return 0
		sleep 0.2
	done
	cat "$W/sshd/sshd_$p.log" >&2
	die "sshd on port $p did not come up"
}

# --- the commands -----------------------------------------------------------------------
export PDSH_RCMD_TYPE=ssh
PDSH_ARGS="-2 -a -x -F $CFG -l%u %h" # pdsh's default ssh args + our -F

default_f() {
	case $1 in
	clusterdoc*) echo 64 ;; pdsh*) echo 32 ;; clush) echo 64 ;;
	esac
}
kex_of() { # what the KEX check found, else what it should be
	local k
	k=$(awk -v t="$1" '$1 == t {print $2}' "$RES/kex.txt" 2>/dev/null | head -1)
	[[ -n $k ]] && echo "$k" && return
	case $1 in
	clusterdoc | clusterdoc_base | clusterdoc_check | pdsh_x25519) echo "curve25519-sha256?" ;;
	*) echo "sntrup761x25519-sha512?" ;;
	esac
}
# cmdline TOOL N [PORT HOSTLIST-OVERRIDE] -> a shell command (no double quotes in it)
cmdline() {
	local t=$1 n=$2 p=${3:-} hl hf f
	f=$(default_f "$t")
	hl=${4:-$(hostlist "$n")}
	hf=$W/hosts_$n
	case $t in
	clusterdoc) echo "HOME=$W/home $CD facts -F $CFG -w '$hl' -p ${p:-$PORT}" ;;
	clusterdoc_openssh) echo "HOME=$W/home $CD facts --ssh openssh -F $CFG -w '$hl' -p ${p:-$PORT}" ;;
	clusterdoc_base) echo "HOME=$W/home $W/base/clusterdoc facts -F $CFG -w '$hl' -p ${p:-$PORT}" ;;
	clusterdoc_check) echo "HOME=$W/home $CD check -F $CFG -w '$hl' -p ${p:-$PORT} --json" ;;
	pdsh) echo "PDSH_SSH_ARGS='$PDSH_ARGS${p:+ -p $p}' pdsh -R ssh -f $f -w ${4:-^$hf} '$CMD'" ;;
	pdsh_x25519) echo "PDSH_SSH_ARGS='$PDSH_ARGS -o KexAlgorithms=curve25519-sha256${p:+ -p $p}' pdsh -R ssh -f $f -w ${4:-^$hf} '$CMD'" ;;
	clush)
		if [[ -n ${4:-} ]]; then hf="-w $4"; else hf="--hostfile=$hf"; fi
		echo "clush -f $f -o '-F $CFG${p:+ -p $p}' $hf '$CMD'"
		;;
	*) die "unknown tool $t" ;;
	esac
}
in_ns() { ip netns exec "$NS" bash -c "$1"; }

# verify TOOL N: one run; every host must have answered (and clusterdoc must exit 0)
verify() {
	local t=$1 n=$2 c out rc=0 got bad
	c=$(cmdline "$t" "$n")
	out=$(in_ns "$c" 2>&1) || rc=$?
	printf '%s\n' "$out" >"$RAW/verify_${t}_N$n.txt"
	case $t in
	clusterdoc_check)
		# findings are expected (every "node" is this machine, with loopback only): exit 0
		# or 1, every node checked
		if [[ $rc -gt 1 ]] || ! $PY -c 'import json,sys; d=json.loads(sys.stdin.read()); n=int(sys.argv[1])
r=sum(1 for x in d["nodes"] if x.get("checked") and not x.get("partial"))
print("check: %d/%d nodes checked" % (r, n), file=sys.stderr); sys.exit(0 if r == n else 1)' "$n" <<<"$out"; then
			log "VERIFY $t N=$n: exit $rc"
			head -c 2000 <<<"$out" >&2
			return 1
		fi
		;;
	clusterdoc*)
		got=$(grep -cE '^127\.[0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out" || true)
		bad=$(grep -c 'UNREACHABLE' <<<"$out" || true)
		if [[ $rc -ne 0 || $got -ne $n || $bad -ne 0 ]]; then
			log "VERIFY $t N=$n: exit $rc, $got rows, $bad unreachable (want exit 0, $n rows, 0)"
			head -20 <<<"$out" >&2
			return 1
		fi
		;;
	*)
		got=$(grep -c '"ifname":"lo"' <<<"$out" || true) # one ip -j line per host
		if [[ $rc -ne 0 || $got -ne $n ]]; then
			log "VERIFY $t N=$n: exit $rc, $got/$n hosts answered"
			head -20 <<<"$out" >&2
			return 1
		fi
		;;
	esac
}

# JSON check after the warm-up: every node answered, nothing uploaded, torch facts from cache
check_cached() {
	local n=$1 c
	c="$(cmdline clusterdoc "$n") --json"
	in_ns "$c" >"$RAW/cached_check_N$n.json" 2>&1 || true
	$PY - "$RAW/cached_check_N$n.json" "$n" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); nodes = d["nodes"]
reach = sum(1 for x in nodes if x.get("reachable"))
up = sum(1 for x in nodes if x.get("agent_uploaded"))
t = [x.get("torch") for x in nodes if isinstance(x.get("torch"), dict)]
cached = sum(1 for x in t if x.get("cached"))
print(f"N={n}: {reach}/{len(nodes)} reachable, agent uploaded on {up}, torch facts from cache on {cached}/{len(t)}"
      + (f" (torch {t[0].get('version')})" if t else " (no torch found on the node)"))
sys.exit(0 if reach == n and up == 0 and cached == len(t) else 1)
PYEOF
}

cpu_busy() { # % of all CPUs busy over the next 2 s
	local a b
	a=$(head -1 /proc/stat)
	sleep 2
	b=$(head -1 /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); t = 0; for (i = 2; i <= 9; i++) t += y[i] - x[i];
		idle = (y[5] - x[5]) + (y[6] - x[6]); printf "%.0f", (t > 0 ? 100 * (1 - idle / t) : 0) }'
}
load1() { cut -d' ' -f1 /proc/loadavg; }

wait_for_quiet_load() {
	local waited=0
	while awk -v l="$(load1)" -v m="$LOAD_MAX" 'BEGIN { exit !(l > m) }'; do
		((waited >= LOAD_WAIT_S)) && {
			log "load $(load1) still above $LOAD_MAX after ${waited}s: measuring anyway"
			return
		}
		log "load average $(cut -d' ' -f1-3 /proc/loadavg) > $LOAD_MAX: waiting 60 s"
		sleep 60
		waited=$((waited + 60))
	done
	log "load average $(cut -d' ' -f1-3 /proc/loadavg) (waited ${waited}s)"
}

wait_for_idle_cpus() { # echoes the last busy % seen
	local b waited=0
	b=$(cpu_busy)
	while ((b > BUSY_MAX && waited < BUSY_WAIT_S)); do
		log "CPUs ${b}% busy (not us?): waiting 10 s"
		sleep 10
		waited=$((waited + 10))
		b=$(cpu_busy)
	done
	echo "$b"
}

median_of() {
	$PY -c 'import json,sys,statistics; r=json.load(open(sys.argv[1]))["results"][0]; t=r["times"]
e=r.get("exit_codes") or [0]*len(t)
print("%.3f %.3f %.3f %d %s" % (statistics.median(t), min(t), max(t), sum(1 for x in e if x),
      " ".join("%.3f%s" % (x, "" if c == 0 else "(exit %d)" % c) for x, c in zip(t, e))))' "$1"
}

# --- checks that are not timings ----------------------------------------------------------
# Which KEX each tool negotiates: one connection each to a second sshd at LogLevel DEBUG1.
kex_check() {
	local t lg before k
	start_sshd "$KPORT"
	lg=$W/sshd/sshd_$KPORT.log
	: >"$RES/kex.txt"
	for t in $TOOLS; do
		before=$(wc -l <"$lg")
		in_ns "$(cmdline "$t" 1 "$KPORT" 127.0.0.1)" >/dev/null 2>&1 || log "kex check: $t failed"
		sleep 0.3
		k=$(tail -n +"$((before + 1))" "$lg" | sed -n 's/.*kex: algorithm: \([^ ]*\).*/\1/p' | head -1)
		echo "$t ${k:-unknown}" | tee -a "$RES/kex.txt" >&2
	done
}

# Does clusterdoc take its settings from $HOME/.ssh/config alone (no -F)? And with -F?
config_check() {
	local out rc
	{
		echo "# $(date -Is): clusterdoc with HOME=$W/home, 127.0.0.[1-2]"
		for mode in "HOME only (no -F, no -p)" "HOME + -F $CFG (no -p)" "HOME + -F $CFG -p $PORT"; do
			case $mode in
			"HOME only"*) c="HOME=$W/home $CD facts -w '127.0.0.[1-2]'" ;;
			*"-p $PORT") c="HOME=$W/home $CD facts -F $CFG -w '127.0.0.[1-2]' -p $PORT" ;;
			*) c="HOME=$W/home $CD facts -F $CFG -w '127.0.0.[1-2]'" ;;
			esac
			rc=0
			out=$(in_ns "$c" 2>&1) || rc=$?
			echo "## $mode: exit $rc"
			echo "\$ $c"
			printf '%s\n' "$out" | cut -c1-160
		done
		echo "## what \`ssh -G\` sees with HOME=$W/home (OpenSSH reads the passwd home, $RHOME):"
		HOME=$W/home ssh -G 127.0.0.1 </dev/null 2>&1 | grep -E '^(user|port|identityfile|userknownhostsfile|globalknownhostsfile) '
	} >"$RES/config_check.txt" 2>&1
	grep '^## .*exit' "$RES/config_check.txt" >&2
}

# head_hwm CMD: the head process's own VmHWM (peak RSS), sampled every 20 ms until it exits
# (GNU time's figure is the largest of the head and any one child, such as an `ssh -G`).
head_hwm() {
	local pid v hwm=0
	ip netns exec "$NS" bash -c "$1" >/dev/null 2>&1 &
	pid=$! # ip netns exec and bash -c (one command) exec: this becomes clusterdoc
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[[ -n $v ]] && ((v > hwm)) && hwm=$v
		sleep 0.02
	done
	wait "$pid" || true
	echo "$hwm"
}

# Head's peak RSS and CPU: GNU time's user + sys (the head and the children it waited for, such
# as an `ssh -G`) and "Maximum resident set size" (the largest of the head and any one child),
# then head_hwm in a second run for the head alone. One line per tool in rss.txt, one row in
# head_cost.csv.
rss_check() {
	local n=$1 t c kb hwm u sy wall
	for t in clusterdoc clusterdoc_base clusterdoc_openssh clusterdoc_check; do
		[[ " $TOOLS " == *" $t "* ]] || continue
		c=$(cmdline "$t" "$n")
		in_ns "/usr/bin/time -v -o $RAW/rss_${t}_N$n.time bash -c \"$c\" >$RAW/rss_${t}_N$n.out 2>&1" ||
			log "rss run $t N=$n: non-zero exit"
		kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$RAW/rss_${t}_N$n.time")
		u=$(sed -n 's/.*User time (seconds): //p' "$RAW/rss_${t}_N$n.time")
		sy=$(sed -n 's/.*System time (seconds): //p' "$RAW/rss_${t}_N$n.time")
		wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$RAW/rss_${t}_N$n.time")
		hwm=$(head_hwm "$c")
		printf '%s N=%s: peak RSS %s KiB (%.1f MiB; the head alone, VmHWM: %s KiB), wall %s, user %ss, sys %ss, head CPU %.1f ms per node\n' \
			"$t" "$n" "$kb" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$hwm" "$wall" "$u" "$sy" \
			"$(awk -v u="$u" -v s="$sy" -v n="$n" 'BEGIN{print 1000*(u+s)/n}')" | tee -a "$RES/rss.txt" >&2
		echo "$t,$n,$wall,$u,$sy,$kb,$hwm,$(load1)" >>"$RES/head_cost.csv"
	done
}

# Where the CPU goes: one run of each tool under `perf record -a` (cpu-clock, one sample per
# ms of CPU, so samples = CPU ms), summed per process name. Everything on this box shares the
# 2 CPUs, so this splits client, sshd and remote-command work; "idle" is CPU time nobody used
# during the run, "other" is processes that are not ours (other people's work).
profile() {
	local n=$1 t c d
	command -v perf >/dev/null 2>&1 || {
		log "perf is not installed: no profile (apt-get install -y linux-perf)"
		return 0
	}
	: >"$RES/profile_N$n.csv"
	for t in clusterdoc clusterdoc_base pdsh_x25519 pdsh clusterdoc_openssh; do
		[[ " $TOOLS " == *" $t "* ]] || continue
		c=$(cmdline "$t" "$n")
		d=$RAW/perf_${t}_N$n.data
		rm -f "$d" "$d.old" # perf would keep the previous file as .old
		perf record -q -a -e cpu-clock -c 1000000 -o "$d" -- \
			ip netns exec "$NS" bash -c "$c" >"$RAW/perf_${t}_N$n.out" 2>"$RAW/perf_${t}_N$n.err" ||
			log "profile: $t N=$n exited non-zero (CPU figures kept; idle time includes any stall)"
		[[ -s $d ]] || continue
		perf report -i "$d" --sort comm --stdio --show-nr-samples -t ';' 2>/dev/null |
			awk -F';' -v t="$t" -v n="$n" '!/^#/ && NF >= 3 { gsub(/ +$/, "", $3); gsub(/^ +/, "", $2); print t ";" n ";" $3 ";" $2 }' \
				>>"$RES/profile_N$n.csv"
		# the head's own CPU by library (libcrypto = KEX/ciphers, libssh2, libc, kernel)
		perf report -i "$d" --sort comm,dso --stdio --show-nr-samples 2>/dev/null |
			awk '$3 == "clusterdoc" {print $2 " ms  " $4}' >"$RAW/perf_${t}_N${n}_head_dso.txt" || true
	done
	$PY - "$RES/profile_N$n.csv" "$n" <<'PYEOF' | tee "$RES/profile_N$n.md"
import collections, sys
n = int(sys.argv[2])
groups = [("head (clusterdoc)", {"clusterdoc"}), ("pdsh", {"pdsh", "pdsh.bin"}), ("ssh (client / ssh -G)", {"ssh"}),
          ("sshd", {"sshd"}), ("bash/sh/uname/ip", {"bash", "sh", "uname", "ip"}),
          ("agent", None), ("python3", {"python3"}), ("kernel threads (softirq, workers)", "kthreads"),
          ("idle", {"swapper"})]
ours = set().union(*[g for _, g in groups if isinstance(g, set)]) | {"perf", "hyperfine", "mv", "head", "chmod", "mkdir", "sftp-server"}
cpu = collections.defaultdict(lambda: collections.Counter())
tools = []
for line in open(sys.argv[1]):
    t, _, comm, s = line.rstrip("\n").split(";")
    if t not in tools: tools.append(t)
    kthread = comm.startswith(("ksoftirqd/", "kworker/", "rcu_"))
    g = next((name for name, cs in groups if (cs is None and comm.startswith("agent-")) or
              (cs == "kthreads" and kthread) or (cs and cs != "kthreads" and comm in cs)), None)
    if g is None: g = "other processes (not ours)" if comm not in ours else "misc (ours)"
    cpu[t][g] += int(s)
names = [name for name, _ in groups if name != "idle"] + ["misc (ours)", "other processes (not ours)", "idle"]
print(f"CPU ms per host at N={n} (perf cpu-clock, all CPUs; one run each)\n")
print("| process | " + " | ".join(tools) + " |")
print("|---|" + "---:|" * len(tools))
for g in names:
    if any(cpu[t][g] for t in tools):
        print(f"| {g} | " + " | ".join(f"{cpu[t][g] / n:.1f}" for t in tools) + " |")
busy = {t: sum(v for k, v in cpu[t].items() if k not in ("idle", "other processes (not ours)", "kernel threads (softirq, workers)")) for t in tools}
print("| **ours, total (without kernel threads)** | " + " | ".join(f"**{busy[t] / n:.1f}**" for t in tools) + " |")
PYEOF
}

# --- run ----------------------------------------------------------------------------------
setup_files
ip netns add "$NS"
ip -n "$NS" link set lo up
[[ -z $(ip -n "$NS" route show default) ]] || die "default route in $NS"
log "namespace $NS (lo only)"
start_sshd "$PORT"

{
	echo "# invocation: $0 ${Ns[*]} (TOOLS=\"$TOOLS\" RUNS=$RUNS)"
	echo "# host: $(uname -r), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB"
	echo "# date: $(date -Is)  loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# clusterdoc $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)$(git -C "$TOP" diff --quiet 2>/dev/null || echo '+dirty tree'), sha256 $(sha256sum "$CD" | cut -c1-12); agent sha256 $(sha256sum "$W/bin/clusterdoc-agent" | cut -c1-12)"
	echo "# libssh2 $(dpkg-query -W -f '${Version}' libssh2-1 2>/dev/null); $(ssh -V 2>&1); pdsh $(pdsh -V 2>&1 | head -1 | awk '{print $1}'); clush $(clush --version | awk '{print $2}'); hyperfine $(hyperfine --version | awk '{print $2}')"
} | tee "$RES/env.txt" >&2

# Cold start on one node: uploads the agent and imports torch once. All "nodes" are this
# machine with one hostname and one ~/.cache, so this fills the cache for every address (and
# avoids 64 torch imports at once on 2 CPUs).
log "cold run, 1 node (agent upload + python/torch probe)"
in_ns "/usr/bin/time -f '%e s wall, %M KiB peak RSS' -o $RAW/cold_1node.time bash -c \"$(cmdline clusterdoc 1)\" >$RAW/cold_1node.txt 2>&1" || { cat "$RAW/cold_1node.txt" "$RAW/cold_1node.time" >&2; die "cold run failed"; }
echo "cold run (1 node, upload + torch import): $(tail -1 "$RAW/cold_1node.time")" | tee -a "$RES/env.txt" >&2

config_check
rm -f "$RES/kex.txt" "$RES/rss.txt"
[[ $KEX_CHECK == 1 ]] && kex_check

CSV=$RES/facts_fanout.csv
echo "tool,N,fanout,kex,runs,median_s,min_s,max_s,failed_runs,times,load1_before,cpu_busy_pct_before" >"$CSV"
wait_for_quiet_load
echo "# loadavg before the timed runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RES/env.txt" >&2
for n in "${Ns[@]}"; do
	for t in $TOOLS; do
		f=$(default_f "$t")
		log "$t N=$n -f $f: verify (and warm-up)"
		if ! verify "$t" "$n"; then
			# Timed anyway (hyperfine -i counts the failing runs); a second failure of the
			# verification means the tool cannot do this N at all: no row.
			echo "# VERIFY FAILED once: $t N=$n (see raw/verify_${t}_N$n.txt)" | tee -a "$RES/env.txt" >&2
			cp "$RAW/verify_${t}_N$n.txt" "$RAW/verify_${t}_N${n}_failed.txt"
			if ! verify "$t" "$n"; then
				echo "$t,$n,$f,$(kex_of "$t"),0,FAIL,,,,,$(load1)," >>"$CSV"
				continue
			fi
		fi
		if [[ $t == clusterdoc ]]; then
			check_cached "$n" | tee -a "$RES/env.txt" >&2 || log "WARNING: N=$n: not everything came from the caches"
		fi
		busy=$(wait_for_idle_cpus)
		la=$(load1)
		j=$RAW/${t}_N$n.json
		c=$(cmdline "$t" "$n")
		log "$t N=$n: timing (load $la, CPUs ${busy}% busy before)"
		# -i: a run that exits non-zero (a node did not answer) is kept and counted, not hidden
		if ! ip netns exec "$NS" hyperfine -N -i --runs "$RUNS" --warmup 0 --export-json "$j" \
			--command-name "$t N=$n" "bash -c \"$c\"" >/dev/null 2>"$RAW/${t}_N$n.err"; then
			log "hyperfine failed for $t N=$n"
			cat "$RAW/${t}_N$n.err" >&2
			echo "$t,$n,$f,$(kex_of "$t"),0,FAIL,,,,,$la,$busy" >>"$CSV"
			continue
		fi
		grep -q 'non-zero exit code' "$RAW/${t}_N$n.err" 2>/dev/null || rm -f "$RAW/${t}_N$n.err"
		read -r med mn mx nfail times <<<"$(median_of "$j")"
		log "$t N=$n: median ${med}s (runs: $times; $nfail of $RUNS exited non-zero)"
		echo "$t,$n,$f,$(kex_of "$t"),$RUNS,$med,$mn,$mx,$nfail,$times,$la,$busy" >>"$CSV"
	done
done

echo "tool,N,wall,user_s,sys_s,peak_rss_kib,head_vmhwm_kib,load1" >"$RES/head_cost.csv"
for n in $RSS_N; do
	log "peak RSS and CPU of the head, N=$n"
	rss_check "$n"
done
if [[ $PROFILE == 1 ]]; then
	for n in "${Ns[@]}"; do
		log "profile N=$n"
		profile "$n"
	done
	# one `ssh -G` (what clusterdoc runs per node before connecting)
	ip netns exec "$NS" hyperfine -N --runs 30 --warmup 3 --export-json "$RAW/ssh_G.json" \
		"ssh -F $CFG -G 127.0.0.1" >/dev/null 2>&1 &&
		$PY -c 'import json,sys,statistics; r=json.load(open(sys.argv[1]))["results"][0]
print("one `ssh -G`: %.1f ms wall (median), %.1f ms user + %.1f ms sys CPU" % (1e3*statistics.median(r["times"]), 1e3*r["user"], 1e3*r["system"]))' \
			"$RAW/ssh_G.json" | tee "$RES/ssh_G.txt" >&2
fi

$PY - "$CSV" <<'PYEOF' | tee "$RES/facts_fanout.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| tool | N | fan-out | KEX | runs | median (s) | min (s) | max (s) | per host (ms) | runs exit != 0 | load1 / CPU busy before |")
print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    lb = f"{r['load1_before']} / {r['cpu_busy_pct_before'] or '-'} %"
    if r["median_s"] == "FAIL":
        print(f"| {r['tool']} | {r['N']} | {r['fanout']} | {r['kex']} | - | FAIL | | | | | {lb} |"); continue
    print(f"| {r['tool']} | {r['N']} | {r['fanout']} | {r['kex']} | {r['runs']} | {float(r['median_s']):.2f} | "
          f"{float(r['min_s']):.2f} | {float(r['max_s']):.2f} | {1000*float(r['median_s'])/int(r['N']):.1f} | "
          f"{r['failed_runs']} | {lb} |")
PYEOF
cat "$RES/rss.txt"

# Same-run ratios against the issue's goals (results/goals.md): facts no slower than pdsh with
# curve25519, head CPU <= 15 ms per node, check <= 2 x facts, head peak RSS < 64 MiB.
$PY - "$CSV" "$RES/head_cost.csv" <<'PYEOF' | tee "$RES/goals.md"
import csv, sys
med = {(r["tool"], int(r["N"])): float(r["median_s"]) for r in csv.DictReader(open(sys.argv[1]))
       if r["median_s"] not in ("", "FAIL")}
cost = list(csv.DictReader(open(sys.argv[2])))
def ok(b): return "met" if b else "MISSED"
print("| goal | N | figure | verdict |")
print("|---|---:|---|---|")
for n in sorted({n for _, n in med}):
    f, x, c = med.get(("clusterdoc", n)), med.get(("pdsh_x25519", n)), med.get(("clusterdoc_check", n))
    b = med.get(("clusterdoc_base", n))
    if f and b:
        print(f"| (before/after: facts, this build / BASE) | {n} | {f:.2f} s / {b:.2f} s = {f / b:.2f} | - |")
    if f and x:
        print(f"| facts <= pdsh + curve25519 | {n} | {f:.2f} s / {x:.2f} s = {f / x:.2f} | {ok(f <= x)} |")
    if f and c:
        print(f"| check (probes, no matrix) <= 2 x facts | {n} | {c:.2f} s / {f:.2f} s = {c / f:.2f} | {ok(c <= 2 * f)} |")
for r in cost:
    n = int(r["N"]); cpu = 1000 * (float(r["user_s"]) + float(r["sys_s"])) / n; mib = int(r["head_vmhwm_kib"] or 0) / 1024
    if r["tool"] == "clusterdoc":
        print(f"| head CPU <= 15 ms per node (facts) | {n} | {cpu:.1f} ms | {ok(cpu <= 15)} |")
    if r["tool"] in ("clusterdoc", "clusterdoc_check"):
        what = "facts" if r["tool"] == "clusterdoc" else "check"
        print(f"| head peak RSS < 64 MiB ({what}) | {n} | {mib:.1f} MiB (VmHWM; with children {int(r['peak_rss_kib']) / 1024:.1f}) | {ok(mib < 64)} |")
PYEOF
