/* SPDX-License-Identifier: MIT */
/* hostlist.c - parse, expand, combine and fold host list expressions (see hostlist.h). */
#include "hostlist.h"

#include "buf.h"
#include "cd.h"
#include "rangeset.h"
#include "scan.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An error that is about the whole expression, not one place in it. */
#define NO_COLUMN SIZE_MAX
/* How much of a long expression an error message quotes. */
#define SHOW_MAX 60

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_op(int c)
{
	return c == ',' || c == '!' || c == '&' || c == '^';
}

/* ---- the vector ---- */

struct hostlist *hostlist_new(void)
{
	return cd_calloc(1, sizeof(struct hostlist));
}

static void clear_names(struct hostlist *hl)
{
	for (size_t i = 0; i < hl->count; i++)
		free(hl->names[i]);
	hl->count = 0;
}

void hostlist_free(struct hostlist *hl)
{
	if (!hl)
		return;
	clear_names(hl);
	free(hl->names);
	free(hl);
}

static void push_take(struct hostlist *hl, char *name)
{
	if (hl->count == hl->capacity) {
		hl->capacity = hl->capacity ? hl->capacity * 2 : 16;
		hl->names = cd_realloc(hl->names, hl->capacity * sizeof(*hl->names));
	}
	hl->names[hl->count++] = name;
}

size_t hostlist_count(const struct hostlist *hl)
{
	return hl ? hl->count : 0;
}

/* ---- order ---- */

static int names_qcmp(const void *a, const void *b)
{
	return rangeset_name_cmp(*(char *const *)a, *(char *const *)b);
}

/* Sort names[0..n) unless they already are strictly increasing (the usual case). */
static void sort_names(char **names, size_t n)
{
	size_t i = 1;

	while (i < n && rangeset_name_cmp(names[i - 1], names[i]) < 0)
		i++;
	if (i < n)
		qsort(names, n, sizeof(*names), names_qcmp);
}

void hostlist_sort_uniq(struct hostlist *hl)
{
	size_t n = 0;

	if (!hl || hl->count < 2)
		return;
	sort_names(hl->names, hl->count);
	for (size_t i = 1; i < hl->count; i++) {
		if (strcmp(hl->names[n], hl->names[i]) == 0)
			free(hl->names[i]);
		else
			hl->names[++n] = hl->names[i];
	}
	hl->count = n + 1;
}

/* ---- set operations on sorted, duplicate-free lists ---- */

static void keep_or_free(char **out, size_t *n, char *name, int keep)
{
	if (keep)
		out[(*n)++] = name;
	else
		free(name);
}

/* a = a OP b, OP one of ", ! & ^"; b's names move into a or are freed. */
static void set_combine(struct hostlist *a, struct hostlist *b, int op)
{
	size_t cap = a->count + b->count, n = 0, i = 0, j = 0;
	char **out = cd_malloc(cap * sizeof(*out));
	int keep_a = op != '&', keep_b = op == ',' || op == '^', keep_both = op == ',' || op == '&';
	int c;

	while (i < a->count || j < b->count) {
		if (i == a->count)
			c = 1;
		else if (j == b->count)
			c = -1;
		else
			c = rangeset_name_cmp(a->names[i], b->names[j]);
		if (c < 0) {
			keep_or_free(out, &n, a->names[i++], keep_a);
		} else if (c > 0) {
			keep_or_free(out, &n, b->names[j++], keep_b);
		} else {
			keep_or_free(out, &n, a->names[i++], keep_both);
			free(b->names[j++]);
		}
	}
	free(a->names);
	a->names = out;
	a->count = n;
	a->capacity = cap;
	b->count = 0;
}

/* Union add into hl unless the result would pass HOSTLIST_MAX (then hl is untouched). */
static int merge_into(struct hostlist *hl, struct hostlist *add)
{
	size_t i = 0, j = 0, n = 0;
	int c;

	hostlist_sort_uniq(hl);
	while (i < hl->count && j < add->count) {
		c = rangeset_name_cmp(hl->names[i], add->names[j]);
		i += c <= 0;
		j += c >= 0;
		n++;
	}
	if (n + (hl->count - i) + (add->count - j) > HOSTLIST_MAX)
		return CD_ERR_TOOBIG;
	set_combine(hl, add, ',');
	return 0;
}

int hostlist_union(struct hostlist *hl, const struct hostlist *add)
{
	struct hostlist copy = {0};
	int rc;

	for (size_t i = 0; i < hostlist_count(add); i++)
		push_take(&copy, cd_strdup(add->names[i]));
	hostlist_sort_uniq(&copy);
	rc = merge_into(hl, &copy);
	clear_names(&copy);
	free(copy.names);
	return rc;
}

/* ---- the expression parser ---- */

struct parser {
	const char *expr;
	size_t len;
	size_t pos;
	char *err;
	size_t errlen;
	const struct hostlist_groups *groups;
};

/* The expression as quoted in messages: at most SHOW_MAX bytes around off. */
static void excerpt(const struct parser *p, size_t off, char *buf)
{
	size_t from = 0, to = p->len, n = 0;

	if (p->len > SHOW_MAX) {
		if (off != NO_COLUMN && off > SHOW_MAX / 2)
			from = off - SHOW_MAX / 2;
		if (from + SHOW_MAX > p->len)
			from = p->len - SHOW_MAX;
		to = from + SHOW_MAX;
	}
	if (from > 0)
		n += (size_t)sprintf(buf, "...");
	/* Control bytes and bytes that are not UTF-8 text as '?': the message is
	 * text, whatever the expression held. */
	for (size_t i = from, len; i < to; i += len) {
		const unsigned char *s = (const unsigned char *)p->expr + i;

		len = utf8_seq_len(s, to - i);
		if (!len || s[0] < 0x20 || s[0] == 0x7f) {
			buf[n++] = '?';
			len = 1;
		} else {
			memcpy(buf + n, s, len);
			n += len;
		}
	}
	if (to < p->len)
		n += (size_t)sprintf(buf + n, "...");
	buf[n] = '\0';
}

/* Report an error at byte off of the expression (NO_COLUMN: no position). */
static int perr(const struct parser *p, size_t off, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(const struct parser *p, size_t off, int code, const char *fmt, ...)
{
	char msg[CD_ERRLEN], shown[SHOW_MAX + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	excerpt(p, off, shown);
	if (off == NO_COLUMN)
		return cd_errf(p->err, p->errlen, code, "hostlist \"%s\": %s", shown, msg);
	return cd_errf(p->err, p->errlen, code, "hostlist \"%s\": %s (at column %zu)", shown, msg,
	               off + 1);
}

static void skip_spaces(struct parser *p)
{
	while (scan_is_space(p->expr[p->pos]))
		p->pos++;
}

/* Everything a term is made of: text, group, text, group, ..., text. */
struct term {
	size_t start;
	size_t *lit_off, *lit_len; /* ndim + 1 pieces of text */
	struct rangeset_values *dims;
	size_t ndim;
	size_t count; /* hosts so far: the product of the groups' sizes */
};

/* Parse the bracket group expr[open..close] and append its values to t. */
static int add_dim(struct parser *p, struct term *t, size_t open, size_t close)
{
	struct rangeset_range *r;
	size_t nr, eoff;
	uint64_t total = 0;
	char msg[CD_ERRLEN];
	int rc;

	rc = rangeset_parse(p->expr + open + 1, close - open - 1, &r, &nr, &eoff, msg, sizeof(msg));
	if (rc < 0)
		return perr(p, open + 1 + eoff, rc, "%s", msg);
	for (size_t i = 0; i < nr && total <= HOSTLIST_MAX; i++)
		total += rangeset_range_count(&r[i]);
	/* Check before allocating: the product is what would be built. */
	if (total > HOSTLIST_MAX || t->count * total > HOSTLIST_MAX) {
		free(r);
		return perr(p, t->start, CD_ERR_TOOBIG, "expands to more than %d hosts",
		            HOSTLIST_MAX);
	}
	t->count *= total;
	t->dims = cd_realloc(t->dims, (t->ndim + 1) * sizeof(*t->dims));
	rangeset_values_init(&t->dims[t->ndim++], r, nr);
	free(r);
	return 0;
}

static void add_text(struct term *t, size_t from, size_t to)
{
	t->lit_off = cd_realloc(t->lit_off, (t->ndim + 1) * sizeof(*t->lit_off));
	t->lit_len = cd_realloc(t->lit_len, (t->ndim + 1) * sizeof(*t->lit_len));
	t->lit_off[t->ndim] = from;
	t->lit_len[t->ndim] = to - from;
}

/* The length of t's longest host name: its text and each group's longest value. */
static size_t term_longest(const struct term *t)
{
	size_t len = 0;

	for (size_t k = 0; k <= t->ndim; k++)
		len += t->lit_len[k] + (k < t->ndim ? t->dims[k].maxlen : 0);
	return len;
}

/* Append every host of t to out; the last group varies fastest. */
static void expand_term(const struct parser *p, const struct term *t, struct hostlist *out)
{
	size_t *idx = cd_calloc(t->ndim + 1, sizeof(*idx));
	size_t len, k;
	char *name = cd_malloc(term_longest(t) + 1);

	for (;;) {
		len = 0;
		for (k = 0; k <= t->ndim; k++) {
			memcpy(name + len, p->expr + t->lit_off[k], t->lit_len[k]);
			len += t->lit_len[k];
			if (k == t->ndim)
				break;
			const struct rangeset_values *d = &t->dims[k];
			size_t vlen = d->off[idx[k] + 1] - d->off[idx[k]] - 1;
			memcpy(name + len, d->buf + d->off[idx[k]], vlen);
			len += vlen;
		}
		push_take(out, cd_strndup(name, len));
		for (k = t->ndim; k > 0; k--) {
			if (++idx[k - 1] < t->dims[k - 1].n)
				break;
			idx[k - 1] = 0;
		}
		if (k == 0)
			break;
	}
	free(name);
	free(idx);
}

/* "@name" at p->pos: the group's hosts into out, from p->groups. A name
 * that is not a group is never taken as a host: "@gpu" is no host name. */
static int parse_group(struct parser *p, struct hostlist *out)
{
	size_t start = p->pos++;
	char *name;
	int rc;

	/* "@rack[1,3]": a ',' inside brackets belongs to the name */
	for (int in = 0;
	     p->expr[p->pos] && !scan_is_space(p->expr[p->pos]) && (in || !is_op(p->expr[p->pos]));
	     p->pos++)
		in = p->expr[p->pos] == '[' ? 1 : p->expr[p->pos] == ']' ? 0 : in;
	if (p->pos == start + 1)
		return perr(p, start, CD_ERR_PARSE, "'@' without a group name");
	name = cd_strndup(p->expr + start + 1, p->pos - start - 1);
	if (!p->groups)
		rc = perr(p, start, CD_ERR_PARSE,
		          "@%s is a node group, and no group source is read here", name);
	else
		rc = p->groups->resolve(p->groups, name, out, p->err, p->errlen);
	free(name);
	return rc < 0 ? rc : 0;
}

/* Parse the host name or bracket pattern at p->pos and append its hosts to out. */
static int parse_term(struct parser *p, struct hostlist *out)
{
	struct term t = {.start = p->pos, .count = 1};
	size_t text = p->pos, open, close, q, longest;
	int c, rc = 0;

	if (p->expr[p->pos] == '@')
		return parse_group(p, out);
	for (;;) {
		c = (unsigned char)p->expr[p->pos];
		if (c == '\0' || scan_is_space((char)c) || is_op(c))
			break;
		if (c == ']') {
			rc = perr(p, p->pos, CD_ERR_PARSE, "']' without a matching '['");
			goto out;
		}
		if (c < 0x20 || c == 0x7f) {
			rc = perr(p, p->pos, CD_ERR_PARSE, "invalid character 0x%02x", (unsigned)c);
			goto out;
		}
		if (c != '[') {
			p->pos++;
			continue;
		}
		open = p->pos;
		close = open + 1 + strcspn(p->expr + open + 1, "[]");
		if (p->expr[close] == '[') {
			rc = perr(p, close, CD_ERR_PARSE, "'[' inside brackets");
			goto out;
		}
		if (p->expr[close] == '\0') {
			rc = perr(p, open, CD_ERR_PARSE, "'[' without a matching ']'");
			goto out;
		}
		add_text(&t, text, open);
		if ((rc = add_dim(p, &t, open, close)) < 0)
			goto out;
		/* Digits between two groups would belong to both numbers. */
		for (q = close + 1; is_digit((unsigned char)p->expr[q]); q++)
			;
		if (p->expr[q] == '[') {
			rc = perr(p, q, CD_ERR_PARSE,
			          "bracket groups need a non-digit between them, as in "
			          "rack[1-2]-n[1-4]");
			goto out;
		}
		p->pos = text = close + 1;
	}
	add_text(&t, text, p->pos);
	if ((longest = term_longest(&t)) > HOSTLIST_NAME_MAX) {
		rc = perr(p, t.start, CD_ERR_PARSE,
		          "a host name of %zu bytes, longer than the %d a host name can have",
		          longest, HOSTLIST_NAME_MAX);
		goto out;
	}
	expand_term(p, &t, out);
out:
	for (size_t k = 0; k < t.ndim; k++)
		rangeset_values_fini(&t.dims[k]);
	free(t.dims);
	free(t.lit_off);
	free(t.lit_len);
	return rc;
}

/* Sort pending union terms and merge them into the sorted acc. */
static void flush_union(struct hostlist *acc, struct hostlist *pending)
{
	hostlist_sort_uniq(pending);
	set_combine(acc, pending, ',');
}

/*
 * Evaluate the whole expression, left to right, into the empty acc, which
 * stays sorted and unique. Union terms wait in pending and are merged in
 * when pending outgrows acc: a merge costs |acc| + |pending|, so many small
 * terms cost O(n log n) in all, and a few large sorted ones stay linear.
 */
static int eval(struct parser *p, struct hostlist *acc)
{
	struct hostlist term = {0}, pending = {0};
	size_t op_pos = 0, start;
	int op = ',', c, rc = 0;

	skip_spaces(p);
	if (p->expr[p->pos] == '\0')
		return perr(p, NO_COLUMN, CD_ERR_PARSE, "the expression is empty");
	for (;;) {
		skip_spaces(p);
		c = (unsigned char)p->expr[p->pos];
		if (is_op(c)) {
			rc = perr(p, p->pos, CD_ERR_PARSE, "missing host name before '%c'", c);
			break;
		}
		if (c == '\0') {
			rc = perr(p, op_pos, CD_ERR_PARSE, "missing host name after '%c'", op);
			break;
		}
		start = p->pos;
		if ((rc = parse_term(p, &term)) < 0)
			break;
		if (op == ',') {
			for (size_t i = 0; i < term.count; i++)
				push_take(&pending, term.names[i]);
			term.count = 0;
			if (pending.count > acc->count || acc->count + pending.count > HOSTLIST_MAX)
				flush_union(acc, &pending);
			if (acc->count > HOSTLIST_MAX) {
				rc = perr(p, start, CD_ERR_TOOBIG, "expands to more than %d hosts",
				          HOSTLIST_MAX);
				break;
			}
		} else {
			flush_union(acc, &pending);
			hostlist_sort_uniq(&term);
			set_combine(acc, &term, op);
		}
		skip_spaces(p);
		c = (unsigned char)p->expr[p->pos];
		if (c == '\0')
			break;
		op = ',';
		if (is_op(c)) {
			op = c;
			op_pos = p->pos++;
		}
	}
	flush_union(acc, &pending);
	clear_names(&term);
	free(term.names);
	free(pending.names);
	return rc;
}

/* The offset of the first byte of p's expression that is not UTF-8 text, or
 * NO_COLUMN. A host name leaves in JSON, which holds only text: such a name
 * would reach it as null or raw bytes. */
static size_t first_non_utf8(const struct parser *p)
{
	const unsigned char *s = (const unsigned char *)p->expr;
	size_t n;

	for (size_t i = 0; i < p->len; i += n) {
		if (!(n = utf8_seq_len(s + i, p->len - i)))
			return i;
	}
	return NO_COLUMN;
}

int hostlist_parse(struct hostlist *hl, const char *expr, char *err, size_t errlen)
{
	struct parser p = {
	    .expr = expr ? expr : "", .err = err, .errlen = errlen, .groups = hl->groups};
	struct hostlist acc = {0};
	size_t bad;
	int rc;

	p.len = strlen(p.expr);
	if ((bad = first_non_utf8(&p)) != NO_COLUMN)
		return perr(&p, bad, CD_ERR_PARSE, "byte 0x%02x is not UTF-8 text",
		            (unsigned char)p.expr[bad]);
	rc = eval(&p, &acc);
	if (rc == 0 && merge_into(hl, &acc) < 0)
		rc = perr(&p, NO_COLUMN, CD_ERR_TOOBIG,
		          "the host list would hold more than %d hosts", HOSTLIST_MAX);
	clear_names(&acc);
	free(acc.names);
	return rc;
}

int hostlist_exclude(struct hostlist *hl, const struct hostlist *minus)
{
	size_t n = 0, removed;
	char **sorted;

	if (!hl || !minus || minus->count == 0)
		return 0;
	if (hl == minus) {
		removed = hl->count;
		clear_names(hl);
		return (int)removed;
	}
	sorted = cd_malloc(minus->count * sizeof(*sorted));
	memcpy(sorted, minus->names, minus->count * sizeof(*sorted));
	qsort(sorted, minus->count, sizeof(*sorted), names_qcmp);
	for (size_t i = 0; i < hl->count; i++) {
		if (bsearch(&hl->names[i], sorted, minus->count, sizeof(*sorted), names_qcmp))
			free(hl->names[i]);
		else
			hl->names[n++] = hl->names[i];
	}
	removed = hl->count - n;
	hl->count = n;
	free(sorted);
	return (int)removed;
}

/* ---- folding ---- */

/* Write one product, using ref (any name of the group) for the text between indexes. */
static void render(struct buf *out, const char *ref, const struct rangeset_set *dims)
{
	size_t pos = 0, from = 0, off, len, k = 0;
	char *ranges;

	/* out has no cap (SIZE_MAX), so appending cannot fail. */
	if (out->len > 0)
		(void)buf_append(out, ",", 1);
	while (rangeset_next_index(ref, &pos, &off, &len)) {
		const struct rangeset_set *s = &dims[k++];

		(void)buf_append(out, ref + from, off - from);
		if (s->n == 1) {
			(void)buf_append(out, s->v[0].s, s->v[0].len);
		} else {
			ranges = rangeset_fold(s->v, s->n);
			(void)buf_append(out, "[", 1);
			(void)buf_append_str(out, ranges);
			(void)buf_append(out, "]", 1);
			free(ranges);
		}
		from = pos;
	}
	(void)buf_append_str(out, ref + from);
}

/* Fold n sorted, distinct names of one pattern, each with ndim >= 1 indexes. */
static void fold_group(struct buf *out, char **names, size_t n, size_t ndim)
{
	struct rangeset_elem *vecs = cd_malloc(n * ndim * sizeof(*vecs));
	struct rangeset_nd nd;
	size_t pos, off, len;

	for (size_t i = 0; i < n; i++) {
		pos = 0;
		for (size_t k = 0; k < ndim && rangeset_next_index(names[i], &pos, &off, &len); k++)
			vecs[i * ndim + k] = (struct rangeset_elem){names[i] + off, len};
	}
	rangeset_nd_fold(&nd, vecs, n, ndim);
	for (size_t p = 0; p < nd.nprods; p++)
		render(out, names[0], nd.prods[p]);
	rangeset_nd_fini(&nd);
	free(vecs);
}

char *hostlist_fold(const struct hostlist *hl)
{
	struct buf out;
	size_t n = 0, i, j, ndim, pos, off, len;
	char **v;

	if (!hl || hl->count == 0)
		return cd_strdup("");
	buf_init(&out, SIZE_MAX);
	v = cd_malloc(hl->count * sizeof(*v));
	memcpy(v, hl->names, hl->count * sizeof(*v));
	sort_names(v, hl->count);
	for (i = 0; i < hl->count; i++)
		if (n == 0 || strcmp(v[n - 1], v[i]) != 0)
			v[n++] = v[i];
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && rangeset_pattern_cmp(v[i], v[j]) == 0; j++)
			;
		for (ndim = 0, pos = 0; rangeset_next_index(v[i], &pos, &off, &len); ndim++)
			;
		if (ndim == 0) {
			if (out.len > 0)
				(void)buf_append(&out, ",", 1);
			(void)buf_append_str(&out, v[i]);
		} else {
			fold_group(&out, v + i, j - i, ndim);
		}
	}
	free(v);
	/* The string now belongs to the caller, so no buf_fini. */
	return out.data ? out.data : cd_strdup("");
}
