/* SPDX-License-Identifier: MIT */
/*
 * version.h - what `clusterdoc --version` says (after any command too:
 * `clusterdoc facts --version`): the version, the commit it was built from,
 * the versions of the libraries it runs with (asked at run time, so a
 * library swapped under the head shows), and the build id of each agent it
 * would push (what a node's cached agent is matched by).
 */
#ifndef CD_VERSION_H
#define CD_VERSION_H

#include <stdio.h>

/* The commit the head was built from ("9d4f415abcde", "-dirty" when the tree
 * had changes; "unknown" when built outside a git tree). */
const char *version_commit(void);

/* The whole --version text on f. Returns 0 (an agent that cannot be found or
 * read is a line saying so, not an error). */
int version_print(FILE *f);

/* Whether argv[1..argc) asks for --version before any "--" (the options a
 * command passes on after "--" are not clusterdoc's). */
int version_asked(int argc, char **argv);

#endif
