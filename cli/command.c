/* SPDX-License-Identifier: MIT */
/* command.c - one parser and one --help for every command of the table (command.h). */
#include "command.h"
#include "cd.h"
#include "settings.h"
#include "targets.h"
#include "progress.h"
#include "termtext.h"
#include "trace.h"

#include <string.h>

/* -O KEY=VALUE: every command's, read by the loop's `other`. */
#define O_SHORTOPT "O:"
#define O_MAX      64
static const char o_help[] = "Configuration:\n"
                             "  -O KEY=VALUE         a configuration key for this run (see "
                             "`clusterdoc config`)\n";

static const struct option targets_longopts[] = {
    TARGETS_LONGOPTS,
    {0},
};
static const struct option help_longopts[] = {
    {"help", no_argument, NULL, 'h'},
    {"verbose", no_argument, NULL, 'v'},
    {0},
};

/* command_check_config: the name errors are said under, or NULL (a run of
 * the command itself). */
static const char *checking_for;

int command_verbose;

static const char global_help[] =
    "\nGlobal options (every command):\n"
    "  -v, --verbose        trace each SSH step and agent request per node on stderr,\n"
    "                       with the elapsed ms (-vv: also keepalives and progress)\n"
    "      --version        the version, commit, libraries and agents' build ids\n";

/* The trace's lines (trace.h) on stderr, node text made safe for a terminal. */
static void trace_to_stderr(const char *line, void *arg)
{
	(void)arg;
	progress_hide(); /* the progress line comes back at its next redraw */
	termtext_printf(stderr, "clusterdoc: %s\n", line);
}

/* What the loop hands to the targets (the options no group took), the -O
 * values, and which options the words gave. */
struct targets_arg {
	struct targets *t;
	const struct command *c;
	char *o[O_MAX];
	size_t no;
	int given[OPTSET_MAX * 2];
	size_t ngiven;
};

static int targets_other(void *arg, int opt, const char *val, char *err, size_t errlen)
{
	struct targets_arg *a = arg;

	if (opt == 'O') {
		if (a->no == O_MAX)
			return cd_errf(err, errlen, CD_ERR_TOOBIG, "more than %d -O", O_MAX);
		a->o[a->no++] = (char *)val;
		return 1;
	}
	err[0] = '\0'; /* targets_option says its own errors */
	return a->t ? targets_option(a->t, opt, val, a->c->name) : 0;
}

/* The words gave option opt: a configuration file's value for it, or for
 * the other spelling of the same choice, is not used. */
static void mark_given(void *arg, int opt)
{
	struct targets_arg *a = arg;
	/* One choice, several spellings: -f is --fanout where the command
	 * leaves -f to the targets; the nodes are -w, --hostfile or -g,
	 * whichever the words used (a file's nodes are not added to them). */
	static const int same[][3] = {{'f', OPT_FANOUT}, {'w', OPT_HOSTFILE, 'g'}};
	int own_f = a->c->shortopts && strchr(a->c->shortopts, 'f');

	if (a->t && (opt == 'w' || opt == OPT_HOSTFILE || opt == 'g' || opt == 'x'))
		a->t->hosts_given = 1;

	for (size_t i = 0; i < CD_ARRAY_LEN(same); i++) {
		int in = 0;

		for (size_t k = 0; k < 3; k++)
			in |= same[i][k] && same[i][k] == opt;
		if (!in || (same[i][0] == 'f' && own_f))
			continue;
		for (size_t k = 0; k < 3 && a->ngiven < CD_ARRAY_LEN(a->given); k++)
			if (same[i][k])
				a->given[a->ngiven++] = same[i][k];
		return;
	}
	if (a->ngiven < CD_ARRAY_LEN(a->given))
		a->given[a->ngiven++] = opt;
}

static int was_given(const struct targets_arg *a, int opt)
{
	for (size_t i = 0; i < a->ngiven; i++)
		if (a->given[i] == opt)
			return 1;
	return 0;
}

/* The set of c's options: its groups first (so that a group's option named
 * as a targets' one, run's --launcher, is the group's), the targets', -h. */
static void build_set(const struct command *c, void *ctx, struct optset *s)
{
	optset_init(s);
	for (const struct command_opts *o = c->opts; o && o->g; o++)
		optset_add_group(s, o->g, o->uses,
		                 o->refused ? NULL
		                 : ctx      ? (char *)ctx + o->dst
		                            : (void *)c); /* a set only read (command_keys) */
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
	snprintf(out, len, "%s%s%s" O_SHORTOPT "vh", plus ? "+" : "", targets, own + plus);
}

/* Whether entry i of s is the first of its name (a group's option named as
 * a targets' one hides that one, as getopt_long does). */
static int first_of_name(const struct optset *s, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (strcmp(s->longopts[k].name, s->longopts[i].name) == 0)
			return 0;
	return 1;
}

int command_check_config(const char *name)
{
	char arg0[64];
	int rc = 0;

	checking_for = name;
	for (size_t i = 0; i < commands_len && rc == 0; i++) {
		char *argv[] = {arg0, NULL};

		snprintf(arg0, sizeof(arg0), "%s", commands[i]->name);
		if (strcmp(commands[i]->name, name) != 0)
			rc = commands[i]->run(1, argv);
	}
	checking_for = NULL;
	return rc == 0 ? 0 : -1;
}

/* The long options of c a configuration file may give (configurable 1), or
 * those it takes on its command line only (0: an action, a consent, a mode). */
static size_t keys_of(const struct command *c, int configurable, struct option *out, size_t max)
{
	struct optset s;
	size_t n = 0;

	build_set(c, NULL, &s);
	for (size_t i = 0; i < s.n && n < max; i++) {
		/* refused: known only to say that the command does not take it */
		int refused = s.entries[i].g && !s.entries[i].dst;

		/* --help and -v are the command line's alone */
		if (s.longopts[i].val == 'h' || s.longopts[i].val == 'v' || refused ||
		    !first_of_name(&s, i) ||
		    !(configurable ? optset_configurable(&s, i) : optset_cmdline_only(&s, i)))
			continue;
		out[n++] = s.longopts[i];
	}
	memset(&out[n], 0, sizeof(*out));
	return n;
}

size_t command_keys(const struct command *c, struct option *out, size_t max)
{
	return keys_of(c, 1, out, max);
}

size_t command_cmdline_keys(const struct command *c, struct option *out, size_t max)
{
	return keys_of(c, 0, out, max);
}

/* One configuration value into the option of entry i: as the command line
 * would give it. 0, or < 0 after printing the error with the line it came
 * from. */
static int apply_one(struct optset *s, size_t i, struct targets_arg *a,
                     const struct config_entry *e)
{
	const struct option *o = &s->longopts[i];
	const char *arg = e->value;
	char err[CD_ERRLEN] = "", where[CD_ERRLEN];
	int rc;

	if (o->has_arg == no_argument) {
		if (config_bool(e->value) == 0)
			return 0;
		arg = NULL;
	}
	rc = optset_config_option(s, o->val, arg, err, sizeof(err));
	if (rc == 0 && a->t)
		rc = targets_set(a->t, o->val, arg, err, sizeof(err));
	if (rc >= 0)
		return 0;
	if (e->file)
		snprintf(where, sizeof(where), "%s:%d: %s = %s", e->file, e->line, e->key,
		         e->value);
	else
		snprintf(where, sizeof(where), "-O %s=%s", e->key, e->value);
	termtext_printf(stderr, "clusterdoc %s: %s: %s\n", checking_for ? checking_for : a->c->name,
	                where, err);
	return -1;
}

/* The configuration's values for every option of s the words did not give. */
static int apply_config(struct optset *s, struct targets_arg *a)
{
	char err[CD_ERRLEN];

	if (settings_load(a->o, a->no, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc %s: %s\n",
		                checking_for ? checking_for : a->c->name, err);
		return -1;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct config_entry *e;

		if (s->longopts[i].val == 'h' || s->longopts[i].val == 'v' ||
		    !optset_configurable(s, i) || !first_of_name(s, i) ||
		    was_given(a, s->longopts[i].val))
			continue;
		e = config_get(settings_config(), a->c->name, s->longopts[i].name);
		if (e && apply_one(s, i, a, e) < 0)
			return -1;
	}
	return 0;
}

int command_parse(const struct command *c, void *ctx, int argc, char **argv, int *first)
{
	struct targets *t =
	    c->nodes != COMMAND_NO_NODES ? (void *)((char *)ctx + c->targets) : NULL;
	struct targets_arg ta = {.t = t, .c = c};
	char shortopts[64], err[CD_ERRLEN];
	struct optset s;
	struct optset_loop l = {.shortopts = shortopts,
	                        .other = targets_other,
	                        .ctx = &ta,
	                        .given = mark_given,
	                        .verbose = &command_verbose};
	int rc, at;

	build_set(c, ctx, &s);
	build_shortopts(c, shortopts, sizeof(shortopts));
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
	if (rc == 0 && apply_config(&s, &ta) < 0)
		return -1;
	if (rc == 0 && checking_for)
		return 1; /* the values are read: the command stops there, as after --help */
	if (rc == 0)
		rc = optset_finish(&s, err, sizeof(err));
	/* the TUI owns the terminal: a trace would write over its screen */
	if (rc == 0 && command_verbose && strcmp(c->name, "tui") != 0)
		trace_init(command_verbose, trace_to_stderr, NULL);
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
	fputs(o_help, f);
	fputs(global_help, f);
}
