/* SPDX-License-Identifier: MIT */
/*
 * fuzz_runsync.c - libFuzzer harness for the manifest parser the agent runs
 * on what the head stored (runsync_manifest_parse, jobs/runsync.h):
 * whatever the bytes, it answers without a crash, and every path it
 * accepts is one sync_tree may create under its directory (runsync_rel_ok),
 * with a 64-digit SHA-256 and a mode of at most 07777.
 * Seeds: tests/fuzz/corpus/runsync/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "jobs/runsync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runsync_entry *e = NULL;
	size_t n = 0;
	char msg[CD_ERRLEN];

	if (runsync_manifest_parse((const char *)data, size, &e, &n, msg, sizeof(msg)) < 0) {
		if (!msg[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!runsync_rel_ok(e[i].rel) || strlen(e[i].sha256) != 64 || e[i].mode > 07777 ||
		    e[i].size < 0)
			abort();
	}
	runsync_entries_free(e, n);
	return 0;
}
