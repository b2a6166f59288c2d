/* SPDX-License-Identifier: MIT */
/*
 * longopt.h - long options taken by their exact names only.
 *
 * getopt_long takes any unambiguous prefix of a long option as the option:
 * with --master-port known and --master not, `--master node2` became
 * `--master-port node2`, and a value meant for one option was read as
 * another's. The option loops ask, before each getopt_long call, whether
 * the element it reads next is a long option spelt in full; one that is
 * not is an error naming it and the options it may have meant.
 */
#ifndef CD_LONGOPT_H
#define CD_LONGOPT_H

#include <getopt.h>
#include <stddef.h>

/*
 * The index of the element of argv that getopt_long reads next as an
 * option, scanning from index `from` (getopt's optind; 0 is 1): the first
 * that starts with '-' and is not "-" when permute is 1 (GNU getopt's
 * default: it skips non-options), only argv[from] when permute is 0
 * (shortopts starting with '+'). -1 when none is left, or at "--".
 * At the top of an option loop no option's value lies between `from` and
 * that element: getopt_long has already read them.
 */
int longopt_next(int argc, char *const argv[], int from, int permute);

/*
 * Whether arg ("--name" or "--name=value"; anything else is not a long
 * option and passes) names an option of opts (a {0}-ended getopt_long
 * table) exactly: 0; else -1 with "unknown option --name", followed by
 * "; did you mean --a?" (or "--a or --b", up to three, in the alphabet's order) when some options
 * start with name or are within two edits of it, in msg.
 */
int longopt_check(const struct option *opts, const char *arg, char *msg, size_t len);

/* The option of opts (a {0}-ended getopt_long table) that arg ("--name" or
 * "--name=value") names exactly, or NULL (not a long option, or no such
 * name). */
const struct option *longopt_named(const struct option *opts, const char *arg);

/* The edit distance of a[0..al) and b (insertions, deletions, changes),
 * or (size_t)-1 when either is longer than 64 bytes: what "did you mean"
 * messages measure nearness with (here, and config.c's keys). */
size_t longopt_distance(const char *a, size_t al, const char *b);

#endif
