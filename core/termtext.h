/* SPDX-License-Identifier: MIT */
/*
 * termtext.h - text from nodes made safe to write to a terminal.
 *
 * A node's strings (host names, OS names, interface names, error text, job
 * output) may hold bytes a terminal acts on: ESC[2J clears it, an OSC
 * sequence sets its title, a C1 CSI (U+009B) starts a command. Every text
 * printer and the TUI write node text through these functions, the way ls
 * and systemctl show names: each C0 control byte (0x00-0x1f), DEL (0x7f), C1
 * control (U+0080-U+009F) and byte that is not part of valid UTF-8 becomes
 * the four characters \xHH (two lower-case hex digits); valid printable
 * UTF-8 is kept as it is, and so is a backslash. JSON output does not go
 * through here: jansson escapes it.
 */
#ifndef CD_TERMTEXT_H
#define CD_TERMTEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Which controls are kept as they are (a bit set of these). */
enum termtext_keep {
	TERMTEXT_KEEP_NONE = 0,
	TERMTEXT_KEEP_NL = 1,  /* '\n', for text that is already whole lines */
	TERMTEXT_KEEP_TAB = 2, /* '\t', a job's output line keeps its columns */
};

/* The length of s's first n bytes once escaped (not counting a NUL). */
size_t termtext_len(const char *s, size_t n, unsigned keep);

/* The first n bytes of s escaped into out (cap bytes, always NUL-ended when
 * cap > 0; an escape that does not fit whole is left out). Returns the
 * escaped length, like termtext_len, so a return >= cap means it was cut. */
size_t termtext_escape(char *out, size_t cap, const char *s, size_t n, unsigned keep);

/* The first n bytes of s escaped, in a new string the caller frees; fatal
 * on out-of-memory. */
char *termtext_dup(const char *s, size_t n, unsigned keep);

/* fputs of s escaped (keep as above). Returns what fwrite/fputs return:
 * EOF on a write error. */
int termtext_fputs(const char *s, FILE *f, unsigned keep);

/* fprintf for text printers: the formatted text is written escaped, newline
 * and tab kept (a printer's own format holds no other control). Returns the
 * number of bytes written, or -1 on a write error. */
int termtext_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int termtext_vprintf(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
