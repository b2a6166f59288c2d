/* SPDX-License-Identifier: MIT */
/*
 * transport_back.h - the connect-back transport: the head listens on a TCP
 * port, a launcher starts one agent per node (`srun`, or local processes
 * for measurement), and each agent connects back and proves the run's
 * secret (backauth.h) before the agent protocol runs over the socket.
 *
 * The listener belongs to the pool (sshpool_start makes it when a launcher
 * other than ssh is chosen); each node's conn waits in it for the agent
 * that names that node, and a connection that arrives before its node is
 * waiting is parked until it is. A connection that fails the handshake,
 * names no node of the run or a node already connected is closed without
 * a word.
 *
 * Unproven connections wait in a bounded queue (one per node and 256 more):
 * each has 3 s (or the handshake deadline, if shorter) for its hello and
 * the handshake deadline for its proof, and when the queue is full, or the
 * head is out of descriptors, the oldest is closed for the newest, so a
 * flood of idle connections delays a real agent (which proves itself at
 * once) by no more than its own handshake. A listener that cannot accept
 * for want of descriptors rests 100 ms instead of spinning.
 */
#ifndef CD_TRANSPORT_BACK_H
#define CD_TRANSPORT_BACK_H

#include <stddef.h>

#include "loop.h"
#include "transport.h"

enum launcher {
	LAUNCHER_SSH,           /* the default: sshpool's own transports */
	LAUNCHER_SRUN,          /* srun starts the agents inside a Slurm allocation */
	LAUNCHER_LOCAL_CONNECT, /* the head spawns local agents that connect back (measurement) */
};

struct backlisten;

/* The launcher's name ("srun"), and the launcher named s (-1 when none). */
const char *launcher_name(enum launcher l);
int launcher_parse(const char *s);

/*
 * Listen for agents of a run reaching nodes hosts[0..n): on listen
 * ("ADDR", "ADDR:PORT", "[V6]:PORT", ":PORT" or NULL), else on the address
 * this machine reaches hosts[0] by (127.0.0.1 for local-connect), an
 * ephemeral port unless one is given; each handshake gets
 * handshake_timeout_ms. Raises RLIMIT_NOFILE to fit n connections.
 * Returns NULL with a message in err.
 */
struct backlisten *backlisten_new(struct loop *loop, enum launcher l, const char *listen,
                                  char *const hosts[], size_t n, int handshake_timeout_ms,
                                  char *err, size_t errlen);
/* Start the agents (agent_path on every node). Returns 0, or CD_ERR_IO
 * with a message in err (srun not found, a spawn failing). */
int backlisten_launch(struct backlisten *b, const char *agent_path, char *err, size_t errlen);
/* srun: before the step, copy the agent with `sbcast --force` to
 * /tmp/clusterdoc-agent.JOBID on the allocation's nodes and run that copy
 * (for an agent path the nodes do not share). */
void backlisten_set_sbcast(struct backlisten *b);
/* Connections closed before they proved themselves (silent past their
 * deadline, malformed, naming no node of the run, a wrong proof, crowded
 * out of the queue), and whether there were enough of them to call it a
 * flood (a flood or a scanner, not a firewall, kept agents out). */
size_t backlisten_dropped(const struct backlisten *b);
int backlisten_flooded(const struct backlisten *b);
/* What the failure of node host should add ("" or "; two agents proved
 * themselves as NODE ..."): with srun every task holds the run's secret, so
 * a task can connect under another node's name; the head sees it only as
 * a second proof of that node, and the node left without an agent is told. */
const char *backlisten_note(const struct backlisten *b, const char *host);
/* The launcher's own words while it has not started the agents ("srun: job
 * 10 queued and waiting for resources", its lines joined by "; "), or ""
 * once it has (or for a launcher that never waits): why a node's agent did
 * not connect back, when it is not the network. */
const char *backlisten_waiting(const struct backlisten *b);
/* The address agents connect to ("10.0.0.1:41234"). */
const char *backlisten_address(const struct backlisten *b);
/* Close the port and wait a moment for the launched processes (their
 * sockets are closed by then, so they end), then end what is left: SIGTERM
 * first (srun revokes a pending allocation, a local agent ends its
 * children), SIGKILL after a bounded grace. */
void backlisten_free(struct backlisten *b);

extern const struct transport_ops transport_back;

#endif
