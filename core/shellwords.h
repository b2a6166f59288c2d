/* SPDX-License-Identifier: MIT */
/*
 * shellwords.h - a command line typed by a person, split into words as a
 * POSIX shell splits them, without any expansion: the TUI's `R` prompt
 * (tui/session_run.c) gives `clusterdoc run` its argv this way.
 *
 * Blanks (space, tab) separate words. '...' keeps everything up to the
 * next quote. "..." keeps everything but a backslash before " \ $ or `,
 * which is dropped. A backslash outside quotes keeps the next character.
 * Quotes join with what touches them ("a"'b'c is one word, abc), and ''
 * alone is an empty word. $, *, ~ and the rest are kept as they are.
 */
#ifndef CD_CORE_SHELLWORDS_H
#define CD_CORE_SHELLWORDS_H

#include <stddef.h>

#define SHELLWORDS_MAX 256 /* words in one line */

/*
 * Split line. 0 with *words (n strings, then a NULL; free with
 * shellwords_free) and *n, or CD_ERR_PARSE with err ("a quote ' is not
 * closed", "no command given" for a blank line, "more than 256 words") and
 * *words NULL.
 */
int shellwords_split(const char *line, char ***words, size_t *n, char *err, size_t errlen);
/* Free what shellwords_split gave; NULL is a no-op. */
void shellwords_free(char **words);

#endif
