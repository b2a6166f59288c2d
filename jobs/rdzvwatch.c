/* SPDX-License-Identifier: MIT */
/*
 * rdzvwatch.c - the rendezvous watch on the head (rdzvwatch.h).
 */
#include "jobs/rdzvwatch.h"
#include "proto.h"
#include "sshpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [RDZV_OFF] = "off",
    [RDZV_WAITING] = "waiting",
    [RDZV_JOINED] = "joined",
    [RDZV_UNUSED] = "unused",
    [RDZV_TESTING] = "testing",
    [RDZV_UNREACHABLE] = "unreachable",
    [RDZV_REACHABLE] = "reachable",
    [RDZV_ENDED] = "ended",
};

const char *rdzvwatch_state_name(enum rdzvwatch_state s)
{
	return (size_t)s < CD_ARRAY_LEN(state_names) ? state_names[s] : "?";
}

/* What a failed connect most likely means, by its result. */
static const struct {
	const char *result, *words;
} reasons[] = {
    {"timeout", "timed out (a firewall drops it?)"},
    {"refused", "refused (nothing listens there, or a firewall rejects it)"},
    {"no-route", "no route to host (a firewall rejects it, or no route)"},
    {"net-unreachable", "network unreachable (no route to that network)"},
};

void rdzvwatch_explain(const char *host, const char *addr, int port, int master, const char *result,
                       const char *errno_name, int ms, char *out, size_t len)
{
	const char *open = strchr(addr, ':') ? "[" : "", *close = *open ? "]" : "";
	const char *own = master ? "its own " : "";
	const char *words = NULL;

	if (!result || !result[0]) {
		snprintf(out, len, "%s did not answer the connect test to %s%s%s:%d", host, open,
		         addr, close, port);
		return;
	}
	if (strcmp(result, "connected") == 0) {
		snprintf(out, len,
		         "%s reaches %s%s%s%s:%d now (connected in %d ms), but its job had not "
		         "joined",
		         host, own, open, addr, close, port, ms);
		return;
	}
	for (size_t k = 0; k < CD_ARRAY_LEN(reasons); k++) {
		if (strcmp(result, reasons[k].result) == 0)
			words = reasons[k].words;
	}
	if (!words)
		words = errno_name && errno_name[0] ? errno_name : result;
	snprintf(out, len, "%s cannot reach %s%s%s%s:%d: %s", host, own, open, addr, close, port,
	         words);
}

void rdzvwatch_init(struct rdzvwatch *w, struct jobphase *job, const struct rdzvwatch_ops *ops,
                    void *arg, int timeout_ms, int request_timeout_ms)
{
	memset(w, 0, sizeof(*w));
	w->job = job;
	w->ops = ops;
	w->arg = arg;
	w->timeout_ms = timeout_ms;
	w->request_timeout_ms = request_timeout_ms;
	w->nodes = cd_calloc(job->n ? job->n : 1, sizeof(*w->nodes));
}

void rdzvwatch_start(struct rdzvwatch *w, const char *addr, int port, const char *run,
                     int always_used, int64_t now)
{
	if (w->timeout_ms <= 0 || !addr || !addr[0])
		return;
	snprintf(w->addr, sizeof(w->addr), "%s", addr);
	snprintf(w->run, sizeof(w->run), "%s", run ? run : "");
	w->port = port;
	w->always_used = always_used;
	w->started = now;
	w->last_query = now - RDZVWATCH_QUERY_MS;
	w->state = RDZV_WAITING;
	w->active = 1;
}

static const char *host_of(const struct rdzvwatch *w, size_t i)
{
	return sshpool_node_host(w->job->nodes[i].pn);
}

/* All connect tests are in: name every node that cannot reach the master. */
static void judge(struct rdzvwatch *w)
{
	char line[512], list[CD_ERRLEN] = "";
	size_t used = 0, bad = 0;

	for (size_t i = 0; i < w->job->n; i++) {
		const struct rdzvwatch_node *n = &w->nodes[i];

		if (n->joined || !n->tested || strcmp(n->result, "connected") == 0)
			continue;
		rdzvwatch_explain(host_of(w, i), w->addr, w->port, i == 0, n->result, n->errno_name,
		                  n->test_ms, line, sizeof(line));
		if (bad++ < 4)
			used += (size_t)snprintf(list + used,
			                         used < sizeof(list) ? sizeof(list) - used : 0,
			                         "%s%s", bad > 1 ? "; " : "", line);
		if (used >= sizeof(list))
			used = sizeof(list) - 1;
	}
	if (bad > 4)
		snprintf(list + used, sizeof(list) - used, "; and %zu more", bad - 4);
	if (bad) {
		w->state = RDZV_UNREACHABLE;
		snprintf(w->verdict, sizeof(w->verdict),
		         "the ranks did not all join the rendezvous within %d s "
		         "(--rendezvous-timeout): %s; stopped the job",
		         w->timeout_ms / 1000, list);
		w->ops->unreachable(w->arg, w->verdict);
		return;
	}
	w->state = RDZV_REACHABLE;
	snprintf(w->verdict, sizeof(w->verdict),
	         "the ranks had not all joined the rendezvous after %d s, but every node "
	         "connects to the master now: the job goes on",
	         w->timeout_ms / 1000);
}

static void read_state(struct rdzvwatch *w, size_t i, json_t *result)
{
	struct rdzvwatch_node *n = &w->nodes[i];

	n->processes = (int)json_integer_value(json_object_get(result, "processes"));
	n->connecting = (int)json_integer_value(json_object_get(result, "connecting"));
	n->listening = json_is_true(json_object_get(result, "listening"));
	if (json_integer_value(json_object_get(result, "established")) > 0 && !n->joined) {
		n->joined = 1;
		n->joined_ms = cd_now_ms() - w->started;
	}
	if (n->joined || n->connecting || n->listening)
		w->used = 1;
}

static void on_state(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct rdzvwatch *w = arg;
	size_t i = jobphase_index(pn);

	w->nodes[i].querying = 0;
	if (!w->active || !result)
		return; /* a node lost is the job watch's to report */
	read_state(w, i, result);
}

static void on_test(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct rdzvwatch *w = arg;
	size_t i = jobphase_index(pn);
	struct rdzvwatch_node *n = &w->nodes[i];
	json_t *test = json_object_get(result, "test");

	if (!w->active || w->state != RDZV_TESTING)
		return;
	n->tested = 1;
	if (result) {
		read_state(w, i, result);
		snprintf(n->result, sizeof(n->result), "%s",
		         json_string_value(json_object_get(test, "result")) ?: "");
		snprintf(n->errno_name, sizeof(n->errno_name), "%s",
		         json_string_value(json_object_get(test, "errno_name")) ?: "");
		n->test_ms = (int)json_integer_value(json_object_get(test, "ms"));
	}
	if (--w->pending == 0)
		judge(w);
}

static void ask(struct rdzvwatch *w, size_t i, int test)
{
	json_t *req = proto_request(0, "rdzv_state");

	json_object_set_new(req, "addr", json_string(w->addr));
	json_object_set_new(req, "port", json_integer(w->port));
	if (w->run[0])
		json_object_set_new(req, "run", json_string(w->run));
	if (test) {
		json_object_set_new(req, "test_ms", json_integer(RDZVWATCH_TEST_MS));
		w->pending++;
	} else {
		w->nodes[i].querying = 1;
	}
	sshpool_request(w->job->nodes[i].pn, req, w->request_timeout_ms, test ? on_test : on_state,
	                w);
}

void rdzvwatch_tick(struct rdzvwatch *w, int64_t now)
{
	int all_joined = 1, any = 0;

	if (!w->active || w->state != RDZV_WAITING)
		return;
	for (size_t i = 0; i < w->job->n; i++) {
		if (!w->ops->running(w->arg, i))
			continue;
		any = 1;
		if (!w->nodes[i].joined)
			all_joined = 0;
	}
	if (!any)
		return;
	if (all_joined) {
		w->state = RDZV_JOINED;
		w->joined_ms = now - w->started;
		return;
	}
	if (now - w->started >= w->timeout_ms) {
		if (!w->used && !w->always_used) {
			w->state = RDZV_UNUSED;
			return;
		}
		w->state = RDZV_TESTING;
		for (size_t i = 0; i < w->job->n; i++) {
			if (w->ops->running(w->arg, i) && !w->nodes[i].joined)
				ask(w, i, 1);
		}
		return;
	}
	if (now - w->last_query < RDZVWATCH_QUERY_MS)
		return;
	w->last_query = now;
	for (size_t i = 0; i < w->job->n; i++) {
		if (w->ops->running(w->arg, i) && !w->nodes[i].joined && !w->nodes[i].querying)
			ask(w, i, 0);
	}
}

void rdzvwatch_end(struct rdzvwatch *w)
{
	if (w->state == RDZV_WAITING || w->state == RDZV_TESTING)
		w->state = RDZV_ENDED;
	w->active = 0;
}

void rdzvwatch_fini(struct rdzvwatch *w)
{
	free(w->nodes);
	w->nodes = NULL;
}
