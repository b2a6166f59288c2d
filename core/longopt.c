/* SPDX-License-Identifier: MIT */
/*
 * longopt.c - long options taken by their exact names only (longopt.h).
 */
#include "longopt.h"

#include <stdio.h>
#include <string.h>

#define SUGGEST_MAX  3
#define NAME_MAX_CMP 64

int longopt_next(int argc, char *const argv[], int from, int permute)
{
	for (int i = from > 0 ? from : 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			return -1;
		if (a[0] == '-' && a[1])
			return i;
		if (!permute)
			return -1;
	}
	return -1;
}

size_t longopt_distance(const char *a, size_t al, const char *b)
{
	size_t bl = strlen(b), row[NAME_MAX_CMP + 1];

	if (al > NAME_MAX_CMP || bl > NAME_MAX_CMP)
		return (size_t)-1;
	for (size_t j = 0; j <= bl; j++)
		row[j] = j;
	for (size_t i = 1; i <= al; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= bl; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[bl];
}

const struct option *longopt_named(const struct option *opts, const char *arg)
{
	size_t nl;

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	arg += 2;
	nl = strcspn(arg, "=");
	for (const struct option *o = opts; o->name; o++) {
		if (strlen(o->name) == nl && strncmp(o->name, arg, nl) == 0)
			return o;
	}
	return NULL;
}

int longopt_check(const struct option *opts, const char *arg, char *msg, size_t len)
{
	const char *name, *near[SUGGEST_MAX];
	size_t nl, nnear = 0, at;
	int by_prefix = 0;

	if (strncmp(arg, "--", 2) != 0 || !arg[2] || longopt_named(opts, arg))
		return 0;
	name = arg + 2;
	nl = strcspn(name, "=");
	/* what it may have meant: the options it is a prefix of (what
	 * getopt_long would have taken), else the names within two edits */
	for (const struct option *o = opts; o->name && nnear < SUGGEST_MAX; o++) {
		if (strncmp(o->name, name, nl) == 0) {
			near[nnear++] = o->name;
			by_prefix = 1;
		}
	}
	for (const struct option *o = opts; !by_prefix && o->name && nnear < SUGGEST_MAX; o++) {
		if (longopt_distance(name, nl, o->name) <= 2)
			near[nnear++] = o->name;
	}
	/* in the alphabet's order, whatever the table's */
	for (size_t k = 1; k < nnear; k++)
		for (size_t j = k; j > 0 && strcmp(near[j - 1], near[j]) > 0; j--) {
			const char *t = near[j];

			near[j] = near[j - 1];
			near[j - 1] = t;
		}
	at = (size_t)snprintf(msg, len, "unknown option --%.*s", (int)nl, name);
	for (size_t k = 0; k < nnear && at < len; k++)
		at += (size_t)snprintf(msg + at, len - at, "%s--%s",
		                       k == 0           ? "; did you mean "
		                       : k + 1 == nnear ? " or "
		                                        : ", ",
		                       near[k]);
	if (nnear && at < len)
		snprintf(msg + at, len - at, "?");
	return -1;
}
