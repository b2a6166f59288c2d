/* SPDX-License-Identifier: MIT */
/*
 * optgroup.h - options as data: a group of options (the check's knobs, the
 * bench's, a job's, one command's own) is defined once, as a table of long
 * options with their help lines, a parse function and a check run after
 * parsing. Every front end that takes a group, or some of its options,
 * builds its getopt_long table from it and parses those options through it:
 * a command line (cli/command.h) and a line typed in the TUI (the Job
 * view's run line) alike, so both accept the same values and refuse the
 * same ones in the same words.
 *
 *	struct optset s;
 *	optset_init(&s);
 *	optset_add_group(&s, &checkopt_group, NULL, &dst);   all of the group
 *	optset_add_group(&s, &own_group, own_uses, ctx);     some of another
 *	rc = optset_getopt(&s, &loop, argc, argv, err, sizeof(err));
 *	if (rc == 0) rc = optset_finish(&s, err, sizeof(err));
 *
 * Errors are words in err ("--port wants a number from 1 to 65525, not
 * \"0\""); the front end says them with its own prefix ("clusterdoc run: ",
 * the TUI's status line).
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

/* The words an option of a group takes, for the shells' completion: one
 * row per option that takes one of a few ({0}-ended). Each word is one the
 * group's parse accepts (test_completion.c checks it). */
struct optvalues {
	int id;
	const char *words; /* space separated: "gloo nccl auto" */
};

/* A front end's use of one option of a group: which, and where the front
 * end says it in its own words, under which name and with which help. */
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
	/* Parse option id's value into dst: 0, or < 0 with err naming the
	 * option as shown ("--iters wants a number from 1 to 1000000, not
	 * \"0\""). */
	int (*parse)(void *dst, int id, const char *arg, const char *shown, char *err,
	             size_t errlen);
	/* After every option: check what they say together (NULL: nothing to
	 * check). 0, or < 0 with err; s names the options as the front end
	 * spells them (optset_shown). */
	int (*finish)(void *dst, const struct optset *s, char *err, size_t errlen);
	/* The ids ({0}-ended, NULL: none) of the options taken from the
	 * command line only: an action, a consent or a mode (--apply, --yes,
	 * --drain). No configuration file gives them a default; every other
	 * long option is a key there (cli/settings.h). */
	const int *cmdline_only;
	const struct optvalues *values; /* NULL: no option of a few words */
};

/* The getopt_long table of one front end: its groups' options, and any it
 * handles itself (optset_add). */
#define OPTSET_MAX   72
#define OPTSET_MAXGR 6
struct optset {
	struct option longopts[OPTSET_MAX + 1]; /* {0}-ended, for getopt_long */
	struct optset_entry {
		int id;
		char shown[40];           /* "" for options outside the groups */
		const struct optgroup *g; /* NULL: outside the groups */
		void *dst;
		int from_config; /* its value is a configuration file's default */
	} entries[OPTSET_MAX];
	size_t n;
	struct {
		const struct optgroup *g;
		void *dst;
	} groups[OPTSET_MAXGR];
	size_t ngroups;
};

void optset_init(struct optset *s);

/*
 * Whether option id's value came from a configuration default
 * (optset_config_option) rather than the command line: a group's finish
 * asks it where a default must not count as a choice the user made (a
 * hostfile's slots win over a configured --nproc-per-node, not over one
 * given on the command line).
 */
int optset_from_config(const struct optset *s, int id);

/* Append options no group parses (a {0}-ended getopt_long table, kept by
 * pointer: it must outlive the set, as a static table does): the loop hands
 * them to its `other` (struct optset_loop). */
void optset_add(struct optset *s, const struct option *opts);

/* Append the options of g named in uses ({0}-ended), or every option of g
 * when uses is NULL; their values go into dst (the group's documented
 * type). The same group with the same dst twice runs its finish once.
 * dst NULL: the options are known to getopt_long but no group takes
 * them (optset_option returns 0: the front end refuses them). Past
 * OPTSET_MAX options or OPTSET_MAXGR groups is a programmer error (fatal). */
void optset_add_group(struct optset *s, const struct optgroup *g, const struct optuse *uses,
                      void *dst);

/* Handle one value getopt_long returned: 1 when a group of s took it, 0 when
 * it is not a group's (added by optset_add, or a group's added with no dst),
 * < 0 with err naming the option. */
int optset_option(const struct optset *s, int opt, const char *arg, char *err, size_t errlen);

/* optset_option for a configuration file's default (cli/settings.h): the
 * same, and optset_from_config then says so for that option. */
int optset_config_option(struct optset *s, int opt, const char *arg, char *err, size_t errlen);

/* After option parsing: each group's finish. 0, or < 0 with err. */
int optset_finish(const struct optset *s, char *err, size_t errlen);

/* Whether the option of s's entry i is one a configuration file may set:
 * a group's that --help lists (its help is not NULL) and that is not in
 * its cmdline_only, or one added by optset_add. */
int optset_configurable(const struct optset *s, size_t i);

/* Whether entry i is a group's option --help lists that its cmdline_only
 * keeps off the configuration files (--apply, --yes, --force...). */
int optset_cmdline_only(const struct optset *s, size_t i);

/* How the errors name option id ("--bench-min"); "?" when s has no such
 * option. */
const char *optset_shown(const struct optset *s, int id);

/* The help lines of g's options in uses, in that order, or of all of them,
 * in the group's order, when uses is NULL. */
void optgroup_help(FILE *f, const struct optgroup *g, const struct optuse *uses);

/* ---------------------------------------------------------------- the loop */

/* How optset_getopt reads one front end's words. */
struct optset_loop {
	/* getopt_long's short options; a leading '+' stops at the first word
	 * that is not an option (run's COMMAND, the TUI's run line). */
	const char *shortopts;
	/* The front end's own handling of an option no group took (the
	 * command line's -w, -l...): 1 taken, 0 not an option of this front
	 * end, < 0 after an error, said in err or already on stderr (err
	 * left empty). NULL: none. */
	int (*other)(void *ctx, int opt, const char *arg, char *err, size_t errlen);
	void *ctx;
	/* 1: getopt_long says nothing on stderr and every word it refuses is
	 * said in err (a prompt); 0: it prints its own message (a command
	 * line, as getopt has always done there). */
	int quiet;
	/* Told of every option the words gave, after it was taken (the
	 * command line's own values win over a configuration file's, which
	 * fill in the others). NULL: none. */
	void (*given)(void *ctx, int opt);
	/* Where -v (--verbose) is counted, each time it is given ("-vv": twice);
	 * NULL: -v is no option of this front end. */
	int *verbose;
};

enum {
	OPTSET_USAGE = -100, /* an option the front end does not know (err may say which) */
	OPTSET_HELP = 1,     /* -h or --help */
};

/*
 * getopt_long over argv[1..argc) with s's table: an abbreviated long
 * option is an error naming what it may have meant, never a guess; each
 * option goes to its group, else to l->other. Returns 0 with *first the
 * index of the first word that is not an option (argc when none is left),
 * OPTSET_HELP, OPTSET_USAGE (err says which word when l->quiet), or
 * CD_ERR_PARSE with err (which may be empty when l->other printed). Resets getopt's state first
 * (optind = 0).
 */
int optset_getopt(const struct optset *s, const struct optset_loop *l, int argc, char **argv,
                  int *first, char *err, size_t errlen);

/* ---------------------------------------------------------------- values */

/* A decimal value in [lo, hi] into *out: 0, or < 0 with "SHOWN wants a
 * number from LO to HI, not \"ARG\"" in err. */
int opt_int(const char *shown, const char *arg, int lo, int hi, int *out, char *err, size_t errlen);

/* A size "256M" -> 268435456 (K, M, G are powers of 1024), from 1 to 4G:
 * 0, or < 0 with "SHOWN wants a size from 1 to 4G, not \"ARG\"". */
int opt_size(const char *shown, const char *arg, size_t *out, char *err, size_t errlen);

/*
 * The one bound of every TCP port a job listens on that clusterdoc takes
 * (--port, --master-port, MASTER_PORT from a node's environment): the
 * check's reachability test also listens on port + 10, so the highest
 * port a job may ask for is 65525.
 */
#define OPT_PORT_MAX 65525

/* A job's port (1 .. OPT_PORT_MAX) into *out: opt_int's contract. */
int opt_port(const char *shown, const char *arg, int *out, char *err, size_t errlen);

#endif
