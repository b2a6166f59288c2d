/* SPDX-License-Identifier: MIT */
/*
 * main.c - the clusterdoc command line: one row per subcommand in
 * `commands` (command.h), as tmux does with its command table.
 */
#include "cd.h"
#include "commands.h"
#include "completion.h"
#include "jsondoc.h"
#include "version.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The command table: every row is defined beside its command (cli/cmd_*.c). */
const struct command *const commands[] = {
    &command_facts, &command_check,   &command_env,    &command_fix,     &command_bench,
    &command_mnist, &command_run,     &command_hang,   &command_gpuburn, &command_mpicheck,
    &command_tui,   &command_nodeset, &command_config,
};
const size_t commands_len = CD_ARRAY_LEN(commands);

static void usage(FILE *f)
{
	fprintf(f, "usage: clusterdoc COMMAND [options]\n"
	           "       clusterdoc [-w HOSTLIST] [options]   the interactive view (as `tui`)\n"
	           "\nCommands:\n");
	for (size_t i = 0; i < commands_len; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f,
	        "\nRun `clusterdoc COMMAND --help` for a command's options; see clusterdoc(1).\n");
}

/*
 * `clusterdoc -w HOSTS ...`: options without a command are the TUI's, as
 * `clusterdoc` alone on a terminal is. Without a terminal the TUI cannot
 * run; say which commands take the same nodes instead.
 */
static int run_tui_or_explain(int argc, char **argv)
{
	static const char *const instead[] = {"facts", "check"};

	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		return cmd_tui(argc, argv);
	fprintf(stderr,
	        "clusterdoc: options without a command open the interactive view, which needs "
	        "a terminal\n(stdin and stdout); without one, name a command, for example:\n");
	for (size_t i = 0; i < CD_ARRAY_LEN(instead); i++) {
		fprintf(stderr, "  clusterdoc %s", instead[i]);
		for (int k = 1; k < argc; k++) {
			fputc(' ', stderr);
			cd_fput_shell_word(stderr, argv[k]);
		}
		fputc('\n', stderr);
	}
	fprintf(stderr, "Run `clusterdoc --help` for every command.\n");
	return 2;
}

/*
 * What a command printed is only delivered once stdout is flushed: a full
 * disk (/dev/full), a closed pipe (EPIPE, since SIGPIPE is ignored) or a
 * quota shows up here, or as the error flag of an earlier write. A report
 * that did not reach its reader is a failure of the run (exit 2), said on
 * stderr; rc is kept when the output went out. name is the command ("" for
 * clusterdoc itself).
 */
static int finish_output(const char *name, int rc)
{
	int flushed = fflush(stdout), e = errno;

	if (flushed == 0 && !ferror(stdout))
		return rc;
	if (flushed != 0)
		fprintf(stderr, "clusterdoc%s%s: cannot write the output to standard output: %s\n",
		        *name ? " " : "", name, strerror(e));
	else
		fprintf(stderr,
		        "clusterdoc%s%s: cannot write the output to standard output: part of "
		        "it was lost\n",
		        *name ? " " : "", name);
	return 2;
}

/* Which command argv names, or NULL. */
static const struct command *command_named(const char *name)
{
	for (size_t i = 0; i < commands_len; i++)
		if (strcmp(name, commands[i]->name) == 0)
			return commands[i];
	return NULL;
}

static int run(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		/* on a terminal, clusterdoc alone is the TUI; it asks for the nodes */
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			return cmd_tui(argc, argv);
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	/* --version anywhere before "--", after a command too (version.h); and
	 * `clusterdoc version`, as kubectl's and docker's users type it */
	if (version_asked(argc, argv) || (argc == 2 && strcmp(argv[1], "version") == 0))
		return version_print(stdout);
	/* -v, -vv and --verbose before the command count as after it (command.h) */
	while (argc >= 2 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "-vv") == 0 ||
	                     strcmp(argv[1], "--verbose") == 0)) {
		command_verbose += argv[1][1] == 'v' && argv[1][2] == 'v' ? 2 : 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (argv[1][0] == '-' && argv[1][1])
		return run_tui_or_explain(argc, argv);
	/* not a row of the table: it prints the table itself (completion.h) */
	if (strcmp(argv[1], "completion") == 0)
		return cmd_completion(argc - 1, argv + 1);
	if ((cmd = command_named(argv[1])))
		return cmd->run(argc - 1, argv + 1);
	fprintf(stderr, "clusterdoc: unknown command \"%s\"\n\n", argv[1]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	int rc;

	/* every JSON document says when its command started (jsondoc.h) */
	jsondoc_set_start_time((long long)time(NULL));
	/* A node that goes away mid-write must be an error on that node, not
	 * the end of the head; a reader of stdout that goes away is an error
	 * of the run (finish_output), not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	/* Blocks of 32 KiB and more (each node's SSH session, about 43 KB, and
	 * the larger reply buffers) get pages of their own, returned when freed,
	 * instead of leaving holes between the long-lived blocks of the heap
	 * (docs/performance.md, "check at 512 nodes: memory and time"). */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024);
	rc = run(argc, argv);
	return finish_output(argc >= 2 && command_named(argv[1]) ? argv[1] : "", rc);
}
