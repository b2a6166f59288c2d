/* SPDX-License-Identifier: MIT */
/*
 * command.h - the subcommands as data, as tmux's command table is: each
 * command's name, what it does, its usage, whether it takes nodes and the
 * option groups it takes (core/optgroup.h), its own options being one more
 * group. One parser (command_parse) reads every command's words, and its
 * --help is made from the same table, so what --help lists is what the
 * command takes, with the bounds its group sets.
 *
 *	static const struct command_opts hang_opts[] = {
 *		{.g = &hang_own, .dst = 0},                  the command's own
 *		{0},
 *	};
 *	const struct command command_hang = {
 *		.name = "hang", .summary = "...", .usage = "usage: ...",
 *		.nodes = COMMAND_NODES, .targets = offsetof(struct hang_cli, t),
 *		.opts = hang_opts, .run = cmd_hang,
 *	};
 *	...
 *	p = command_parse(&command_hang, &c, argc, argv, NULL);
 */
#ifndef CD_COMMAND_H
#define CD_COMMAND_H

#include "optgroup.h"

#include <stddef.h>
#include <stdio.h>

/* One block of a command's options: a group, which of its options, where
 * their values go, and the heading --help prints above them. */
struct command_opts {
	const struct optgroup *g;  /* NULL ends a command's list */
	const struct optuse *uses; /* NULL: every option of g */
	size_t dst;                /* where the values go: this offset in the command's context */
	int refused;               /* known, and refused with the usage (env and the reports') */
	const char *heading;       /* the --help line above them, or NULL */
};

enum command_nodes {
	COMMAND_NO_NODES,       /* nodeset: no -w, no SSH options */
	COMMAND_NODES,          /* -w, --hostfile or $SLURM_JOB_NODELIST, required */
	COMMAND_NODES_OPTIONAL, /* the TUI: it asks for them */
	COMMAND_NODES_LATER,    /* fix: the command calls targets_finish itself, where it
	                           needs nodes (--list and --sudoers need none) */
};

struct command {
	const char *name;    /* "mpi-check": errors say "clusterdoc mpi-check: ..." */
	const char *summary; /* its line in `clusterdoc --help` */
	const char *usage;   /* --help's first lines: usage, what it does, exit status */
	const char *trailer; /* --help's lines after the options, before the nodes', or NULL */
	/* Its own short options (with their ':'), beside the targets' and -h; a
	 * command with its own -f (bench: the size factor) leaves the targets
	 * only --fanout. */
	const char *shortopts;
	enum command_nodes nodes;
	size_t targets;                  /* where its struct targets is in its context */
	const struct command_opts *opts; /* in --help's order; {0}-ended */
	/* The command: argv[0] is its name. Returns the exit status. */
	int (*run)(int argc, char **argv);
};

/*
 * Read a command's words into ctx: every option to its group (the values
 * into ctx + opts[i].dst), the targets' to ctx + c->targets, then the
 * groups' finish and, for a command that takes nodes, targets_finish.
 * Operands are an error unless first is not NULL: then *first is the index
 * of the first (getopt's order: a '+' in shortopts stops at it).
 * Returns 0, 1 after --help (printed to stdout), or -1 after printing an
 * error (with the usage to stderr for an option the command lacks).
 */
int command_parse(const struct command *c, void *ctx, int argc, char **argv, int *first);

/* -v given before the command (`clusterdoc -vv facts`, cli/main.c) and
 * among its options: 1 or 2 turns the trace on (trace.h), on stderr, for
 * every command but the TUI. */
extern int command_verbose;

/*
 * The keys a configuration file may set for c (cli/settings.h): its long
 * options but --help, -v and those marked cmdline_only, each name once, into
 * out (max entries and a {0} after them). Returns how many.
 */
size_t command_keys(const struct command *c, struct option *out, size_t max);

/* The long options c takes on its command line only (cmdline_only: an
 * action, a consent, a mode), as command_keys writes them: a configuration
 * file that names one is told so. */
size_t command_cmdline_keys(const struct command *c, struct option *out, size_t max);

/*
 * Check the configuration's value of every key against every command (but
 * the one named name) that takes it: each command's run parses its
 * options from the configuration alone (no words: every key applies) and
 * stops there, as after --help; nothing else runs (no finish, no nodes).
 * 0, or -1 after the first bad value was said on stderr under "clusterdoc
 * NAME: FILE:LINE: KEY = VALUE: ...".
 */
int command_check_config(const char *name);

/* The command's --help: usage, each block of options, trailer, targets, -O, the global options. */
void command_help(const struct command *c, FILE *f);

/* Every command, in `clusterdoc --help`'s order (cli/main.c). */
extern const struct command *const commands[];
extern const size_t commands_len;

#endif
