/* SPDX-License-Identifier: MIT */
/*
 * cmd_nodeset.c - `clusterdoc nodeset`: expand, fold or count hostlists, in
 * the manner of ClusterShell's nodeset. Exit 0 on success, 2 on a usage
 * error or a hostlist that cannot be read.
 */
#include "cd.h"
#include "command.h"
#include "commands.h"
#include "hostlist.h"
#include "nodegroup.h"
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct nodeset_cli {
	int mode; /* 'e', 'f' or 'c' */
	struct hostlist *exclude;
};

static const struct optdef own_defs[] = {
    {"expand", no_argument, 'e', "-e",
     "  -e, --expand         print every host, space separated, on one line\n"},
    {"fold", no_argument, 'f', "-f",
     "  -f, --fold           print the folded hostlist, e.g. node[1-3,5]\n"},
    {"count", no_argument, 'c', "-c", "  -c, --count          print the number of hosts\n"},
    {"exclude", required_argument, 'x', "-x",
     "  -x, --exclude EXPR   remove the hosts of EXPR (may be repeated)\n"
     "  -h, --help           show this help\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct nodeset_cli *c = ctx;

	(void)shown;
	if (opt == 'x')
		return targets_add_arg(c->exclude, arg, err, errlen) < 0 ? CD_ERR_PARSE : 0;
	if (c->mode && c->mode != opt)
		return cd_errf(err, errlen, CD_ERR_PARSE, "-%c and -%c do not go together", c->mode,
		               opt);
	c->mode = opt;
	return 0;
}

static int finish_own(void *ctx, const struct optset *s, char *err, size_t errlen)
{
	(void)s;
	if (!((struct nodeset_cli *)ctx)->mode)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "say what to do: -e (expand), -f (fold) or -c (count)");
	return 0;
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .finish = finish_own,
                                          .cmdline_only = (const int[]){'e', 'f', 'c', 0}};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {0},
};

const struct command command_nodeset = {
    .name = "nodeset",
    .summary = "expand, fold or count a hostlist",
    .usage = "usage: clusterdoc nodeset -e|-f|-c [-x EXPR]... [EXPR...]\n"
             "Expand, fold or count hostlists. Several EXPRs are unioned; ^FILE reads one\n"
             "host or hostlist per line from FILE; - (or no EXPR, with standard input not a\n"
             "terminal) reads them from standard input.\n\n",
    .trailer = "\nEXPR: node[01-16,20], rack[1-2]-n[1-4], n[1-9/2]; ',' or whitespace separate\n"
               "hosts; A!B difference, A&B intersection, A^B symmetric difference, applied\n"
               "left to right. @group and @source:group: ClusterShell's groups.conf and\n"
               "groups.d, @sj:JOBID and @sp:PARTITION through Slurm. Hosts come out sorted\n"
               "and without duplicates.\n",
    .shortopts = "efcx:",
    .nodes = COMMAND_NO_NODES,
    .opts = opts,
    .run = cmd_nodeset,
};

static void print_hosts(int mode, const struct hostlist *hosts)
{
	char *folded;

	switch (mode) {
	case 'e':
		for (size_t i = 0; i < hosts->count; i++)
			printf("%s%s", i ? " " : "", hosts->names[i]);
		putchar('\n');
		break;
	case 'f':
		folded = hostlist_fold(hosts);
		puts(folded);
		free(folded);
		break;
	default:
		printf("%zu\n", hostlist_count(hosts));
		break;
	}
}

int cmd_nodeset(int argc, char **argv)
{
	struct nodeset_cli c = {.exclude = hostlist_new()};
	struct hostlist *hosts = hostlist_new();
	struct nodegroups groups;
	char err[CD_ERRLEN], *dash[] = {"-"};
	int first, rc = 2, p;

	targets_groups_init(&groups);
	hosts->groups = c.exclude->groups = &groups.hook;
	p = command_parse(&command_nodeset, &c, argc, argv, &first);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	if (first == argc && isatty(STDIN_FILENO)) {
		fprintf(stderr, "clusterdoc nodeset: no hostlist given (give EXPR, or - and the "
		                "hosts on standard input)\n");
		goto out;
	}
	/* as ClusterShell's nodeset: no EXPR reads standard input */
	if (first == argc) {
		argv = dash;
		argc = 1;
		first = 0;
	}
	for (int i = first; i < argc; i++)
		if (targets_add_arg(hosts, argv[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc nodeset: %s\n", err);
			goto out;
		}
	hostlist_exclude(hosts, c.exclude);
	print_hosts(c.mode, hosts);
	rc = 0;
out:
	hostlist_free(hosts);
	hostlist_free(c.exclude);
	nodegroups_fini(&groups);
	return rc;
}
