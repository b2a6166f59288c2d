/* optgroup.c - building and dispatching a command's options from its groups (see optgroup.h). */
#include "optgroup.h"
#include "cd.h"

#include <stdio.h>
#include <string.h>

void optset_init(struct optset *s)
{
	memset(s, 0, sizeof(*s));
}

static void append(struct optset *s, const struct option *o, const char *shown,
                   const struct optgroup *g, void *dst)
{
	if (s->n == OPTSET_MAX)
		cd_fatal("optset: more than %d options", OPTSET_MAX);
	s->longopts[s->n] = *o;
	s->entries[s->n] = (struct optset_entry){.id = o->val, .g = g, .dst = dst};
	if (shown)
		snprintf(s->entries[s->n].shown, sizeof(s->entries[s->n].shown), "%s", shown);
	s->n++;
}

void optset_add(struct optset *s, const struct option *opts)
{
	for (; opts->name; opts++)
		append(s, opts, NULL, NULL, NULL);
}

static const struct optdef *find_def(const struct optgroup *g, int id)
{
	for (size_t i = 0; i < g->ndefs; i++) {
		if (g->defs[i].id == id)
			return &g->defs[i];
	}
	cd_fatal("optgroup: no option %d in the group", id);
}

void optset_add_group(struct optset *s, const struct optgroup *g, const struct optuse *uses,
                      void *dst)
{
	if (s->ngroups == OPTSET_MAXGR)
		cd_fatal("optset: more than %d groups", OPTSET_MAXGR);
	s->groups[s->ngroups].g = g;
	s->groups[s->ngroups].dst = dst;
	s->ngroups++;
	if (!uses) {
		for (size_t i = 0; i < g->ndefs; i++) {
			const struct optdef *d = &g->defs[i];

			append(s, &(struct option){d->name, d->has_arg, NULL, d->id}, d->shown, g,
			       dst);
		}
		return;
	}
	for (; uses->id; uses++) {
		const struct optdef *d = find_def(g, uses->id);
		const char *name = uses->name ? uses->name : d->name;
		const char *shown = uses->shown ? uses->shown : d->shown;
		char renamed[40];

		if (uses->name && !uses->shown) {
			snprintf(renamed, sizeof(renamed), "--%s", name);
			shown = renamed;
		}
		append(s, &(struct option){name, d->has_arg, NULL, d->id}, shown, g, dst);
	}
}

static const struct optset_entry *find_entry(const struct optset *s, int id)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->entries[i].id == id)
			return &s->entries[i];
	}
	return NULL;
}

int optset_option(const struct optset *s, int opt, const char *arg, const char *cmd)
{
	const struct optset_entry *e = find_entry(s, opt);

	if (!e || !e->g || !e->dst)
		return 0;
	return e->g->parse(e->dst, opt, arg, cmd, e->shown) < 0 ? -1 : 1;
}

int optset_finish(const struct optset *s, const char *cmd)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		if (s->groups[i].dst && s->groups[i].g->finish &&
		    s->groups[i].g->finish(s->groups[i].dst, cmd, s) < 0)
			return -1;
	}
	return 0;
}

const char *optset_shown(const struct optset *s, int id)
{
	const struct optset_entry *e = find_entry(s, id);

	return e && e->shown[0] ? e->shown : "?";
}

void optgroup_help(FILE *f, const struct optgroup *g, const struct optuse *uses)
{
	if (!uses) {
		for (size_t i = 0; i < g->ndefs; i++) {
			if (g->defs[i].help)
				fputs(g->defs[i].help, f);
		}
		return;
	}
	for (; uses->id; uses++) {
		const char *help = uses->help ? uses->help : find_def(g, uses->id)->help;

		if (help)
			fputs(help, f);
	}
}
