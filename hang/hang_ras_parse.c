/* SPDX-License-Identifier: MIT */
/*
 * hang_ras_parse.c - the two status formats of NCCL's RAS service read into
 * one shape, and two statuses compared (hang_ras.h). Pure: bytes in, JSON
 * out. The formats are NVIDIA/nccl's: docs/userguide/source/troubleshooting/
 * ras.rst and the printers of src/ras/client_support.cc.
 */
#include "hang/hang_ras.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "scan.h"

/* ============================================================ JSON format */

static json_t *comm_new(const char *hash)
{
	return json_pack("{s:s, s:i, s:o, s:[], s:[], s:[], s:[]}", "hash", hash, "ranks", 0,
	                 "collectives", json_object(), "missing", "dead", "unresponsive",
	                 "outliers");
}

static json_int_t int_of(const json_t *o, const char *key, json_int_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static const char *str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void outlier_add(json_t *comm, json_int_t rank, const char *gpu, json_int_t pid,
                        const char *node, const char *what)
{
	json_array_append_new(json_object_get(comm, "outliers"),
	                      json_pack("{s:I, s:s, s:I, s:s, s:s}", "rank", rank, "gpu", gpu,
	                                "pid", pid, "node", node, "what", what));
}

static void count_set(json_t *comm, json_int_t rank, json_int_t count)
{
	char key[24];

	snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, rank);
	json_object_set_new(json_object_get(comm, "collectives"), key, json_integer(count));
}

/* One communicator of the JSON status: its ranks' counts summed over the
 * operation types, its missing ranks sorted into dead and unresponsive. */
static json_t *json_comm(const json_t *c)
{
	json_t *comm = comm_new(str_of(c, "hash"));
	const json_t *ranks = json_object_get(c, "ranks");
	const json_t *missing = json_object_get(c, "missing_ranks");
	json_int_t max = 0;
	size_t i;
	const json_t *r;

	json_object_set_new(comm, "ranks", json_integer(int_of(c, "size", 0)));
	json_array_foreach(ranks, i, r)
	{
		const json_t *counts = json_object_get(r, "collective_counts");
		const char *op;
		const json_t *v;
		json_int_t sum = 0;

		json_object_foreach((json_t *)counts, op, v)
		{
			if (json_is_integer(v) && json_integer_value(v) > 0)
				sum += json_integer_value(v);
		}
		count_set(comm, int_of(r, "rank", -1), sum);
		if (sum > max)
			max = sum;
	}
	json_array_foreach(ranks, i, r)
	{
		char key[24], gpu[24], what[96];
		json_int_t n;

		snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, int_of(r, "rank", -1));
		n = json_integer_value(json_object_get(json_object_get(comm, "collectives"), key));
		if (n >= max)
			continue;
		snprintf(gpu, sizeof(gpu), "%" JSON_INTEGER_FORMAT, int_of(r, "cuda_dev", -1));
		snprintf(what, sizeof(what),
		         "launched %" JSON_INTEGER_FORMAT
		         " operations, others %" JSON_INTEGER_FORMAT,
		         n, max);
		outlier_add(comm, int_of(r, "rank", -1), gpu, int_of(r, "pid", 0),
		            str_of(r, "host"), what);
	}
	json_array_foreach(missing, i, r)
	{
		const json_t *st = json_object_get(r, "status");
		json_int_t rank = int_of(r, "rank", -1);
		int dead = json_is_true(json_object_get(st, "considered_dead"));
		int unresp = json_is_true(json_object_get(st, "unresponsive"));
		char gpu[24];

		json_array_append_new(json_object_get(comm, "missing"), json_integer(rank));
		if (dead)
			json_array_append_new(json_object_get(comm, "dead"), json_integer(rank));
		else if (unresp)
			json_array_append_new(json_object_get(comm, "unresponsive"),
			                      json_integer(rank));
		snprintf(gpu, sizeof(gpu), "%" JSON_INTEGER_FORMAT, int_of(r, "cuda_dev", -1));
		outlier_add(comm, rank, gpu, int_of(r, "pid", 0), str_of(r, "host"),
		            dead     ? "missing: considered dead"
		            : unresp ? "missing: unresponsive"
		                     : "missing");
	}
	return comm;
}

json_t *hang_ras_parse_json(const char *buf, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, 0, &je);
	json_t *out = NULL, *comms;
	const json_t *list, *c;
	size_t i;

	if (!root) {
		cd_errf(err, errlen, CD_ERR_PARSE, "not JSON: %s (line %d)", je.text, je.line);
		goto out;
	}
	list = json_object_get(root, "communicators");
	if (!json_is_object(root) || !json_is_string(json_object_get(root, "nccl_version")) ||
	    !json_is_array(list)) {
		cd_errf(err, errlen, CD_ERR_PARSE,
		        "not a RAS status: no \"nccl_version\" and \"communicators\"");
		goto out;
	}
	comms = json_array();
	json_array_foreach(list, i, c)
	{
		if (!json_is_object(c) || !json_is_string(json_object_get(c, "hash"))) {
			json_decref(comms);
			cd_errf(err, errlen, CD_ERR_PARSE, "communicator %zu has no \"hash\"", i);
			goto out;
		}
		json_array_append_new(comms, json_comm(c));
	}
	out = json_pack("{s:s, s:o}", "nccl_version", str_of(root, "nccl_version"), "communicators",
	                comms);
out:
	json_decref(root);
	return out;
}

/* ============================================================ text format */

/* Whether [s, s + n) starts with the literal p; *rest then points past it. */
static int starts(const char *s, size_t n, const char *p, const char **rest)
{
	size_t pn = strlen(p);

	if (n < pn || memcmp(s, p, pn) != 0)
		return 0;
	if (rest)
		*rest = s + pn;
	return 1;
}

/* A non-negative decimal at *p, skipping spaces before it. */
static int num(const char **p, const char *end, uint64_t *v)
{
	while (*p < end && **p == ' ')
		(*p)++;
	return scan_uint(p, end, 10, INT64_MAX, v) == 0;
}

/* "GPU G managed by process P on node N" at p (the tail of a rank line
 * after " -- ", or of a process line after "Process P on node N managing
 * GPU G"): the three values, each copied into its buffer. */
static int rank_tail(const char *p, const char *end, char *gpu, size_t gl, uint64_t *pid,
                     char *node, size_t nl)
{
	const char *g, *m;
	size_t n;

	if (!starts(p, (size_t)(end - p), "GPU ", &g))
		return 0;
	m = memmem(g, (size_t)(end - g), " managed by process ", 20);
	if (!m)
		return 0;
	snprintf(gpu, gl, "%.*s", (int)(m - g), g);
	p = m + 20;
	if (!num(&p, end, pid) || !starts(p, (size_t)(end - p), " on node ", &p))
		return 0;
	n = (size_t)(end - p);
	snprintf(node, nl, "%.*s", (int)n, p);
	return 1;
}

/* What the text parser is inside of. */
struct text_state {
	json_t *out;
	json_t *comm;        /* the "#g-c (hash) KIND" block being read, or NULL */
	json_t *procs;       /* the job-level INCOMPLETE/DEAD block's list, or NULL */
	uint64_t group_cnt;  /* the count of the last "N ranks have launched..." */
	int in_counts;       /* a count group's rank lines follow */
	char group_what[64]; /* "status X" of the last "N ranks have status X" */
	int in_table;
	char what[64]; /* the current block's kind, for outliers */
};

static json_t *comm_find(json_t *out, const char *hash)
{
	json_t *comms = json_object_get(out, "communicators"), *c;
	size_t i;

	json_array_foreach(comms, i, c)
	{
		if (strcmp(str_of(c, "hash"), hash) == 0)
			return c;
	}
	c = comm_new(hash);
	json_array_append_new(comms, c);
	return c;
}

/* "#g-c (hash) KIND": a communicator's block starts. */
static int text_comm_head(struct text_state *st, const char *s, size_t n)
{
	const char *p = s + 1, *end = s + n, *h, *he;
	uint64_t g, c;
	char hash[40], id[48];
	json_t *groups;

	if (!num(&p, end, &g) || p >= end || *p++ != '-' || !num(&p, end, &c) ||
	    !starts(p, (size_t)(end - p), " (", &h))
		return 0;
	he = memchr(h, ')', (size_t)(end - h));
	if (!he || he - h > 32 || he + 1 >= end)
		return 0;
	snprintf(hash, sizeof(hash), "0x%.*s", (int)(he - h), h);
	snprintf(id, sizeof(id), "#%" PRIu64 "-%" PRIu64, g, c);
	st->comm = comm_find(st->out, hash);
	json_object_set_new(st->comm, "group", json_string(id));
	if (!json_object_get(st->comm, "errors"))
		json_object_set_new(st->comm, "errors", json_array());
	snprintf(st->what, sizeof(st->what), "%.*s", (int)(end - he - 2), he + 2);
	json_array_append_new(json_object_get(st->comm, "errors"), json_string(st->what));
	groups = json_object_get(st->out, "groups");
	if (g < json_array_size(groups))
		json_object_set(st->comm, "ranks",
		                json_object_get(json_array_get(groups, g), "ranks_per_comm"));
	st->in_counts = 0;
	st->group_what[0] = '\0';
	return 1;
}

/* Whether a missing rank's process is one the DEAD block named. */
static int pid_dead(const json_t *out, uint64_t pid, const char *node)
{
	const json_t *d;
	size_t i;

	json_array_foreach(json_object_get(out, "dead_processes"), i, d)
	{
		if ((uint64_t)int_of(d, "pid", -1) == pid && strcmp(str_of(d, "node"), node) == 0)
			return 1;
	}
	return 0;
}

static void text_missing_rank(struct text_state *st, uint64_t rank, const char *gpu, uint64_t pid,
                              const char *node)
{
	int dead = pid && pid_dead(st->out, pid, node);

	json_array_append_new(json_object_get(st->comm, "missing"), json_integer((json_int_t)rank));
	json_array_append_new(json_object_get(st->comm, dead ? "dead" : "unresponsive"),
	                      json_integer((json_int_t)rank));
	outlier_add(st->comm, (json_int_t)rank, gpu, (json_int_t)pid, node,
	            dead ? "missing: considered dead" : "missing");
}

/* A line inside a "#g-c" block. */
static void text_comm_line(struct text_state *st, const char *s, size_t n)
{
	const char *end = s + n, *p, *dash;
	uint64_t a, b, pid = 0;
	char gpu[32] = "", node[64] = "", what[96];
	int incomplete = strcmp(st->what, "INCOMPLETE") == 0;

	if (starts(s, n, "The missing rank", &p)) {
		/* NCCL 2.24's list "The missing ranks: 3, 21" */
		p = memchr(p, ':', (size_t)(end - p));
		while (p && ++p < end) {
			if (num(&p, end, &a))
				text_missing_rank(st, a, "", 0, "");
			p = memchr(p, ',', (size_t)(end - p));
		}
		return;
	}
	p = s;
	if (num(&p, end, &a) && starts(p, (size_t)(end - p), " ranks have ", &p)) {
		st->in_counts = 0;
		st->group_cnt = 0;
		st->group_what[0] = '\0';
		if (starts(p, (size_t)(end - p), "status ", &p)) {
			snprintf(st->group_what, sizeof(st->group_what), "status %.*s",
			         (int)(end - p), p);
			return;
		}
		if (!starts(p, (size_t)(end - p), "not launched any operations", NULL) &&
		    !(starts(p, (size_t)(end - p), "launched up to operation", &p) &&
		      num(&p, end, &st->group_cnt)))
			return; /* a grouping this parser does not know: its ranks are outliers */
		st->in_counts = 1;
		json_t *cg = json_object_get(st->comm, "count_groups");
		if (!cg)
			json_object_set_new(st->comm, "count_groups", cg = json_array());
		json_array_append_new(cg,
		                      json_pack("{s:I, s:I}", "count", (json_int_t)st->group_cnt,
		                                "ranks", (json_int_t)a));
		return;
	}
	if (!starts(s, n, "Rank ", &p) || !num(&p, end, &a))
		return;
	dash = memmem(p, (size_t)(end - p), " -- ", 4);
	if (dash)
		rank_tail(dash + 4, end, gpu, sizeof(gpu), &pid, node, sizeof(node));
	if (incomplete) {
		text_missing_rank(st, a, gpu, pid, node);
		return;
	}
	if (starts(p, (size_t)(end - p), " has launched up to operation", &p) && num(&p, end, &b)) {
		count_set(st->comm, (json_int_t)a, (json_int_t)b);
		snprintf(what, sizeof(what), "launched up to operation %" PRIu64, b);
	} else if (starts(p, (size_t)(end - p), " has not launched any operations", NULL)) {
		count_set(st->comm, (json_int_t)a, 0);
		snprintf(what, sizeof(what), "launched no operation");
	} else if (starts(p, (size_t)(end - p), " has status ", &p)) {
		const char *e = dash ? dash : end;
		snprintf(what, sizeof(what), "status %.*s", (int)(e - p), p);
	} else if (st->in_counts) {
		count_set(st->comm, (json_int_t)a, (json_int_t)st->group_cnt);
		snprintf(what, sizeof(what), "launched up to operation %" PRIu64, st->group_cnt);
	} else if (st->group_what[0]) {
		snprintf(what, sizeof(what), "%s", st->group_what);
	} else {
		snprintf(what, sizeof(what), "%s", st->what);
	}
	outlier_add(st->comm, (json_int_t)a, gpu, (json_int_t)pid, node, what);
}

/* "Process P on node N managing GPU G" under the job-level blocks. */
static void text_process_line(struct text_state *st, const char *s, size_t n)
{
	const char *end = s + n, *p, *m;
	uint64_t pid;
	char node[64];

	if (!starts(s, n, "Process ", &p) || !num(&p, end, &pid) ||
	    !starts(p, (size_t)(end - p), " on node ", &p))
		return;
	m = memmem(p, (size_t)(end - p), " managing GPU", 13);
	if (!m)
		return;
	snprintf(node, sizeof(node), "%.*s", (int)(m - p), p);
	m += 13;
	while (m < end && (*m == 's' || *m == ' '))
		m++;
	json_array_append_new(st->procs, json_pack("{s:I, s:s, s:s%}", "pid", (json_int_t)pid,
	                                           "node", node, "gpu", m, (size_t)(end - m)));
}

/* A row of the communicators table: "g comms nodes ranks/node ranks/comm
 * ranks/group STATUS ERRORS". */
static void text_table_row(struct text_state *st, const char *s, size_t n)
{
	const char *p = s, *end = s + n, *w[8];
	size_t wn[8], k = 0;
	uint64_t g, comms, rpc;

	while (k < 8 && scan_next_word(&p, end, &w[k], &wn[k]))
		k++;
	if (k != 8)
		return;
	p = w[0];
	if (!num(&p, w[0] + wn[0], &g) || (p = w[1], !num(&p, w[1] + wn[1], &comms)) ||
	    (p = w[4], !num(&p, w[4] + wn[4], &rpc)))
		return;
	json_array_append_new(json_object_get(st->out, "groups"),
	                      json_pack("{s:I, s:I, s:I, s:s%, s:s%}", "group", (json_int_t)g,
	                                "comms", (json_int_t)comms, "ranks_per_comm",
	                                (json_int_t)rpc, "status", w[6], wn[6], "errors", w[7],
	                                wn[7]));
}

json_t *hang_ras_parse_text(const char *buf, size_t len, char *err, size_t errlen)
{
	struct text_state st = {0};
	const char *p = buf, *end = buf + len, *line;
	size_t n;
	int seen_version = 0, seen_table = 0;

	st.out = json_pack("{s:s, s:[], s:[], s:[], s:[]}", "nccl_version", "", "communicators",
	                   "groups", "dead_processes", "missing_processes");
	while (scan_next_line(&p, end, &line, &n)) {
		const char *rest;

		scan_trim(&line, &n);
		if (starts(line, n, "NCCL version ", &rest)) {
			const char *sp = memchr(rest, ' ', (size_t)(line + n - rest));
			size_t vn = sp ? (size_t)(sp - rest) : (size_t)(line + n - rest);
			json_object_set_new(st.out, "nccl_version", json_stringn(rest, vn));
			seen_version = 1;
		} else if (starts(line, n, "Group ", NULL) && memmem(line, n, "Comms", 5)) {
			st.in_table = 1;
			seen_table = 1;
		} else if (n == 0) {
			st.in_table = 0;
			st.comm = NULL;
			st.procs = NULL;
			st.in_counts = 0;
			st.group_what[0] = '\0';
		} else if (st.in_table) {
			text_table_row(&st, line, n);
		} else if (line[0] == '#') {
			st.procs = NULL;
			if (!text_comm_head(&st, line, n))
				st.comm = NULL;
		} else if (n == 4 && memcmp(line, "DEAD", 4) == 0) {
			st.procs = json_object_get(st.out, "dead_processes");
			st.comm = NULL;
		} else if (n == 10 && memcmp(line, "INCOMPLETE", 10) == 0) {
			st.procs = json_object_get(st.out, "missing_processes");
			st.comm = NULL;
		} else if (st.comm) {
			text_comm_line(&st, line, n);
		} else if (st.procs) {
			text_process_line(&st, line, n);
		}
	}
	if (!seen_version && !seen_table) {
		json_decref(st.out);
		cd_errf(
		    err, errlen, CD_ERR_PARSE,
		    "not a RAS status: neither an \"NCCL version\" line nor a communicator table");
		return NULL;
	}
	return st.out;
}

/* ============================================================ comparing */

/* The largest count of comm's ranks and count groups; *distinct whether
 * they hold more than one value. */
static json_int_t counts_max(const json_t *comm, int *distinct)
{
	json_int_t max = -1, min = -1;
	const char *k;
	const json_t *v;
	size_t i;

	json_object_foreach((json_t *)json_object_get(comm, "collectives"), k, v)
	{
		json_int_t c = json_integer_value(v);
		max = (max < 0 || c > max) ? c : max;
		min = (min < 0 || c < min) ? c : min;
	}
	json_array_foreach(json_object_get(comm, "count_groups"), i, v)
	{
		json_int_t c = int_of(v, "count", 0);
		max = (max < 0 || c > max) ? c : max;
		min = (min < 0 || c < min) ? c : min;
	}
	*distinct = max != min;
	return max < 0 ? 0 : max;
}

static const json_t *comm_of(const json_t *q, const char *hash)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(q, "communicators"), i, c)
	{
		if (strcmp(str_of(c, "hash"), hash) == 0)
			return c;
	}
	return NULL;
}

static int same(const json_t *a, const json_t *b, const char *key)
{
	const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	return (!x && !y) || (x && y && json_equal((json_t *)x, (json_t *)y));
}

json_t *hang_ras_compare(const json_t *before, const json_t *after)
{
	json_t *out = json_array();
	const json_t *c;
	size_t i;

	if (!json_is_true(json_object_get(after, "ok")))
		return out;
	json_array_foreach(json_object_get(after, "communicators"), i, c)
	{
		const json_t *b = json_is_true(json_object_get(before, "ok"))
		                      ? comm_of(before, str_of(c, "hash"))
		                      : NULL;
		int distinct, moved;
		json_int_t max = counts_max(c, &distinct);
		json_t *behind = json_array();
		const char *k, *state;
		const json_t *v;

		moved = !b || !same(b, c, "collectives") || !same(b, c, "count_groups");
		if (moved)
			state = "progressing";
		else if (distinct || json_array_size(json_object_get(c, "missing")) > 0)
			state = "stuck";
		else
			state = "idle";
		json_object_foreach((json_t *)json_object_get(c, "collectives"), k, v)
		{
			if (json_integer_value(v) < max)
				json_array_append_new(behind, json_integer(strtoll(k, NULL, 10)));
		}
		json_array_append_new(out,
		                      json_pack("{s:s, s:s, s:o, s:O, s:O, s:I}", "hash",
		                                str_of(c, "hash"), "state", state, "behind", behind,
		                                "missing", json_object_get(c, "missing"), "dead",
		                                json_object_get(c, "dead"), "max_count", max));
	}
	return out;
}
