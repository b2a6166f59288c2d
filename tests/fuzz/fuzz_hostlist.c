/* SPDX-License-Identifier: MIT */
/* fuzz_hostlist.c - libFuzzer harness for hostlist expressions: whatever
 * parses must fold to an expression that parses back to the same hosts,
 * and whatever fails must fail with a parse or size error and a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_hosts(const struct hostlist *a, const struct hostlist *b)
{
	if (a->count != b->count)
		return 0;
	for (size_t i = 0; i < a->count; i++)
		if (strcmp(a->names[i], b->names[i]) != 0)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostlist *first = hostlist_new(), *again = hostlist_new();
	char *expr = cd_malloc(size + 1), *folded = NULL, *refolded = NULL;
	char err[CD_ERRLEN] = "";
	int rc;

	memcpy(expr, data, size);
	expr[size] = '\0';
	rc = hostlist_parse(first, expr, err, sizeof(err));
	if (rc < 0) {
		if ((rc != CD_ERR_PARSE && rc != CD_ERR_TOOBIG) || strncmp(err, "hostlist \"", 10))
			abort();
		goto out;
	}
	folded = hostlist_fold(first);
	if (first->count == 0) {
		/* "a!a" is a valid, empty set; its fold is "", not an expression. */
		if (folded[0] != '\0')
			abort();
		goto out;
	}
	if (hostlist_parse(again, folded, err, sizeof(err)) < 0) {
		fprintf(stderr, "fold \"%s\" does not parse: %s\n", folded, err);
		abort();
	}
	if (!same_hosts(first, again)) {
		fprintf(stderr, "fold \"%s\" gives %zu hosts, not %zu\n", folded, again->count,
		        first->count);
		abort();
	}
	/* The fold depends only on the set, so folding again changes nothing. */
	refolded = hostlist_fold(again);
	if (strcmp(folded, refolded) != 0) {
		fprintf(stderr, "fold \"%s\" refolds as \"%s\"\n", folded, refolded);
		abort();
	}
out:
	free(refolded);
	free(folded);
	free(expr);
	hostlist_free(first);
	hostlist_free(again);
	return 0;
}
