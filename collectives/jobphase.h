/* SPDX-License-Identifier: MIT */
/*
 * jobphase.h - what the bench (bench.c) and the MNIST job (mnist.c) do
 * alike on the head: put the nodes on the SSH pool, probe each one as soon
 * as it is up, and take a node out when one of its requests fails.
 *
 * The probe phase: `netprobe` without the firewall tools (the job's own
 * traffic is what counts) and, when the job names one, a second request
 * (`bench_caps`, `facts`); both answers are kept per node. Every answer is
 * counted in the job's fanout (fanout.h), which the job begins, ends and
 * reuses for its later phases.
 *
 * A failed request, or the pool losing the node, calls the job's broke()
 * with a message; the job records it and settles the node in its fanout.
 */
#ifndef CD_COLLECTIVES_JOBPHASE_H
#define CD_COLLECTIVES_JOBPHASE_H

#include "fanout.h"
#include "sshpool.h"

#include <jansson.h>
#include <stddef.h>

struct jobphase_ops {
	/* The probe phase's second request ("bench_caps", "facts"), sent when
	 * jobphase_init was told with_info; info_args (NULL: none) adds its
	 * arguments to it. */
	const char *info_cmd;
	void (*info_args)(void *arg, json_t *req);
	/* Node i is out: code ("agent", the pool's error code...) and msg
	 * ("host: netprobe failed: why", the pool's message) say why. */
	void (*broke)(void *arg, size_t i, const char *code, const char *msg);
	/* Called after broke when the pool lost node i (NULL: nothing more). */
	void (*lost)(void *arg, size_t i);
	int close_on_error; /* a failed request also closes its node */
};

/* A node as the shared phases see it. */
struct jobphase_node {
	struct sshpool_node *pn;
	json_t *probe; /* netprobe's answer; NULL until it came */
	json_t *info;  /* the second request's answer; NULL until it came */
};

struct jobphase {
	struct jobphase_node *nodes; /* nodes[0..n), owned */
	size_t n;
	struct fanout *fan; /* the job's, borrowed */
	int timeout_ms;     /* of each probe request */
	int with_info;      /* the probe phase sends ops->info_cmd too */
	const struct jobphase_ops *ops;
	void *arg;
};

/*
 * Add hosts[0..n) to pool in that order (each pool node's data is its
 * index) and expect their probe answers in fan: one each, two when
 * with_info (ops->info_cmd is then sent too). Nothing is sent
 * before jobphase_start. ops and fan must outlive jp.
 */
void jobphase_init(struct jobphase *jp, struct sshpool *pool, const char *const *hosts, size_t n,
                   struct fanout *fan, int timeout_ms, int with_info,
                   const struct jobphase_ops *ops, void *arg);
/* Start the pool: each node is probed as soon as it is up. */
void jobphase_start(struct jobphase *jp, struct sshpool *pool);
/* Drop the kept answers. The pool still holds the nodes. */
void jobphase_fini(struct jobphase *jp);

/* The index of a pool node added by jobphase_init. */
size_t jobphase_index(const struct sshpool_node *pn);

/*
 * The rule for a reply (sshpool_reply_cb's arguments): 0 when result is an
 * answer. Else 1, and the node is out: when the pool has already failed it
 * (its failure reaches broke through the pool), its answers are settled;
 * otherwise broke is called with "host: <what> failed: <msg>" and code
 * ("agent" when NULL), and with ops->close_on_error the node is closed.
 */
int jobphase_reply_failed(struct jobphase *jp, struct sshpool_node *pn, json_t *result,
                          const char *code, const char *msg, const char *what);

#endif
