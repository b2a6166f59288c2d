/* SPDX-License-Identifier: MIT */
/* facts_gpu_summary.c - the facts table's GPU health word (see
 * facts_gpu_summary.h). */
#include "probes/facts_gpu_summary.h"

#include <stdio.h>
#include <string.h>

static int flag(json_t *h, const char *obj, const char *key)
{
	return json_is_true(json_object_get(json_object_get(h, obj), key));
}

static int needs_reset(json_t *h)
{
	json_t *vol = json_object_get(json_object_get(h, "ecc"), "volatile");

	return json_integer_value(json_object_get(vol, "uncorrected")) > 0 ||
	       flag(h, "row_remap", "pending") || flag(h, "row_remap", "failure") ||
	       flag(h, "retired_pages", "pending");
}

static int is_lost(json_t *h)
{
	const char *key;
	json_t *v;

	json_object_foreach(json_object_get(h, "errors"), key, v)
	{
		const char *s = json_string_value(v);

		if (s && strstr(s, "(NVML error 15)"))
			return 1;
	}
	return 0;
}

const char *facts_gpu_health_word(json_t *facts, char *buf, size_t len)
{
	json_t *gpus = json_object_get(facts, "gpus"), *g;
	size_t i, failing = 0;
	int lost = 0, ecc = 0;

	json_array_foreach(gpus, i, g)
	{
		json_t *h = json_object_get(g, "health");

		lost |= is_lost(h);
		ecc |= needs_reset(h);
		failing += json_object_size(json_object_get(h, "errors")) > 0;
	}
	if (!json_array_size(gpus))
		snprintf(buf, len, "-");
	else if (lost)
		snprintf(buf, len, "lost");
	else if (ecc)
		snprintf(buf, len, "ECC!");
	else if (json_array_size(json_object_get(json_object_get(facts, "xid"), "events")))
		snprintf(buf, len, "Xid!");
	else if (failing)
		snprintf(buf, len, "%zu err", failing);
	else
		snprintf(buf, len, "ok");
	return buf;
}
