/*
 * check_once.c - the network check run once from the CLI (check_once.h).
 */
#include "check_once.h"

#include <stdio.h>
#include <string.h>

#include "loop.h"

struct once {
	struct check_once *c;
	struct loop *loop;
	struct netcheck *nc;
};

static void on_done(void *arg)
{
	loop_stop(((struct once *)arg)->loop);
}

int check_once_run(struct check_once *c, char *err, size_t errlen)
{
	struct once w = {.c = c};
	struct sshpool *pool;

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
	loop_run(w.loop);
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
