/* SPDX-License-Identifier: MIT */
/*
 * bench_round.c - what the bench computes on the head between its network
 * phases (bench_internal.h): the plan from the probe answers (the backend,
 * the live nodes, each one's address), the rings of each round, and a
 * round's answers gathered into the report. Nothing is sent from here.
 */
#include "collectives/bench_internal.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- plan */

static void read_caps(struct bench_node *n, json_t *caps)
{
	json_t *nccl = json_object_get(caps, "nccl");
	const char *s;

	n->nccl_available = json_is_true(json_object_get(nccl, "available"));
	n->gpus = (int)json_integer_value(json_object_get(nccl, "gpus"));
	if ((s = json_string_value(json_object_get(nccl, "reason"))))
		snprintf(n->nccl_reason, sizeof(n->nccl_reason), "%s", s);
	if ((s = json_string_value(json_object_get(nccl, "version"))))
		snprintf(n->nccl_version, sizeof(n->nccl_version), "%s", s);
}

/* auto: nccl only when every live node can run it. */
static void choose_backend(struct bench *b)
{
	int min_gpus = 1 << 30;

	b->r.backend = b->o.backend == BENCH_NCCL ? BENCH_NCCL : BENCH_TCP;
	for (size_t k = 0; k < b->nlive; k++) {
		const struct bench_node *n = &b->r.nodes[b->live[k]];

		if (n->gpus < min_gpus)
			min_gpus = n->gpus;
		if (b->o.backend == BENCH_AUTO && !n->nccl_available && !b->r.backend_note[0])
			snprintf(b->r.backend_note, sizeof(b->r.backend_note),
			         "nccl unavailable on %s: %s; using tcp", n->host, n->nccl_reason);
	}
	if (b->o.backend == BENCH_AUTO && b->nlive && !b->r.backend_note[0])
		b->r.backend = BENCH_NCCL;
	b->ranks_per_node = b->o.ranks_per_node > 0 ? b->o.ranks_per_node : 1;
	if (b->r.backend == BENCH_NCCL) {
		b->ranks_per_node = b->o.gpus_per_node > 0 ? b->o.gpus_per_node : min_gpus;
		if (b->ranks_per_node < 1)
			b->ranks_per_node = 1;
	}
	if (b->o.pairs)
		b->ranks_per_node = 1;
}

/* nccl chosen by hand on a node that cannot: that node is out. */
static void check_nccl_nodes(struct bench *b)
{
	size_t kept = 0;

	for (size_t k = 0; k < b->nlive; k++) {
		size_t i = b->live[k];
		struct bench_node *n = &b->r.nodes[i];

		if (b->r.backend == BENCH_NCCL &&
		    (!n->nccl_available || n->gpus < b->ranks_per_node)) {
			snprintf(n->error, sizeof(n->error), "%s: unavailable: %s", n->host,
			         n->nccl_available ? "fewer GPUs than --gpus-per-node"
			                           : n->nccl_reason);
			snprintf(n->error_code, sizeof(n->error_code), "unavailable");
			continue;
		}
		b->live[kept++] = i;
	}
	b->nlive = kept;
}

void bench_plan_nodes(struct bench *b)
{
	b->live = cd_calloc(b->n ? b->n : 1, sizeof(*b->live));
	for (size_t i = 0; i < b->n; i++) {
		struct bench_node *n = &b->r.nodes[i];

		if (b->nodes[i].gone || !b->job.nodes[i].probe || !b->job.nodes[i].info)
			continue;
		netmodel_set_node(b->m, i, b->job.nodes[i].probe, NULL);
		n->probed = 1;
		read_caps(n, b->job.nodes[i].info);
		if (!b->o.iface && b->o.proved_ifname && b->o.proved_ifname[i]) {
			/* the interface the check proved, as a job started now gets it */
			if (bench_pick_address(&b->m->nodes[i], b->o.proved_ifname[i], n) < 0)
				continue;
			snprintf(n->addr_rule, sizeof(n->addr_rule),
			         "the interface the check proved");
		} else if (bench_pick_address(&b->m->nodes[i], b->o.iface, n) < 0) {
			continue;
		}
		b->live[b->nlive++] = i;
	}
	choose_backend(b);
	check_nccl_nodes(b);
	bench_env_plan(b);
	if (b->o.pairs) {
		b->npairs = bench_plan_pairs(b->live, b->nlive, b->o.pairs_all_max, &b->pairs,
		                             &b->round_of, &b->round);
		b->round = 0;
	}
}

/* The rings of the next round: the whole live set once, or the next round
 * of pairs. 0 when nothing is left to run. */
size_t bench_next_round(struct bench *b)
{
	for (size_t i = 0; i < b->n; i++) {
		b->nodes[i].ring = -1;
		b->nodes[i].running = 0;
		b->nodes[i].sizes_done = 0;
		memset(b->nodes[i].ports, 0, sizeof(b->nodes[i].ports));
	}
	free(b->rings);
	b->rings = NULL;
	b->nrings = 0;
	if (!b->o.pairs) {
		if (b->round++ > 0 || b->nlive == 0)
			return 0;
		b->rings = cd_calloc(1, sizeof(*b->rings));
		b->rings[0].members = b->live;
		b->rings[0].nmembers = b->nlive;
		b->nrings = 1;
	} else {
		size_t first = b->next_pair;
		int round;

		if (first >= b->npairs)
			return 0;
		round = b->round_of[first];
		while (b->next_pair < b->npairs && b->round_of[b->next_pair] == round)
			b->next_pair++;
		b->nrings = b->next_pair - first;
		b->rings = cd_calloc(b->nrings, sizeof(*b->rings));
		for (size_t k = 0; k < b->nrings; k++) {
			struct bench_ring *rp = &b->rings[k];

			rp->nodes[0] = b->pairs[first + k].a;
			rp->nodes[1] = b->pairs[first + k].b;
			rp->members = rp->nodes;
			rp->nmembers = 2;
		}
	}
	for (size_t k = 0; k < b->nrings; k++) {
		struct bench_ring *rp = &b->rings[k];

		rp->nranks = (int)rp->nmembers * b->ranks_per_node;
		cd_random_token(rp->token, sizeof(rp->token));
		for (size_t j = 0; j < rp->nmembers; j++) {
			b->nodes[rp->members[j]].ring = (int)k;
			if (!b->o.pairs)
				b->r.nodes[rp->members[j]].first_rank = (int)j * b->ranks_per_node;
			b->r.nodes[rp->members[j]].nranks = b->ranks_per_node;
		}
	}
	if (!b->o.pairs)
		b->r.nranks = b->rings[0].nranks;
	return b->nrings;
}

/* ---------------------------------------------------------------- results */

/* Whether node i is known to have completed size s: its answer has it on
 * every local rank, or, without an answer (stopped, cut off, closed), its
 * progress counted it. */
static int node_did_size(const struct bench *b, size_t i, size_t s)
{
	if (!b->nodes[i].ranks_out)
		return b->nodes[i].sizes_done > s;
	for (size_t k = 0; k < json_array_size(b->nodes[i].ranks_out); k++) {
		json_t *r = json_array_get(b->nodes[i].ranks_out, k);

		if (!json_array_get(json_object_get(r, "results"), s))
			return 0;
	}
	return 1;
}

/* The slowest rank's time of size s over ring rp, the wrong elements summed;
 * 0 when a rank has not completed it. Ranks whose node never answered count
 * as done when their progress says so, and add no time: the ranks that
 * answered waited for them. */
static int gather_size(const struct bench *b, const struct bench_ring *rp, size_t s,
                       struct bench_size *out)
{
	int seen = 0;

	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < rp->nmembers; j++) {
		size_t i = rp->members[j], k;
		json_t *r;

		if (!node_did_size(b, i, s))
			return 0;
		if (!b->nodes[i].ranks_out) {
			seen += b->ranks_per_node;
			continue;
		}
		json_array_foreach(b->nodes[i].ranks_out, k, r)
		{
			json_t *res = json_array_get(json_object_get(r, "results"), s);
			double t = json_number_value(json_object_get(res, "time_us"));
			long long w = json_integer_value(json_object_get(res, "wrong"));

			out->bytes = (size_t)json_integer_value(json_object_get(res, "bytes"));
			out->count = (size_t)json_integer_value(json_object_get(res, "count"));
			if (t > out->time_us)
				out->time_us = t;
			out->wrong = w < 0 || out->wrong < 0 ? -1 : out->wrong + w;
			seen++;
		}
	}
	if (seen != rp->nranks || out->time_us <= 0)
		return 0;
	out->algbw = (double)out->bytes / out->time_us / 1e3;
	out->busbw = bench_busbw(out->algbw, rp->nranks);
	return 1;
}

/* The failure that explains where the ring stopped: a node that never
 * answered (the others only saw it go quiet), else the first rank that
 * failed. */
static void find_stop(struct bench *b, size_t s)
{
	struct bench_stop *st = &b->r.stop;
	const struct bench_failure *pick = NULL;

	for (size_t k = 0; k < b->r.nfailures && !pick; k++)
		if (b->r.failures[k].rank < 0)
			pick = &b->r.failures[k];
	if (!pick && b->r.nfailures)
		pick = &b->r.failures[0];
	st->bytes = b->sizes[s];
	st->count = b->sizes[s] / coll_dtype_size(b->o.dtype);
	if (!pick) {
		snprintf(st->state, sizeof(st->state), "failed");
		snprintf(st->message, sizeof(st->message), "no rank reported this size");
		return;
	}
	st->node = pick->node;
	snprintf(st->state, sizeof(st->state), "%s",
	         strcmp(pick->kind, "unfinished") == 0 ? "stalled" : pick->kind);
	snprintf(st->message, sizeof(st->message), "%s", pick->message);
}

static void gather_full(struct bench *b)
{
	const struct bench_ring *rp = &b->rings[0];
	double sum = 0;

	b->r.nsizes_planned = b->nsizes;
	b->r.sizes = cd_calloc(b->nsizes ? b->nsizes : 1, sizeof(*b->r.sizes));
	for (size_t s = 0; s < b->nsizes; s++) {
		if (!gather_size(b, rp, s, &b->r.sizes[b->r.nsizes]))
			break;
		sum += b->r.sizes[b->r.nsizes++].busbw;
	}
	b->r.avg_busbw = b->r.nsizes ? sum / (double)b->r.nsizes : 0;
	if (b->r.nsizes < b->nsizes && rp->failed)
		find_stop(b, b->r.nsizes);
}

static void gather_pairs(struct bench *b)
{
	for (size_t k = 0; k < b->nrings; k++) {
		const struct bench_ring *rp = &b->rings[k];
		struct bench_link *l;
		struct bench_size last;

		b->r.links = cd_realloc(b->r.links, (b->r.nlinks + 1) * sizeof(*l));
		l = &b->r.links[b->r.nlinks++];
		memset(l, 0, sizeof(*l));
		l->a = rp->members[0];
		l->b = rp->members[1];
		if (b->nsizes && gather_size(b, rp, b->nsizes - 1, &last) && last.wrong <= 0) {
			l->busbw = last.busbw;
			l->time_us = last.time_us;
			continue;
		}
		l->failed = 1;
		snprintf(l->error, sizeof(l->error), "%s",
		         b->nodes[l->a].gone   ? b->r.nodes[l->a].error
		         : b->nodes[l->b].gone ? b->r.nodes[l->b].error
		         : b->r.nfailures      ? b->r.failures[b->r.nfailures - 1].message
		                               : "no result");
	}
}

void bench_gather_round(struct bench *b)
{
	if (b->o.pairs)
		gather_pairs(b);
	else
		gather_full(b);
}

/* ---------------------------------------------------------------- NCCL's network */

void bench_note_net(struct bench *b, size_t i, const json_t *nccl_net)
{
	struct bench_node *n = &b->r.nodes[i];

	if (!n->net)
		n->net = cd_calloc(1, sizeof(*n->net));
	/* under the variables the node's NCCL ran with: the plan's, if any */
	bench_env_predict(b, i, n->nccl_version[0] ? n->nccl_version : NULL, &n->net->predicted);
	bench_net_judge(nccl_net, n->net);
	bench_env_avoid(b, i);
}
