/* SPDX-License-Identifier: MIT */
/* optgroup.c - building, reading and dispatching a front end's options from its groups (see
 * optgroup.h). */
#include "optgroup.h"
#include "cd.h"
#include "longopt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	size_t k = 0;

	while (k < s->ngroups && (s->groups[k].g != g || s->groups[k].dst != dst))
		k++;
	if (k == s->ngroups) {
		if (s->ngroups == OPTSET_MAXGR)
			cd_fatal("optset: more than %d groups", OPTSET_MAXGR);
		s->groups[s->ngroups].g = g;
		s->groups[s->ngroups].dst = dst;
		s->ngroups++;
	}
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

int optset_option(const struct optset *s, int opt, const char *arg, char *err, size_t errlen)
{
	const struct optset_entry *e = find_entry(s, opt);
	int rc;

	if (!e || !e->g || !e->dst)
		return 0;
	rc = e->g->parse(e->dst, opt, arg, e->shown, err, errlen);
	return rc < 0 ? rc : 1;
}

int optset_config_option(struct optset *s, int opt, const char *arg, char *err, size_t errlen)
{
	int rc = optset_option(s, opt, arg, err, errlen);

	for (size_t i = 0; rc > 0 && i < s->n; i++)
		if (s->entries[i].id == opt)
			s->entries[i].from_config = 1;
	return rc;
}

int optset_from_config(const struct optset *s, int id)
{
	const struct optset_entry *e = find_entry(s, id);

	return e && e->from_config;
}

int optset_finish(const struct optset *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		int rc;

		if (!s->groups[i].dst || !s->groups[i].g->finish)
			continue;
		rc = s->groups[i].g->finish(s->groups[i].dst, s, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int optset_cmdline_only(const struct optset *s, size_t i)
{
	const struct optset_entry *e = &s->entries[i];

	if (!e->g || !find_def(e->g, e->id)->help)
		return 0;
	for (const int *id = e->g->cmdline_only; id && *id; id++)
		if (*id == e->id)
			return 1;
	return 0;
}

int optset_configurable(const struct optset *s, size_t i)
{
	const struct optset_entry *e = &s->entries[i];
	const struct optdef *d;

	if (!e->g)
		return 1;
	/* the def of this very name: an alias shares its option's id */
	d = find_def(e->g, e->id);
	for (size_t k = 0; k < e->g->ndefs; k++)
		if (e->g->defs[k].id == e->id &&
		    strcmp(e->g->defs[k].name, s->longopts[i].name) == 0)
			d = &e->g->defs[k];
	if (!d->help)
		return 0; /* an alias, or an option --help does not list */
	for (const int *id = e->g->cmdline_only; id && *id; id++)
		if (*id == e->id)
			return 0;
	return 1;
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

/* ---------------------------------------------------------------- the loop */

/* What a quiet loop says of the word getopt_long refused: missing is 1
 * when it lacks its value (getopt_long returned ':'), else the word is not
 * an option here or has a value it does not take. */
static int refused(const struct optset *s, const char *word, int missing, char *err, size_t errlen)
{
	const struct option *o = word ? longopt_named(s->longopts, word) : NULL;

	if (missing && o)
		return cd_errf(err, errlen, OPTSET_USAGE, "--%s needs a value", o->name);
	if (missing)
		return cd_errf(err, errlen, OPTSET_USAGE, "-%c needs a value", optopt);
	if (o && o->has_arg == no_argument)
		return cd_errf(err, errlen, OPTSET_USAGE, "--%s takes no value", o->name);
	if (word && strncmp(word, "--", 2) != 0)
		return cd_errf(err, errlen, OPTSET_USAGE, "unknown option -%c", optopt);
	return cd_errf(err, errlen, OPTSET_USAGE, "unknown option %s", word ? word : "");
}

int optset_getopt(const struct optset *s, const struct optset_loop *l, int argc, char **argv,
                  int *first, char *err, size_t errlen)
{
	char quiet_short[64];
	const char *shortopts = l->shortopts;
	int opt, rc;

	/* quiet: a ':' after any '+' makes getopt_long tell a missing value (':')
	 * from an unknown option ('?') */
	if (l->quiet) {
		int plus = shortopts[0] == '+';

		snprintf(quiet_short, sizeof(quiet_short), "%s:%s", plus ? "+" : "",
		         shortopts + plus);
		shortopts = quiet_short;
	}
	err[0] = '\0';
	optind = 0; /* a fresh scan: getopt keeps its place between calls */
	opterr = !l->quiet;
	for (;;) {
		/* an abbreviated long option is an error, never a guess */
		int at = optind ? optind : 1;
		int next = longopt_next(argc, argv, at, l->shortopts[0] != '+');

		if (next >= 0 && longopt_check(s->longopts, argv[next], err, errlen) < 0)
			return CD_ERR_PARSE;
		opt = getopt_long(argc, argv, shortopts, s->longopts, NULL);
		if (opt == -1)
			break;
		if (opt == 'h')
			return OPTSET_HELP;
		if (opt == 'v' && l->verbose) {
			++*l->verbose;
			continue;
		}
		if (opt == '?' || opt == ':')
			return l->quiet ? refused(s, next >= 0 ? argv[next] : NULL, opt == ':', err,
			                          errlen)
			                : OPTSET_USAGE;
		rc = optset_option(s, opt, optarg, err, errlen);
		if (rc == 0 && l->other)
			rc = l->other(l->ctx, opt, optarg, err, errlen);
		if (rc == 0)
			return OPTSET_USAGE;
		if (rc < 0)
			return CD_ERR_PARSE;
		if (l->given)
			l->given(l->ctx, opt);
	}
	*first = optind;
	return 0;
}

/* ---------------------------------------------------------------- values */

int opt_int(const char *shown, const char *arg, int lo, int hi, int *out, char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (!*arg || *end || errno || v < lo || v > hi)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%s wants a number from %d to %d, not \"%s\"", shown, lo, hi, arg);
	*out = (int)v;
	return 0;
}

int opt_size(const char *shown, const char *arg, size_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10), mult = 1;

	if (end == arg || arg[0] == '-')
		goto bad;
	if (*end == 'K' || *end == 'k')
		mult = 1ULL << 10;
	else if (*end == 'M' || *end == 'm')
		mult = 1ULL << 20;
	else if (*end == 'G' || *end == 'g')
		mult = 1ULL << 30;
	else if (*end)
		goto bad;
	if (mult > 1 && end[1])
		goto bad;
	if (v == 0 || v > (4ULL << 30) / mult)
		goto bad;
	*out = (size_t)(v * mult);
	return 0;
bad:
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s wants a size from 1 to 4G, not \"%s\"", shown,
	               arg);
}

int opt_port(const char *shown, const char *arg, int *out, char *err, size_t errlen)
{
	return opt_int(shown, arg, 1, OPT_PORT_MAX, out, err, errlen);
}
