/*
 * cmd_nodeset.c - `clusterdoc nodeset`: expand, fold or count hostlists, in
 * the manner of ClusterShell's nodeset. Exit 0 on success, 2 on a usage
 * error or a hostlist that cannot be read.
 */
#include "cd.h"
#include "commands.h"
#include "hostlist.h"
#include "longopt.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: clusterdoc nodeset -e|-f|-c [-x EXPR]... EXPR...\n"
	           "Expand, fold or count hostlists. Several EXPRs are unioned; ^FILE reads one\n"
	           "host or hostlist per line from FILE.\n\n"
	           "  -e, --expand         print every host, space separated, on one line\n"
	           "  -f, --fold           print the folded hostlist, e.g. node[1-3,5]\n"
	           "  -c, --count          print the number of hosts\n"
	           "  -x, --exclude EXPR   remove the hosts of EXPR (may be repeated)\n"
	           "  -h, --help           show this help\n\n"
	           "EXPR: node[01-16,20], rack[1-2]-n[1-4], n[1-9/2]; ',' or whitespace separate\n"
	           "hosts; A!B difference, A&B intersection, A^B symmetric difference, applied\n"
	           "left to right. Hosts come out sorted and without duplicates.\n");
}

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
	static const struct option longopts[] = {
	    {"expand", no_argument, NULL, 'e'}, {"fold", no_argument, NULL, 'f'},
	    {"count", no_argument, NULL, 'c'},  {"exclude", required_argument, NULL, 'x'},
	    {"help", no_argument, NULL, 'h'},   {0},
	};
	struct hostlist *hosts = hostlist_new(), *exclude = hostlist_new();
	char err[CD_ERRLEN];
	int opt, mode = 0, rc = 2;

	/* 0, not 1: glibc then resets all its state, so the command can run twice in one process.
	 */
	optind = 0;
	for (;;) {
		/* an abbreviated long option is an error, never a guess (longopt.h) */
		int next = longopt_next(argc, argv, optind, 1);
		char msg[256];

		if (next >= 0 && longopt_check(longopts, argv[next], msg, sizeof(msg)) < 0) {
			fprintf(stderr, "clusterdoc nodeset: %s\n", msg);
			goto out;
		}
		opt = getopt_long(argc, argv, "efcx:h", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'e':
		case 'f':
		case 'c':
			if (mode && mode != opt) {
				fprintf(stderr,
				        "clusterdoc nodeset: -%c and -%c do not go together\n",
				        mode, opt);
				goto out;
			}
			mode = opt;
			break;
		case 'x':
			if (hostlist_add_arg(exclude, optarg, err, sizeof(err)) < 0)
				goto bad_hostlist;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (!mode) {
		fprintf(stderr, "clusterdoc nodeset: say what to do: -e (expand), -f (fold) or "
		                "-c (count)\n");
		goto out;
	}
	if (optind == argc) {
		fprintf(stderr, "clusterdoc nodeset: no hostlist given\n");
		goto out;
	}
	for (int i = optind; i < argc; i++)
		if (hostlist_add_arg(hosts, argv[i], err, sizeof(err)) < 0)
			goto bad_hostlist;
	hostlist_exclude(hosts, exclude);
	print_hosts(mode, hosts);
	rc = 0;
	goto out;
bad_hostlist:
	fprintf(stderr, "clusterdoc nodeset: %s\n", err);
out:
	hostlist_free(hosts);
	hostlist_free(exclude);
	return rc;
}
