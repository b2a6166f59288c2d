/* SPDX-License-Identifier: MIT */
/* fuzz_shellwords.c - libFuzzer harness for typed command lines: whatever
 * splits gives between 1 and SHELLWORDS_MAX words, none longer than the
 * line; whatever fails fails with a parse error and a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "shellwords.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = cd_malloc(size + 1), **w, err[CD_ERRLEN] = "";
	size_t n = 0;
	int rc;

	memcpy(line, data, size);
	line[size] = '\0';
	rc = shellwords_split(line, &w, &n, err, sizeof(err));
	if (rc < 0) {
		if (rc != CD_ERR_PARSE || !err[0] || w)
			abort();
	} else {
		if (n < 1 || n > SHELLWORDS_MAX || w[n])
			abort();
		for (size_t i = 0; i < n; i++)
			if (strlen(w[i]) > strlen(line))
				abort();
		shellwords_free(w);
	}
	free(line);
	return 0;
}
