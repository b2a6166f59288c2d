/* SPDX-License-Identifier: MIT */
/* fuzz_csgroups.c - libFuzzer harness for ClusterShell's groups.conf and
 * groups.d files (core/csgroups.h): the input is parsed both ways; whatever
 * parses gives sources with names and groups with nodes, whatever fails
 * fails with "f:LINE: ...". Nothing runs: upcalls are only parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "csgroups.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct csgroups *c, int rc, const char *err)
{
	if (rc < 0) {
		if (rc != CD_ERR_PARSE || strncmp(err, "f:", 2))
			abort();
		return;
	}
	for (size_t i = 0; i < c->nsrc; i++) {
		if (!c->src[i].name[0] || csgroups_find(c, c->src[i].name) != &c->src[i])
			abort();
		for (size_t k = 0; k < c->src[i].ngroups; k++)
			if (!c->src[i].groups[k][0] || !c->src[i].nodes[k])
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csgroups c;
	char err[CD_ERRLEN] = "";
	int rc;

	csgroups_init(&c);
	rc = csgroups_parse_conf(&c, (const char *)data, size, "f", "/cfg", 1, err, sizeof(err));
	check(&c, rc, err);
	csgroups_fini(&c);
	csgroups_init(&c);
	rc = csgroups_parse_yaml(&c, (const char *)data, size, "f", err, sizeof(err));
	check(&c, rc, err);
	csgroups_fini(&c);
	return 0;
}
