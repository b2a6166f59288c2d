/* SPDX-License-Identifier: MIT */
/* fuzz_sshpool_end.c - libFuzzer harness for the end script's parser
 * (core/sshpool_end.c, pool_end_parse): whatever a node's login prints
 * around the CDEND lines either parses complete or is incomplete, and every
 * field it fills is a NUL-terminated string within its array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "sshpool_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pool_end_found f;
	int rc = pool_end_parse((const char *)data, size, &f);

	if ((rc == 0) != (f.complete == 1) || (rc != 0 && rc != CD_ERR_PARSE))
		abort();
	if (strnlen(f.agent_state, sizeof(f.agent_state)) == sizeof(f.agent_state) ||
	    strnlen(f.job, sizeof(f.job)) == sizeof(f.job) ||
	    strnlen(f.left, sizeof(f.left)) == sizeof(f.left))
		abort();
	return 0;
}
