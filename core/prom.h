/* SPDX-License-Identifier: MIT */
/*
 * prom.h - metrics in Prometheus' text exposition format (0.0.4), built in
 * memory, then written atomically for node_exporter's textfile collector or
 * PUT to a Pushgateway.
 *
 * A struct prom holds metric families in the order they were declared; a
 * family's samples are rendered together, in the order added, after its
 * `# HELP` and `# TYPE` lines. A family without samples is left out. There
 * are never timestamps: the textfile collector ignores them and the
 * Pushgateway refuses them.
 *
 * Names: metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
 * [a-zA-Z_][a-zA-Z0-9_]* and do not start with "__". Label values are any
 * UTF-8; they are escaped (\\, \", \n), as is HELP text (\\, \n). Values are
 * rendered exactly (the shortest "%.17g" form that reads back the same:
 * 1, 0.5, 1.5e+09), or NaN, +Inf, -Inf.
 *
 * Each sample belongs to a push group: the host it describes, or NULL for a
 * value about the run as a whole. The file holds every group; a push sends
 * one request per group (see prom_push).
 */
#ifndef CD_PROM_H
#define CD_PROM_H

#include <stddef.h>

struct buf;
struct prom;

enum prom_type { PROM_GAUGE, PROM_COUNTER, PROM_UNTYPED };

struct prom *prom_new(void);
void prom_free(struct prom *p);

/* Declare a family. 0, or CD_ERR_PARSE (invalid name, or declared twice). */
int prom_family(struct prom *p, const char *name, enum prom_type type, const char *help);

/*
 * Add one sample to the declared family `name`, with labels given as
 * name, value pairs ended by NULL:
 *   prom_add(p, "clusterdoc_check_node_up", "node2", 1, "node", "node2", NULL);
 * Returns 0, CD_ERR_NOTFOUND (the family was not declared), CD_ERR_PARSE (an
 * invalid label name, a label given twice, or the same label set already in
 * the family: each series appears once) or CD_ERR_NOMEM. Nothing is added on
 * error.
 */
int prom_add(struct prom *p, const char *name, const char *group, double value, ...);

/* The number of samples held. */
size_t prom_count(const struct prom *p);

/* Append the exposition of every sample to out. 0, or CD_ERR_TOOBIG. */
int prom_render(const struct prom *p, struct buf *out);

/* Append the exposition of the samples of one group (NULL: the run-level
 * samples) to out. 0, or CD_ERR_TOOBIG. */
int prom_render_group(const struct prom *p, const char *group, struct buf *out);

/* The same for group and the run-level samples together (one family's
 * samples stay together), for a push where they share one grouping key. */
int prom_render_with_run(const struct prom *p, const char *group, struct buf *out);

/* Write every sample to path atomically (a temporary file in the same
 * directory, not ending in .prom, then rename), mode 0644. 0, or CD_ERR_IO
 * with a message naming path. */
int prom_write_file(const struct prom *p, const char *path, char *err, size_t errlen);

/* The push groups in first-use order, and the name of group i (NULL for
 * the run-level group); for prom_push. */
size_t prom_group_count(const struct prom *p);
const char *prom_group_name(const struct prom *p, size_t i);

/* Whether name is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not "__..."). */
int prom_label_name_valid(const char *name);

struct prom_push_opts {
	const char *url;          /* the gateway, "http://host:9091" (a trailing / is fine) */
	const char *job;          /* the job label, "clusterdoc" */
	const char *run_instance; /* the instance of the run-level group (the head's name) */
	const char *label;        /* an extra grouping label (e.g. "command"), or NULL */
	const char *value;        /* its value */
	int timeout_ms;           /* per request, connect included; 0 = 10000 */
};

/*
 * PUT each group to the Pushgateway:
 *   PUT <url>/metrics/job/<job>/instance/<group or run_instance>[/<label>/<value>]
 * with Content-Type "text/plain; version=0.0.4". PUT replaces everything the
 * gateway holds for that grouping key, so stale series do not linger. A path
 * value that is empty or holds '/' is sent as <name>@base64/<URL-safe
 * base64>. Groups are pushed in first-use order; the first failure stops the
 * push. When run_instance is also the name of a group (the head is one of
 * the nodes), the run-level samples go in that group's request: two PUTs to
 * one grouping key would replace each other. Blocks, at most timeout_ms per group: call it after
 * the loop has ended (core/prom_push.c). Returns the number of groups pushed (>= 0), or a negative
 * cd_err with err naming the URL and what to do: CD_ERR_REFUSED  the connection was refused, or
 * HTTP >= 400 (the status and the first line of the gateway's explanation) CD_ERR_TIMEOUT  no
 * answer within timeout_ms CD_ERR_NOTFOUND the host name does not resolve CD_ERR_PARSE    the URL
 * is not http:// or https://
 */
int prom_push(const struct prom *p, const struct prom_push_opts *o, char *err, size_t errlen);

#endif
