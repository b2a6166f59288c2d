/* SPDX-License-Identifier: MIT */
/*
 * reach.h - the agent's half of the reachability matrix: listen on a node's
 * candidate addresses, connect to the other nodes' listeners, classify every
 * attempt. Answers the `listen`, `connect` and `unlisten` requests
 * (docs/protocol.md). Agent side; libc only.
 *
 * The wire exchange between two agents (one TCP connection per attempt):
 *   connector -> listener   "CDREACH1 <token> <from-node>\n"
 *   listener  -> connector  "CDREACH1 <token> <listener-node>\n", then close
 * or, asking for the bulk proof (connect's bulk_bytes and a target's "bulk"):
 *   connector -> listener   "CDREACH1 <token> <from-node> bulk <bytes>\n"
 *   listener  -> connector  "CDREACH1 <token> <listener-node>\n", then both
 *                           send <bytes> and read as many, at once; the
 *                           connector closes when done or at its deadline
 * or, asking for the RDMA proof (a target's "rdma", reach_rdma.h), the
 * line ends in " rdma" (before any bulk suffix) and, after the answer,
 * the CDRDMA1 exchange of rdma_pair.h runs on the connection before the
 * bulk transfer.
 * The token is the head's random per-run hex string (16..64 chars). A
 * listener that reads a line with another token (or garbage, or nothing
 * within 2 s) closes the connection without answering, so a stray client
 * cannot join. One question is answered to anyone:
 *   asker     -> listener   "CDREACH1 who <token>\n"
 *   listener  -> asker      "CDREACH1 this-run\n" (the same token) or
 *                           "CDREACH1 other-run\n", then close
 * so an agent that cannot bind a port tells a concurrent clusterdoc run
 * from a stale job; the answer gives away no token. The connector checks
 * that the answer carries the token and the node index it meant to reach:
 * an address that exists on several nodes (docker0's 172.17.0.1) connects
 * to the wrong machine, and says so.
 *
 * Listeners are served by one thread that lives from `listen` until
 * `unlisten`, the agent's exit, or the request's duration_ms (default
 * 120000), whichever comes first, so the agent keeps answering requests
 * (including its own `connect`) while peers connect to it. The thread closes
 * every listening socket as it ends, so a listener past its duration
 * refuses connections.
 */
#ifndef CD_PROBES_REACH_H
#define CD_PROBES_REACH_H

#include <jansson.h>
#include <stddef.h>

#define REACH_MAGIC "CDREACH1"
/* The holder question and its two answers (newlines not included). */
#define REACH_WHO_PREFIX     REACH_MAGIC " who "
#define REACH_THIS_RUN_LINE  REACH_MAGIC " this-run"
#define REACH_OTHER_RUN_LINE REACH_MAGIC " other-run"

/*
 * listen request fields:
 *   token        string, required
 *   node         integer, this node's index in the run, required
 *   addresses    [{"address", "scope_id" (optional, for fe80::)}]: one
 *                listener per address on port 0, so the kernel picks the
 *                port from ip_local_port_range (what NCCL and Gloo do)
 *   ports        [29500, ...]: fixed ports (MASTER_PORT candidates), each
 *                bound once on the wildcard address, dual-stack "::" with
 *                IPV6_V6ONLY off (what PyTorch's TCPStore does), or
 *                "0.0.0.0" when IPv6 is unavailable
 *   duration_ms  integer 1..3600000, optional
 *   rdma         {"device", "port", "gid_index"}, optional: the RDMA
 *                proof's port, opened for the listener's life
 *                (reach_rdma_listen_side)
 * result: {"listeners": [{"address", "scope_id", "port"} or
 *                        {"address", "scope_id", "error", "errno_name"}],
 *          "fixed": [{"port", "bound": "::"|"0.0.0.0"} or
 *                    {"port", "error", "errno_name", "held_by" (optional)}],
 *          "rdma": the port, {"not_tested": why}, or null}
 * in request order; "error" is strerror's text. An address or port that
 * cannot be bound is reported in its row (an unparseable address as
 * EINVAL), never as a failed request. A fixed port already in use
 * (EADDRINUSE) is asked who holds it: the agent connects to it on loopback
 * (127.0.0.1, then ::1) and asks "CDREACH1 who <token>". "held_by" is
 * "other-run" when the holder answers REACH_OTHER_RUN_LINE (a concurrent
 * check of this node), "this-run" when it answers REACH_THIS_RUN_LINE (two
 * names of the run are one machine); it is absent when the holder is not a
 * clusterdoc listener or does not answer in time (a stale job; the
 * questions of one request share REACH_HOLDER_WAIT_MS, 2 s). When nobody
 * listens on loopback any more the bind is tried once again (the holder
 * may just have closed it). The request fails with code
 * "bad-request" when token or node is missing or malformed, or when
 * addresses, ports or duration_ms have the wrong type or range (nothing is
 * opened then). A second `listen` while the listener thread still runs
 * (before `unlisten`, and before its duration_ms is over) fails with code
 * "busy".
 */
json_t *reach_listen(json_t *req, const char **code, char *msg, size_t msglen);

/*
 * connect request fields:
 *   token       string, required
 *   node        integer, this node's index
 *   timeout_ms  integer 1..600000, the deadline for every attempt, from
 *               its connect to the answer (default 3000)
 *   targets     [{"id": integer, "node": expected node index, "address",
 *                 "scope_id" (optional), "port"}]
 * All attempts start at once (non-blocking connect; at most
 * REACH_MAX_INFLIGHT open at a time, the rest wait for a slot), so up to
 * REACH_MAX_INFLIGHT targets take at most one deadline; more take at most
 * one deadline per REACH_MAX_INFLIGHT (each attempt's deadline counts from
 * its own start), and less when attempts finish early.
 * result: {"results": [{"id", "result", "rtt_us" (connect time, when the
 *           TCP handshake completed), "message" (when it failed),
 *           "errno_name" (when an errno says why), "peer_node" (wrong-peer:
 *           the node that answered)}], "neigh_table_fulls": how often the
 *           kernel's neighbour table was full meanwhile (see
 *           netprobe_neigh_table_fulls; null where unreadable)} with the
 *           results in target order. A request with a
 *           malformed token, node, timeout_ms or target (no integer id, node
 *           or port, no string address) fails with "bad-request"; an address
 *           inet_pton cannot parse, or a port outside 1..65535, is that
 *           target's "error" with errno_name "EINVAL". result is one of:
 *   "ok"               the listener answered with our token and the
 *                      expected node
 *   "refused"          ECONNREFUSED (nobody listens, or a firewall's
 *                      tcp-reset)
 *   "timeout"          no TCP connection within the deadline
 *                      (dropped/filtered); errno_name "ETIMEDOUT"
 *   "no-route"         EHOSTUNREACH, "No route to host" (also a firewall
 *                      reject with icmp host-prohibited)
 *   "net-unreachable"  ENETUNREACH
 *   "wrong-peer"       another node (or this one) answered
 *   "bad-answer"       connected, but no valid answer before the deadline
 *   "error"            any other errno (errno_name says which: EINVAL for
 *                      a link-local address whose scope does not exist here,
 *                      EACCES/EPERM for a local firewall's output reject...)
 * With "bulk_bytes" (0..4 MiB, default 0) and "bulk": true on a target,
 * an "ok" attempt then moves bulk_bytes each way within the same deadline;
 * its row adds "bulk": "ok" | "stalled" (not done by the deadline: a path
 * that opens connections but drops large frames) | "broken" (the peer
 * closed or reset; "bulk_errno_name"), "bulk_bytes", "bulk_ms",
 * "bulk_sent", "bulk_received". One REACH_BULK_CHUNK buffer serves all
 * attempts, whatever their number.
 * With "rdma": {"device", "port", "gid_index"} in the request and "rdma":
 * true on a target, an answered attempt then proves RDMA to the listener
 * (reach_rdma.h: one RDMA WRITE of "rdma_bytes", 1..4 MiB, default 1 MiB,
 * under the same deadline, before any bulk proof); its row adds "rdma"
 * ("ok", "failed" or "not tested"), "rdma_why", "rdma_bytes", "rdma_ms",
 * "rdma_local", "rdma_peer" and "active_mtu" (rdma_try_json).
 * With "pmtu": true on a target, an answered attempt first probes the path
 * MTU over UDP (reach_pmtu.c: Don't Fragment, echoed by the listener's UDP
 * socket on the same address and port; "pmtu_echo" in its listen row), in
 * at most half of what is left of its deadline; its row adds "pmtu" (the
 * largest IP packet echoed, 0 when none was) and "pmtu_max" (the largest
 * tried: the route's MTU).
 */
#define REACH_MAX_INFLIGHT 512
json_t *reach_connect(json_t *req, const char **code, char *msg, size_t msglen);

/* Close every listener and stop the thread. Idempotent; result {}. */
json_t *reach_unlisten(json_t *req, const char **code, char *msg, size_t msglen);

/* Called at agent exit. */
void reach_shutdown(void);

/* The symbolic name of an errno value ("EHOSTUNREACH"), or "E<number>"
 * (in a per-thread buffer, valid until the thread's next call). */
const char *reach_errno_name(int err);

#endif
