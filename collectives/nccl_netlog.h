/* SPDX-License-Identifier: MIT */
/*
 * nccl_netlog.h - NCCL's own word on its network, on the node (agent side):
 * the NCCL_DEBUG settings the bench's NCCL runs under, and the lines about
 * the network read back from NCCL's debug file for bench_run's answer
 * (docs/protocol.md). The head reads them with probes/nccl_ib.h's
 * nccl_ib_parse_log.
 *
 * NCCL reads NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE once per
 * process, at its first log line (ncclDebugInit, src/debug.cc), opens the
 * file then (fopen "w", unbuffered: setbuf NULL) and writes every later
 * line of the process there; without NCCL_DEBUG_FILE it writes to stdout,
 * which is the agent's protocol channel. Its IB transport prints its
 * "NET/IB : Using ..." line once per process (ncclIbInit), so the lines are
 * read from the start of the file at every read.
 *
 * The settings, while a scope is open (nccl_netlog_begin .. _end):
 *   NCCL_DEBUG         INFO, unless it is INFO or TRACE already;
 *   NCCL_DEBUG_SUBSYS  INIT,NET; a user's list gets ",INIT,NET" added (one
 *                      starting with '^', an exclusion, is replaced);
 *   NCCL_DEBUG_FILE    a user's own, kept, unless it is under /dev/ (a
 *                      stream the agent cannot read back; /dev/stdout would
 *                      go into the protocol); else a private file of this
 *                      process: a temporary file unlinked at once, named
 *                      /proc/self/fd/N, that nothing else sees and nothing
 *                      leaves behind.
 * The environment is restored at the end of the scope: what the agent
 * starts later (jobs) sees the user's own values. The file of the first
 * scope is kept for the process (NCCL keeps the one it opened).
 *
 * setenv is not thread-safe: open and close a scope in the thread that
 * serves the request, while no other thread of the agent reads the
 * environment (the bench's rank threads start inside the scope and are
 * joined before it ends).
 */
#ifndef CD_COLLECTIVES_NCCL_NETLOG_H
#define CD_COLLECTIVES_NCCL_NETLOG_H

#include <stddef.h>

#include <jansson.h>

#define NCCL_NETLOG_READ_MAX  (1 << 20) /* bytes of the debug file read */
#define NCCL_NETLOG_LINES_MAX 32        /* lines kept */
#define NCCL_NETLOG_LINE_MAX  1024      /* bytes of one kept line */

/* The user's values of the three variables while a scope is open. */
struct nccl_netlog_scope {
	char *saved[3]; /* NULL = was unset */
	int active;     /* the variables were set; 0 when no file could be had */
};

/* Set the variables (see above) into the environment, keeping the user's
 * values in s. Never fails: when no private file can be made, nothing is
 * set (NCCL would write to stdout) and nccl_netlog_read says why. */
void nccl_netlog_begin(struct nccl_netlog_scope *s);

/* Restore what begin changed. */
void nccl_netlog_end(struct nccl_netlog_scope *s);

/* The network lines NCCL wrote so far in this process: {"lines": [...],
 * "file": the user's NCCL_DEBUG_FILE as expanded, or "private", "dropped":
 * N (only when lines were left out: past NCCL_NETLOG_LINES_MAX, or longer
 * than NCCL_NETLOG_LINE_MAX)}, or {"error": "..."} when no file was set
 * up or it cannot be read. NULL when no scope was ever opened (NCCL did not
 * run here). New reference. */
json_t *nccl_netlog_read(void);

/* Pure: from NCCL's output (len bytes, not NUL-terminated, any lines), the
 * ones about its network as nccl_ib_parse_log reads them ("NET/...",
 * "Using network ...", "... libibverbs ..."), each from its " NCCL INFO "
 * tag on (the "host:pid:tid [dev]" prefix dropped), duplicates (one per
 * rank) once. Into lines (a JSON array); returns the number left out. */
size_t nccl_netlog_pick(const char *buf, size_t len, json_t *lines);

/* Pure: NCCL_DEBUG_FILE's value as NCCL expands it ("%h" the host name up
 * to its first '.', "%p" the pid, "%%" a '%', any other '%x' kept) into out
 * (outlen bytes). 0, or -1 when it does not fit. */
int nccl_netlog_expand(const char *value, const char *host, long pid, char *out, size_t outlen);

#endif
