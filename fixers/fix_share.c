/* SPDX-License-Identifier: MIT */
/*
 * fix_share.c - shared home directories in a plan (fix.h's
 * fix_plan_share_homes): one action, on the first node, for a "~/" file
 * that nodes sharing a home would change from the same bytes to the same
 * bytes; notes on the others.
 */
#include "fix.h"
#include "fix_internal.h"
#include "hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one action owns; the action itself is an element of its node's array. */
static void drop_action(struct fix_node_plan *np, size_t k)
{
	struct fix_action *a = &np->actions[k];

	fix_action_fini(a);
	memmove(a, a + 1, (np->nactions - k - 1) * sizeof(*a));
	np->nactions--;
}

static int same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (!alen || memcmp(a, b, alen) == 0);
}

/* Node j's action on path, or NULL. */
static struct fix_action *file_action(struct fix_node_plan *np, const char *path)
{
	for (size_t k = 0; k < np->nactions; k++)
		if (np->actions[k].kind == FIX_FILE && strcmp(np->actions[k].path, path) == 0)
			return &np->actions[k];
	return NULL;
}

/* Whether nodes i and j read one file at path: one home, and the gather
 * read the same bytes there on both (a bind mount over one file in a shared
 * home is its own file). */
static int same_home_file(const struct fix_node_state *states, size_t i, size_t j, const char *path)
{
	const struct fix_file_state *a = fix_state_file(&states[i], path),
	                            *b = fix_state_file(&states[j], path);

	return homegroups_same(states[i].home_id, states[j].home_id) && states[j].gathered && a &&
	       b && a->read && b->read && a->exists == b->exists &&
	       same_bytes(a->data, a->len, b->data, b->len);
}

/* shared_by for node i's action a: every node that reads the file a
 * changes, when that is more than node i; owner[j] is i + 1 where node j's
 * own change of it was dropped for this one. */
static void name_sharers(const struct netmodel *m, const struct fix_node_state *states,
                         struct fix_plan *p, size_t i, struct fix_action *a, const size_t *owner)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN];
	size_t n = 1;

	if (hostlist_parse(hl, m->nodes[i].host, err, sizeof(err)) < 0)
		n = 0;
	for (size_t j = 0; j < p->nnodes && n; j++) {
		if (j == i)
			continue;
		/* a node with its own change of this path has its own file */
		if (owner[j] ? owner[j] != i + 1
		             : file_action(&p->nodes[j], a->path) ||
		                   !same_home_file(states, i, j, a->path))
			continue;
		if (hostlist_parse(hl, m->nodes[j].host, err, sizeof(err)) < 0)
			n = 0;
		else
			n++;
	}
	free(a->shared_by);
	a->shared_by = n > 1 ? hostlist_fold(hl) : NULL;
	hostlist_free(hl);
}

void fix_plan_share_homes(const struct netmodel *m, const struct fix_node_state *states,
                          struct fix_plan *p)
{
	/* owner[q * n + i]: j + 1 where node i's change of paths[q] was
	 * dropped for node j's (a node has one action per path) */
	size_t n = p->nnodes;
	char **paths = NULL;
	size_t npaths = 0, *owner = NULL;

	for (size_t i = 0; i < n; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		if (!states[i].home_id[0])
			continue;
		for (size_t k = 0; k < np->nactions;) {
			struct fix_action *a = &np->actions[k], *own = NULL;
			size_t j, q;

			if (a->kind != FIX_FILE || strncmp(a->path, "~/", 2) != 0) {
				k++;
				continue;
			}
			/* the first node of this home that plans the same change
			 * of the same bytes: the file is one, its change is one */
			for (j = 0; j < i && !own; j++) {
				struct fix_action *o =
				    homegroups_same(states[i].home_id, states[j].home_id)
				        ? file_action(&p->nodes[j], a->path)
				        : NULL;

				if (o && o->before_exists == a->before_exists &&
				    same_bytes(o->before, o->before_len, a->before,
				               a->before_len) &&
				    same_bytes(o->after, o->after_len, a->after, a->after_len))
					own = o;
			}
			if (!own) {
				k++;
				continue;
			}
			j--;
			/* remember that node i's change went to node j's */
			for (q = 0; q < npaths && strcmp(paths[q], a->path) != 0; q++)
				;
			if (q == npaths) {
				paths = cd_realloc(paths, (npaths + 1) * sizeof(*paths));
				paths[npaths] = cd_strdup(a->path);
				owner = cd_realloc(owner, (npaths + 1) * n * sizeof(*owner));
				memset(owner + npaths * n, 0, n * sizeof(*owner));
				npaths++;
			}
			owner[q * n + i] = j + 1;
			fix_note(np,
			         "%s: %s is in the home directory %s shares: changed once, there",
			         a->fixer, a->path, m->nodes[j].host);
			drop_action(np, k);
			p->nactions--;
		}
	}
	/* every change of a file in a home that other nodes read too names
	 * them, whether or not they had a change of their own to give up */
	for (size_t i = 0; i < n; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		if (!states[i].home_id[0])
			continue;
		for (size_t k = 0; k < np->nactions; k++) {
			struct fix_action *a = &np->actions[k];
			size_t q;

			if (a->kind != FIX_FILE || strncmp(a->path, "~/", 2) != 0)
				continue;
			for (q = 0; q < npaths && strcmp(paths[q], a->path) != 0; q++)
				;
			if (q < npaths) {
				name_sharers(m, states, p, i, a, owner + q * n);
			} else {
				size_t *none = cd_calloc(n ? n : 1, sizeof(*none));

				name_sharers(m, states, p, i, a, none);
				free(none);
			}
		}
	}
	for (size_t q = 0; q < npaths; q++)
		free(paths[q]);
	free(paths);
	free(owner);
}
