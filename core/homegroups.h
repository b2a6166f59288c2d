/* SPDX-License-Identifier: MIT */
/*
 * homegroups.h - which nodes share a home directory, found by a token file
 * in the home (CD_HOME_ID): a token written through one node's home and
 * read back on the others. The fix flow (fixers/fix_gather.c: a file there
 * is changed once) and the run's file push (jobs/run_put.c: one put per
 * shared home) both find the groups so; each drives its own requests (the
 * fix flow node by node, the run in core/fanout phases), and this module
 * holds what they share: the token, the two requests, the reading of an
 * answer and the grouping, all pure but homegroups_token_new.
 *
 * The two passes: every node writes a fresh token (the mark), then every
 * node reads back the token that stayed; nodes reading the same token share
 * the home. What the mark may replace differs:
 *   - the fix flow reads the token first (homegroups_expect) and replaces it
 *     if it is still that one, so nodes sharing the home read the one that
 *     won, and a token copied with a node image is replaced on each node by
 *     its own: separate homes never look shared;
 *   - the run writes one only where none is ("absent"), and proves sharing
 *     by putting its files on every follower too: a follower that had to
 *     receive them holds a copied token (homegroups_split).
 */
#ifndef CD_CORE_HOMEGROUPS_H
#define CD_CORE_HOMEGROUPS_H

#include <jansson.h>
#include <stddef.h>

#define CD_HOME_ID "~/.local/state/clusterdoc/home-id"

/* A token as read back, with its NUL (a fresh one is 32 characters). */
#define HOMEGROUPS_TOKEN_LEN 40

/* A fresh token for one run, into out: 32 random hex characters and a
 * newline (what the mark writes). cd_fatal when the kernel gives no
 * randomness (cd_random_token). */
void homegroups_token_new(char out[HOMEGROUPS_TOKEN_LEN]);

/* The mark: a `file_write` request of token (as homegroups_token_new made
 * it) to CD_HOME_ID, mode 0600, done only while the file there has sha256
 * expect, or while there is none ("absent"). The caller owns the request. */
json_t *homegroups_req_mark(const char *token, const char *expect);

/* The read: a `file_read` request of CD_HOME_ID. The caller owns it. */
json_t *homegroups_req_read(void);

/* What a mark may replace, from the answer to a read (NULL: none came):
 * the file's sha256 when it exists, else "absent"; into out[len]. */
void homegroups_expect(const json_t *res, char *out, size_t len);

/* The token in the answer to a read (NULL: none came), up to its first
 * newline, into out. Returns 1 when the file exists and holds 16 to
 * HOMEGROUPS_TOKEN_LEN bytes of valid base64 data; else 0, out untouched
 * (no token: the node is a group of its own). */
int homegroups_token(const json_t *res, char out[HOMEGROUPS_TOKEN_LEN]);

/* Whether two nodes' tokens (NULL or "": none) say one home: both have
 * one, and it is the same. */
int homegroups_same(const char *a, const char *b);

/* The groups of tokens[0..n) (NULL: a node not taking part; "": a node
 * with no token): leader[i] is the first node j <= i taking part whose
 * token is node i's, the one that writes for the group; i itself for a node
 * with no token or not taking part. */
void homegroups_leaders(const char *const *tokens, size_t n, long *leader);

/* Node i read its leader's token (*leader, node i's entry of the leaders)
 * but proved not to share its home (the token was copied with a node
 * image): it leads a group of its own from now on, *leader = i. Returns the
 * leader it had (whose token it holds). */
long homegroups_split(long *leader, size_t i);

#endif
