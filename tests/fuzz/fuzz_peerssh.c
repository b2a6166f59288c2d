/* SPDX-License-Identifier: MIT */
/* fuzz_peerssh.c - libFuzzer harness for the node-to-node SSH check's two
 * parsers: ssh's stderr (peerssh_classify: any bytes, any wait status) must
 * give a reason in range and a detail of printable ASCII that fits; an
 * agent's peer_ssh answer (peerssh_matrix_fill_row: any JSON) must fill the
 * row completely or not at all. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/peerssh.h"
#include "probes/peerssh_matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const hosts[] = {"node1", "node2", "node3"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char detail[PEERSSH_DETAIL_MAX], err[CD_ERRLEN];
	int status = size ? (int)data[0] << 8 : 0;
	enum peerssh_reason r;
	struct peerssh_matrix *m;
	json_t *j;
	size_t tested = 0;

	r = peerssh_classify(status, size > 1 && data[1] & 1, (const char *)data, size, detail);
	if (r >= PEERSSH_NREASONS || strlen(detail) >= PEERSSH_DETAIL_MAX)
		abort();
	for (const char *d = detail; *d; d++)
		if (*d < 0x20 || *d > 0x7e)
			abort();

	j = json_loadb((const char *)data, size, 0, NULL);
	m = peerssh_matrix_new(hosts, 3);
	if (j) {
		int rc = peerssh_matrix_fill_row(m, 1, j, err, sizeof(err));

		for (size_t to = 0; to < 3; to++)
			tested += peerssh_cell_at(m, 1, to)->tested;
		if ((rc == 0 && tested != 2) || (rc < 0 && (tested != 0 || !err[0])))
			abort();
		json_decref(j);
	}
	peerssh_matrix_free(m);
	return 0;
}
