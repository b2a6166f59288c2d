/* SPDX-License-Identifier: MIT */
/*
 * bench_agent.h - the agent's side of `clusterdoc bench`: the requests that
 * open the ring's listeners and run the sweep on this node's ranks (one
 * thread per rank), for the TCP ring (ring.h) or NCCL (nccl.h). Requests
 * and results are in docs/protocol.md; the head's side is bench.h.
 *
 *   bench_caps    {} -> {"nccl": {"available", "reason" (when not),
 *                 "gpus", "version"}, "cpus"}
 *   bench_listen  {"token", "ranks": [{"rank", "address", "scope_id"}]}
 *                 -> {"listeners": [{"rank", "port"} | {"rank", "error"}]}:
 *                 one listener per local rank on its address, port 0 (the
 *                 kernel picks one from ip_local_port_range); a request
 *                 replaces the listeners of an earlier one
 *   bench_nccl_id {} -> {"id": 256 hex characters} (NCCL rank 0's node)
 *   bench_run     {"backend": "tcp"|"nccl", "token", "nranks", "conns",
 *                 "dtype", "sizes": [bytes...], "iters", "warmup", "check",
 *                 "stall_ms", "connect_timeout_ms", "nccl_id" (nccl),
 *                 "ranks": [{"rank", "gpu" (nccl), "right": {"address",
 *                 "scope_id", "port"} (tcp, when nranks > 1)}]}
 *                 -> {"ranks": [{"rank", "results": [{"bytes", "count",
 *                 "time_us", "wrong"}], "error": {"kind", "peer_rank",
 *                 "bytes", "message"} (only when it failed)}],
 *                 "nccl_net" (nccl): nccl_netlog_read's object, NCCL's
 *                 NCCL_DEBUG=INFO lines about its network (nccl_netlog.h:
 *                 the run, bench_caps and bench_nccl_id set NCCL's debug
 *                 variables for their NCCL calls)}
 *                 The listeners of bench_listen are closed at its end.
 *                 Returns when every local rank has finished or failed:
 *                 each wait is bounded by stall_ms without progress, and a
 *                 hangup of the agent's stdin (the head went away) ends it.
 *                 With "progress": true (proto.h's emitter installed), sends
 *                 {"sizes_done", "sizes", "bytes"} while it runs: the sizes
 *                 every local rank has completed, of how many, and the last
 *                 of them in bytes; only when sizes_done has moved, so at
 *                 most once per size, and at most one every 100 ms.
 *
 * A malformed request fails with "bad-request"; a backend that cannot run
 * here fails with "unavailable" and why.
 */
#ifndef CD_COLLECTIVES_BENCH_AGENT_H
#define CD_COLLECTIVES_BENCH_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define BENCH_MAX_BYTES       (4ULL << 30) /* per rank and size */
#define BENCH_MAX_LOCAL_RANKS 64
#define BENCH_MAX_SIZES       64 /* sizes in one bench_run */

json_t *bench_caps(json_t *req, const char **code, char *msg, size_t msglen);
json_t *bench_listen(json_t *req, const char **code, char *msg, size_t msglen);
json_t *bench_nccl_id(json_t *req, const char **code, char *msg, size_t msglen);
json_t *bench_run(json_t *req, const char **code, char *msg, size_t msglen);

/* The listener bench_listen opened for rank, handed over to the caller (who
 * closes it), or -1. For other users of the ring (the embedded trainer). */
int bench_listener_take(int rank);

/* Close what bench_listen left open (the agent's exit). */
void bench_shutdown(void);

#endif
