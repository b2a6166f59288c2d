# SPDX-License-Identifier: MIT
# fabric_gloo.sh - sourced by the test_fabric_*.sh files (after itest.sh): the job's own traffic
# as the judge of a suggestion, a real Gloo allreduce with Debian's torch across the nodes'
# namespaces.

# gloo_allreduce SECONDS NODE=IFNAME,MASTER_ADDR... : a Gloo group of one rank per node (Debian's
# torch), each with GLOO_SOCKET_IFNAME=IFNAME and MASTER_ADDR, MASTER_PORT as suggested for node1,
# all-reduces a 4 MiB float32 tensor (TCP segments of the interface's MTU, jumbo on a 9000 NIC).
# Each rank logs "joined" once the group is up, then "sum S" when the allreduce completed; after
# SECONDS every rank still running is killed by its PID. Logs: $CD_RUN/gloo-RANK.log.
gloo_allreduce() {
	local secs=$1 r=0 n i spec pids=() t
	shift
	n=$#
	local py='import datetime, os, sys, torch, torch.distributed as dist
open(sys.argv[2], "w").write(str(os.getpid()))
dist.init_process_group("gloo", rank=int(sys.argv[1]), world_size=int(os.environ["WORLD_SIZE"]),
                        timeout=datetime.timedelta(seconds=60))
print("joined", flush=True)
x = torch.full((1 << 20,), float(dist.get_rank() + 1), dtype=torch.float32)
dist.all_reduce(x)
print("sum", x[0].item(), x[-1].item(), flush=True)'
	for spec in "$@"; do
		i=${spec%%=*}
		rm -f "$CD_RUN/gloo-$r.pid" "$CD_RUN/gloo-$r.log"
		cluster_node_exec "$i" env -i PATH=/usr/bin:/bin HOME=/root WORLD_SIZE="$n" \
			GLOO_SOCKET_IFNAME="$(cut -d, -f1 <<<"${spec#*=}")" MASTER_ADDR="$(cut -d, -f2 <<<"${spec#*=}")" \
			MASTER_PORT="$(jget "d['suggestions']['per_node']['node1'].get('MASTER_PORT', '29500')")" \
			timeout -s KILL $((secs + 10)) /usr/bin/python3 -c "$py" "$r" "$CD_RUN/gloo-$r.pid" \
			>"$CD_RUN/gloo-$r.log" 2>&1 &
		pids+=($!)
		r=$((r + 1))
	done
	for ((t = 0; t < secs * 10; t++)); do
		grep -qs '^sum' "$CD_RUN"/gloo-*.log && (($(grep -ls '^sum' "$CD_RUN"/gloo-*.log | wc -l) == n)) && break
		sleep 0.1
	done
	for ((r = 0; r < n; r++)); do
		[[ -s $CD_RUN/gloo-$r.pid ]] && kill -KILL "$(cat "$CD_RUN/gloo-$r.pid")" 2>/dev/null
	done
	wait "${pids[@]}" 2>/dev/null
	rm -f "$CD_RUN"/gloo-*.pid
	return 0
}
# gloo_count WORD: how many ranks logged a line starting with WORD
gloo_count() { cat "$CD_RUN"/gloo-*.log 2>/dev/null | grep -c "^$1"; }
