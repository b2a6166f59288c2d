/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dcgm.c - libFuzzer harness for the `dcgmi diag -j` parser
 * (probes/dcgm_parse.h): whatever dcgmi prints on a node must never crash
 * the head, and every result it keeps is well formed.
 * Seeds: tests/fuzz/corpus/dcgm/ (what dcgmi 3.x and 4.x print: the fixtures
 * of tests/fixtures/dcgm/, and a few edges).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probes/dcgm_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* DCGM's line breaks must not reach a finding's one-line evidence. */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ')
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dcgm_report rep;
	char err[128];

	if (dcgm_parse((const char *)data, size, &rep, err, sizeof(err)) != 0) {
		if (!err[0] || rep.n || has_control(err))
			abort();
		return 0;
	}
	if (rep.n > DCGM_RESULTS_MAX || rep.n > rep.tests)
		abort();
	for (size_t i = 0; i < rep.n; i++) {
		const struct dcgm_result *r = &rep.results[i];

		if ((r->status != DCGM_FAIL && r->status != DCGM_WARN) || r->gpu < -1 ||
		    !r->test[0] || strlen(r->message) >= DCGM_TEXT_MAX || has_control(r->message))
			abort();
	}
	return 0;
}
