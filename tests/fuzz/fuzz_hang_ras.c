/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hang_ras.c - libFuzzer harness for the two NCCL RAS status parsers
 * (hang_ras_parse_json, hang_ras_parse_text, hang/hang_ras.h) and
 * the comparison of what they make: whatever the bytes, they answer
 * without a crash, a refusal says why, and an accepted status has a
 * "communicators" array that hang_ras_compare can read.
 * Seeds: tests/fuzz/corpus/hang_ras/ (the statuses of tests/fixtures/hang/).
 */
#include <stdint.h>
#include <stdlib.h>

#include "cd.h"
#include "hang/hang_ras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CD_ERRLEN];

	for (int json = 0; json < 2; json++) {
		json_t *q, *cmp;

		err[0] = '\0';
		q = json ? hang_ras_parse_json((const char *)data, size, err, sizeof(err))
		         : hang_ras_parse_text((const char *)data, size, err, sizeof(err));
		if (!q) {
			if (!err[0])
				abort(); /* a refusal always says why */
			continue;
		}
		if (!json_is_array(json_object_get(q, "communicators")))
			abort();
		json_object_set_new(q, "ok", json_true());
		cmp = hang_ras_compare(q, q);
		if (json_array_size(cmp) != json_array_size(json_object_get(q, "communicators")))
			abort();
		json_decref(cmp);
		json_decref(q);
	}
	return 0;
}
