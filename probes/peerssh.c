/* SPDX-License-Identifier: MIT */
/*
 * peerssh.c - the agent's side of the node-to-node SSH check (peerssh.h):
 * one `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` per
 * peer, PEERSSH_PARALLEL at a time, each killed at its deadline, and the
 * reason read from its stderr.
 */
#include "peerssh.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const struct {
	const char *id;
	const char *text;
} reasons[PEERSSH_NREASONS] = {
    [PEERSSH_OK] = {"ok", "ok"},
    [PEERSSH_HOSTKEY_UNKNOWN] = {"hostkey-unknown", "host key unknown"},
    [PEERSSH_HOSTKEY_CHANGED] = {"hostkey-changed", "host key changed"},
    [PEERSSH_DENIED] = {"denied", "permission denied"},
    [PEERSSH_REFUSED] = {"refused", "connection refused"},
    [PEERSSH_TIMEOUT] = {"timeout", "timeout"},
    [PEERSSH_UNREACHABLE] = {"unreachable", "no route to host"},
    [PEERSSH_RESOLVE] = {"resolve", "name does not resolve"},
    [PEERSSH_NO_CLIENT] = {"no-client", "no ssh client"},
    [PEERSSH_OTHER] = {"other", "ssh failed"},
};

const char *peerssh_reason_id(enum peerssh_reason r)
{
	return r < PEERSSH_NREASONS ? reasons[r].id : "other";
}

const char *peerssh_reason_text(enum peerssh_reason r)
{
	return r < PEERSSH_NREASONS ? reasons[r].text : "ssh failed";
}

enum peerssh_reason peerssh_reason_from_id(const char *id)
{
	for (int r = 0; r < PEERSSH_NREASONS; r++)
		if (id && strcmp(id, reasons[r].id) == 0)
			return (enum peerssh_reason)r;
	return PEERSSH_OTHER;
}

/* ---------------------------------------------------------------- classify */

/* ssh's words, strongest first: a changed key is also a failed
 * verification, and a denied login may follow a warning. */
static const struct {
	const char *words;
	enum peerssh_reason reason;
} patterns[] = {
    {"REMOTE HOST IDENTIFICATION HAS CHANGED", PEERSSH_HOSTKEY_CHANGED},
    {"has changed and you have requested strict checking", PEERSSH_HOSTKEY_CHANGED},
    {"host key is known for", PEERSSH_HOSTKEY_UNKNOWN},
    {"Host key verification failed", PEERSSH_HOSTKEY_UNKNOWN},
    {"Permission denied", PEERSSH_DENIED},
    {"Too many authentication failures", PEERSSH_DENIED},
    {"Connection refused", PEERSSH_REFUSED},
    {"Connection timed out", PEERSSH_TIMEOUT},
    {"Operation timed out", PEERSSH_TIMEOUT},
    {"No route to host", PEERSSH_UNREACHABLE},
    {"Network is unreachable", PEERSSH_UNREACHABLE},
    {"Could not resolve hostname", PEERSSH_RESOLVE},
    {"Name or service not known", PEERSSH_RESOLVE},
};

/* The line of err[0..len) holding the first byte at off, into detail. */
static void line_at(const char *err, size_t len, size_t off, char *detail)
{
	size_t s = off, e = off;

	while (s > 0 && err[s - 1] != '\n')
		s--;
	while (e < len && err[e] != '\n' && err[e] != '\r')
		e++;
	snprintf(detail, PEERSSH_DETAIL_MAX, "%.*s", (int)(e - s), err + s);
	/* plain ASCII: the line goes into JSON, which wants valid UTF-8 */
	for (char *d = detail; *d; d++)
		if ((unsigned char)*d < 0x20 || (unsigned char)*d > 0x7e)
			*d = '?';
}

static const char *find_words(const char *err, size_t len, const char *words)
{
	size_t wl = strlen(words);

	for (size_t k = 0; k + wl <= len; k++)
		if (memcmp(err + k, words, wl) == 0)
			return err + k;
	return NULL;
}

enum peerssh_reason peerssh_classify(int status, int timed_out, const char *err, size_t len,
                                     char *detail)
{
	size_t e = len;

	detail[0] = '\0';
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return PEERSSH_OK;
	for (size_t k = 0; k < CD_ARRAY_LEN(patterns); k++) {
		const char *at = find_words(err, len, patterns[k].words);

		if (at) {
			line_at(err, len, (size_t)(at - err), detail);
			return patterns[k].reason;
		}
	}
	/* the last line that says something */
	while (e > 0 && (err[e - 1] == '\n' || err[e - 1] == '\r' || err[e - 1] == ' '))
		e--;
	if (e > 0)
		line_at(err, e, e - 1, detail);
	if (timed_out)
		return PEERSSH_TIMEOUT;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return PEERSSH_NO_CLIENT;
	return PEERSSH_OTHER;
}

/* ---------------------------------------------------------------- the agent */

struct peer_runs;

struct peer_child {
	const char *peer;
	int status;
	int timed_out;
	int64_t start_ms, end_ms;
	char err[PEERSSH_STDERR_MAX];
	size_t len;
	struct peer_runs *runs; /* the request's runs it belongs to */
};

/* The children of one request, run on a private loop (childrun.h), at most
 * PEERSSH_PARALLEL at a time, each until its deadline. */
struct peer_runs {
	struct loop *loop;
	struct peer_child *cs;
	size_t n, next, running;
	int timeout_ms;
};

static void start_next(struct peer_runs *r);

/* A child ended: its status or deadline and the first PEERSSH_STDERR_MAX
 * bytes of its stderr (ssh's reason comes first); then the next one. */
static void on_child(const struct childrun_result *res, void *arg)
{
	struct peer_child *c = arg;
	struct peer_runs *r = c->runs;

	c->end_ms = cd_now_ms();
	c->status = res->rc == 0 ? res->status : 255 << 8;
	c->timed_out = res->rc == CD_ERR_TIMEOUT;
	c->len = res->err->len < sizeof(c->err) - 1 ? res->err->len : sizeof(c->err) - 1;
	if (c->len)
		memcpy(c->err, res->err->data, c->len);
	if (res->rc < 0 && !c->timed_out && !c->len)
		c->len = (size_t)snprintf(c->err, sizeof(c->err), "%s\n", res->error);
	r->running--;
	start_next(r);
}

/* Start `ssh ... PEER true` for the next peers while there is room; stop
 * the loop once every child has ended. A child that cannot start ends at
 * once, with the reason as its stderr. */
static void start_next(struct peer_runs *r)
{
	while (r->running < PEERSSH_PARALLEL && r->next < r->n) {
		struct peer_child *c = &r->cs[r->next++];
		char cto[64], err[CD_ERRLEN];
		/* ConnectTimeout in whole seconds, under our own deadline so that
		 * ssh says "timed out" itself where it can */
		char *argv[] = {"ssh",
		                "-o",
		                "BatchMode=yes",
		                "-o",
		                "StrictHostKeyChecking=yes",
		                "-o",
		                cto,
		                "-o",
		                "LogLevel=ERROR",
		                "-T",
		                (char *)c->peer,
		                "true",
		                NULL};

		snprintf(cto, sizeof(cto), "ConnectTimeout=%d",
		         r->timeout_ms > 2000 ? r->timeout_ms / 1000 - 1 : 1);
		c->start_ms = cd_now_ms();
		if (!childrun_start(r->loop, argv, r->timeout_ms, PEERSSH_OUT_MAX, 1 << 16,
		                    on_child, c, err, sizeof(err))) {
			c->end_ms = c->start_ms;
			c->status = 255 << 8;
			c->len = (size_t)snprintf(c->err, sizeof(c->err), "%s\n", err);
			continue;
		}
		r->running++;
	}
	if (!r->running && r->next == r->n)
		loop_stop(r->loop);
}

static void run_all(struct peer_child *cs, size_t n, int timeout_ms)
{
	struct peer_runs r = {.loop = loop_new(), .cs = cs, .n = n, .timeout_ms = timeout_ms};

	for (size_t k = 0; k < n; k++)
		cs[k].runs = &r;
	start_next(&r);
	if (r.running)
		loop_run(r.loop); /* until the last child ends: each has its deadline */
	loop_free(r.loop);
}

json_t *peerssh_agent_run(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *peers = json_object_get(req, "peers"), *t = json_object_get(req, "timeout_ms");
	json_t *results = NULL, *out = NULL;
	struct peer_child *cs = NULL;
	int timeout_ms = PEERSSH_TIMEOUT_MS;
	size_t n;

	n = json_array_size(peers);
	if (!json_is_array(peers) || n < 1 || n > PEERSSH_MAX_PEERS) {
		*code = "bad-request";
		snprintf(msg, msglen, "peer_ssh: \"peers\" must list 1 to %d names",
		         PEERSSH_MAX_PEERS);
		return NULL;
	}
	if (t) {
		json_int_t v = json_integer_value(t);

		if (!json_is_integer(t) || v < 1000 || v > 120000) {
			*code = "bad-request";
			snprintf(msg, msglen, "peer_ssh: \"timeout_ms\" must be 1000 to 120000");
			return NULL;
		}
		timeout_ms = (int)v;
	}
	cs = cd_calloc(n, sizeof(*cs));
	for (size_t k = 0; k < n; k++) {
		const char *p = json_string_value(json_array_get(peers, k));

		/* a name starting with '-' would be an ssh option */
		if (!p || !*p || *p == '-' || strlen(p) > 255 || strpbrk(p, " \t\n\r")) {
			*code = "bad-request";
			snprintf(msg, msglen, "peer_ssh: peer %zu is not a host name", k);
			goto out;
		}
		cs[k].peer = p;
	}
	run_all(cs, n, timeout_ms);
	results = json_array();
	for (size_t k = 0; k < n; k++) {
		char detail[PEERSSH_DETAIL_MAX];
		enum peerssh_reason r =
		    peerssh_classify(cs[k].status, cs[k].timed_out, cs[k].err, cs[k].len, detail);

		json_array_append_new(
		    results, json_pack("{sssbsssssisI}", "peer", cs[k].peer, "ok", r == PEERSSH_OK,
		                       "reason", peerssh_reason_id(r), "detail", detail, "status",
		                       WIFEXITED(cs[k].status) ? WEXITSTATUS(cs[k].status) : -1,
		                       "ms", (json_int_t)(cs[k].end_ms - cs[k].start_ms)));
	}
	out = json_pack("{so}", "results", results);
out:
	free(cs);
	return out;
}
