/* SPDX-License-Identifier: MIT */
/*
 * run_put.h - the files a `clusterdoc run` puts on its nodes before the
 * job starts, once per shared home: the --sync tree (runsync.h, hang-ready's
 * sitecustomize inside it) or, without --sync, only hang-ready's
 * sitecustomize (a push_file to <run_dir>/hang/).
 *
 * Nodes that share a home directory are found as the fix flow finds them
 * (core/homegroups.h, CD_HOME_ID): every node writes a random token to that
 * file unless one is there, then every node reads the token that stayed;
 * nodes reading the same token share the home. The first node of each such
 * group puts the files; the others wait for it, then put the same files
 * themselves: through a home really shared they find the tree kept (or the
 * file there) and send nothing; a node whose token was copied from another
 * (nodes made from one image) gets its own copy then (token_of). A node
 * whose token cannot be written or read is a group of its own.
 *
 * Before the put, and again after it, every node checks that the run
 * directory (and its hang/ when the run has hang-ready's file) is the
 * user's alone, or not there and makeable by nobody else (dir_trust,
 * run_trust.h): otherwise that node's err is CD_ERR_REFUSED with unsafe set,
 * and nothing is put there.
 */
#ifndef CD_COLLECTIVES_RUN_PUT_H
#define CD_COLLECTIVES_RUN_PUT_H

#include "cd.h"
#include "homegroups.h"
#include "jobs/runsync.h"
#include "sshpool.h"

#include <stddef.h>

struct run_put_node {
	char home_id[HOMEGROUPS_TOKEN_LEN]; /* the token read back, "" when none */
	long leader;    /* the node that put the files for this one (itself: its index) */
	int files_sent; /* objects (or the one file) sent to this node, as leader */
	long long bytes_sent;
	int kept;      /* the identical tree was already there (--sync) */
	long token_of; /* >= 0: it has that node's home-id token, not its home (put here too) */
	int unsafe;    /* another user can change the run directory (err says how) */
	int err;       /* 0, or a negative cd_err (for the leader's failure too) */
	char msg[CD_ERRLEN];
};

struct run_put;

/*
 * Put the files on pns[0..n) (a NULL entry: a node gone, skipped): with
 * sync (not NULL), the tree at run_dir; else site (not NULL) at
 * run_dir/site->rel. sync, site and run_dir are borrowed until done runs
 * (once, from the loop: each step is a phase of a core/fanout barrier). The put must outlive the
 * pool's callbacks (free it after the pool).
 */
struct run_put *run_put_start(struct loop *loop, struct sshpool_node *const *pns, size_t n,
                              const struct runsync_manifest *sync, const struct runsync_file *site,
                              const char *run_dir, int timeout_ms, void (*done)(void *arg),
                              void *arg);
const struct run_put_node *run_put_node(const struct run_put *p, size_t i);
/* The objects sent, over every node. */
int run_put_files_sent(const struct run_put *p);
void run_put_free(struct run_put *p);

#endif
