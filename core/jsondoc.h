/* SPDX-License-Identifier: MIT */
/*
 * jsondoc.h - what every JSON document clusterdoc prints carries beside its
 * "version": the tool's version ("clusterdoc_version") and when the command
 * started ("start_time", RFC 3339 in UTC, "2026-12-05T08:46:53Z"), so that a
 * saved report says what made it and when (docs/report-format.md, the shapes
 * in docs/schema/). One place writes them: every printer dumps through
 * jsondoc_dumpf or jsondoc_dumps instead of jansson's own.
 */
#ifndef CD_JSONDOC_H
#define CD_JSONDOC_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* When the command started, as Unix time; main sets it once, first thing.
 * Unset (0), the first document stamped takes the time it is stamped. */
void jsondoc_set_start_time(long long unix_s);

/* The start time as RFC 3339 UTC ("...T...Z") into buf (at least 21 bytes). */
void jsondoc_start_time(char *buf, size_t cap);

/*
 * A new object (the caller frees it with json_decref): doc's keys in their
 * order, with "clusterdoc_version" and "start_time" right after "version"
 * (first, when doc has no "version"); doc is not changed (its values are
 * shared, not copied). A doc that already has them keeps its own. NULL when
 * doc is not an object or on out-of-memory.
 */
json_t *jsondoc_stamped(const json_t *doc);

/* json_dumpf / json_dumps (same flags, same returns) of jsondoc_stamped(doc);
 * a doc that is not an object is dumped as it is. */
int jsondoc_dumpf(const json_t *doc, FILE *f, size_t flags);
char *jsondoc_dumps(const json_t *doc, size_t flags);

#endif
