/* SPDX-License-Identifier: MIT */
/*
 * blockedit.h - edit a user's text file only inside a marked block that
 * clusterdoc owns, the way conda and pyenv edit ~/.bashrc:
 *
 *   # >>> clusterdoc NAME >>>
 *   ...body lines...
 *   # <<< clusterdoc NAME <<<
 *
 * "#" is the comment prefix the caller gives (every file clusterdoc edits
 * uses "#"); NAME matches [a-z0-9-]+, so several blocks ("env", "nccl",
 * "hosts") live side by side in one file and never touch each other.
 *
 * Pure functions over bytes: text is len bytes (NULL when len is 0), need
 * not be NUL-terminated and may lack a final newline. A marker is a whole
 * line: when finding, the leading and trailing spaces and tabs and a CRLF
 * line ending's '\r' are tolerated; markers are always written exactly as
 * above, ending in "\n".
 * Every byte outside the block is kept as it was (CRLF included); the block
 * clusterdoc writes uses "\n" endings.
 *
 * Errors are CD_ERR_PARSE with a message in err (errlen bytes, may be NULL):
 *   - NAME's begin marker without an end marker after it, an end marker
 *     without a begin marker before it, or NAME's block twice ("line 12:
 *     ...", 1-based, naming the first line too where there are two);
 *   - a text holding a NUL byte ("line 3 holds a NUL byte: not a text
 *     file": clusterdoc leaves binary files alone);
 *   - a body that is not whole lines or holds one of NAME's markers;
 *   - a NAME outside [a-z0-9-]+, a prefix that is empty, starts with a blank
 *     or holds a control character, or an unknown where (programmer errors,
 *     reported rather than fatal).
 * Other names' markers, broken or not, are never an error.
 */
#ifndef CD_FIXERS_BLOCKEDIT_H
#define CD_FIXERS_BLOCKEDIT_H

#include <stddef.h>

/* Where blockedit_set puts a block the text does not hold yet. Always at the
 * start of a line; when that is the end of a text that lacks its final
 * newline, the newline is added first. */
enum blockedit_where {
	BLOCK_TOP,            /* line 1, but after the "#!" line when the text starts with "#!" */
	BLOCK_AFTER_COMMENTS, /* after the leading run of comment (prefix) and blank lines,
	                         and before any clusterdoc block there: /etc/hosts */
	BLOCK_BOTTOM,         /* at the end */
};

/*
 * Find NAME's block. Returns 1 with [*start, *end) the bytes of the whole
 * block (the begin marker's first byte through the end marker's newline, or
 * the end of text when that line has none), 0 when the text holds no marker
 * of NAME (*start and *end untouched), or CD_ERR_PARSE.
 */
int blockedit_find(const char *text, size_t len, const char *prefix, const char *name,
                   size_t *start, size_t *end, char *err, size_t errlen);

/*
 * The text with NAME's block holding exactly body: lines, each ending in
 * "\n" ("" for an empty block). An existing block is replaced where it is
 * (its markers rewritten exactly; an end marker that ended the text without
 * a newline still does); otherwise a new block is inserted at where.
 * Setting the same body again gives the same text.
 *
 * Returns 0 with *out a new string (NUL-terminated, *outlen bytes before the
 * NUL; free it), or CD_ERR_PARSE with *out NULL and *outlen 0.
 */
int blockedit_set(const char *text, size_t len, const char *prefix, const char *name,
                  const char *body, enum blockedit_where where, char **out, size_t *outlen,
                  char *err, size_t errlen);

/*
 * The text without NAME's block: the block's lines removed, every other byte
 * kept. Removing a block that blockedit_set inserted into a text T gives back
 * T exactly, except when set had to add T's missing final newline first (the
 * block went at the end of such a T): then T with that newline comes back.
 *
 * Returns 0 with *out a new string (NUL-terminated, *outlen bytes; a copy of
 * text when it holds no block of NAME), or CD_ERR_PARSE with *out NULL and
 * *outlen 0.
 */
int blockedit_remove(const char *text, size_t len, const char *prefix, const char *name, char **out,
                     size_t *outlen, char *err, size_t errlen);

/* The body of NAME's block, byte for byte (a new string; free it), or NULL
 * when there is none or blockedit_find would fail. */
char *blockedit_body(const char *text, size_t len, const char *prefix, const char *name);

#endif
