/* SPDX-License-Identifier: MIT */
/* test_catalogue.c - the finding catalogue and the fixer table agree: every
 * finding id a fixer answers is a finding clusterdoc can report, every
 * catalogue id is documented in docs/findings.md, and ids are unique. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "fixers/fix.h"
#include "probes/diagnose.h"

static const struct finding_def *catalogue_find(const char *id)
{
	for (size_t k = 0; k < finding_catalogue_len; k++)
		if (strcmp(finding_catalogue[k].id, id) == 0)
			return &finding_catalogue[k];
	return NULL;
}

static void every_finding_a_fixer_answers_is_in_the_catalogue(void **state)
{
	size_t answered = 0;

	for (size_t f = 0; f < fixer_table_len; f++) {
		const struct fixer *fx = &fixer_table[f];

		assert_non_null(fx->findings);
		for (const char *const *id = fx->findings; *id; id++) {
			if (!catalogue_find(*id))
				fail_msg(
				    "fixer %s answers \"%s\", which is not in finding_catalogue",
				    fx->id, *id);
			answered++;
		}
	}
	assert_true(answered >= fixer_table_len);
}

static void fixer_and_finding_ids_are_unique(void **state)
{
	for (size_t a = 0; a < fixer_table_len; a++)
		for (size_t b = a + 1; b < fixer_table_len; b++)
			if (strcmp(fixer_table[a].id, fixer_table[b].id) == 0)
				fail_msg("fixer id %s appears twice", fixer_table[a].id);
	for (size_t a = 0; a < finding_catalogue_len; a++)
		for (size_t b = a + 1; b < finding_catalogue_len; b++)
			if (strcmp(finding_catalogue[a].id, finding_catalogue[b].id) == 0)
				fail_msg("finding id %s appears twice", finding_catalogue[a].id);
}

/* docs/findings.md has a row "| `ID` |" in its table and a "## ID" section
 * per finding (the test runs from the top of the tree, as tests/run-unit.sh
 * does); the Prometheus report has one series per row. */
static void every_catalogue_id_is_documented(void **state)
{
	FILE *f = fopen("docs/findings.md", "r");
	char line[512];
	unsigned char *section = calloc(finding_catalogue_len, 1);
	unsigned char *row = calloc(finding_catalogue_len, 1);

	assert_non_null(f);
	assert_non_null(section);
	assert_non_null(row);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "## ", 3) == 0) {
			line[3 + strcspn(line + 3, " \r\n")] = '\0';
			for (size_t k = 0; k < finding_catalogue_len; k++)
				if (strcmp(line + 3, finding_catalogue[k].id) == 0)
					section[k] = 1;
		} else if (strncmp(line, "| `", 3) == 0) {
			line[3 + strcspn(line + 3, "`")] = '\0';
			for (size_t k = 0; k < finding_catalogue_len; k++)
				if (strcmp(line + 3, finding_catalogue[k].id) == 0)
					row[k] = 1;
		}
	}
	fclose(f);
	for (size_t k = 0; k < finding_catalogue_len; k++) {
		if (!section[k])
			fail_msg("finding %s has no \"## %s\" section in docs/findings.md",
			         finding_catalogue[k].id, finding_catalogue[k].id);
		if (!row[k])
			fail_msg("finding %s has no row in docs/findings.md's table",
			         finding_catalogue[k].id);
	}
	free(section);
	free(row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_finding_a_fixer_answers_is_in_the_catalogue),
	    cmocka_unit_test(fixer_and_finding_ids_are_unique),
	    cmocka_unit_test(every_catalogue_id_is_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
