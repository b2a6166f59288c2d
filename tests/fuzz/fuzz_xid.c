/* SPDX-License-Identifier: MIT */
/*
 * fuzz_xid.c - libFuzzer harness for the kernel log's Xid parser
 * (probes/xid_parse.h): whatever /dev/kmsg or journalctl prints on a node
 * must never crash the agent, and every event it keeps is well formed.
 *
 * The first input byte picks the reader (even: /dev/kmsg records, odd:
 * journalctl lines); the rest is the log, not NUL-terminated. Each input
 * also goes whole through xid_parse_text. Seeds: tests/fuzz/corpus/xid/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/xid_parse.h"

static void check_events(json_t *events, size_t found, size_t dropped)
{
	size_t i;
	json_t *e;

	if (json_array_size(events) > XID_EVENTS_MAX || found != json_array_size(events) + dropped)
		abort();
	json_array_foreach(events, i, e)
	{
		const char *pci = json_string_value(json_object_get(e, "pci"));
		const char *text = json_string_value(json_object_get(e, "text"));

		if (!json_is_integer(json_object_get(e, "xid")) || !pci || !*pci || !text ||
		    strncmp(text, "NVRM: Xid (", 11) != 0 ||
		    !json_is_number(json_object_get(e, "time_s")))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	struct xid_event ev;
	json_t *events;
	size_t found, dropped = 0;

	if (size < 1)
		return 0;
	events = json_array();
	if (data[0] & 1)
		found = xid_parse_journal(buf, size - 1, events, &dropped);
	else
		found = xid_parse_kmsg(buf, size - 1, events, &dropped);
	check_events(events, found, dropped);
	json_decref(events);
	if (xid_parse_text(buf, size - 1, &ev) == 0 &&
	    (ev.xid < 0 || !ev.pci[0] || strlen(ev.text) >= sizeof(ev.text)))
		abort();
	return 0;
}
