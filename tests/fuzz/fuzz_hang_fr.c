/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hang_fr.c - libFuzzer harness for the Flight Recorder dump reader
 * (hang_fr_parse and its pickle reader, hang/hang_fr.h) and the
 * analysis across ranks: whatever the bytes, they answer without a crash
 * or a leak (a cycle would leak), a refusal says why, and an accepted dump
 * has an "entries" array that hang_fr_analyze reads.
 * Seeds: tests/fuzz/corpus/hang_fr/ (the dumps of tests/fixtures/hang/).
 */
#include <stdint.h>
#include <stdlib.h>

#include "cd.h"
#include "hang/hang_fr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CD_ERRLEN] = "";
	json_t *d = hang_fr_parse(data, size, err, sizeof(err)), *a;
	json_t *two[2];

	if (!d) {
		if (!err[0])
			abort();
		return 0;
	}
	if (!json_is_array(json_object_get(d, "entries")))
		abort();
	json_object_set_new(d, "rank", json_integer(0));
	two[0] = d;
	two[1] = d;
	a = hang_fr_analyze(two, 2);
	if (!json_is_array(json_object_get(a, "process_groups")))
		abort();
	json_decref(a);
	json_decref(d);
	return 0;
}
