/* SPDX-License-Identifier: MIT */
/*
 * check_once.c - the network check run once from the CLI (check_once.h).
 */
#include "check_once.h"

#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "progress.h"

struct once {
	struct check_once *c;
	struct loop *loop;
	struct netcheck *nc;
};

/* The check entered a phase: redraw the progress line at once. */
static void on_phase(void *arg)
{
	progress_poke(arg);
}

/* Whether node i still owes the phase an answer: the probe phase waits for
 * each node's facts and netprobe, the later ones for every step. */
static int owes(const struct netcheck *nc, size_t i, int probe)
{
	enum netcheck_stage st = netcheck_node_stage(nc, i);

	return st != NCS_DONE && st != NCS_FAILED && !(probe && st == NCS_MATRIX);
}

/* The progress line: the check's phase, the nodes that answered it, and
 * the least advanced node still waited for. */
static void check_sample(void *arg, struct progress_sample *s)
{
	struct once *w = arg;
	const char *phase = netcheck_phase_name(w->nc);
	int probe = strcmp(phase, "probe") == 0;
	enum netcheck_stage least = NCS_FAILED;

	if (strcmp(phase, "done") == 0)
		return;
	s->phase = phase;
	s->total = w->c->m->nnodes;
	for (size_t i = 0; i < s->total; i++) {
		enum netcheck_stage st = netcheck_node_stage(w->nc, i);

		if (!owes(w->nc, i, probe)) {
			s->answered++;
		} else if (st < least) {
			least = st;
			s->waiting = w->c->m->nodes[i].host;
			s->waiting_at = netcheck_stage_name(st);
		}
	}
}

static void on_done(void *arg)
{
	loop_stop(((struct once *)arg)->loop);
}

int check_once_run(struct check_once *c, char *err, size_t errlen)
{
	struct once w = {.c = c};
	struct sshpool *pool;
	struct progress *prog;

	if (c->master) {
		size_t i;

		for (i = 0; i < c->m->nnodes && strcmp(c->m->nodes[i].host, c->master) != 0; i++)
			;
		if (i == c->m->nnodes)
			return cd_errf(err, errlen, CD_ERR_NOTFOUND,
			               "--master %s is not one of the nodes given with -w",
			               c->master);
		c->o.master = i;
	}
	w.loop = loop_new();
	pool = sshpool_new(w.loop, c->pool, err, errlen);
	if (!pool) {
		loop_free(w.loop);
		return CD_ERR_IO;
	}
	c->o.request_timeout_ms = c->pool->request_timeout_ms;
	w.nc = netcheck_start(w.loop, pool, c->m, &c->o, on_done, &w);
	netcheck_set_deadline(w.nc, c->deadline_s, NULL, NULL);
	prog = progress_start(w.loop, "check", check_sample, &w);
	netcheck_on_phase(w.nc, on_phase, prog);
	loop_run(w.loop);
	progress_end(prog);
	if (netcheck_deadline_hit(w.nc))
		c->deadline_hit = 1;
	c->d = diagnose(c->m);
	c->checked = 0;
	c->partial = 0;
	for (size_t i = 0; i < c->m->nnodes; i++) {
		c->checked += c->m->nodes[i].probed;
		c->partial += nm_node_partial(&c->m->nodes[i]);
	}
	netcheck_stats(w.nc, &c->stats);
	netcheck_free(w.nc);
	sshpool_free(pool);
	loop_free(w.loop);
	return 0;
}
