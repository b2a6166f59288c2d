/*
 * bench_internal.h - what the head's bench phases (bench.c) and its pure
 * planning and arithmetic (bench_plan.c) share. Not a public interface:
 * include it only from collectives/bench*.c and the unit tests.
 */
#ifndef CD_COLLECTIVES_BENCH_INTERNAL_H
#define CD_COLLECTIVES_BENCH_INTERNAL_H

#include "collectives/bench.h"
#include "probes/netmodel.h"

/* Node i's ring address: on opts->iface (IPv4 first, then a global IPv6,
 * then a link-local one), else NCCL's first socket pick (predict.h). 0 with
 * the node's ifname/addr/scope_id/addr_rule set, or -1 with its error set
 * ("no address on interface eth1", NCCL's own failure message). */
int bench_pick_address(const struct nm_node *n, const char *iface, struct bench_node *out);

/* A pair of node indexes in a round. */
struct bench_pair {
	size_t a, b;
};

/*
 * The pairs of --pairs over the nodes live[0..nlive-1]: all pairs when
 * nlive <= all_max, else each node with the next (ring neighbours). Ordered
 * in rounds of disjoint pairs: round_of[k] is pair k's round, rounds are
 * numbered from 0 and pairs come sorted by round. All pairs take nlive - 1
 * rounds (nlive even) or nlive (odd): the circle method. Returns the number
 * of pairs (new array in *pairs and *round_of) and the rounds in *nrounds.
 */
size_t bench_plan_pairs(const size_t *live, size_t nlive, int all_max, struct bench_pair **pairs,
                        int **round_of, int *nrounds);

/* busbw from algbw for n ranks: algbw * 2(n-1)/n (0 for n == 1). */
double bench_busbw(double algbw, int nranks);

/* Mark links below 0.7 x the median busbw of the links that ran as slow, and
 * name the nodes that are in more than half of their links' slow ones in
 * out ("node3 (3 of 3 links slow)"; "" when none). */
void bench_mark_slow(struct bench_link *links, size_t nlinks, const struct bench_node *nodes,
                     size_t nnodes, char *out, size_t outlen);

#endif
