/* SPDX-License-Identifier: MIT */
/*
 * textdiff.h - line diffs of two texts, for showing what `clusterdoc fix`
 * would change in a file before it changes it.
 *
 * Texts are byte arrays with a length (a NULL text of length 0 is the empty
 * text); a line is the bytes up to and including its '\n', and the last one
 * may have none. Lines compare as bytes: "x" at the end of a text without its
 * final newline differs from "x\n".
 *
 * The edit script is minimal (fewest added plus removed lines): Myers' O(ND)
 * algorithm in linear space, without the heuristics that let GNU diff give
 * up on minimality for large inputs. Time is O((N + M) D) for N and M lines
 * with D of them added or removed, memory O(N + M): a few MiB with a small
 * edit is instant (2.6 MB with a 3-line insertion: 16 ms); two large
 * unrelated texts are slow (20,000 lines each: under a second, growing with
 * the square). Where several minimal scripts exist, the one GNU diff picks
 * with --minimal is chosen, so the output is `diff -U context --minimal`'s
 * byte for byte; plain `diff -u` (which first sets aside the lines found in
 * one text only) sometimes shows another script of the same size.
 */
#ifndef CD_FIXERS_TEXTDIFF_H
#define CD_FIXERS_TEXTDIFF_H

#include <stddef.h>

/*
 * A unified diff from a to b, as `diff -U context` prints it: the header
 * lines "--- label_a" and "+++ label_b" (no timestamps), then hunks
 * "@@ -start,count +start,count @@" (",count" left out when 1; an empty
 * range is "line-before,0", so an empty text is "-0,0") holding context
 * lines (' '), removed lines ('-') and added lines ('+'), removals before
 * additions within each change. A line without its final newline is
 * followed by "\n\\ No newline at end of file\n". Changes whose context
 * overlaps or touches (at most 2 * context unchanged lines apart) share a
 * hunk. context < 0 counts as 0.
 *
 * When a or b holds a NUL byte, the texts are binary to GNU diff and to this
 * function: the diff is "Binary files LABEL_A and LABEL_B differ\n" (the
 * hunks would not survive as a C string).
 *
 * Returns a new string (free it): "" when a and b are equal.
 */
char *textdiff_unified(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                       const char *label_b, int context);

/* The number of lines a minimal edit script from a to b adds (*added) and
 * removes (*removed): the '+' and '-' lines of textdiff_unified, for "2 lines
 * added" summaries; binary texts are counted too. Either pointer may be NULL. */
void textdiff_count(const char *a, size_t alen, const char *b, size_t blen, size_t *added,
                    size_t *removed);

#endif
