/* SPDX-License-Identifier: MIT */
/*
 * check_watch.c - the network check in rounds over a pool kept connected
 * (check_watch.h).
 *
 * Each round has its own model and diagnosis; the watch keeps the last
 * round's and the one before it (the cleared changes name findings and
 * nodes of that one). A change is per node: a node that joins a finding
 * another node already had is raised alone. A round's check is freed when the next one starts,
 * never inside its own done callback.
 */
#include "probes/check_watch.h"
#include "cd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct check_watch {
	struct loop *loop;
	struct sshpool *pool;
	struct check_watch_opts o;
	const struct check_watch_events *ev;
	void *arg;
	char **hosts;
	size_t n;
	struct netcheck *nc;  /* the round under way, or the last one (ended) */
	struct netmodel *cur; /* nc's model */
	size_t kept;          /* nodes connected when the round under way started */
	int64_t started_ms;
	uint64_t timer; /* the next round */
	int have_last;
	struct check_watch_round last;
	struct netmodel *last_m, *prev_m;
	struct diagnosis *last_d, *prev_d;
	/* the last round's changes: of last_d's findings, of prev_d's */
	struct check_watch_change *raised, *cleared;
	size_t nraised, ncleared;
};

/* Does a finding of d with f's id and severity name node i (for f with no
 * nodes: is there one with none)? */
static int named_in(const struct diagnosis *d, const struct finding *f, size_t i)
{
	for (size_t k = 0; d && k < d->nfindings; k++) {
		const struct finding *g = &d->findings[k];

		if (strcmp(g->id, f->id) != 0 || g->severity != f->severity)
			continue;
		if (i == SIZE_MAX ? !g->nnodes : finding_names(g, i))
			return 1;
	}
	return 0;
}

size_t check_watch_changes(const struct diagnosis *a, const struct diagnosis *b,
                           struct check_watch_change *out)
{
	size_t n = 0;

	for (size_t k = 0; b && k < b->nfindings; k++) {
		const struct finding *f = &b->findings[k];
		struct check_watch_change *c = &out[n];

		memset(c, 0, sizeof(*c));
		c->f = f;
		if (!f->nnodes) {
			n += !named_in(a, f, SIZE_MAX);
			continue;
		}
		c->nodes = cd_calloc(f->nnodes, sizeof(*c->nodes));
		for (size_t i = 0; i < f->nnodes; i++) {
			if (!named_in(a, f, f->nodes[i]))
				c->nodes[c->nnodes++] = f->nodes[i];
		}
		if (c->nnodes) {
			n++;
		} else {
			free(c->nodes);
			c->nodes = NULL;
		}
	}
	return n;
}

void check_watch_changes_fini(struct check_watch_change *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].nodes);
		c[i].nodes = NULL;
	}
}

static void start_round(struct loop *loop, void *arg);

/* The round's check ended (from the loop): diagnose it, say what changed
 * and set the next round. */
static void on_round_done(void *arg)
{
	struct check_watch *w = arg;
	struct check_watch_round *r = &w->last;
	struct diagnosis *d = diagnose(w->cur);
	int64_t now = cd_now_ms(), wait;
	unsigned round = w->have_last ? r->round + 1 : 1;

	diagnosis_free(w->prev_d);
	netmodel_free(w->prev_m);
	w->prev_d = w->last_d;
	w->prev_m = w->last_m;
	w->last_d = d;
	w->last_m = w->cur;
	check_watch_changes_fini(w->raised, w->nraised);
	check_watch_changes_fini(w->cleared, w->ncleared);
	free(w->raised);
	free(w->cleared);
	w->raised = cd_calloc(d->nfindings + 1, sizeof(*w->raised));
	w->cleared = cd_calloc((w->prev_d ? w->prev_d->nfindings : 0) + 1, sizeof(*w->cleared));
	memset(r, 0, sizeof(*r));
	r->round = round;
	r->time = (long long)time(NULL);
	r->started_ms = w->started_ms;
	r->elapsed_ms = now - w->started_ms;
	r->m = w->last_m;
	r->d = d;
	netcheck_stats(w->nc, &r->stats);
	r->deadline_hit = netcheck_deadline_hit(w->nc);
	for (size_t i = 0; i < w->last_m->nnodes; i++) {
		r->checked += w->last_m->nodes[i].probed;
		r->partial += nm_node_partial(&w->last_m->nodes[i]);
	}
	r->kept = w->kept;
	w->nraised = check_watch_changes(w->prev_d, d, w->raised);
	w->ncleared = w->prev_d ? check_watch_changes(d, w->prev_d, w->cleared) : 0;
	r->raised = w->raised;
	r->nraised = w->nraised;
	r->cleared = w->cleared;
	r->ncleared = w->ncleared;
	r->prev_m = w->prev_m;
	r->prev_d = w->prev_d;
	w->have_last = 1;
	if (w->ev->round)
		w->ev->round(w->arg, r);
	if (w->o.count > 0 && round >= (unsigned)w->o.count) {
		if (w->ev->done)
			w->ev->done(w->arg);
		return;
	}
	wait = w->started_ms + w->o.interval_ms - cd_now_ms();
	w->timer = loop_timer_add(w->loop, wait > 0 ? wait : 0, start_round, w);
}

/* The next round over the agents the last one left connected. */
static void start_round(struct loop *loop, void *arg)
{
	struct check_watch *w = arg;
	struct netcheck *next;

	w->timer = 0;
	w->kept = netcheck_connected(w->nc);
	w->cur = netmodel_new((const char *const *)w->hosts, w->n);
	w->started_ms = cd_now_ms();
	next = netcheck_again(w->nc, w->cur, &w->o.check, on_round_done, w);
	if (!next)
		cd_fatal("check_watch: the last round's check had not ended");
	netcheck_free(w->nc);
	w->nc = next;
	netcheck_set_deadline(w->nc, w->o.deadline_s, NULL, NULL);
	(void)loop;
}

struct check_watch *check_watch_start(struct loop *loop, const struct sshpool_opts *pool_o,
                                      const char *const *hosts, size_t n,
                                      const struct check_watch_opts *o,
                                      const struct check_watch_events *ev, void *arg, char *err,
                                      size_t errlen)
{
	struct check_watch *w = cd_calloc(1, sizeof(*w));

	w->pool = sshpool_new(loop, pool_o, err, errlen);
	if (!w->pool) {
		free(w);
		return NULL;
	}
	w->loop = loop;
	w->o = *o;
	w->o.check.keep_connected = 1;
	w->o.check.request_timeout_ms = pool_o->request_timeout_ms;
	w->ev = ev;
	w->arg = arg;
	w->n = n;
	w->hosts = cd_calloc(n ? n : 1, sizeof(*w->hosts));
	for (size_t i = 0; i < n; i++)
		w->hosts[i] = cd_strdup(hosts[i]);
	w->cur = netmodel_new((const char *const *)w->hosts, n);
	w->started_ms = cd_now_ms();
	w->nc = netcheck_start(loop, w->pool, w->cur, &w->o.check, on_round_done, w);
	netcheck_set_deadline(w->nc, w->o.deadline_s, NULL, NULL);
	return w;
}

const struct check_watch_round *check_watch_last(const struct check_watch *w)
{
	return w->have_last ? &w->last : NULL;
}

void check_watch_free(struct check_watch *w)
{
	if (!w)
		return;
	if (w->timer)
		loop_timer_cancel(w->loop, w->timer);
	/* the pool first: it fails a round's pending requests into the
	 * check's callbacks, which must still be there */
	sshpool_free(w->pool);
	netcheck_free(w->nc);
	if (w->cur != w->last_m)
		netmodel_free(w->cur);
	diagnosis_free(w->last_d);
	diagnosis_free(w->prev_d);
	netmodel_free(w->last_m);
	netmodel_free(w->prev_m);
	check_watch_changes_fini(w->raised, w->nraised);
	check_watch_changes_fini(w->cleared, w->ncleared);
	free(w->raised);
	free(w->cleared);
	for (size_t i = 0; i < w->n; i++)
		free(w->hosts[i]);
	free(w->hosts);
	free(w);
}
