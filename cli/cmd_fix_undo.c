/* SPDX-License-Identifier: MIT */
/*
 * cmd_fix_undo.c - `clusterdoc fix --undo RUN` and `fix --list`
 * (cmd_fix_undo.h): a run's journal undone on its nodes, and the runs with
 * what each journal says of them.
 */
#include "cmd_fix_undo.h"
#include "termtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cd.h"
#include "fixers/fix_run.h"
#include "loop.h"
#include "phase.h"
#include "report/fix_render.h"

int cmd_fix_undo(struct fix_journal *j, const char *const *hosts, size_t n,
                 const struct sshpool_opts *pool_opts)
{
	struct fix_result *results = cd_calloc(j->nchanges + 1, sizeof(*results));
	struct phase ph = {.loop = loop_new()};
	struct sshpool *pool;
	struct fix_run *s = NULL;
	char err[CD_ERRLEN];
	int rc = 2, failed = 0, skipped = 0;

	pool = sshpool_new(ph.loop, pool_opts, err, sizeof(err));
	if (!pool) {
		termtext_printf(stderr, "clusterdoc fix: %s\n", err);
		goto out;
	}
	s = fix_run_new(ph.loop, pool, hosts, n);
	fix_run_undo(s, j, results, phase_done, &ph);
	phase_wait(&ph);
	printf("undo of run %s:\n", j->run);
	for (size_t k = 0; k < j->nchanges; k++) {
		int asked = 0;

		for (size_t i = 0; i < n; i++)
			asked |= strcmp(hosts[i], j->changes[k].host) == 0;
		if (!asked) {
			results[k].status = FIX_SKIPPED;
			snprintf(results[k].message, sizeof(results[k].message), "not in -w");
			skipped++;
		}
		failed += results[k].status == FIX_FAILED;
	}
	fix_print_undo(stdout, j, results);
	/* fix --list says so: undone, or how many an undo could not restore */
	if (!failed && !skipped)
		j->undone = (long long)time(NULL);
	j->undo_failed = (size_t)failed;
	if (failed || !skipped) {
		if (fix_journal_save(j, err, sizeof(err)) < 0)
			termtext_printf(stderr, "clusterdoc fix: %s\n", err);
	}
	rc = failed || skipped ? 1 : 0;
out:
	fix_run_free(s);
	sshpool_free(pool);
	loop_free(ph.loop);
	free(results);
	return rc;
}

int cmd_fix_list(void)
{
	char **runs = NULL, err[CD_ERRLEN];
	size_t n = 0;

	if (fix_journal_list(&runs, &n, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc fix: %s\n", err);
		return 2;
	}
	if (!n)
		printf("no fix runs recorded\n");
	for (size_t k = 0; k < n; k++) {
		struct fix_journal *j = NULL;

		if (fix_journal_load(runs[k], &j, err, sizeof(err)) == 0) {
			fix_print_list_line(stdout, j);
			fix_journal_free(j);
		} else {
			printf("%s  unreadable: %s\n", runs[k], err);
		}
		free(runs[k]);
	}
	free(runs);
	return 0;
}
