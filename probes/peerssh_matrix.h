/* SPDX-License-Identifier: MIT */
/*
 * peerssh_matrix.h - the head's side of the node-to-node SSH check
 * (peerssh.h): every node's agent is asked, at once, to log in to every
 * other node; the answers make an n x n matrix with the reason per pair.
 * An asynchronous module driven by the caller's loop, as netcheck is:
 * peerssh_matrix_start adds the hosts to the pool and starts it, and
 * done(arg) is called once, from the loop, when every node answered or
 * failed.
 */
#ifndef CD_PROBES_PEERSSH_MATRIX_H
#define CD_PROBES_PEERSSH_MATRIX_H

#include <jansson.h>
#include <stddef.h>

#include "cd.h"
#include "loop.h"
#include "peerssh.h"
#include "sshpool.h"

/* The most nodes one check takes: n * (n - 1) logins and an n x n matrix of
 * struct peerssh_cell (about 70 MB at 512). The front end refuses more. */
#define PEERSSH_MATRIX_MAX_NODES 512

/* One ordered pair: node `from` logging in to node `to`. */
struct peerssh_cell {
	int tested; /* the agent on `from` answered for this pair */
	enum peerssh_reason reason;
	char detail[PEERSSH_DETAIL_MAX]; /* ssh's words, "" when ok */
	int ms;
};

struct peerssh_matrix {
	size_t n;
	char **hosts;              /* [n], the names the nodes use for each other */
	struct peerssh_cell *cell; /* [n * n], row `from`, column `to`; the diagonal untested */
	char **node_error;         /* [n]: why node i could not be asked ("" when asked) */
};

/* The cell for from -> to. */
static inline const struct peerssh_cell *peerssh_cell_at(const struct peerssh_matrix *m,
                                                         size_t from, size_t to)
{
	return &m->cell[from * m->n + to];
}

/* Failing pairs (tested, not ok) and pairs not tested (a node could not be asked). */
size_t peerssh_matrix_failed(const struct peerssh_matrix *m);
size_t peerssh_matrix_untested(const struct peerssh_matrix *m);

/*
 * Fill row `from` of m from a peer_ssh result (pure): results[k] is the
 * answer for peer hosts[to] as the request listed them (every host but
 * `from`, in order). 0, or CD_ERR_PROTO with err when the result does
 * not have that shape; the row is then left untested.
 */
int peerssh_matrix_fill_row(struct peerssh_matrix *m, size_t from, const json_t *result, char *err,
                            size_t errlen);

/* An empty matrix over hosts (copied); peerssh_matrix_free frees. */
struct peerssh_matrix *peerssh_matrix_new(const char *const *hosts, size_t n);
void peerssh_matrix_free(struct peerssh_matrix *m);

/* The matrix as JSON: {"hosts": [...], "pairs": [{"from", "to", "ok",
 * "reason", "detail", "ms"}...], "node_errors": {host: why}}. New reference. */
json_t *peerssh_matrix_json(const struct peerssh_matrix *m);

/* The finding id (probes/diagnose.c's catalogue) for a failing reason:
 * "peer-ssh-hostkey-unknown", "peer-ssh-hostkey-changed", "peer-ssh-denied",
 * "peer-ssh-unreachable" (refused, timeout, no route, no name),
 * "peer-ssh-no-client", "peer-ssh-failed"; NULL for PEERSSH_OK. */
const char *peerssh_finding_id(enum peerssh_reason r);

/*
 * The findings of m (pure), one per finding id that a failing pair has, in
 * the catalogue's order, plus "node-unreachable" for nodes that could not
 * be asked: [{"id", "severity", "title", "pairs": ["a -> b", ...],
 * "message": one line naming the pairs, "fix": what to do}]. New reference.
 */
json_t *peerssh_matrix_findings(const struct peerssh_matrix *m);

struct peerssh_run;

/*
 * Ask every host's agent (through pool, which the run starts; hosts are
 * added in this order) to log in to every other one, each pair with
 * timeout_ms. done(arg) once from the loop. The run borrows pool and loop.
 */
struct peerssh_run *peerssh_run_start(struct loop *loop, struct sshpool *pool,
                                      const char *const *hosts, size_t n, int timeout_ms,
                                      void (*done)(void *), void *arg);
/* The matrix (borrowed from the run), complete after done. */
const struct peerssh_matrix *peerssh_run_matrix(const struct peerssh_run *r);
/* The pool's node i (NULL when it was not added). */
struct sshpool_node *peerssh_run_node(const struct peerssh_run *r, size_t i);
/* NULL is a no-op. Free the pool first: it fails what is pending into the run. */
void peerssh_run_free(struct peerssh_run *r);

#endif
