/* SPDX-License-Identifier: MIT */
/* fuzz_hostfile.c - libFuzzer harness for host files (core/hostfile.h):
 * whatever parses gives hosts each of which has the slots the file gave it
 * (or none) within 1..HOSTFILE_SLOTS_MAX; whatever fails fails with a
 * message naming the file and leaves the list and the slots untouched. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "hostfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostlist *hl = hostlist_new();
	struct hostslots s;
	char err[CD_ERRLEN] = "";
	int rc;

	hostslots_init(&s);
	rc = hostfile_parse(hl, &s, (const char *)data, size, "f", err, sizeof(err));
	if (rc < 0) {
		if ((rc != CD_ERR_PARSE && rc != CD_ERR_TOOBIG) || strncmp(err, "f:", 2) ||
		    hl->count || s.count)
			abort();
	} else {
		for (size_t i = 0; i < s.count; i++) {
			if (s.slots[i] < 1 || s.slots[i] > HOSTFILE_SLOTS_MAX ||
			    hostslots_get(&s, s.names[i]) != s.slots[i])
				abort();
			if (i && strcmp(s.names[i - 1], s.names[i]) >= 0)
				abort(); /* sorted, each host once */
		}
		if (s.count > hl->count)
			abort();
	}
	hostslots_fini(&s);
	hostlist_free(hl);
	return 0;
}
