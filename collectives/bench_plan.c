/* SPDX-License-Identifier: MIT */
/*
 * bench_plan.c - the head's pure part of `clusterdoc bench` (see
 * bench_internal.h): which address each node's ranks use, the rounds of
 * --pairs, the bandwidth arithmetic and the slow links.
 */
#include "collectives/bench_internal.h"
#include "probes/predict.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void bench_opts_init(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = BENCH_AUTO;
	o->min_bytes = 8;
	o->max_bytes = 256u << 20;
	o->factor = 2;
	o->dtype = COLL_FLOAT32;
	o->iters = 20;
	o->warmup = 5;
	o->check = 1;
	o->ranks_per_node = 1;
	o->stall_ms = 10000;
	o->connect_timeout_ms = 10000;
	o->pairs_all_max = 16;
	o->request_timeout_ms = 30000;
}

const char *bench_backend_name(enum bench_backend b)
{
	return b == BENCH_TCP ? "tcp" : b == BENCH_NCCL ? "nccl" : "auto";
}

size_t bench_sizes(const struct bench_opts *o, size_t *sizes, size_t cap)
{
	size_t n = 0, s = o->min_bytes ? o->min_bytes : 1;
	int f = o->factor >= 2 ? o->factor : 2;

	while (n < cap && s <= o->max_bytes) {
		sizes[n++] = s;
		if (s > o->max_bytes / (size_t)f)
			break;
		s *= (size_t)f;
	}
	return n;
}

double bench_busbw(double algbw, int nranks)
{
	return nranks > 1 ? algbw * 2.0 * (nranks - 1) / nranks : 0;
}

/* ---------------------------------------------------------------- address */

/* 0 = IPv4, 1 = global/ULA IPv6, 2 = link-local IPv6, 3 = not usable. */
static int address_rank(const struct nm_addr *a)
{
	if (strcmp(a->scope, "host") == 0)
		return 3;
	if (a->family == AF_INET)
		return 0;
	return strcmp(a->scope, "link") == 0 ? 2 : 1;
}

static int pick_on_iface(const struct nm_node *n, const char *iface, struct bench_node *out)
{
	const struct nm_addr *best = NULL;

	for (size_t i = 0; i < n->naddrs; i++) {
		const struct nm_addr *a = &n->addrs[i];

		if (strcmp(a->ifname, iface) != 0 || address_rank(a) == 3)
			continue;
		if (!best || address_rank(a) < address_rank(best))
			best = a;
	}
	if (!best) {
		snprintf(out->error, sizeof(out->error),
		         "%s: no usable address on interface %s (--iface): see `ip addr` there",
		         n->host, iface);
		snprintf(out->error_code, sizeof(out->error_code), "no-address");
		return -1;
	}
	snprintf(out->ifname, sizeof(out->ifname), "%s", best->ifname);
	snprintf(out->addr, sizeof(out->addr), "%s", best->addr);
	out->scope_id = best->scope_id;
	snprintf(out->addr_rule, sizeof(out->addr_rule), "--iface %s", iface);
	return 0;
}

int bench_pick_address(const struct nm_node *n, const char *iface, struct bench_node *out)
{
	struct nccl_prediction p;
	struct net_env env;

	if (iface)
		return pick_on_iface(n, iface, out);
	net_env_of(n, &env);
	nccl_predict(n, &env, NULL, NCCL_PREDICT_MAX_IFS, &p);
	if (p.npicks == 0) {
		snprintf(out->error, sizeof(out->error),
		         "%s: no interface for the ring: NCCL would fail (%s); choose one with "
		         "--iface",
		         n->host, p.error[0] ? p.error : p.rule);
		snprintf(out->error_code, sizeof(out->error_code), "no-address");
		return -1;
	}
	snprintf(out->ifname, sizeof(out->ifname), "%s", p.picks[0].ifname);
	snprintf(out->addr, sizeof(out->addr), "%s", p.picks[0].addr);
	out->scope_id = p.picks[0].scope_id;
	snprintf(out->addr_rule, sizeof(out->addr_rule), "NCCL's pick: %s", p.rule);
	return 0;
}

/* ---------------------------------------------------------------- pairs */

/* Round r of the circle method over m slots (m even): slot m-1 stays, the
 * others rotate; pair k joins slot (r+k) and (r-k) mod (m-1), k = 1..m/2-1,
 * plus (r, m-1). */
static size_t circle_round(size_t m, size_t r, struct bench_pair *out)
{
	size_t n = 0, s = m - 1;

	out[n++] = (struct bench_pair){r % s, m - 1};
	for (size_t k = 1; k < m / 2; k++)
		out[n++] = (struct bench_pair){(r + k) % s, (r + s - k) % s};
	return n;
}

/* Stable insertion sort of the pairs by round. */
static void sort_by_round(struct bench_pair *p, int *r, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct bench_pair pv = p[i];
		int rv = r[i];
		size_t j = i;

		for (; j > 0 && r[j - 1] > rv; j--) {
			p[j] = p[j - 1];
			r[j] = r[j - 1];
		}
		p[j] = pv;
		r[j] = rv;
	}
}

size_t bench_plan_pairs(const size_t *live, size_t nlive, int all_max, struct bench_pair **pairs,
                        int **round_of, int *nrounds)
{
	size_t cap = nlive * nlive / 2 + nlive + 1, n = 0;
	struct bench_pair *p = cd_calloc(cap, sizeof(*p));
	int *r = cd_calloc(cap, sizeof(*r));

	*nrounds = 0;
	if (nlive >= 2 && nlive <= (size_t)all_max) {
		size_t m = nlive + (nlive & 1); /* an odd count gets a bye slot */
		struct bench_pair *round = cd_calloc(m / 2, sizeof(*round));

		for (size_t k = 0; k + 1 < m; k++) {
			size_t got = circle_round(m, k, round);

			for (size_t j = 0; j < got; j++) {
				if (round[j].a >= nlive || round[j].b >= nlive)
					continue; /* the bye */
				p[n] = (struct bench_pair){live[round[j].a], live[round[j].b]};
				r[n++] = *nrounds;
			}
			(*nrounds)++;
		}
		free(round);
	} else if (nlive >= 2) {
		/* ring neighbours (i, i+1), each in the first round where neither
		 * node is busy yet: two rounds, three for an odd ring's wrap */
		for (size_t i = 0; i < nlive; i++) {
			struct bench_pair e = {live[i], live[(i + 1) % nlive]};
			int round = 0;

			if (nlive == 2 && i == 1)
				break; /* one link between two nodes */
			for (size_t k = 0; k < n; k++) {
				if (r[k] == round && (p[k].a == e.a || p[k].b == e.a ||
				                      p[k].a == e.b || p[k].b == e.b)) {
					round++;
					k = (size_t)-1; /* look again in the next round */
				}
			}
			p[n] = e;
			r[n++] = round;
			if (round + 1 > *nrounds)
				*nrounds = round + 1;
		}
		sort_by_round(p, r, n);
	}
	*pairs = p;
	*round_of = r;
	return n;
}

/* ---------------------------------------------------------------- slow links */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_mark_slow(struct bench_link *links, size_t nlinks, const struct bench_node *nodes,
                     size_t nnodes, char *out, size_t outlen)
{
	double *bw = cd_calloc(nlinks ? nlinks : 1, sizeof(*bw)), median;
	size_t nok = 0, used = 0;

	if (outlen)
		out[0] = '\0';
	for (size_t k = 0; k < nlinks; k++) {
		links[k].slow = 0;
		if (!links[k].failed)
			bw[nok++] = links[k].busbw;
	}
	if (nok == 0) {
		free(bw);
		return;
	}
	qsort(bw, nok, sizeof(*bw), cmp_double);
	median = nok & 1 ? bw[nok / 2] : (bw[nok / 2 - 1] + bw[nok / 2]) / 2;
	free(bw);
	for (size_t k = 0; k < nlinks; k++)
		links[k].slow = !links[k].failed && links[k].busbw < 0.7 * median;
	for (size_t i = 0; i < nnodes; i++) {
		size_t mine = 0, slow = 0;

		for (size_t k = 0; k < nlinks; k++) {
			if (links[k].failed || (links[k].a != i && links[k].b != i))
				continue;
			mine++;
			slow += (size_t)links[k].slow;
		}
		if (mine < 2 || slow * 2 <= mine)
			continue;
		used += (size_t)snprintf(out + used, used < outlen ? outlen - used : 0,
		                         "%s%s (%zu of %zu links slow)", used ? ", " : "",
		                         nodes[i].host, slow, mine);
		if (used >= outlen)
			break;
	}
}
