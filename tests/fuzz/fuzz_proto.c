/* SPDX-License-Identifier: MIT */
/* fuzz_proto.c - libFuzzer harness for the agent protocol reader: arbitrary
 * bytes from a node must never crash the head or slip past the caps. */
#include <stdint.h>
#include <stdlib.h>

#include "cd.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf in;
	char err[CD_ERRLEN];
	json_t *msg;
	int rc;

	buf_init(&in, 2 * PROTO_MAX_LINE);
	if (buf_append(&in, data, size) < 0)
		goto out;
	while ((rc = proto_next(&in, &msg, err, sizeof(err))) != 0) {
		if (rc == CD_ERR_TOOBIG)
			break;
		if (rc == 1) {
			if (!json_is_integer(json_object_get(msg, "id")))
				abort();
			json_decref(msg);
		}
	}
out:
	buf_fini(&in);
	return 0;
}
