/* command.c - one parser and one --help for every command of the table (command.h). */
#include "command.h"
#include "cd.h"
#include "targets.h"
#include "termtext.h"

#include <string.h>

static const struct option targets_longopts[] = {
    TARGETS_LONGOPTS,
    {0},
};
static const struct option help_longopts[] = {
    {"help", no_argument, NULL, 'h'},
    {0},
};

/* What the loop hands to the targets: the options no group took. */
struct targets_arg {
	struct targets *t;
	const char *name;
};

static int targets_other(void *arg, int opt, const char *val, char *err, size_t errlen)
{
	struct targets_arg *a = arg;

	(void)errlen;
	err[0] = '\0'; /* targets_option says its own errors */
	return targets_option(a->t, opt, val, a->name);
}

/* The set of c's options: its groups first (so that a group's option named
 * as a targets' one, run's --launcher, is the group's), the targets', -h. */
static void build_set(const struct command *c, void *ctx, struct optset *s)
{
	optset_init(s);
	for (const struct command_opts *o = c->opts; o && o->g; o++)
		optset_add_group(s, o->g, o->uses, o->refused ? NULL : (char *)ctx + o->dst);
	if (c->nodes != COMMAND_NO_NODES)
		optset_add(s, targets_longopts);
	optset_add(s, help_longopts);
}

static void build_shortopts(const struct command *c, char *out, size_t len)
{
	const char *own = c->shortopts ? c->shortopts : "";
	int plus = own[0] == '+';
	const char *targets = "";

	if (c->nodes != COMMAND_NO_NODES)
		targets = strchr(own, 'f') ? TARGETS_SHORTOPTS_NOF : TARGETS_SHORTOPTS;
	snprintf(out, len, "%s%s%sh", plus ? "+" : "", targets, own + plus);
}

int command_parse(const struct command *c, void *ctx, int argc, char **argv, int *first)
{
	struct targets *t =
	    c->nodes != COMMAND_NO_NODES ? (void *)((char *)ctx + c->targets) : NULL;
	struct targets_arg ta = {.t = t, .name = c->name};
	char shortopts[64], err[CD_ERRLEN];
	struct optset s;
	struct optset_loop l = {.shortopts = shortopts};
	int rc, at;

	build_set(c, ctx, &s);
	build_shortopts(c, shortopts, sizeof(shortopts));
	if (t) {
		l.other = targets_other;
		l.ctx = &ta;
	}
	rc = optset_getopt(&s, &l, argc, argv, &at, err, sizeof(err));
	if (rc == OPTSET_HELP) {
		command_help(c, stdout);
		return 1;
	}
	if (rc == 0 && at < argc && !first) {
		termtext_printf(stderr, "clusterdoc %s: unexpected argument \"%s\"\n", c->name,
		                argv[at]);
		return -1;
	}
	if (rc == 0)
		rc = optset_finish(&s, err, sizeof(err));
	if (rc == OPTSET_USAGE) {
		command_help(c, stderr);
		return -1;
	}
	if (rc < 0) {
		if (err[0])
			termtext_printf(stderr, "clusterdoc %s: %s\n", c->name, err);
		return -1;
	}
	if (t && c->nodes != COMMAND_NODES_LATER) {
		t->hosts_optional = c->nodes == COMMAND_NODES_OPTIONAL;
		if (targets_finish(t, c->name) < 0)
			return -1;
	}
	if (first)
		*first = at;
	return 0;
}

void command_help(const struct command *c, FILE *f)
{
	fputs(c->usage, f);
	for (const struct command_opts *o = c->opts; o && o->g; o++) {
		if (o->refused)
			continue;
		if (o->heading)
			fputs(o->heading, f);
		optgroup_help(f, o->g, o->uses);
	}
	if (c->trailer)
		fputs(c->trailer, f);
	if (c->nodes != COMMAND_NO_NODES)
		fputs(targets_help, f);
}
