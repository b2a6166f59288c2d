/* SPDX-License-Identifier: MIT */
/* fuzz_run_expand.c - libFuzzer harness for `clusterdoc run`'s placeholders
 * (run_expand) and --env values (run_check_env): whatever expands has no
 * placeholder left and checks alike without values; whatever fails says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "jobs/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct run_vars v = {
	    .node_rank = 3,
	    .nnodes = 4,
	    .nproc_per_node = 8,
	    .world_size = 32,
	    .master_port = 29500,
	    .master_addr = "fd00::1",
	    .host = "node4",
	    .iface = "ib0",
	};
	char *s = cd_malloc(size + 1), *out, err[CD_ERRLEN] = "";
	const char *argv[1];

	memcpy(s, data, size);
	s[size] = '\0';
	argv[0] = s;
	out = run_expand(s, &v, err, sizeof(err));
	if ((out != NULL) != (run_check_placeholders(argv, 1, err, sizeof(err)) == 0))
		abort();
	if (!out && !err[0])
		abort();
	free(out);
	err[0] = '\0';
	if (run_check_env((const char *)data, size, err, sizeof(err)) < 0 && !err[0])
		abort();
	free(s);
	return 0;
}
