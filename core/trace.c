/* SPDX-License-Identifier: MIT */
/* trace.c - see trace.h. */
#include "trace.h"

#include "cd.h"

#include <stdarg.h>
#include <stdio.h>

static int trace_level;
static trace_sink_fn trace_sink;
static void *trace_arg;
static int64_t trace_t0;

void trace_init(int level, trace_sink_fn sink, void *arg)
{
	trace_level = sink ? level : 0;
	trace_sink = sink;
	trace_arg = arg;
	trace_t0 = cd_now_ms();
}

int trace_on(int level)
{
	return level <= trace_level;
}

void trace_node(int level, const char *node, const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	if (!trace_on(level))
		return;
	n = snprintf(line, sizeof(line), "%s +%lldms: ", node ? node : "clusterdoc",
	             (long long)(cd_now_ms() - trace_t0));
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	trace_sink(line, trace_arg);
}
