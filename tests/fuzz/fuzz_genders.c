/* SPDX-License-Identifier: MIT */
/* fuzz_genders.c - libFuzzer harness for genders files (core/genders.h):
 * whatever parses gives entries with a node and an attribute, and every
 * node an attribute selects is one the file named; whatever fails fails
 * with "f:LINE: ..." and leaves nothing behind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "genders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostlist *hl = hostlist_new();
	struct genders g;
	char err[CD_ERRLEN] = "";
	int rc;

	genders_init(&g);
	rc = genders_parse(&g, (const char *)data, size, "f", err, sizeof(err));
	if (rc < 0) {
		if ((rc != CD_ERR_PARSE && rc != CD_ERR_TOOBIG) || strncmp(err, "f:", 2) || g.count)
			abort();
		goto out;
	}
	for (size_t i = 0; i < g.count; i++)
		if (!g.e[i].node[0] || !g.e[i].attr[0] || g.e[i].line < 1)
			abort();
	if (g.count) {
		rc = genders_select(&g, g.e[0].attr, hl, err, sizeof(err));
		if (rc < 1 || hl->count != (size_t)rc)
			abort();
	}
out:
	genders_fini(&g);
	hostlist_free(hl);
	return 0;
}
