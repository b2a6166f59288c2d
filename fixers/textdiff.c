/* SPDX-License-Identifier: MIT */
/*
 * textdiff.c - minimal line diffs and their unified rendering (see
 * textdiff.h).
 *
 * The steps follow GNU diff's, so that where several minimal edit scripts
 * exist the same one is shown: lines become equivalence classes (a hash
 * table), Myers' linear-space divide and conquer marks the changed lines
 * (GNU's diag and compareseq with find_minimal set: no heuristics, no
 * discarding of lines), runs of changes are slid as GNU's shift_boundaries
 * slides them, within the lines GNU would have read (the common prefix and
 * suffix stay put beyond `context` lines), and the hunks are printed as
 * pr_unidiff_hunk prints them. This is what `diff -u --minimal` prints.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "fixers/textdiff.h"

/* A line number or a diagonal (negative ones too). */
typedef ptrdiff_t lin;

struct side {
	const char *text;
	lin n;       /* lines */
	size_t *off; /* [n + 1]: line i is text[off[i], off[i + 1]) */
	lin *eq;     /* [n]: equivalence class, equal lines share one */
	char *chg0;  /* [n + 2] */
	char *chg;   /* chg0 + 1: chg[i] says line i is added/removed; chg[-1], chg[n] are 0 */
};

/* A run of changes: deleted lines of a from line0, inserted lines of b from
 * line1 (when one count is 0, its line is where the other side's lines go). */
struct change {
	lin line0, line1, deleted, inserted;
};

struct script {
	struct change *v;
	size_t n, cap;
};

/* Myers' search state (GNU's struct context). */
struct myers {
	const lin *xv, *yv;
	char *xchg, *ychg;
	lin *fd, *bd; /* indexed by diagonal x - y */
};

static void side_init(struct side *s, const char *text, size_t len)
{
	lin n = 0;
	size_t pos = 0;

	s->text = text ? text : "";
	for (pos = 0; pos < len; n++) {
		const char *nl = memchr(s->text + pos, '\n', len - pos);

		pos = nl ? (size_t)(nl - s->text) + 1 : len;
	}
	s->n = n;
	s->off = cd_malloc(((size_t)n + 1) * sizeof(*s->off));
	s->eq = cd_malloc(((size_t)n + 1) * sizeof(*s->eq));
	s->chg0 = cd_calloc((size_t)n + 2, 1);
	s->chg = s->chg0 + 1;
	n = 0;
	for (pos = 0; pos < len; n++) {
		const char *nl = memchr(s->text + pos, '\n', len - pos);

		s->off[n] = pos;
		pos = nl ? (size_t)(nl - s->text) + 1 : len;
	}
	s->off[n] = len;
}

static void side_fini(struct side *s)
{
	free(s->off);
	free(s->eq);
	free(s->chg0);
}

static const char *line_at(const struct side *s, lin i, size_t *len)
{
	*len = s->off[i + 1] - s->off[i];
	return s->text + s->off[i];
}

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Give every line of a and b its equivalence class: byte-equal lines (the
 * newline included, so a last line without one equals only another such
 * line) share a class. */
static void classify(struct side *a, struct side *b)
{
	struct cls {
		const char *p;
		size_t n;
		uint64_t h;
	} * cls;
	size_t total = (size_t)a->n + (size_t)b->n, cap = 16, ncls = 0;
	size_t *slots; /* class + 1, 0 = empty */
	struct side *sides[2] = {a, b};

	while (cap < 2 * total)
		cap <<= 1;
	slots = cd_calloc(cap, sizeof(*slots));
	cls = cd_malloc((total ? total : 1) * sizeof(*cls));
	for (int f = 0; f < 2; f++) {
		struct side *s = sides[f];

		for (lin i = 0; i < s->n; i++) {
			size_t n, slot;
			const char *p = line_at(s, i, &n);
			uint64_t h = hash_bytes(p, n);

			for (slot = h & (cap - 1); slots[slot]; slot = (slot + 1) & (cap - 1)) {
				const struct cls *c = &cls[slots[slot] - 1];

				if (c->h == h && c->n == n && memcmp(c->p, p, n) == 0)
					break;
			}
			if (!slots[slot]) {
				cls[ncls] = (struct cls){p, n, h};
				slots[slot] = ++ncls;
			}
			s->eq[i] = (lin)slots[slot] - 1;
		}
	}
	free(cls);
	free(slots);
}

/*
 * Find the middle snake of [xoff, xlim) x [yoff, ylim): a point (*xmid,
 * *ymid) on a minimal edit path, splitting the problem in two of about half
 * the cost. The first and last elements must differ (compareseq trims).
 */
static void diag(struct myers *m, lin xoff, lin xlim, lin yoff, lin ylim, lin *xmid, lin *ymid)
{
	lin *const fd = m->fd, *const bd = m->bd;
	const lin *const xv = m->xv, *const yv = m->yv;
	const lin dmin = xoff - ylim, dmax = xlim - yoff;
	const lin fmid = xoff - yoff, bmid = xlim - ylim;
	lin fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
	int odd = (fmid - bmid) & 1;

	fd[fmid] = xoff;
	bd[bmid] = xlim;
	for (;;) {
		/* One more edit top-down on every diagonal in reach. */
		if (fmin > dmin)
			fd[--fmin - 1] = -1;
		else
			++fmin;
		if (fmax < dmax)
			fd[++fmax + 1] = -1;
		else
			--fmax;
		for (lin d = fmax; d >= fmin; d -= 2) {
			lin tlo = fd[d - 1], thi = fd[d + 1];
			lin x0 = tlo < thi ? thi : tlo + 1, x = x0, y = x0 - d;

			while (x < xlim && y < ylim && xv[x] == yv[y]) {
				x++;
				y++;
			}
			fd[d] = x;
			if (odd && bmin <= d && d <= bmax && bd[d] <= x) {
				*xmid = x;
				*ymid = y;
				return;
			}
		}
		/* And bottom-up. */
		if (bmin > dmin)
			bd[--bmin - 1] = PTRDIFF_MAX;
		else
			++bmin;
		if (bmax < dmax)
			bd[++bmax + 1] = PTRDIFF_MAX;
		else
			--bmax;
		for (lin d = bmax; d >= bmin; d -= 2) {
			lin tlo = bd[d - 1], thi = bd[d + 1];
			lin x0 = tlo < thi ? tlo : thi - 1, x = x0, y = x0 - d;

			while (xoff < x && yoff < y && xv[x - 1] == yv[y - 1]) {
				x--;
				y--;
			}
			bd[d] = x;
			if (!odd && fmin <= d && d <= fmax && x <= fd[d]) {
				*xmid = x;
				*ymid = y;
				return;
			}
		}
	}
}

/* Mark the lines a minimal script removes from [xoff, xlim) and adds from
 * [yoff, ylim). Each split halves the cost, so the recursion is shallow. */
static void compareseq(struct myers *m, lin xoff, lin xlim, lin yoff, lin ylim)
{
	lin xmid, ymid;

	while (xoff < xlim && yoff < ylim && m->xv[xoff] == m->yv[yoff]) {
		xoff++;
		yoff++;
	}
	while (xoff < xlim && yoff < ylim && m->xv[xlim - 1] == m->yv[ylim - 1]) {
		xlim--;
		ylim--;
	}
	if (xoff == xlim) {
		while (yoff < ylim)
			m->ychg[yoff++] = 1;
	} else if (yoff == ylim) {
		while (xoff < xlim)
			m->xchg[xoff++] = 1;
	} else {
		diag(m, xoff, xlim, yoff, ylim, &xmid, &ymid);
		compareseq(m, xoff, xmid, yoff, ymid);
		compareseq(m, xmid, xlim, ymid, ylim);
	}
}

/*
 * GNU diff's shift_boundaries over lines [0, n) of each side (chg and eq
 * point at the region's first line; chg[-1] and chg[n] are 0): slide each
 * run of changes back to merge with the runs before it, then forward as far
 * as it goes, then back to where it lines up with a run on the other side.
 * Equal lines only trade places, so the script stays as small.
 */
static void shift_boundaries(char *chg[2], const lin *eq[2], const lin n[2])
{
	for (int f = 0; f < 2; f++) {
		char *changed = chg[f], *other = chg[1 - f];
		const lin *equivs = eq[f];
		lin i = 0, j = 0, i_end = n[f];

		for (;;) {
			lin start, runlength, corresponding;

			while (i < i_end && !changed[i]) {
				while (other[j++])
					continue;
				i++;
			}
			if (i == i_end)
				break;
			start = i;
			while (changed[++i])
				continue;
			while (other[j])
				j++;
			do {
				runlength = i - start;
				while (start && equivs[start - 1] == equivs[i - 1]) {
					changed[--start] = 1;
					changed[--i] = 0;
					while (changed[start - 1])
						start--;
					while (other[--j])
						continue;
				}
				corresponding = other[j - 1] ? i : i_end;
				while (i != i_end && equivs[start] == equivs[i]) {
					changed[start++] = 0;
					changed[i++] = 1;
					while (changed[i])
						i++;
					while (other[++j])
						corresponding = i;
				}
			} while (runlength != i - start);
			while (corresponding < i) {
				changed[--start] = 1;
				changed[--i] = 0;
				while (other[--j])
					continue;
			}
		}
	}
}

/* The changed lines of a and b, as a forward list of changes. */
static void build_script(const struct side *a, const struct side *b, struct script *sc)
{
	lin i0 = 0, i1 = 0;

	sc->v = NULL;
	sc->n = sc->cap = 0;
	while (i0 < a->n || i1 < b->n) {
		if (a->chg[i0] || b->chg[i1]) {
			struct change c = {i0, i1, 0, 0};

			while (a->chg[i0])
				i0++;
			while (b->chg[i1])
				i1++;
			c.deleted = i0 - c.line0;
			c.inserted = i1 - c.line1;
			if (sc->n == sc->cap) {
				sc->cap = sc->cap ? 2 * sc->cap : 16;
				sc->v = cd_realloc(sc->v, sc->cap * sizeof(*sc->v));
			}
			sc->v[sc->n++] = c;
		}
		i0++;
		i1++;
	}
}

/* Diff a and b into sc; horizon is the number of context lines GNU diff
 * reads beyond the common prefix and suffix (it slides changes only there). */
static void diff_sides(struct side *a, struct side *b, lin horizon, struct script *sc)
{
	lin prefix = 0, suffix = 0, lo, hi_a, hi_b, minlen = a->n < b->n ? a->n : b->n;
	struct myers m;
	lin *diags;

	classify(a, b);
	while (prefix < minlen && a->eq[prefix] == b->eq[prefix])
		prefix++;
	lo = prefix - (prefix < horizon ? prefix : horizon);
	while (suffix < minlen - lo && a->eq[a->n - 1 - suffix] == b->eq[b->n - 1 - suffix])
		suffix++;
	suffix -= suffix < horizon ? suffix : horizon;
	hi_a = a->n - suffix;
	hi_b = b->n - suffix;

	/* Diagonals run from -b->n - 1 to a->n + 1. */
	diags = cd_malloc(2 * ((size_t)a->n + (size_t)b->n + 3) * sizeof(*diags));
	m = (struct myers){
	    .xv = a->eq,
	    .yv = b->eq,
	    .xchg = a->chg,
	    .ychg = b->chg,
	    .fd = diags + b->n + 1,
	    .bd = diags + (a->n + b->n + 3) + b->n + 1,
	};
	compareseq(&m, lo, hi_a, lo, hi_b);
	free(diags);
	{
		char *chg[2] = {a->chg + lo, b->chg + lo};
		const lin *eq[2] = {a->eq + lo, b->eq + lo};
		const lin n[2] = {hi_a - lo, hi_b - lo};

		shift_boundaries(chg, eq, n);
	}
	build_script(a, b, sc);
}

/* A growing output string. */
struct out {
	char *p;
	size_t len, cap;
};

static void out_add(struct out *o, const char *p, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		while (o->len + n + 1 > o->cap)
			o->cap = o->cap ? 2 * o->cap : 256;
		o->p = cd_realloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void out_str(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* One line with its mark (' ', '-', '+'); a line without its newline is
 * followed by GNU's marker line. */
static void out_line(struct out *o, char mark, const struct side *s, lin i)
{
	size_t n;
	const char *p = line_at(s, i, &n);

	out_add(o, &mark, 1);
	out_add(o, p, n);
	if (n == 0 || p[n - 1] != '\n')
		out_str(o, "\n\\ No newline at end of file\n");
}

/* A hunk header range for lines [first, last] (0-based; last = first - 1
 * when empty), as GNU's print_unidiff_number_range writes it. */
static void out_range(struct out *o, lin first, lin last)
{
	char num[64];
	lin a = first + 1, b = last + 1;

	if (b <= a)
		snprintf(num, sizeof(num), b < a ? "%td,0" : "%td", b);
	else
		snprintf(num, sizeof(num), "%td,%td", a, b - a + 1);
	out_str(o, num);
}

/* The hunk of changes v[first..last]. */
static void out_hunk(struct out *o, const struct side *a, const struct side *b,
                     const struct change *v, size_t first, size_t last, lin context)
{
	lin first0 = v[first].line0, first1 = v[first].line1;
	lin last0 = v[last].line0 + v[last].deleted - 1,
	    last1 = v[last].line1 + v[last].inserted - 1;
	lin i, j;
	size_t next = first;

	first0 = first0 - context > 0 ? first0 - context : 0;
	first1 = first1 - context > 0 ? first1 - context : 0;
	last0 = last0 < a->n - context ? last0 + context : a->n - 1;
	last1 = last1 < b->n - context ? last1 + context : b->n - 1;
	out_str(o, "@@ -");
	out_range(o, first0, last0);
	out_str(o, " +");
	out_range(o, first1, last1);
	out_str(o, " @@\n");
	i = first0;
	j = first1;
	while (i <= last0 || j <= last1) {
		if (next > last || i < v[next].line0) {
			out_line(o, ' ', a, i++);
			j++;
			continue;
		}
		for (lin k = 0; k < v[next].deleted; k++)
			out_line(o, '-', a, i++);
		for (lin k = 0; k < v[next].inserted; k++)
			out_line(o, '+', b, j++);
		next++;
	}
}

char *textdiff_unified(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                       const char *label_b, int context)
{
	struct side sa, sb;
	struct script sc;
	struct out o = {NULL, 0, 0};
	lin ctx = context > 0 ? context : 0;

	out_add(&o, "", 0);
	/* A NUL byte would end the string early: say what GNU diff says. */
	if ((alen && memchr(a, '\0', alen)) || (blen && memchr(b, '\0', blen))) {
		if (alen != blen || memcmp(a, b, alen) != 0) {
			out_str(&o, "Binary files ");
			out_str(&o, label_a ? label_a : "");
			out_str(&o, " and ");
			out_str(&o, label_b ? label_b : "");
			out_str(&o, " differ\n");
		}
		return o.p;
	}
	side_init(&sa, a, alen);
	side_init(&sb, b, blen);
	diff_sides(&sa, &sb, ctx, &sc);
	if (sc.n > 0) {
		out_str(&o, "--- ");
		out_str(&o, label_a ? label_a : "");
		out_str(&o, "\n+++ ");
		out_str(&o, label_b ? label_b : "");
		out_str(&o, "\n");
	}
	/* Changes at most 2 * context unchanged lines apart share a hunk
	 * (GNU's find_hunk). */
	for (size_t first = 0, last; first < sc.n; first = last + 1) {
		last = first;
		while (last + 1 < sc.n &&
		       sc.v[last + 1].line0 - (sc.v[last].line0 + sc.v[last].deleted) <= 2 * ctx)
			last++;
		out_hunk(&o, &sa, &sb, sc.v, first, last, ctx);
	}
	free(sc.v);
	side_fini(&sa);
	side_fini(&sb);
	return o.p;
}

void textdiff_count(const char *a, size_t alen, const char *b, size_t blen, size_t *added,
                    size_t *removed)
{
	struct side sa, sb;
	struct script sc;
	size_t add = 0, rem = 0;

	side_init(&sa, a, alen);
	side_init(&sb, b, blen);
	diff_sides(&sa, &sb, 0, &sc);
	for (size_t i = 0; i < sc.n; i++) {
		add += (size_t)sc.v[i].inserted;
		rem += (size_t)sc.v[i].deleted;
	}
	if (added)
		*added = add;
	if (removed)
		*removed = rem;
	free(sc.v);
	side_fini(&sa);
	side_fini(&sb);
}
