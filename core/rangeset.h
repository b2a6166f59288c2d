/* SPDX-License-Identifier: MIT */
/*
 * rangeset.h - the numeric part of hostlists: the range lists written
 * between brackets ("1-3,08-10,20-30/5") and the folding of a set of
 * index strings back into such a list.
 *
 * An index is kept as its digit string, not as a number, because the
 * padding is part of the host name: "n01" and "n1" are different hosts.
 * Indexes are ordered the way ClusterShell orders them: shorter strings
 * first, then by digits, so 9 < 10 < 08 < 010 (see rangeset_cmp).
 *
 * It also knows where the indexes are in a host name, hence the order of
 * names. This module is used by hostlist.c; most callers want hostlist.h.
 */
#ifndef CD_RANGESET_H
#define CD_RANGESET_H

#include <stddef.h>
#include <stdint.h>

/* The longest index, in digits, that is read as a number (fits in uint64_t). */
#define RANGESET_MAX_DIGITS 18

/*
 * One element of a bracket list: the values lo, lo+step, ... up to hi,
 * printed zero-padded to width digits (width 0: no padding).
 */
struct rangeset_range {
	uint64_t lo;
	uint64_t hi;
	uint64_t step;
	int width;
};

/* A borrowed index string (digits only, not NUL-terminated). */
struct rangeset_elem {
	const char *s;
	size_t len;
};

/*
 * Parse the text between a pair of brackets, e.g. "1-3, 08-10,20-30/5".
 *
 * Grammar: elements separated by ','; an element is N, N-M or N-M/STEP;
 * blanks around numbers and punctuation are ignored. Padding follows
 * ClusterShell: a bound with a leading zero ("08") fixes the width, and a
 * range whose bounds are not the same length when one of them is padded
 * ("9-011", "01-044") is an error; "1-10" is fine (no padding).
 *
 * s, len:    the text (need not be NUL-terminated)
 * ranges:    on success, *ranges is a cd_malloc'd array of *nranges
 *            elements in the order written; the caller frees it with free()
 * err_off:   on error, the offset in s of the faulty element or character
 * err:       on error, a message without position ("range 5-3 goes backwards")
 *
 * Returns 0, or CD_ERR_PARSE (nothing is allocated then).
 */
int rangeset_parse(const char *s, size_t len, struct rangeset_range **ranges, size_t *nranges,
                   size_t *err_off, char *err, size_t errlen);

/* The number of values in r (at least 1 for a parsed range). */
uint64_t rangeset_range_count(const struct rangeset_range *r);

/*
 * The index strings of a bracket list, in the order written (overlapping
 * ranges give duplicates), packed in one buffer: value i starts at
 * buf + off[i] and is off[i + 1] - off[i] - 1 bytes long (NUL-terminated).
 */
struct rangeset_values {
	char *buf;
	size_t *off; /* n + 1 entries */
	size_t n;
	size_t maxlen; /* the length of the longest value */
};

/*
 * Write out every value of r[0..nr) into v (embedded; release with
 * rangeset_values_fini). Memory is about 20 bytes per value: check the
 * total with rangeset_range_count first.
 */
void rangeset_values_init(struct rangeset_values *v, const struct rangeset_range *r, size_t nr);
void rangeset_values_fini(struct rangeset_values *v);

/*
 * Find the next index in the name s at or after byte *pos: a run of 1 to
 * RANGESET_MAX_DIGITS digits (longer runs are text, not indexes). Returns
 * 1 and sets *off and *len to the run and *pos past it; returns 0 at the end.
 */
int rangeset_next_index(const char *s, size_t *pos, size_t *off, size_t *len);

/*
 * Compare two host names in ClusterShell order: first their patterns, the
 * text with each index replaced by "%s" (and '%' by "%%"), byte-wise; then
 * index by index with rangeset_cmp. So n2 < n10, n9 < n08 < n10, and
 * "node" < "node1" < "nodeA". Returns 0 only for equal strings.
 */
int rangeset_name_cmp(const char *a, const char *b);

/* Compare only the patterns of two names: 0 when they differ only in their indexes. */
int rangeset_pattern_cmp(const char *a, const char *b);

/*
 * Compare two index strings in ClusterShell order: the shorter string
 * first, then byte by byte. Returns <0, 0 or >0 like strcmp.
 */
int rangeset_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * Fold n index strings, sorted by rangeset_cmp and without duplicates, into
 * a range list such as "1-3,5,08-10", the way ClusterShell prints a
 * RangeSet (no /step in the output). A run continues while the values are
 * consecutive and the padding stays compatible: a run started by a padded
 * index ("08") keeps its length, a run started by an unpadded one takes no
 * padded index. Each index must have at most RANGESET_MAX_DIGITS digits.
 *
 * Returns a cd_malloc'd NUL-terminated string; the caller frees it.
 */
char *rangeset_fold(const struct rangeset_elem *v, size_t n);

/* The indexes one product takes on one axis, sorted by rangeset_cmp. */
struct rangeset_set {
	const struct rangeset_elem *v;
	size_t n;
	int owned; /* private: v was allocated by rangeset_nd_fold */
};

/*
 * A set of index vectors written as disjoint products, like ClusterShell's
 * RangeSetND: product p is prods[p][0] x prods[p][1] x ... x prods[p][ndim-1].
 */
struct rangeset_nd {
	size_t ndim;
	size_t nprods;
	struct rangeset_set **prods;
	struct rangeset_set *sets; /* private */
	size_t nsets;              /* private */
};

/*
 * Fold n distinct index vectors of ndim >= 1 indexes each into products:
 * vecs[i * ndim + k] is index k of vector i (each at most
 * RANGESET_MAX_DIGITS digits). vecs must stay valid until rangeset_nd_fini;
 * nd borrows the strings.
 *
 * The fold merges along the last axis first, then the one before, and so
 * on: at each step, products that agree on every other axis become one. A
 * full cartesian product ends as one product, the common cases as
 * ClusterShell prints them; other sets end as a few disjoint products (not
 * always the same split as ClusterShell's greedy merge). Products are
 * ordered as ClusterShell prints them: larger first, then on each axis the
 * larger set, the lower first index, the lower last index.
 *
 * Release with rangeset_nd_fini.
 */
void rangeset_nd_fold(struct rangeset_nd *nd, const struct rangeset_elem *vecs, size_t n,
                      size_t ndim);
void rangeset_nd_fini(struct rangeset_nd *nd);

#endif
