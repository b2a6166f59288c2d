/* SPDX-License-Identifier: MIT */
/* fuzz_slurm.c - libFuzzer harness for the `scontrol show node -o` parser:
 * any line either parses to NUL-terminated fields whose flags agree with the
 * state, or is refused as a parse error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct slurm_node n;
	int rc;

	memcpy(line, data, size);
	line[size] = '\0';
	rc = slurm_node_parse(line, &n);
	if (rc && rc != CD_ERR_PARSE)
		abort();
	if (!rc && (strlen(n.state) >= sizeof(n.state) || strlen(n.reason) >= sizeof(n.reason) ||
	            n.drained != (strstr(n.state, "DRAIN") != NULL) ||
	            n.down != (strstr(n.state, "DOWN") != NULL)))
		abort();
	free(line);
	return 0;
}
