/* SPDX-License-Identifier: MIT */
/* rangeset.c - bracket range lists and the indexes in host names (see rangeset.h). */
#include "rangeset.h"

#include "cd.h"
#include "scan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the bracket text; parsing never reads past len. */
struct cursor {
	const char *s;
	size_t len;
	size_t pos;
};

/* One number as written: where it starts and how many digits it has. */
struct number {
	size_t off;
	size_t len;
	uint64_t value;
};

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int peek(const struct cursor *c)
{
	return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

static void skip_blanks(struct cursor *c)
{
	while (c->pos < c->len && scan_is_space(c->s[c->pos]))
		c->pos++;
}

static int padded(const char *s, size_t len)
{
	return len > 1 && s[0] == '0';
}

static uint64_t digits_value(const char *s, size_t len)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return v;
}

/* Describe the character at the cursor for an error message ("'a'", "']'"). */
static void describe(const struct cursor *c, char *buf, size_t len)
{
	int ch = peek(c);

	if (ch < 0)
		snprintf(buf, len, "']'");
	else if (ch >= 0x20 && ch < 0x7f)
		snprintf(buf, len, "'%c'", ch);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned)ch);
}

/* Record a parse error at offset off of the bracket text; returns CD_ERR_PARSE. */
static int fail(size_t *err_off, size_t off, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(size_t *err_off, size_t off, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	*err_off = off;
	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return CD_ERR_PARSE;
}

static int read_number(struct cursor *c, struct number *n, size_t *err_off, char *err,
                       size_t errlen)
{
	char what[16];

	n->off = c->pos;
	while (c->pos < c->len && is_digit((unsigned char)c->s[c->pos]))
		c->pos++;
	n->len = c->pos - n->off;
	if (n->len == 0) {
		describe(c, what, sizeof(what));
		return fail(err_off, n->off, err, errlen, "expected a number, found %s", what);
	}
	if (n->len > RANGESET_MAX_DIGITS)
		return fail(err_off, n->off, err, errlen, "number has more than %d digits",
		            RANGESET_MAX_DIGITS);
	n->value = digits_value(c->s + n->off, n->len);
	return 0;
}

/* Parse one element (N, N-M or N-M/STEP) at the cursor into r. */
static int parse_element(struct cursor *c, struct rangeset_range *r, size_t *err_off, char *err,
                         size_t errlen)
{
	struct number lo, hi, step = {.off = 0, .len = 0, .value = 1};
	size_t start = c->pos;
	int rc;

	if ((rc = read_number(c, &lo, err_off, err, errlen)) < 0)
		return rc;
	hi = lo;
	skip_blanks(c);
	if (peek(c) == '/')
		return fail(err_off, c->pos, err, errlen, "a step needs a range, as in 1-9/2");
	if (peek(c) == '-') {
		c->pos++;
		skip_blanks(c);
		if ((rc = read_number(c, &hi, err_off, err, errlen)) < 0)
			return rc;
		skip_blanks(c);
		if (peek(c) == '/') {
			c->pos++;
			skip_blanks(c);
			if ((rc = read_number(c, &step, err_off, err, errlen)) < 0)
				return rc;
		}
	}
	/* The text of the element, for messages, without trailing blanks. */
	size_t end = c->pos;
	while (end > start && scan_is_space(c->s[end - 1]))
		end--;
	int tlen = (int)(end - start);
	const char *text = c->s + start;

	/* Same rule as ClusterShell: a padded bound fixes the length of both. */
	if ((padded(c->s + lo.off, lo.len) || padded(c->s + hi.off, hi.len)) && lo.len != hi.len) {
		int w = (int)(lo.len > hi.len ? lo.len : hi.len);
		return fail(err_off, start, err, errlen,
		            "range %.*s mixes padding widths; write %0*" PRIu64 "-%0*" PRIu64
		            " or %" PRIu64 "-%" PRIu64,
		            tlen, text, w, lo.value, w, hi.value, lo.value, hi.value);
	}
	if (lo.value > hi.value)
		return fail(err_off, start, err, errlen, "range %.*s goes backwards", tlen, text);
	if (step.value == 0)
		return fail(err_off, step.off, err, errlen, "step must be at least 1 in %.*s", tlen,
		            text);
	r->lo = lo.value;
	r->hi = hi.value;
	r->step = step.value;
	r->width = padded(c->s + lo.off, lo.len) ? (int)lo.len : 0;
	return 0;
}

int rangeset_parse(const char *s, size_t len, struct rangeset_range **ranges, size_t *nranges,
                   size_t *err_off, char *err, size_t errlen)
{
	struct cursor c = {.s = s, .len = len, .pos = 0};
	struct rangeset_range *v = NULL;
	size_t n = 0, cap = 0;
	char what[16];
	int rc;

	skip_blanks(&c);
	if (c.pos == len)
		return fail(err_off, 0, err, errlen, "nothing between '[' and ']'");
	for (;;) {
		skip_blanks(&c);
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			v = cd_realloc(v, cap * sizeof(*v));
		}
		if ((rc = parse_element(&c, &v[n], err_off, err, errlen)) < 0)
			goto err;
		n++;
		skip_blanks(&c);
		if (c.pos == len)
			break;
		if (peek(&c) != ',') {
			describe(&c, what, sizeof(what));
			rc = fail(err_off, c.pos, err, errlen, "expected ',' or ']', found %s",
			          what);
			goto err;
		}
		c.pos++;
	}
	*ranges = v;
	*nranges = n;
	return 0;
err:
	free(v);
	return rc;
}

uint64_t rangeset_range_count(const struct rangeset_range *r)
{
	return (r->hi - r->lo) / r->step + 1;
}

void rangeset_values_init(struct rangeset_values *v, const struct rangeset_range *r, size_t nr)
{
	size_t bytes = 0, used = 0, n = 0;
	int w;

	for (size_t i = 0; i < nr; i++)
		n += rangeset_range_count(&r[i]);
	bytes = n * (RANGESET_MAX_DIGITS + 1);
	v->buf = cd_malloc(bytes);
	v->off = cd_malloc((n + 1) * sizeof(*v->off));
	v->n = n;
	v->maxlen = 0;
	n = 0;
	for (size_t i = 0; i < nr; i++) {
		/* Written so that value + step never overflows past hi. */
		for (uint64_t x = r[i].lo;; x += r[i].step) {
			w = snprintf(v->buf + used, bytes - used, "%0*" PRIu64, r[i].width, x);
			v->off[n++] = used;
			used += (size_t)w + 1;
			if ((size_t)w > v->maxlen)
				v->maxlen = (size_t)w;
			if (r[i].hi - x < r[i].step)
				break;
		}
	}
	v->off[n] = used;
}

void rangeset_values_fini(struct rangeset_values *v)
{
	free(v->buf);
	free(v->off);
	v->buf = NULL;
	v->off = NULL;
	v->n = 0;
}

int rangeset_next_index(const char *s, size_t *pos, size_t *off, size_t *len)
{
	size_t i = *pos, n;

	while (s[i]) {
		if (!is_digit((unsigned char)s[i])) {
			i++;
			continue;
		}
		for (n = 0; is_digit((unsigned char)s[i + n]); n++)
			;
		if (n <= RANGESET_MAX_DIGITS) {
			*off = i;
			*len = n;
			*pos = i + n;
			return 1;
		}
		i += n;
	}
	*pos = i;
	return 0;
}

int rangeset_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return memcmp(a, b, alen);
}

char *rangeset_fold(const struct rangeset_elem *v, size_t n)
{
	size_t size = 1, len = 0;
	char *out;

	/* Each index is written at most once, followed by '-' or ','. */
	for (size_t i = 0; i < n; i++)
		size += v[i].len + 1;
	out = cd_malloc(size);
	for (size_t i = 0; i < n;) {
		int run_padded = padded(v[i].s, v[i].len);
		uint64_t last = digits_value(v[i].s, v[i].len);
		size_t j = i + 1;

		for (; j < n; j++) {
			uint64_t value = digits_value(v[j].s, v[j].len);
			int fits = run_padded ? v[j].len == v[i].len : !padded(v[j].s, v[j].len);

			if (value != last + 1 || !fits)
				break;
			last = value;
		}
		if (len > 0)
			out[len++] = ',';
		memcpy(out + len, v[i].s, v[i].len);
		len += v[i].len;
		if (j - 1 > i) {
			out[len++] = '-';
			memcpy(out + len, v[j - 1].s, v[j - 1].len);
			len += v[j - 1].len;
		}
		i = j;
	}
	out[len] = '\0';
	return out;
}

/* ---- host names: their text and their indexes ---- */

/*
 * A cursor that reads a name as ClusterShell's pattern string: each number
 * becomes "%s" and each '%' becomes "%%", so that names sort by the same
 * key as ClusterShell's sorted(patterns). Numbers longer than
 * RANGESET_MAX_DIGITS are not indexes; they stay as text.
 */
struct patcur {
	const char *s;
	const char *pending;
	size_t literal;
};

static int pat_next(struct patcur *c)
{
	size_t n;

	if (c->pending && *c->pending)
		return (unsigned char)*c->pending++;
	if (c->literal > 0) {
		c->literal--;
		return (unsigned char)*c->s++;
	}
	if (*c->s == '\0')
		return -1;
	if (is_digit((unsigned char)*c->s)) {
		for (n = 0; is_digit((unsigned char)c->s[n]); n++)
			;
		if (n > RANGESET_MAX_DIGITS) {
			c->literal = n - 1;
			return (unsigned char)*c->s++;
		}
		c->s += n;
		c->pending = "s";
		return '%';
	}
	if (*c->s == '%') {
		c->s++;
		c->pending = "%";
		return '%';
	}
	return (unsigned char)*c->s++;
}

int rangeset_pattern_cmp(const char *a, const char *b)
{
	struct patcur ca = {.s = a}, cb = {.s = b};
	int x, y;

	do {
		x = pat_next(&ca);
		y = pat_next(&cb);
	} while (x == y && x >= 0);
	return x - y;
}

/* One pass that keeps the first index difference until the patterns are known to be equal. */
int rangeset_name_cmp(const char *a, const char *b)
{
	struct patcur ca = {.s = a}, cb = {.s = b};
	const char *fa, *fb;
	int x, y, field = 0;

	for (;;) {
		fa = ca.s;
		fb = cb.s;
		x = pat_next(&ca);
		y = pat_next(&cb);
		if (x != y)
			return x - y;
		if (x < 0)
			return field;
		/* Both just read an index: ca.s - fa digits at fa. */
		if (field == 0 && x == '%' && *ca.pending == 's' && *cb.pending == 's')
			field = rangeset_cmp(fa, (size_t)(ca.s - fa), fb, (size_t)(cb.s - fb));
	}
}

/* ---- n-dimensional folding ---- */

static int elem_cmp(const struct rangeset_elem *a, const struct rangeset_elem *b)
{
	return rangeset_cmp(a->s, a->len, b->s, b->len);
}

static int set_cmp(const struct rangeset_set *a, const struct rangeset_set *b)
{
	int c;

	for (size_t i = 0; i < a->n && i < b->n; i++)
		if ((c = elem_cmp(&a->v[i], &b->v[i])) != 0)
			return c;
	return a->n < b->n ? -1 : a->n > b->n;
}

/* A product while folding; axis is the axis being merged (qsort has no context). */
struct item {
	struct rangeset_set *dims;
	size_t ndim;
	size_t axis;
};

static int same_but_axis(const struct item *a, const struct item *b)
{
	for (size_t k = 0; k < a->ndim; k++)
		if (k != a->axis && set_cmp(&a->dims[k], &b->dims[k]) != 0)
			return 0;
	return 1;
}

/* Every axis but the one being merged, then that one. */
static int item_axis_qcmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	int c;

	for (size_t k = 0; k < a->ndim; k++)
		if (k != a->axis && (c = set_cmp(&a->dims[k], &b->dims[k])) != 0)
			return c;
	return set_cmp(&a->dims[a->axis], &b->dims[a->axis]);
}

static size_t item_size(const struct item *it)
{
	size_t n = 1;

	for (size_t k = 0; k < it->ndim; k++)
		n *= it->dims[k].n;
	return n;
}

/* ClusterShell compares the first and last indexes as strings; numerically here. */
static int item_print_qcmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	size_t sa = item_size(a), sb = item_size(b);
	int c;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	for (size_t k = 0; k < a->ndim; k++) {
		const struct rangeset_set *x = &a->dims[k], *y = &b->dims[k];

		if (x->n != y->n)
			return x->n > y->n ? -1 : 1;
		if ((c = elem_cmp(&x->v[0], &y->v[0])) != 0 ||
		    (c = elem_cmp(&x->v[x->n - 1], &y->v[y->n - 1])) != 0)
			return c;
	}
	return 0;
}

void rangeset_nd_fold(struct rangeset_nd *nd, const struct rangeset_elem *vecs, size_t n,
                      size_t ndim)
{
	struct item *items = cd_malloc(n * sizeof(*items));
	size_t nitems = n, kept, i, j;

	nd->ndim = ndim;
	nd->nsets = n * ndim;
	nd->sets = cd_malloc(nd->nsets * sizeof(*nd->sets));
	for (i = 0; i < nd->nsets; i++)
		nd->sets[i] = (struct rangeset_set){&vecs[i], 1, 0};
	for (i = 0; i < n; i++)
		items[i] = (struct item){&nd->sets[i * ndim], ndim, 0};
	for (size_t axis = ndim; axis-- > 0;) {
		for (i = 0; i < nitems; i++)
			items[i].axis = axis;
		/* Vectors in name order are already sorted for the last axis. */
		for (i = 1; i < nitems && item_axis_qcmp(&items[i - 1], &items[i]) < 0; i++)
			;
		if (i < nitems)
			qsort(items, nitems, sizeof(*items), item_axis_qcmp);
		for (i = 0, kept = 0; i < nitems; i = j) {
			for (j = i + 1; j < nitems && same_but_axis(&items[i], &items[j]); j++)
				;
			/* Not merged yet, this axis holds one index per product, in order. */
			if (j - i > 1) {
				struct rangeset_elem *v = cd_malloc((j - i) * sizeof(*v));

				for (size_t t = i; t < j; t++)
					v[t - i] = items[t].dims[axis].v[0];
				items[i].dims[axis] = (struct rangeset_set){v, j - i, 1};
			}
			items[kept++] = items[i];
		}
		nitems = kept;
	}
	qsort(items, nitems, sizeof(*items), item_print_qcmp);
	nd->nprods = nitems;
	nd->prods = cd_malloc(nitems * sizeof(*nd->prods));
	for (i = 0; i < nitems; i++)
		nd->prods[i] = items[i].dims;
	free(items);
}

void rangeset_nd_fini(struct rangeset_nd *nd)
{
	for (size_t i = 0; i < nd->nsets; i++)
		if (nd->sets[i].owned)
			free((void *)nd->sets[i].v);
	free(nd->sets);
	free(nd->prods);
	nd->sets = NULL;
	nd->prods = NULL;
	nd->nsets = nd->nprods = 0;
}
