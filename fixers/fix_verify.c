/* SPDX-License-Identifier: MIT */
/*
 * fix_verify.c - the second check's verdicts (fix_verify.h).
 */
#include "fix_verify.h"

#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fix_verdict *add(struct fix_verification *out, enum fix_verdict_kind kind,
                               size_t node, const char *fixer)
{
	struct fix_verdict *v;

	out->v = cd_realloc(out->v, (out->n + 1) * sizeof(*out->v));
	v = &out->v[out->n++];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->node = node;
	v->fixer = fixer;
	return v;
}

/* The first evidence line of fd that names host ("host: ...", "host/gpu0:
 * ..." or "host mlx5_0:1 ..."), into line; "" when none does. */
static void evidence_of(const struct finding *fd, const char *host, char *line, size_t len)
{
	size_t hl = strlen(host);

	line[0] = '\0';
	for (const char *p = fd->evidence; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > hl && strncmp(p, host, hl) == 0 &&
		    (p[hl] == ':' || p[hl] == '/' || p[hl] == ' ')) {
			snprintf(line, len, "%.*s", (int)n, p);
			return;
		}
		p = nl ? nl + 1 : p + n;
	}
}

/* The error findings of after that fx answers on node i, appended to still,
 * each with what the second check saw on that node (its evidence line). */
static void still_found(const struct fixer *fx, const struct diagnosis *after,
                        const struct netmodel *m2, size_t i, char *still, size_t len)
{
	for (size_t k = 0; k < after->nfindings; k++) {
		const struct finding *fd = &after->findings[k];
		size_t used = strlen(still);
		char ev[CD_ERRLEN];

		if (!finding_names(fd, i) || fd->severity != SEV_ERROR ||
		    !fixer_answers_finding(fx, fd))
			continue;
		evidence_of(fd, m2->nodes[i].host, ev, sizeof(ev));
		snprintf(still + used, len - used, "%s%s%s%s%s", still[0] ? "; " : "", fd->id,
		         ev[0] ? " (" : "", ev, ev[0] ? ")" : "");
	}
}

/* What the apply did for fixer fx on node i. */
static enum fix_verdict_change
change_of(const struct fix_plan *p, struct fix_result *const *results, size_t i, const char *fx)
{
	const struct fix_node_plan *np = &p->nodes[i];
	enum fix_verdict_change c = FIX_CHANGE_NOT_PLANNED;

	for (size_t k = 0; k < np->nactions; k++) {
		enum fix_status st = results ? results[i][k].status : FIX_PENDING;

		if (strcmp(np->actions[k].fixer, fx) != 0)
			continue;
		if (st == FIX_FAILED || st == FIX_SKIPPED || st == FIX_PENDING)
			return FIX_CHANGE_FAILED;
		c = FIX_CHANGE_APPLIED;
	}
	return c;
}

void fix_verify_plan(struct fix_verification *out, const struct netmodel *m2,
                     const struct fix_plan *p, struct fix_result *const *results,
                     const struct diagnosis *after)
{
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct fix_node_plan *np = &p->nodes[i];

		for (size_t q = 0; q < np->nwanted; q++) {
			const struct fixer *fx = fixer_find(np->wanted[q]);
			struct fix_verdict *v = add(out, FIX_VERDICT_FIXER, i, fx->id);

			v->change = change_of(p, results, i, fx->id);

			if (fx->verify)
				fx->verify(m2, p, i, v->still, sizeof(v->still));
			if (after)
				still_found(fx, after, m2, i, v->still, sizeof(v->still));
			if (!after)
				snprintf(v->still, sizeof(v->still),
				         "the second check did not run");
			else if (!m2->nodes[i].probed)
				snprintf(v->still, sizeof(v->still), "not checked: %s",
				         m2->nodes[i].error);
			v->verified = !v->still[0];
			out->bad += !v->verified;
		}
	}
}

void fix_verify_login(struct fix_verification *out, const struct fix_login *l,
                      const struct netmodel *m2)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct nm_node *n = &m2->nodes[i];
		struct fix_verdict *v;

		if (!l->login[i])
			continue;
		v = add(out, FIX_VERDICT_LOGIN, i, fixer_login_stage()->id);
		v->verified = n->probed;
		if (!n->probed)
			snprintf(v->still, sizeof(v->still), "%s (%s)", n->error, n->error_code);
		out->bad += !v->verified;
	}
}

void fix_verification_fini(struct fix_verification *out)
{
	free(out->v);
	memset(out, 0, sizeof(*out));
}

size_t fix_verify_finding(const struct diagnosis *after, const char *id, size_t **nodes,
                          size_t *nnodes)
{
	size_t found = 0;

	*nodes = NULL;
	*nnodes = 0;
	for (size_t k = 0; after && k < after->nfindings; k++) {
		const struct finding *fd = &after->findings[k];

		if (strcmp(fd->id, id) != 0)
			continue;
		found++;
		if (!fd->nnodes)
			continue;
		*nodes = cd_realloc(*nodes, (*nnodes + fd->nnodes) * sizeof(**nodes));
		memcpy(*nodes + *nnodes, fd->nodes, fd->nnodes * sizeof(**nodes));
		*nnodes += fd->nnodes;
	}
	return found;
}
