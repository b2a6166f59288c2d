/*
 * optgroup.h - option groups as data: the options of one module's knobs
 * (the check's, the bench's, the MNIST job's, the reports') are defined
 * once, as a table of long options with their help lines, a parse function
 * and a check run after parsing. Every command that takes a group, or some
 * of its options, builds its getopt_long table from it and parses those
 * options the same way; its own options stay in its own table.
 *
 *	struct optset s;
 *	optset_init(&s);
 *	optset_add(&s, own_longopts);                        own options, {0}-ended
 *	optset_add_group(&s, &checkopt_group, NULL, &dst);   all of the group
 *	targets_getopt(&cmd, &s, &t, ctx, argc, argv);       the loop (targets.h):
 *		optset_option for each option, optset_finish at the end
 *
 * The groups and what their options fill are in optgroups.h.
 */
#ifndef CD_OPTGROUP_H
#define CD_OPTGROUP_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* One long option of a group. */
struct optdef {
	const char *name;  /* the long name, without "--" */
	int has_arg;       /* no_argument or required_argument */
	int id;            /* what getopt_long returns: the group's enum value or, for an
	                      option with a short form, its letter */
	const char *shown; /* how its error messages name it ("--port", "-b") */
	const char *help;  /* its lines of --help; NULL: not listed (an alias, --seed) */
};

/* A command's use of one option of a group: which, and where the command
 * says it in its own words, under which name and with which help. */
struct optuse {
	int id;            /* 0 ends a list */
	const char *name;  /* NULL: the group's long name */
	const char *shown; /* NULL: the group's (with name: "--" name) */
	const char *help;  /* NULL: the group's */
};

struct optset;

struct optgroup {
	const struct optdef *defs;
	size_t ndefs;
	/* Parse option id's value into dst: 0, or -1 after printing
	 * "clusterdoc CMD: SHOWN ..." on stderr. */
	int (*parse)(void *dst, int id, const char *arg, const char *cmd, const char *shown);
	/* After every option: check what they say together (NULL: nothing to
	 * check). 0, or -1 after printing an error; s names the options as the
	 * command spells them (optset_shown). */
	int (*finish)(void *dst, const char *cmd, const struct optset *s);
};

/* The getopt_long table of one command: its own options and its groups'. */
#define OPTSET_MAX   64
#define OPTSET_MAXGR 4
struct optset {
	struct option longopts[OPTSET_MAX + 1]; /* {0}-ended, for getopt_long */
	struct optset_entry {
		int id;
		char shown[40];           /* "" for the command's own */
		const struct optgroup *g; /* NULL: the command's own */
		void *dst;
	} entries[OPTSET_MAX];
	size_t n;
	struct {
		const struct optgroup *g;
		void *dst;
	} groups[OPTSET_MAXGR];
	size_t ngroups;
};

void optset_init(struct optset *s);

/* Append a command's own options (a {0}-ended getopt_long table, kept by
 * pointer: it must outlive the set, as a static table does). */
void optset_add(struct optset *s, const struct option *opts);

/* Append the options of g named in uses ({0}-ended), or every option of g
 * when uses is NULL; their values go into dst (the group's documented
 * type). dst NULL: the options are known to getopt_long but no group takes
 * them (optset_option returns 0: the command refuses them). Past OPTSET_MAX options or OPTSET_MAXGR
 * groups is a programmer error (fatal). */
void optset_add_group(struct optset *s, const struct optgroup *g, const struct optuse *uses,
                      void *dst);

/* Handle one value getopt_long returned: 1 when a group of s took it, 0 when
 * it is not a group's (the command's own, the targets', or a group's added
 * with no dst), -1 after
 * printing an error naming the option. */
int optset_option(const struct optset *s, int opt, const char *arg, const char *cmd);

/* After option parsing: each group's finish. 0, or -1 after printing. */
int optset_finish(const struct optset *s, const char *cmd);

/* How the command's errors name option id ("--bench-min"); "?" when s has
 * no such option. */
const char *optset_shown(const struct optset *s, int id);

/* The help lines of g's options in uses, in that order, or of all of them,
 * in the group's order, when uses is NULL. */
void optgroup_help(FILE *f, const struct optgroup *g, const struct optuse *uses);

#endif
