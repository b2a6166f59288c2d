/* SPDX-License-Identifier: MIT */
/*
 * hang_rankset.c - see hang_rankset.h.
 */
#include <stdio.h>

#include "hang/hang_rankset.h"

void hang_ranks_text(const json_t *ranks, char *out, size_t outlen)
{
	size_t i = 0, n = json_array_size(ranks), used = 0;

	out[0] = '\0';
	while (i < n && used + 1 < outlen) {
		long long a = json_integer_value(json_array_get(ranks, i)), b = a;
		size_t j = i + 1;

		while (j < n && json_integer_value(json_array_get(ranks, j)) == b + 1)
			b = json_integer_value(json_array_get(ranks, j++));
		used += (size_t)snprintf(out + used, outlen - used,
		                         a == b ? "%s%lld" : "%s%lld-%lld", i ? "," : "", a, b);
		i = j;
	}
}
