/* SPDX-License-Identifier: MIT */
/*
 * rdzv_agent.h - the agent's side of the rendezvous watch of `clusterdoc
 * run` and `clusterdoc mnist --mode torch` (jobs/rdzvwatch.h): has
 * this node's job joined the rendezvous at MASTER_ADDR:MASTER_PORT, and,
 * when asked, can this node reach that address and port now.
 *
 *   rdzv_state {"addr": "10.1.2.11", "port": 29500, "run": "<run id>" (optional),
 *               "test_ms": 0..10000 (optional, default 0: no test)}
 *       -> {"processes": n, "established": e, "connecting": c,
 *           "listening": true|false,
 *           "test": null | {"result", "errno_name" (when it failed), "ms"}}
 *
 * The job's processes are the agent's current job's (every process whose
 * session is the job's reaper's, core/job_process.h) and, with "run", every
 * process of the agent's user whose environment holds CLUSTERDOC_RUN=<run>
 * (ranks that left the session, mpirun's ranks). Their socket fds
 * (/proc/PID/fd) are looked up in the agent's own /proc/net/tcp and tcp6:
 * "established" counts their ESTABLISHED connections to addr:port (torch's
 * TCPStore clients: the job has joined), "connecting" their SYN_SENT ones
 * (trying), "listening" is true when one of them listens on port (the
 * master's TCPStore). "test_ms" > 0: one plain TCP connect from this node to
 * addr:port within that deadline, closed at once (nothing is sent);
 * "result" is "connected", "refused", "timeout", "no-route",
 * "net-unreachable" or "error" (errno_name says which), "ms" how long it
 * took. A request without addr, with an address inet_pton cannot read, or
 * a field out of range fails with "bad-request"; a process table or TCP
 * table over its cap fails with "too-big". Nothing is changed.
 */
#ifndef CD_COLLECTIVES_RDZV_AGENT_H
#define CD_COLLECTIVES_RDZV_AGENT_H

#include "probes/procscan.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RDZV_AGENT_TEST_MAX_MS 10000
#define RDZV_AGENT_MAX_INODES  16384 /* socket fds of the job's processes */
#define RDZV_AGENT_TCP_MAX     65536 /* rows of /proc/net/tcp plus tcp6 */

json_t *rdzv_agent_state(json_t *req, const char **code, char *msg, size_t msglen);

/* What the job's sockets say about addr:port. */
struct rdzv_sockets {
	int established; /* ESTABLISHED to the endpoint */
	int connecting;  /* SYN_SENT to the endpoint */
	int listening;   /* 1: a LISTEN socket on the endpoint's port */
};

/*
 * The endpoint text procscan_tcp_parse gives for addr and port:
 * "10.1.2.11:29500", "[fd00::11]:29500" (inet_ntop's form of the address).
 * 0, or -1 when addr is neither IPv4 nor IPv6. Pure.
 */
int rdzv_agent_endpoint(const char *addr, int port, char *out, size_t len);

/*
 * Count the sockets of t[0..nt) whose inode is in inodes[0..ni) (sorted
 * ascending) against endpoint (rdzv_agent_endpoint's text) and port. Pure.
 */
void rdzv_agent_classify(const struct procscan_tcp *t, size_t nt, const uint64_t *inodes, size_t ni,
                         const char *endpoint, int port, struct rdzv_sockets *out);

#endif
