/* SPDX-License-Identifier: MIT */
/*
 * run_cause.c - the root cause of a failed job (run_cause.h).
 */
#include "jobs/run_cause.h"
#include "cd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *run_cause_strip(const char *text, int *local)
{
	const char *p = text, *digits;
	long v;

	*local = -1;
	if (*p != '[')
		return text;
	while (*++p && *p != ']' && !isdigit((unsigned char)*p))
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return text;
	digits = p;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == digits || p - digits > 6 || p[0] != ']' || p[1] != ':')
		return text;
	v = strtol(digits, NULL, 10);
	*local = (int)v;
	return p[2] == ' ' ? p + 3 : p + 2;
}

/* The integer after "key" in s, when s has it right there. */
static int int_after(const char *s, const char *key, int *out)
{
	const char *p = strstr(s, key);
	char *end;
	long v;

	if (!p)
		return 0;
	p += strlen(key);
	if (!isdigit((unsigned char)*p) && *p != '-')
		return 0;
	v = strtol(p, &end, 10);
	if (end == p || v < -1000 || v > 100000)
		return 0;
	*out = (int)v;
	return 1;
}

int run_cause_torchrun_failed(const char *text, int *local_rank, int *exit_code)
{
	const char *p = strstr(text, "failed (exitcode: ");
	int code, local;

	if (!p || !int_after(p, "failed (exitcode: ", &code) ||
	    !int_after(p, ") local_rank: ", &local) || local < 0)
		return 0;
	*exit_code = code;
	*local_rank = local;
	return 1;
}

int run_cause_peer_lost(const char *text)
{
	static const char *const signs[] = {
	    "Connection closed by peer", "Connection reset by peer",      "Broken pipe",
	    "remote process exited",     "NCCL communicator was aborted",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(signs); i++) {
		if (strstr(text, signs[i]))
			return 1;
	}
	return 0;
}

/* text without leading blanks, when it starts with word and then blanks and ": " */
static const char *field(const char *text, const char *word)
{
	size_t n = strlen(word);

	while (*text == ' ' || *text == '\t')
		text++;
	if (strncmp(text, word, n) != 0)
		return NULL;
	text += n;
	while (*text == ' ')
		text++;
	return text[0] == ':' && text[1] == ' ' ? text + 2 : NULL;
}

int run_cause_table_rank(const char *text, int *rank, int *local_rank)
{
	const char *p = field(text, "rank");
	int r, l;

	if (!p || !isdigit((unsigned char)*p) || !int_after(p - 1, " ", &r) ||
	    !int_after(p, " (local_rank: ", &l) || l < 0)
		return 0;
	*rank = r;
	*local_rank = l;
	return 1;
}

int run_cause_table_exit(const char *text, int *exit_code)
{
	const char *p = field(text, "exitcode");

	if (!p || !int_after(p - 1, " ", exit_code))
		return 0;
	return 1;
}

void run_cause_init(struct run_cause_node *n)
{
	memset(n, 0, sizeof(*n));
	n->table_local = -1;
}

static int worker_failed(struct run_cause_node *n, int local, int code)
{
	if (local < 0 || local >= RUN_CAUSE_LOCALS)
		return 0;
	n->failed |= (uint64_t)1 << local;
	n->exit_code[local] = code;
	return 1;
}

int run_cause_line(struct run_cause_node *n, const char *text, int is_error)
{
	int local, wl, code, rank;
	const char *rest = run_cause_strip(text, &local);

	if (run_cause_torchrun_failed(rest, &wl, &code))
		return worker_failed(n, wl, code);
	if (run_cause_table_rank(rest, &rank, &wl)) {
		n->table_local = wl;
		return 0;
	}
	if (n->table_local >= 0 && run_cause_table_exit(rest, &code)) {
		wl = n->table_local;
		n->table_local = -1;
		return worker_failed(n, wl, code);
	}
	if (is_error && run_cause_peer_lost(rest)) {
		int bit = local < 0 ? 0 : local;

		if (bit < RUN_CAUSE_LOCALS)
			n->peer_lost |= (uint64_t)1 << bit;
	}
	return 0;
}

int run_cause_worker(const struct run_cause_node *n, int *exit_code)
{
	int first = -1;

	for (int l = 0; l < RUN_CAUSE_LOCALS; l++) {
		if (!(n->failed >> l & 1))
			continue;
		if (first < 0)
			first = l;
		if (!(n->peer_lost >> l & 1)) {
			*exit_code = n->exit_code[l];
			return l;
		}
	}
	if (first >= 0)
		*exit_code = n->exit_code[first];
	return first;
}

int run_cause_is_victim(const struct run_cause_node *n)
{
	if (n->failed)
		return (n->failed & ~n->peer_lost) == 0;
	return n->peer_lost != 0;
}

/* 1 when a came before b (see run_cause_pick). */
static int earlier(const struct run_cause_node *a, const struct run_cause_node *b)
{
	if (a->first_error_ms && b->first_error_ms)
		return a->first_error_ms < b->first_error_ms;
	if (a->first_error_ms != b->first_error_ms)
		return a->first_error_ms != 0;
	return a->end_ms && (!b->end_ms || a->end_ms < b->end_ms);
}

long run_cause_pick(const struct run_cause_node *nodes, size_t count)
{
	long best = -1;

	for (int victims = 0; victims < 2 && best < 0; victims++) {
		for (size_t i = 0; i < count; i++) {
			const struct run_cause_node *n = &nodes[i];

			if (!n->failed_alone && !n->failed)
				continue;
			if (!victims && run_cause_is_victim(n))
				continue;
			if (best < 0 || earlier(n, &nodes[best]))
				best = (long)i;
		}
	}
	return best;
}
