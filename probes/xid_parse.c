/* SPDX-License-Identifier: MIT */
/* xid_parse.c - Xid lines of the kernel log (see xid_parse.h). */
#include "probes/xid_parse.h"
#include "probes/facts.h"
#include "cd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* memmem for a NUL-free needle within [s, s+len). */
static const char *find(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

int xid_parse_text(const char *msg, size_t len, struct xid_event *ev)
{
	const char *start = find(msg, len, "NVRM: Xid ("), *end = msg + len, *p, *q;
	size_t n;
	long xid = 0;
	int digits = 0;

	if (!start)
		return CD_ERR_NOTFOUND;
	p = start + strlen("NVRM: Xid (");
	if ((size_t)(end - p) >= 4 && memcmp(p, "PCI:", 4) == 0)
		p += 4;
	for (q = p; q < end && (isxdigit((unsigned char)*q) || *q == ':' || *q == '.'); q++)
		;
	n = (size_t)(q - p);
	if (n == 0 || n >= sizeof(ev->pci) || q >= end)
		return CD_ERR_NOTFOUND;
	memcpy(ev->pci, p, n);
	ev->pci[n] = '\0';
	ev->gpu_instance = -1;
	if ((size_t)(end - q) > 7 && memcmp(q, " GPU-I:", 7) == 0) {
		long gi = 0;
		int gd = 0;

		for (q += 7; q < end && isdigit((unsigned char)*q) && gd < 4; q++, gd++)
			gi = gi * 10 + (*q - '0');
		if (!gd)
			return CD_ERR_NOTFOUND;
		ev->gpu_instance = (int)gi;
	}
	if (q >= end || *q != ')')
		return CD_ERR_NOTFOUND;
	p = q + 1;
	if (p < end && *p == ':')
		p++;
	while (p < end && *p == ' ')
		p++;
	for (; p < end && isdigit((unsigned char)*p) && digits < 6; p++, digits++)
		xid = xid * 10 + (*p - '0');
	if (!digits || (p < end && isdigit((unsigned char)*p)))
		return CD_ERR_NOTFOUND;
	ev->xid = (int)xid;
	n = (size_t)(end - start);
	if (n >= sizeof(ev->text))
		n = sizeof(ev->text) - 1;
	memcpy(ev->text, start, n);
	ev->text[n] = '\0';
	for (char *c = ev->text; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	return 0;
}

/* Keep ev, dropping the oldest beyond XID_EVENTS_MAX. */
static void keep(json_t *events, const struct xid_event *ev, double time_s, size_t *dropped)
{
	json_t *o = json_object();

	json_object_set_new(o, "time_s", json_real(time_s));
	json_object_set_new(o, "xid", json_integer(ev->xid));
	json_object_set_new(o, "pci", json_string(ev->pci));
	if (ev->gpu_instance >= 0)
		json_object_set_new(o, "gpu_instance", json_integer(ev->gpu_instance));
	json_object_set_new(o, "text", facts_json_text(ev->text, strlen(ev->text)));
	json_array_append_new(events, o);
	if (json_array_size(events) > XID_EVENTS_MAX) {
		json_array_remove(events, 0);
		(*dropped)++;
	}
}

/* A non-negative decimal in [p, end) (digits only), or -1. */
static long long decimal(const char *p, const char *end)
{
	long long v = 0;

	if (p >= end)
		return -1;
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p) || v > (long long)1e15)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* One kmsg record: "PRI,SEQ,USEC,FLAGS;TEXT". */
static int kmsg_line(const char *s, size_t len, json_t *events, size_t *dropped)
{
	const char *end = s + len, *semi = memchr(s, ';', len), *c1, *c2, *c3;
	struct xid_event ev;
	long long usec;

	if (!semi)
		return 0;
	c1 = memchr(s, ',', (size_t)(semi - s));
	c2 = c1 ? memchr(c1 + 1, ',', (size_t)(semi - c1 - 1)) : NULL;
	if (!c2)
		return 0;
	c3 = memchr(c2 + 1, ',', (size_t)(semi - c2 - 1));
	usec = decimal(c2 + 1, c3 ? c3 : semi);
	if (usec < 0 || xid_parse_text(semi + 1, (size_t)(end - semi - 1), &ev) < 0)
		return 0;
	keep(events, &ev, (double)usec / 1e6, dropped);
	return 1;
}

/* One journal line: "[ SECONDS.USEC] HOST kernel: TEXT". */
static int journal_line(const char *s, size_t len, json_t *events, size_t *dropped)
{
	const char *end = s + len, *close, *p = s;
	struct xid_event ev;
	char num[40];
	double t;
	char *tail;
	size_t n;

	if (len < 3 || s[0] != '[' || !(close = memchr(s, ']', len)))
		return 0;
	for (p = s + 1; p < close && *p == ' '; p++)
		;
	n = (size_t)(close - p);
	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, p, n);
	num[n] = '\0';
	t = strtod(num, &tail);
	if (*tail || !isdigit((unsigned char)num[0]) ||
	    xid_parse_text(close + 1, (size_t)(end - close - 1), &ev) < 0)
		return 0;
	keep(events, &ev, t, dropped);
	return 1;
}

static size_t each_line(const char *buf, size_t len, json_t *events, size_t *dropped,
                        int (*line)(const char *, size_t, json_t *, size_t *))
{
	size_t found = 0, i = 0;

	*dropped = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		/* kmsg's continuation lines (" SUBSYSTEM=pci") start with a space */
		if (n && buf[i] != ' ')
			found += (size_t)line(buf + i, n, events, dropped);
		i += n + 1;
	}
	return found;
}

size_t xid_parse_kmsg(const char *buf, size_t len, json_t *events, size_t *dropped)
{
	return each_line(buf, len, events, dropped, kmsg_line);
}

size_t xid_parse_journal(const char *buf, size_t len, json_t *events, size_t *dropped)
{
	return each_line(buf, len, events, dropped, journal_line);
}
