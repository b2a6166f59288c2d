/* SPDX-License-Identifier: MIT */
/*
 * run_put.c - the run's files on its nodes, once per shared home (see
 * run_put.h): the home token's two passes, a runsync or a push on the
 * first node of each group, the same again on the others (the proof that
 * they share it); the check that the run's directories are the user's alone
 * before the put and after it.
 */
#include "jobs/run_put.h"
#include "fanout.h"
#include "homegroups.h"
#include "jobs/mnist_internal.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PS_GUARD and PS_TRUST both check the run's directories: before anything
 * is written there, and once it is, just before the start. */
enum put_step { PS_MARK, PS_READ, PS_GUARD, PS_PUT, PS_VERIFY, PS_TRUST, PS_DONE };

struct run_put {
	struct sshpool_node *const *pns;
	size_t n;
	const struct runsync_manifest *sync;
	const char *run_dir;
	int timeout_ms;
	void (*done)(void *arg);
	void *arg;
	enum put_step step;
	struct fanout *fan; /* the step's barrier: one answer per request or put */
	struct push_file site;
	int have_site;
	int hang; /* the run has a hang/ directory (hang-ready's file) */
	struct run_put_node *nodes;
	struct runsync **syncs;
	struct push **pushes;
};

/* The node of pn (a reply's), or p->n. */
static size_t node_of(const struct run_put *p, const struct sshpool_node *pn)
{
	size_t i = 0;

	while (i < p->n && p->pns[i] != pn)
		i++;
	return i;
}

static void settle(struct run_put *p, size_t i)
{
	if (i < p->n)
		fanout_settle(p->fan, i);
}

static void on_mark(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	(void)result;
	(void)code;
	(void)msg;
	/* "conflict" (a token already there) is the common answer: the read decides */
	settle(arg, node_of(arg, pn));
}

static void on_read(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                    void *arg)
{
	struct run_put *p = arg;
	size_t i = node_of(p, pn);

	(void)code;
	(void)msg;
	if (i < p->n)
		homegroups_token(result, p->nodes[i].home_id);
	settle(p, i);
}

static void put_ended(struct run_put *p, size_t i, int err, const char *msg)
{
	struct run_put_node *x = &p->nodes[i];

	x->err = err;
	if (err)
		snprintf(x->msg, sizeof(x->msg), "%s", msg ? msg : "failed");
	settle(p, i);
}

/* A follower's own put, once its leader's is done, proves the shared home:
 * through a home the leader made the run's tree (or wrote its file) in, it
 * finds the tree kept and sends nothing. Anything else means the token was
 * copied (nodes made from one image), and the node now has its own copy. */
static void verified(struct run_put *p, size_t i, int shared)
{
	struct run_put_node *x = &p->nodes[i];

	if (p->step != PS_VERIFY || shared)
		return;
	x->token_of = homegroups_split(&x->leader, i);
}

/* Both may run before their *_start returned: the counts come from the
 * finished sync or push itself. */
static void on_synced(void *arg, const struct runsync *s, size_t i, int err, const char *msg)
{
	struct run_put *p = arg;
	struct run_put_node *x = &p->nodes[i];

	x->files_sent = runsync_files_sent(s);
	x->bytes_sent = runsync_bytes_sent(s);
	x->kept = runsync_kept(s);
	if (!err)
		verified(p, i, x->kept);
	put_ended(p, i, err, msg);
}

static void on_pushed(void *arg, const struct push *push, size_t i, int err, const char *msg)
{
	struct run_put *p = arg;
	struct run_put_node *x = &p->nodes[i];

	x->files_sent = push_files_sent(push);
	x->bytes_sent = push_bytes_sent(push);
	if (!err)
		verified(p, i, x->files_sent == 0);
	put_ended(p, i, err, msg);
}

static void on_trust(struct sshpool_node *pn, json_t *result, const char *code, const char *msg,
                     void *arg)
{
	struct run_put *p = arg;

	for (size_t i = 0; !result && i < p->n; i++) {
		struct run_put_node *x = &p->nodes[i];

		if (p->pns[i] != pn)
			continue;
		x->err = CD_ERR_REFUSED;
		x->unsafe = 1;
		snprintf(x->msg, sizeof(x->msg), "%s: %s (%s)", sshpool_node_host(pn),
		         msg ? msg : "no answer", code ? code : "failed");
	}
	settle(p, node_of(p, pn));
}

static void send_marks(struct run_put *p)
{
	char token[HOMEGROUPS_TOKEN_LEN];

	for (size_t i = 0; i < p->n; i++) {
		if (!p->pns[i])
			continue;
		/* only where none is: a follower's put proves the sharing */
		homegroups_token_new(token);
		fanout_expect(p->fan, i, 1);
		sshpool_request(p->pns[i], homegroups_req_mark(token, "absent"), p->timeout_ms,
		                on_mark, p);
	}
}

static void send_reads(struct run_put *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!p->pns[i])
			continue;
		fanout_expect(p->fan, i, 1);
		sshpool_request(p->pns[i], homegroups_req_read(), p->timeout_ms, on_read, p);
	}
}

static void put_one(struct run_put *p, size_t i)
{
	fanout_expect(p->fan, i, 1); /* before the start: it may end within it */
	if (p->sync)
		p->syncs[i] =
		    runsync_start(p->pns[i], p->sync, p->run_dir, p->timeout_ms, on_synced, p, i);
	else
		p->pushes[i] = push_start(p->pns[i], &p->site, 1, p->timeout_ms, on_pushed, p, i);
}

/* Each follower of a leader that succeeded, the same put again. */
static void send_verifies(struct run_put *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct run_put_node *x = &p->nodes[i];

		if (p->pns[i] && x->leader != (long)i && !x->err && !p->nodes[x->leader].err)
			put_one(p, i);
	}
}

/* Every node: its run directory and its hang/ the user's alone, or, before
 * the put, not there and makeable by nobody else. A failed sync starts nothing; without --sync the
 * job starts even where hang-ready's file could not be put, with that hang/ on its PYTHONPATH all
 * the same: checked too. Any failed answer refuses the node (no answer is no proof). */
static void send_trusts(struct run_put *p)
{
	for (size_t i = 0; i < p->n; i++) {
		json_t *req, *paths;

		if (!p->pns[i] || p->nodes[i].unsafe ||
		    (p->sync && (p->nodes[i].err || p->nodes[p->nodes[i].leader].err)))
			continue;
		paths = json_array();
		json_array_append_new(paths, json_string(p->run_dir));
		if (p->hang)
			json_array_append_new(paths, json_sprintf("%s/hang", p->run_dir));
		req = proto_request(0, "dir_trust");
		json_object_set_new(req, "paths", paths);
		fanout_expect(p->fan, i, 1);
		sshpool_request(p->pns[i], req, p->timeout_ms, on_trust, p);
	}
}

static void send_puts(struct run_put *p)
{
	const char **tokens = cd_calloc(p->n ? p->n : 1, sizeof(*tokens));
	long *leader = cd_calloc(p->n ? p->n : 1, sizeof(*leader));

	for (size_t i = 0; i < p->n; i++)
		tokens[i] = p->pns[i] ? p->nodes[i].home_id : NULL;
	homegroups_leaders(tokens, p->n, leader);
	for (size_t i = 0; i < p->n; i++)
		p->nodes[i].leader = leader[i];
	free(tokens);
	free(leader);
	for (size_t i = 0; i < p->n; i++) {
		if (p->pns[i] && p->nodes[i].leader == (long)i && !p->nodes[i].err)
			put_one(p, i);
	}
}

static void finish(struct run_put *p)
{
	/* a follower has what its leader put, or its leader's failure */
	for (size_t i = 0; i < p->n; i++) {
		struct run_put_node *x = &p->nodes[i];
		const struct run_put_node *l = &p->nodes[x->leader];

		if (x->leader != (long)i && l->err && !x->err) {
			x->err = l->err;
			memcpy(x->msg, l->msg, sizeof(x->msg));
		}
	}
	p->step = PS_DONE;
	p->done(p->arg);
}

/* The step's barrier is down (every answer in, from the loop): the next
 * step, or the end. */
static void next_step(void *arg)
{
	struct run_put *p = arg;

	if (p->step == PS_DONE)
		return;
	p->step++;
	if (p->step == PS_READ)
		send_reads(p);
	else if (p->step == PS_PUT)
		send_puts(p);
	else if (p->step == PS_VERIFY)
		send_verifies(p);
	else if (p->step == PS_GUARD || p->step == PS_TRUST)
		send_trusts(p);
	if (p->step == PS_DONE)
		finish(p);
	else
		fanout_begin(p->fan);
}

struct run_put *run_put_start(struct loop *loop, struct sshpool_node *const *pns, size_t n,
                              const struct runsync_manifest *sync, const struct runsync_file *site,
                              const char *run_dir, int timeout_ms, void (*done)(void *arg),
                              void *arg)
{
	struct run_put *p = cd_calloc(1, sizeof(*p));

	p->pns = pns;
	p->n = n;
	p->sync = sync;
	p->run_dir = run_dir;
	p->timeout_ms = timeout_ms;
	p->done = done;
	p->arg = arg;
	p->nodes = cd_calloc(n ? n : 1, sizeof(*p->nodes));
	p->syncs = cd_calloc(n ? n : 1, sizeof(*p->syncs));
	p->pushes = cd_calloc(n ? n : 1, sizeof(*p->pushes));
	for (size_t i = 0; i < n; i++) {
		p->nodes[i].leader = (long)i;
		p->nodes[i].token_of = -1;
	}
	p->hang = site != NULL;
	if (!sync && site) {
		char *path = cd_asprintf("%s/%s", run_dir, site->rel);

		push_file_init(&p->site, path, site->data, site->len, site->sha256);
		free(path);
		p->have_site = 1;
	}
	p->fan = fanout_new(loop, n, next_step, p);
	p->step = PS_MARK;
	send_marks(p);
	fanout_begin(p->fan);
	return p;
}

const struct run_put_node *run_put_node(const struct run_put *p, size_t i)
{
	return &p->nodes[i];
}

int run_put_files_sent(const struct run_put *p)
{
	int sum = 0;

	for (size_t i = 0; p && i < p->n; i++)
		sum += p->nodes[i].files_sent;
	return sum;
}

void run_put_free(struct run_put *p)
{
	if (!p)
		return;
	fanout_free(p->fan);
	for (size_t i = 0; i < p->n; i++) {
		runsync_free(p->syncs[i]);
		push_free(p->pushes[i]);
	}
	if (p->have_site)
		push_file_fini(&p->site);
	free(p->syncs);
	free(p->pushes);
	free(p->nodes);
	free(p);
}
