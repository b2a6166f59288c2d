/* SPDX-License-Identifier: MIT */
/*
 * peerssh.h - the node-to-node SSH check that `mpirun`'s rsh launcher
 * needs: can node A log in to node B without a password and with a host
 * key A already knows? The agent on A runs, as the login user,
 *     ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true
 * toward every peer at once, each with a deadline, and says per peer
 * whether it worked and, when not, why, in words taken from ssh's own
 * error (peerssh_classify). The head gathers the n x n matrix
 * (peerssh_matrix.h).
 *
 * Agent request "peer_ssh" (docs/protocol.md):
 *   {"peers": ["node2", ...] (1..PEERSSH_MAX_PEERS names),
 *    "timeout_ms"?: int (1000..120000, default 10000)}
 * -> {"results": [{"peer", "ok": bool, "reason": peerssh_reason_id,
 *                  "detail": ssh's last stderr line (or ""), "status": int,
 *                  "ms": int}]} in the order of "peers".
 */
#ifndef CD_PROBES_PEERSSH_H
#define CD_PROBES_PEERSSH_H

#include <jansson.h>
#include <stddef.h>

#define PEERSSH_MAX_PEERS  4096
#define PEERSSH_TIMEOUT_MS 10000
#define PEERSSH_PARALLEL   32   /* ssh clients one agent runs at once */
#define PEERSSH_STDERR_MAX 4096 /* what is kept of one client's stderr */
#define PEERSSH_OUT_MAX \
	(1 << 20) /* its stdout, which `true` leaves empty (a chatty login rc may not) */
#define PEERSSH_DETAIL_MAX 256

enum peerssh_reason {
	PEERSSH_OK,
	PEERSSH_HOSTKEY_UNKNOWN, /* "No ... host key is known for" / "Host key verification failed"
	                          */
	PEERSSH_HOSTKEY_CHANGED, /* "REMOTE HOST IDENTIFICATION HAS CHANGED" */
	PEERSSH_DENIED,          /* "Permission denied (publickey...)" */
	PEERSSH_REFUSED,         /* "Connection refused" */
	PEERSSH_TIMEOUT,         /* "Connection timed out", or our own deadline */
	PEERSSH_UNREACHABLE,     /* "No route to host", "Network is unreachable" */
	PEERSSH_RESOLVE,         /* "Could not resolve hostname" */
	PEERSSH_NO_CLIENT,       /* no ssh program on the node */
	PEERSSH_OTHER,           /* anything else: the detail says what ssh said */
	PEERSSH_NREASONS
};

/* "ok", "hostkey-unknown", "hostkey-changed", "denied", "refused", "timeout",
 * "unreachable", "resolve", "no-client", "other". */
const char *peerssh_reason_id(enum peerssh_reason r);
/* In words, for the text report: "host key unknown", ... */
const char *peerssh_reason_text(enum peerssh_reason r);
/* The reason with that id; PEERSSH_OTHER when none has it. */
enum peerssh_reason peerssh_reason_from_id(const char *id);

/*
 * Why one `ssh ... PEER true` ended as it did (pure). status is its wait
 * status as waitpid gave it, timed_out says our deadline killed it, err is
 * its stderr (len bytes, need not be NUL-terminated). ssh exits 255 for its
 * own errors; any exit 0 is PEERSSH_OK; 127 from exec is PEERSSH_NO_CLIENT.
 * detail (PEERSSH_DETAIL_MAX bytes) gets the line of err the reason comes
 * from, else its last non-empty line, else "".
 */
enum peerssh_reason peerssh_classify(int status, int timed_out, const char *err, size_t len,
                                     char *detail);

/* The agent's "peer_ssh" handler (agent/agent.c's table). */
json_t *peerssh_agent_run(json_t *req, const char **code, char *msg, size_t msglen);

#endif
