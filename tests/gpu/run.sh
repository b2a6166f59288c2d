#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/run.sh - clusterdoc on a real GPU machine, in one call:
#   1. build (make all; or, when the build deps are missing, the binaries already in the tree,
#      or the head $CLUSTERDOC names with its libraries, as ../shared/tools/gpu-carry.sh makes
#      it, and the agent beside it or in the tree). On a lent machine (no -dev packages), after
#      `make all` and ../shared/tools/gpu-carry.sh here, the device call carries the ignored
#      [".gpu", "clusterdoc-agent", "build/libclusterdoc.a"] and runs
#        export CLUSTERDOC=$PWD/.gpu/bin/clusterdoc C_INCLUDE_PATH=$PWD/.gpu/include \
#          LIBRARY_PATH=$PWD/.gpu/lib LD_RUN_PATH=$PWD/.gpu/lib; bash tests/gpu/run.sh
#      (about 4 minutes when all goes well; give it timeout_s 600);
#   2. `clusterdoc facts -w localhost` (the local transport: no sshd, no network): NVML's GPUs,
#      driver and memory, the NCCL library, torch and its CUDA; each GPU's health (issue 35:
#      every key read or NOT_SUPPORTED, none failed), the NVIDIA PCI devices and the Xid log;
#      the RDMA facts (issue 36), or "no RDMA device";
#   3. `clusterdoc bench --backend nccl` with one rank and with one rank per GPU: every size
#      must be exact (the bench's own check: "wrong" is 0) and its busbw must be nccl-tests'
#      formula, busbw = algbw x 2(n-1)/n (0 for one rank, as nccl-tests prints it); and
#      NCCL's own network line (its NCCL_DEBUG=INFO NET lines, captured by the agent)
#      against the prediction from the RDMA facts: they must agree;
#   4. `clusterdoc mnist --mode torch --backend nccl` with one rank, where torch has CUDA;
#   5. `clusterdoc run` (torchrun, NCCL, one rank per GPU, no --force; NCCL's NET line against
#      the RDMA facts: no IB where the facts found no RDMA device) and `clusterdoc hang` on
#      a run whose last rank sleeps before an allreduce: 3 calls, one verdict;
#   6. `clusterdoc hang`'s NCCL RAS query, Flight Recorder dump and the rank's GPU utilisation
#      through NVML (tests/gpu/hang_probe.c)
#      against a running 1-GPU NCCL torch job, each skipping when NCCL or torch is too old;
#   7. `clusterdoc gpu-burn` for 10 s: each GPU's TFLOP/s and GB/s beside torch's own bf16
#      matmul and device copy timed here with CUDA events (GPU 0 must be within 10 %), and no
#      gpu-slow on a healthy machine.
# Every figure goes to ONE file: $OUT/gpu-results.txt when $OUT is set, else
# build/gpu-results.txt. Without a GPU (no /dev/nvidia0, nvidia-smi failing, or, where there
# is no nvidia-smi, NVML not loading in the agent) it prints SKIP and exits 0: `make test` runs
# it (through tests/run-integration.sh), so CI proves that it skips cleanly. Nothing is
# installed and nothing leaves the machine; what is missing (build deps, NCCL, torch with CUDA)
# is said and the rest still runs.
# Exit status: 0 everything that could run passed (or SKIP); 1 a check failed.
# Env: GPU_BENCH_MAX (largest bench size, default 256M), GPU_BENCH_ITERS (default 20),
#      GPU_JOBS (make -j, default: the CPUs).
source "$(dirname "$0")/../lib.sh"
cd "$CD_TOP" || exit 1

RES=${OUT:+$OUT/gpu-results.txt}
RES=${RES:-$CD_TOP/build/gpu-results.txt}
mkdir -p "$(dirname "$RES")"
: >"$RES"
CD=${CLUSTERDOC:-$CD_TOP/clusterdoc}
# A head carried to a machine without the build deps (../shared/tools/gpu-carry.sh: .gpu/bin/
# clusterdoc, its libraries in .gpu/lib) has its agent beside it and, in its lib folder, the
# library tests/gpu/hang_probe.c links: the tree's own (ignored, so not carried) are absent there.
CD_DIR=$(dirname "$CD")
AGENT=${CLUSTERDOC_AGENT:-$CD_TOP/clusterdoc-agent}
[ -z "${CLUSTERDOC_AGENT:-}" ] && [ ! -x "$AGENT" ] && [ -x "$CD_DIR/clusterdoc-agent" ] &&
	AGENT=$CD_DIR/clusterdoc-agent
export CLUSTERDOC_AGENT=$AGENT
LIBCD=$CD_TOP/build/libclusterdoc.a
[ ! -e "$LIBCD" ] && [ -e "$CD_DIR/../lib/libclusterdoc.a" ] && LIBCD=$CD_DIR/../lib/libclusterdoc.a
BENCH_MAX=${GPU_BENCH_MAX:-256M}
BENCH_ITERS=${GPU_BENCH_ITERS:-20}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
status=0

say() { printf '%s\n' "$*" | tee -a "$RES"; }
# check NAME OK|FAIL|SKIP [detail]: one verdict, in the results file and in $CD_RESULTS
check() {
	say "$2 $1${3:+: $3}"
	case $2 in
	OK) result PASS "gpu/$1" ;;
	FAIL) result FAIL "gpu/$1" "$3"; status=1 ;;
	*) result SKIP "gpu/$1" "$3" ;;
	esac
}
skip_all() {
	say "SKIP gpu: $1"
	result SKIP "gpu" "$1"
	exit 0
}
# stop_job PID: SIGINT (the run passes it to its ranks), then TERM and KILL, 30 s at most
stop_job() {
	local sig t
	for sig in INT TERM KILL; do
		kill -"$sig" "$1" 2>/dev/null || break
		for t in $(seq 20); do
			kill -0 "$1" 2>/dev/null || break 2
			sleep 0.5
		done
	done
	wait "$1" 2>/dev/null
}
# py EXPR FILE: evaluate a Python expression on the JSON document d read from FILE
py() { python3 -c 'import json,sys; d=json.load(open(sys.argv[2])); print(eval(sys.argv[1]))' "$1" "$2"; }

say "# clusterdoc GPU run, $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
say "# $(uname -srm); $(nproc) CPUs; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# --- is there a GPU at all? (before any build: CI has none and must stay fast)
[ -e /dev/nvidia0 ] || skip_all "no GPU (/dev/nvidia0 is absent)"
if command -v nvidia-smi >/dev/null 2>&1; then
	if ! smi=$(nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1); then
		skip_all "nvidia-smi fails: $(head -c 300 <<<"$smi")"
	fi
	say "## nvidia-smi"
	say "$smi"
else
	say "(nvidia-smi is not installed; NVML through the agent decides)"
fi
command -v python3 >/dev/null 2>&1 || say "MISSING python3: the JSON checks below cannot run (raw output is kept)"

# --- build
say "## build"
missing=()
for h in libssh2.h jansson.h curl/curl.h zlib.h openssl/evp.h; do
	[ -e "/usr/include/$h" ] || [ -e "/usr/include/x86_64-linux-gnu/$h" ] ||
		[ -e "/usr/include/aarch64-linux-gnu/$h" ] || missing+=("$h")
done
[ -e /usr/include/ncursesw/curses.h ] || [ -e /usr/include/curses.h ] || missing+=(ncursesw/curses.h)
command -v cc >/dev/null 2>&1 || missing+=(cc)
command -v make >/dev/null 2>&1 || missing+=(make)
if ((${#missing[@]})); then
	say "MISSING build deps: ${missing[*]} (Debian: scripts/deps.sh lists the packages)"
fi
# make cannot build the head without its deps: with the binaries at hand, spend no time on it
if ((${#missing[@]})) && [ -x "$CD" ] && [ -x "$AGENT" ]; then
	check build SKIP "no build deps; using $CD and $AGENT"
elif make -j"${GPU_JOBS:-$(nproc)}" all >"$WORK/build.log" 2>&1; then
	check build OK
elif [ -x "$CD" ] && [ -x "$AGENT" ]; then
	check build SKIP "make failed ($(grep -m1 -E 'error|fatal' "$WORK/build.log")); using the binaries already here"
else
	check build FAIL "$(grep -m1 -E 'error|fatal' "$WORK/build.log"); no head at $CD or no agent at $AGENT"
	exit 1
fi
if ldd "$CD" 2>/dev/null | grep -q 'not found'; then
	check head-libs FAIL "$(ldd "$CD" | grep 'not found' | tr -s ' \t\n' ' ')"
	exit 1
fi

# --- NCCL and the CUDA runtime: the system's, else the ones a pip torch brings (nvidia/nccl/lib;
# the runtime in nvidia/cuda_runtime/lib, or nvidia/cu13/lib from CUDA 13's wheels on); the agent
# inherits LD_LIBRARY_PATH over the local transport. torch_libs PY: those of PY's torch.
torch_libs() {
	local want=() extra
	ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 ' || want+=(libnccl.so.2)
	ldconfig -p 2>/dev/null | grep -qE 'libcudart\.so\.1[0-9.]* ' || want+=(libcudart.so.1)
	((${#want[@]})) || return 0
	extra=$("$1" - "${want[@]}" <<'EOF' 2>/dev/null
import glob, os, site, sys
sps = getattr(site, "getsitepackages", lambda: [])() + [site.getusersitepackages()]
dirs = []
for sp in sps:
    for d in sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib"))):
        if d not in dirs and any(glob.glob(os.path.join(d, w + "*")) for w in sys.argv[1:]):
            dirs.append(d)
print(":".join(dirs))
EOF
)
	[ -n "$extra" ] || return 0
	export LD_LIBRARY_PATH=$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	say "(no system ${want[*]}: the pip wheels beside $1's torch, LD_LIBRARY_PATH=$extra)"
}
command -v python3 >/dev/null 2>&1 && torch_libs python3

# --- facts
say "## facts -w localhost"
"$CD" facts -w localhost -t 120 --json >"$WORK/facts.json" 2>"$WORK/facts.err"
rc=$?
"$CD" facts -w localhost -t 120 2>&1 | tee -a "$RES" >/dev/null
ngpu=0
PYARGS=()
if [ $rc -ne 0 ] || ! command -v python3 >/dev/null 2>&1; then
	cat "$WORK/facts.json" "$WORK/facts.err" >>"$RES"
	check facts FAIL "exit status $rc"
else
	ngpu=$(py 'len(d["nodes"][0]["gpus"])' "$WORK/facts.json")
	if [ "$ngpu" = 0 ] && [ -n "${smi:-}" ]; then
		# nvidia-smi reads the same libnvidia-ml.so.1: the agent's NVML is at fault
		check facts FAIL "nvidia-smi lists GPUs, NVML through the agent none: $(py 'd["nodes"][0]["errors"].get("gpus", "no error given")' "$WORK/facts.json")"
		exit 1
	elif [ "$ngpu" = 0 ]; then
		skip_all "NVML found no GPU: $(py 'd["nodes"][0]["errors"].get("gpus", "no error given")' "$WORK/facts.json")"
	fi
	py '"\n".join("gpu %d: %s, %.1f GiB, %s" % (g["index"], g["name"], g["memory_bytes"] / 2**30, g["uuid"]) for g in d["nodes"][0]["gpus"])' "$WORK/facts.json" | tee -a "$RES"
	say "driver: $(py 'd["nodes"][0]["gpu_driver"]' "$WORK/facts.json")"
	say "nccl: $(py 'd["nodes"][0]["nccl"]' "$WORK/facts.json")"
	say "python: $(py 'd["nodes"][0]["python"]' "$WORK/facts.json")"
	say "torch: $(py 'd["nodes"][0]["torch"]' "$WORK/facts.json")"
	say "facts errors: $(py 'd["nodes"][0]["errors"]' "$WORK/facts.json")"
	check facts OK "$ngpu GPU(s) through NVML"
	# issue 35: every health key read (or NVML's NOT_SUPPORTED), none failed, on each GPU
	py '"\n".join("gpu %d health: %s" % (g["index"], json.dumps(g.get("health"))) for g in d["nodes"][0]["gpus"])' "$WORK/facts.json" | tee -a "$RES"
	say "gpu_pci: $(py 'd["nodes"][0].get("gpu_pci")' "$WORK/facts.json")"
	say "xid: $(py '{k: v for k, v in d["nodes"][0].get("xid", {}).items() if k != "events"}, len(d["nodes"][0].get("xid", {}).get("events", []))' "$WORK/facts.json")"
	hbad=$(py '[(g["index"], k) for g in d["nodes"][0]["gpus"] for k in ("pci_bus_id numa_node ecc retired_pages row_remap pcie nvlink clocks_mhz throttle temperature_c temperature_slowdown_c power_w power_limit_w persistence compute_mode mig").split() if k not in g.get("health", {}) and k not in g.get("health", {}).get("unsupported", [])] + [(g["index"], e) for g in d["nodes"][0]["gpus"] for e in g.get("health", {}).get("errors", {}).items()]' "$WORK/facts.json")
	if [ "$hbad" = "[]" ]; then check gpu-health-facts OK "every key on $ngpu GPU(s)"; else check gpu-health-facts FAIL "$hbad"; fi
	# issue 36: the RDMA facts (ports, GIDs, verbs, peer memory, memlock), or that there is none
	nrdma=$(py 'len(d["nodes"][0].get("rdma") or [])' "$WORK/facts.json")
	if [ "$nrdma" = 0 ]; then
		say "rdma: no RDMA device"
	else
		py '"\n".join("rdma %s:%s %s %s %s %s gids %d netdev %s numa %s" % (p["device"], p["port"], p.get("state"), p.get("phys_state"), p.get("link_layer"), p.get("rate"), len(p.get("gids") or []), p.get("netdev"), p.get("numa_node")) for p in d["nodes"][0]["rdma"])' "$WORK/facts.json" | tee -a "$RES"
	fi
	say "rdma_node: $(py 'd["nodes"][0].get("rdma_node")' "$WORK/facts.json")"
	say "rdma errors: $(py '{k: v for k, v in d["nodes"][0]["errors"].items() if k.startswith("rdma")}' "$WORK/facts.json")"
	# torch in a conda env or venv rather than the login python3: use what facts found
	found=$(py '(d["nodes"][0].get("python_candidates") or [{}])[0].get("path", "")' "$WORK/facts.json")
	if [ -n "$found" ]; then
		PYARGS=(--python "$found")
		say "## facts --python $found (the login python3 has no torch)"
		torch_libs "$found"
		"$CD" facts -w localhost -t 120 "${PYARGS[@]}" --json >"$WORK/facts.json" 2>>"$WORK/facts.err"
		say "torch: $(py 'd["nodes"][0]["torch"]' "$WORK/facts.json")"
	fi
fi

# --- bench: exact, and busbw = algbw x 2(n-1)/n
# bench_ranks NAME GPUS_PER_NODE
bench_ranks() {
	local name=$1 g=$2 out=$WORK/$1.json
	say "## bench --backend nccl, $g rank(s)"
	"$CD" bench -w localhost --backend nccl --gpus-per-node "$g" -b 8 -e "$BENCH_MAX" \
		--iters "$BENCH_ITERS" -t 120 --json >"$out" 2>"$WORK/$name.err"
	local rc=$?
	if ! command -v python3 >/dev/null 2>&1; then
		cat "$out" "$WORK/$name.err" >>"$RES"
		check "$name" SKIP "no python3 to read the results (exit status $rc)"
		return
	fi
	# no size measured (a node that could not run: fewer GPUs, no NCCL, init failed): its error
	if [ "$(py 'len(d.get("results") or [])' "$out" 2>/dev/null)" = 0 ] || ! py 1 "$out" >/dev/null 2>&1; then
		cat "$WORK/$name.err" "$out" | head -40 >>"$RES"
		check "$name" FAIL "exit status $rc, no results: $(py '[n.get("error") for n in d["nodes"] if n.get("error")] or d.get("failures")' "$out" 2>/dev/null)"
		return
	fi
	# the table, as nccl-tests prints it, with the formula next to the bench's busbw
	python3 - "$out" <<'EOF' | tee -a "$RES"
import json, sys
d = json.load(open(sys.argv[1]))
n = d["nranks"]
print("nranks %d, backend %s" % (n, d["backend"]))
print("%12s %10s %12s %12s %14s %7s" % ("bytes", "time_us", "algbw_GB/s", "busbw_GB/s", "2(n-1)/n*alg", "wrong"))
bad = 0
for r in d["results"]:
    want = r["algbw_gbps"] * 2 * (n - 1) / n if n > 1 else 0.0
    ok = abs(r["busbw_gbps"] - want) <= 1e-9 + 1e-6 * want and r["wrong"] == 0
    bad += not ok
    print("%12d %10.2f %12.3f %12.3f %14.3f %7d%s" % (r["bytes"], r["time_us"], r["algbw_gbps"],
          r["busbw_gbps"], want, r["wrong"], "" if ok else "  <-- MISMATCH"))
print("CHECK %s" % ("ok" if bad == 0 and d["results"] else "bad %d" % bad))
EOF
	if grep -q '^CHECK ok' <(tail -1 "$RES"); then
		check "$name" OK "$(py '"%d sizes exact; busbw at %d B: %.2f GB/s" % (len(d["results"]), d["results"][-1]["bytes"], d["results"][-1]["busbw_gbps"])' "$out")"
	else
		check "$name" FAIL "wrong results or busbw off nccl-tests' formula (see the table)"
	fi
	# issue 36: the network NCCL says it used, against the prediction (docs/nccl.md)
	local net
	net=$(py '(d["nodes"][0].get("network") or {})' "$out")
	say "nccl network: $net"
	py '"\n".join(d["nodes"][0].get("network", {}).get("nccl", {}).get("lines", []))' "$out" | sed 's/^/  /' | tee -a "$RES"
	case $(py '(d["nodes"][0].get("network") or {}).get("agrees", "absent")' "$out") in
	True) check "$name-network" OK "$(py '"NCCL used %s, as predicted" % d["nodes"][0]["network"]["nccl"]["transport"]' "$out")" ;;
	False) check "$name-network" FAIL "$(py 'd["nodes"][0]["network"].get("why")' "$out")" ;;
	None) check "$name-network" SKIP "$(py 'd["nodes"][0]["network"].get("why") or d["nodes"][0]["network"].get("error")' "$out")" ;;
	*) check "$name-network" FAIL "the bench's JSON has no network for the node" ;;
	esac
}
if [ "$ngpu" -gt 0 ] && [ "$(py 'd["nodes"][0]["nccl"] is not None' "$WORK/facts.json")" = True ]; then
	bench_ranks bench-nccl-1 1
	if [ "$ngpu" -gt 1 ]; then
		bench_ranks "bench-nccl-$ngpu" "$ngpu"
	else
		check bench-nccl-all SKIP "one GPU: the one-rank run is the whole machine"
	fi
else
	check bench-nccl SKIP "no NCCL library the agent can load (libnccl.so.2; Debian: libnccl2, or a pip torch's nvidia-nccl)"
fi

# --- mnist with NCCL, one rank, where torch has CUDA
if [ "$(py 'bool((d["nodes"][0]["torch"] or {}).get("cuda_available"))' "$WORK/facts.json" 2>/dev/null)" = True ]; then
	say "## mnist --mode torch --backend nccl, 1 rank"
	python3 "$CD_TOP/tests/fixtures/make_mnist.py" "$WORK/mnist" 6000 1000 >/dev/null &&
		"$CD" mnist -w localhost --mode torch --backend nccl --nproc-per-node 1 --epochs 2 "${PYARGS[@]}" \
			--data-dir "$WORK/mnist" --data-md5 "$WORK/mnist/MD5SUMS" --remote-dir "$WORK/remote" -t 120 --json >"$WORK/mnist.json" 2>"$WORK/mnist.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		py '"backend %s, ranks %d, epochs %s, test %s, timing_ms %s" % (d["backend"], d["nranks"], d["epochs"], d["test"], d["timing_ms"])' "$WORK/mnist.json" | tee -a "$RES"
		check mnist-nccl OK
	else
		tail -20 "$WORK/mnist.err" >>"$RES"
		py 'd.get("failure")' "$WORK/mnist.json" >>"$RES" 2>/dev/null
		check mnist-nccl FAIL "exit status $rc"
	fi
else
	check mnist-nccl SKIP "the login python3 has no torch with CUDA ($(py '(d["nodes"][0]["torch"], d["nodes"][0]["errors"].get("torch"))' "$WORK/facts.json" 2>/dev/null))"
fi
# --- run (issue 32): torchrun with NCCL, one rank per GPU, no --force: the check's plan must
# let it start on this one node; then `hang` on the same job with its last rank asleep before
# the allreduce the others wait in: 3 calls, one verdict.
if [ "$(py 'bool((d["nodes"][0]["torch"] or {}).get("cuda_available"))' "$WORK/facts.json" 2>/dev/null)" = True ]; then
	say "## run: torchrun, NCCL, $ngpu rank(s), no --force"
	cat >"$WORK/run_nccl.py" <<'EOF'
import os, sys, time
import torch
import torch.distributed as dist
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
r, w = dist.get_rank(), dist.get_world_size()
x = torch.ones(1 << 20, device="cuda") * (r + 1)
dist.all_reduce(x)
torch.cuda.synchronize()
print("rank %d/%d sum %d" % (r, w, int(x[0].item())), flush=True)
if len(sys.argv) > 1 and sys.argv[1] == "stuck":
    print("ready", flush=True)
    if r == w - 1:
        time.sleep(600)
    dist.all_reduce(x)
    torch.cuda.synchronize()
dist.destroy_process_group()
EOF
	"$CD" run -w localhost --nproc-per-node gpu "${PYARGS[@]}" --chdir "$WORK" --stall-timeout 120 \
		--env NCCL_DEBUG=INFO --env NCCL_DEBUG_SUBSYS=INIT,NET \
		--json -- run_nccl.py >"$WORK/run.json" 2>"$WORK/run.err"
	rc=$?
	# issue 36: the network NCCL chose, in its own words, against the RDMA facts
	netlines=$(grep -E 'NET/(IB|Socket|Plugin)|Using network' "$WORK/run.err" | sed 's/^.*NCCL INFO //' | sort -u | head -5)
	say "nccl network: ${netlines:-no NET line (NCCL_DEBUG=INFO printed none)}"
	if [ "${nrdma:-0}" = 0 ] && grep -q 'NET/IB : Using' <<<"$netlines"; then
		check nccl-transport FAIL "NCCL uses IB, but the facts found no RDMA device"
	elif [ "${nrdma:-0}" = 0 ] && [ -n "$netlines" ]; then
		check nccl-transport OK "no RDMA device, and NCCL does not use IB"
	elif [ -n "$netlines" ]; then
		check nccl-transport OK "$nrdma RDMA port(s); NCCL: $(head -1 <<<"$netlines")"
	else
		check nccl-transport SKIP "NCCL printed no NET line"
	fi
	want=$((ngpu * (ngpu + 1) / 2))
	got=$(grep -c "rank [0-9]*/$ngpu sum $want\$" "$WORK/run.err")
	if [ $rc -eq 0 ] && [ "$got" = "$ngpu" ]; then
		check run-nccl OK "$ngpu rank(s), every sum $want"
	else
		tail -20 "$WORK/run.err" >>"$RES"
		check run-nccl FAIL "exit status $rc, $got of $ngpu rank(s) with the sum $want"
	fi
	say "## hang: a stuck rank of a run, 3 calls"
	: >"$WORK/stuck.err"
	"$CD" run -w localhost --nproc-per-node gpu "${PYARGS[@]}" --chdir "$WORK" --stall-timeout 600 \
		--json -- run_nccl.py stuck >"$WORK/stuck.json" 2>>"$WORK/stuck.err" &
	stuck=$!
	for _ in $(seq 240); do
		[ "$(grep -c 'ready$' "$WORK/stuck.err")" -ge "$ngpu" ] && break
		kill -0 "$stuck" 2>/dev/null || break
		sleep 0.5
	done
	nready=$(grep -c 'ready$' "$WORK/stuck.err")
	verdicts=()
	if [ "$nready" -lt "$ngpu" ]; then
		tail -20 "$WORK/stuck.err" >>"$RES"
		check hang-stuck-rank FAIL "the stuck run did not start: $nready of $ngpu rank(s) ready (its log is above)"
	else
		sleep 2
		for i in 1 2 3; do
			timeout 90 "$CD" hang -w localhost --json >"$WORK/hang$i.json" 2>"$WORK/hang$i.err"
			verdicts+=("$(py '(d.get("status"), [s.get("rank") for s in d.get("suspects", [])][:1])' "$WORK/hang$i.json" 2>/dev/null)")
			say "call $i: ${verdicts[-1]}"
		done
		# one verdict, and one about the job: "not_inspected" is hang finding no rank at all
		case ${verdicts[0]} in
		"('hung', "* | "('progressing', "*) v0ok=1 ;;
		*) v0ok=0 ;;
		esac
		if [ $v0ok = 1 ] && [ "${verdicts[0]}" = "${verdicts[1]}" ] && [ "${verdicts[1]}" = "${verdicts[2]}" ]; then
			check hang-stuck-rank OK "3 calls, one verdict: ${verdicts[0]}"
		else
			tail -5 "$WORK/hang1.err" >>"$RES"
			py 'd.get("summary")' "$WORK/hang1.json" >>"$RES" 2>/dev/null
			check hang-stuck-rank FAIL "the verdicts differ, are missing or found no job: ${verdicts[*]}"
		fi
	fi
	stop_job "$stuck"
else
	check run-nccl SKIP "no torch with CUDA"
	check hang-stuck-rank SKIP "no torch with CUDA"
fi
# --- hang (issue 24, item 5): NCCL RAS and the Flight Recorder on a running 1-GPU NCCL job,
# through tests/gpu/hang_probe.c (hang/hang_ras.h, hang_fr.h), built here against the
# library. RAS needs NCCL >= 2.24 (JSON from 2.28.7); the Flight Recorder's pipe, torch >= 2.3.
hang_py=${found:-python3}
if [ "$(py 'bool((d["nodes"][0]["torch"] or {}).get("cuda_available"))' "$WORK/facts.json" 2>/dev/null)" != True ]; then
	check hang-ras SKIP "no torch with CUDA to run an NCCL job"
	check hang-fr SKIP "no torch with CUDA to run an NCCL job"
	check hang-gpu SKIP "no torch with CUDA to run an NCCL job"
elif ! command -v cc >/dev/null 2>&1; then
	check hang-probe SKIP "no C compiler (cc) to build tests/gpu/hang_probe.c"
elif ! cc -D_GNU_SOURCE -Icore -I. -std=c11 -O1 -o "$WORK/hang_probe" tests/gpu/hang_probe.c \
	"$LIBCD" -ljansson -lz -lm -ldl -pthread 2>"$WORK/probe.err"; then
	check hang-probe FAIL "$(head -3 "$WORK/probe.err")"
else
	say "## hang: RAS and Flight Recorder on a 1-GPU NCCL job"
	cat >"$WORK/hang_job.py" <<'EOF'
import sys, time
import torch
import torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
v = torch.cuda.nccl.version()
v = v if isinstance(v, tuple) else (v // 1000, v % 1000 // 100, v % 100)
print("ready nccl %d.%d.%d torch %s" % (v[0], v[1], v[2], torch.__version__), flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    dist.all_reduce(x)
    torch.cuda.synchronize()
    time.sleep(0.05)
dist.destroy_process_group()
EOF
	free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
	ras_port=$(free_port)
	# the Flight Recorder's buffer under the name this torch reads (TORCH_FR_* from 2.8)
	fr_var=TORCH_NCCL_TRACE_BUFFER_SIZE
	tv=$(py '(d["nodes"][0]["torch"] or {}).get("version") or ""' "$WORK/facts.json" 2>/dev/null)
	[ "$(printf '%s\n2.8\n' "${tv%%+*}" | sort -V | head -1)" = 2.8 ] && fr_var=TORCH_FR_BUFFER_SIZE
	# RANK and CLUSTERDOC_RUN make it a rank hang_sample finds (its GPU through NVML)
	: >"$WORK/hang_job.log"
	env RANK=0 WORLD_SIZE=1 CLUSTERDOC_RUN=gpu-hang-$$ \
		NCCL_RAS_ADDR=127.0.0.1:$ras_port MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) \
		"$fr_var=2000" TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$WORK/fr_pipe_" \
		TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$WORK/fr_rank_" \
		"$hang_py" "$WORK/hang_job.py" 60 >>"$WORK/hang_job.log" 2>&1 &
	hang_job=$!
	for _ in $(seq 120); do
		grep -q '^ready' "$WORK/hang_job.log" && break
		kill -0 "$hang_job" 2>/dev/null || break
		sleep 0.5
	done
	ready=$(grep -m1 '^ready' "$WORK/hang_job.log")
	if [ -z "$ready" ]; then
		tail -15 "$WORK/hang_job.log" >>"$RES"
		check hang-ras FAIL "the NCCL job did not start (its log is above)"
		check hang-fr SKIP "no NCCL job"
		check hang-gpu SKIP "no NCCL job"
	else
		say "job: $ready"
		nccl_v=$(awk '{print $3}' <<<"$ready")
		torch_v=$(awk '{print $5}' <<<"$ready")
		if [ "$(printf '%s\n2.24.0\n' "$nccl_v" | sort -V | head -1)" != 2.24.0 ]; then
			check hang-ras SKIP "NCCL $nccl_v has no RAS (2.24 and later)"
		else
			"$WORK/hang_probe" ras 127.0.0.1 "$ras_port" 8000 2000 >"$WORK/ras.json"
			rc=$?
			head -c 4000 "$WORK/ras.json" >>"$RES"
			if [ $rc -ne 0 ]; then
				check hang-ras FAIL "$(py '(d["before"].get("error_code"), d["before"].get("error"), d["after"].get("error"))' "$WORK/ras.json")"
			elif [ "$(py 'd["after"]["format"]' "$WORK/ras.json")" = json ]; then
				state=$(py '",".join(c["state"] for c in d["compare"])' "$WORK/ras.json")
				# a one-rank communicator's collective counts stay 0 (NCCL 2.28.9): idle is
				# the right answer for it
				if [ "$state" = progressing ] || [ "$state" = idle ]; then
					check hang-ras OK "NCCL $nccl_v, JSON status, the one-rank communicator $state"
				else
					check hang-ras FAIL "NCCL $nccl_v: states '$state', not one progressing communicator"
				fi
			elif [ "$(py 'len(d["after"]["groups"])' "$WORK/ras.json")" -gt 0 ]; then
				check hang-ras OK "NCCL $nccl_v, text status (before 2.28.7): $(py 'd["after"]["groups"][0]' "$WORK/ras.json")"
			else
				check hang-ras FAIL "NCCL $nccl_v: a text status with no communicator table"
			fi
		fi
		"$WORK/hang_probe" fr "$WORK/fr_pipe_" "$WORK/fr_rank_" 0 20000 >"$WORK/fr.json"
		rc=$?
		head -c 3000 "$WORK/fr.json" >>"$RES"
		if [ "$(py 'd["trigger"]' "$WORK/fr.json")" = -7 ]; then
			check hang-fr SKIP "torch $torch_v made no pipe file (the Flight Recorder pipe is torch >= 2.3)"
		elif [ $rc -ne 0 ]; then
			check hang-fr FAIL "$(py 'd["message"]' "$WORK/fr.json")"
		else
			check hang-fr OK "torch $torch_v: $(py '"%d entries, the last %s #%d %s" % (len(d["dump"]["entries"]), d["dump"]["entries"][-1]["op"], d["dump"]["entries"][-1]["seq"], d["dump"]["entries"][-1]["state"])' "$WORK/fr.json")"
		fi
		# the rank's GPU and its utilisation through NVML, as `clusterdoc hang` samples it
		"$WORK/hang_probe" sample "gpu-hang-$$" >"$WORK/sample.json"
		head -c 3000 "$WORK/sample.json" >>"$RES"
		gpu=$(py '"; ".join("GPU %s at %s %%" % (p["gpu"]["index"], p["gpu"]["util_gpu"]) if p.get("gpu") else "none" for p in d.get("processes", []) if p.get("role") == "rank")' "$WORK/sample.json" 2>/dev/null)
		if [ "$(py 'd.get("gpus") is None' "$WORK/sample.json" 2>/dev/null)" = True ]; then
			check hang-gpu FAIL "no NVML answer: $(py 'd.get("gpu_error") or d.get("error")' "$WORK/sample.json" 2>/dev/null)"
		elif [ "$(py '[p.get("gpu") is not None for p in d["processes"] if p.get("role") == "rank"] == [True]' "$WORK/sample.json")" = True ]; then
			check hang-gpu OK "the rank on $gpu"
		else
			check hang-gpu FAIL "the rank was not found on a GPU ($gpu); GPUs $(py 'd["gpus"]' "$WORK/sample.json")"
		fi
	fi
	stop_job "$hang_job"
fi
# --- gpu-burn (issue 35, item 3): 10 s on every GPU; GPU 0's figures beside torch's own bf16
# matmul (8192 x 8192, as the stress) and 1 GiB device copy (2 x the bytes per copy, as the
# stress counts them), timed here with CUDA events after the stress: within 10 %.
if [ "$(py 'bool((d["nodes"][0]["torch"] or {}).get("cuda_available"))' "$WORK/facts.json" 2>/dev/null)" = True ]; then
	say "## gpu-burn, 10 s"
	"$CD" gpu-burn -w localhost --seconds 10 "${PYARGS[@]}" -t 120 --json >"$WORK/burn.json" 2>"$WORK/burn.err"
	rc=$?
	"$CD" gpu-burn -w localhost --seconds 2 "${PYARGS[@]}" -t 120 2>&1 | tee -a "$RES" >/dev/null
	if ! py 'd["nodes"][0]["gpus"][0]["tflops"]' "$WORK/burn.json" >/dev/null 2>&1; then
		tail -20 "$WORK/burn.err" "$WORK/burn.json" >>"$RES"
		check gpu-burn FAIL "exit status $rc, no figures for GPU 0"
	else
		py '"\n".join("gpu-burn gpu %d %s %s: %.1f TFLOP/s, %.1f GB/s" % (g["index"], g.get("name"), g.get("dtype"), g.get("tflops", 0), g.get("gbps", 0)) for g in d["nodes"][0]["gpus"])' "$WORK/burn.json" | tee -a "$RES"
		timeout 180 "${found:-python3}" - >"$WORK/torch_ref.txt" 2>&1 <<'EOF'
import torch
dev = torch.device("cuda", 0)
dt = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
n, iters = 8192, 100
a = torch.randn(n, n, device=dev, dtype=dt); b = torch.randn(n, n, device=dev, dtype=dt)
c = torch.empty(n, n, device=dev, dtype=dt)
def timed(step, k):
    for _ in range(5):
        step()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(k):
        step()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / 1e3
t = timed(lambda: torch.matmul(a, b, out=c), iters)
print("%.3f" % (2.0 * n ** 3 * iters / t / 1e12))
del a, b, c
nb = 1 << 30
src = torch.empty(nb, device=dev, dtype=torch.uint8); dst = torch.empty_like(src)
t = timed(lambda: dst.copy_(src), 50)
print("%.3f" % (2.0 * nb * 50 / t / 1e9))
EOF
		ref_t=$(sed -n 1p "$WORK/torch_ref.txt")
		ref_b=$(sed -n 2p "$WORK/torch_ref.txt")
		burn_t=$(py 'd["nodes"][0]["gpus"][0]["tflops"]' "$WORK/burn.json")
		burn_b=$(py 'd["nodes"][0]["gpus"][0]["gbps"]' "$WORK/burn.json")
		say "torch's own, GPU 0: ${ref_t:-?} TFLOP/s, ${ref_b:-?} GB/s; gpu-burn: $burn_t TFLOP/s, $burn_b GB/s"
		if ! [[ $ref_t =~ ^[0-9.]+$ && $ref_b =~ ^[0-9.]+$ ]]; then
			cat "$WORK/torch_ref.txt" >>"$RES"
			check gpu-burn FAIL "torch's own timing failed (above)"
		elif python3 -c 'import sys; a, b, c, d = map(float, sys.argv[1:]); sys.exit(not (abs(a - c) <= 0.1 * c and abs(b - d) <= 0.1 * d))' \
			"$burn_t" "$burn_b" "$ref_t" "$ref_b"; then
			check gpu-burn OK "GPU 0 within 10 % of torch's own matmul and copy"
		else
			check gpu-burn FAIL "GPU 0 is more than 10 % off torch's own matmul or copy"
		fi
		if [ "$(py 'len(d["findings"])' "$WORK/burn.json")" = 0 ]; then
			check gpu-burn-healthy OK "no gpu-slow on $(py 'd["summary"]["measured"]' "$WORK/burn.json") GPU(s)"
		else
			check gpu-burn-healthy FAIL "$(py '[f["message"] for f in d["findings"]]' "$WORK/burn.json")"
		fi
	fi
else
	check gpu-burn SKIP "no torch with CUDA"
fi
say "# results in $RES; the run took $SECONDS s"
exit $status
