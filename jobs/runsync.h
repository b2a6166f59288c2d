/* SPDX-License-Identifier: MIT */
/*
 * runsync.h - `clusterdoc run --sync DIR`: put a directory of the user's
 * code on nodes, content-addressed, so that a node (or a shared home) that
 * already holds a file receives nothing for it.
 *
 * The head walks DIR into a manifest (runsync_manifest_build); its text,
 * one line per file "MODE SIZE SHA256 REL\n" (MODE octal, sorted by REL), is
 * itself an object: its SHA-256 names the tree. On a node, objects live in
 * a content store, ~/.cache/clusterdoc/objects/<sha256>; runsync_start
 * stores the manifest there (file_stat/file_put/file_commit, core/filerecv.h),
 * asks which objects are missing (sync_missing), sends those, and has the
 * tree made at remote_dir (sync_tree). docs/protocol.md has both requests.
 */
#ifndef CD_COLLECTIVES_RUNSYNC_H
#define CD_COLLECTIVES_RUNSYNC_H

#include <jansson.h>
#include <stddef.h>

struct sshpool_node;

/* One file of the tree: rel is relative to DIR ("src/train.py"), mode its
 * permission bits, data its bytes (len of them). Owned by the manifest. */
struct runsync_file {
	char *rel;
	unsigned mode;
	size_t len;
	char sha256[65];
	unsigned char *data;
};

struct runsync_manifest {
	struct runsync_file *files; /* sorted by rel (strcmp) */
	size_t n;
	long long total_bytes;
	char sha256[65]; /* of the manifest's text (runsync_manifest_text) */
};

#define RUNSYNC_DEFAULT_CAP (256LL << 20)
#define RUNSYNC_STORE       "~/.cache/clusterdoc/objects"
/* The file in a tree made by sync_tree that holds its manifest's SHA-256:
 * the mark that the directory is clusterdoc's to replace. */
#define RUNSYNC_MARK ".clusterdoc-sync"

/*
 * Walk dir (regular files and dirs; symlinks inside the tree followed only
 * when they stay in it; .git/ skipped; every .gitignore on the way applied
 * as git does, the common patterns: *, ?, [..], leading /, trailing /,
 * !negation, **), read the files, hash each and the whole (sha256 of the
 * sorted rel+mode+sha list). 0, or a negative cd_err with err naming the
 * path and what to do (over cap_bytes: "DIR holds N MiB to sync, over the
 * cap of M MiB: add a .gitignore or raise --sync-cap"). m is empty on an
 * error; free it with runsync_manifest_free either way.
 */
int runsync_manifest_build(const char *dir, long long cap_bytes, struct runsync_manifest *m,
                           char *err, size_t errlen);
void runsync_manifest_free(struct runsync_manifest *m);

/*
 * Add a copy of f (its rel, mode and bytes; its sha256 is recomputed) to m,
 * in order, and update m's total and hash: a file of clusterdoc's own
 * (hangready's hang/sitecustomize.py) then arrives in the same atomic tree
 * as the user's. 0, or CD_ERR_PARSE when f->rel is not a safe relative
 * path or m already holds it (err names it); m is unchanged then. The cap
 * is not applied.
 */
int runsync_manifest_add(struct runsync_manifest *m, const struct runsync_file *f, char *err,
                         size_t errlen);

/* The manifest's text (new, NUL-terminated; free it), *len its length. Its
 * SHA-256 is m->sha256. */
char *runsync_manifest_text(const struct runsync_manifest *m, size_t *len);

/*
 * Put the manifest's tree at remote_dir on one node: objects missing from
 * the node's content store (~/.cache/clusterdoc/objects/<sha256>, or
 * <agent dir>/objects when the bootstrap had to put the agent elsewhere:
 * sshpool_node_agent_note) are sent,
 * then the tree is made at remote_dir from the store (hard links, else
 * copies), atomically (a temp dir renamed into place; an existing
 * identical tree is kept; nothing else at remote_dir is ever replaced or
 * removed). done runs once; err 0 or a negative cd_err with msg "host: what
 * failed" (CD_ERR_REFUSED when remote_dir holds anything but this very
 * tree, else CD_ERR_IO or what the push reported). Must outlive the pool's
 * callbacks. m and remote_dir are borrowed until done has run.
 */
struct runsync;
/* done may run before runsync_start has returned: read the counts from s. */
typedef void (*runsync_done_cb)(void *arg, const struct runsync *s, size_t node, int err,
                                const char *msg);
struct runsync *runsync_start(struct sshpool_node *pn, const struct runsync_manifest *m,
                              const char *remote_dir, int timeout_ms, runsync_done_cb done,
                              void *arg, size_t node);
/* The objects (the tree's files, not its manifest) sent, and their bytes
 * as sent (compressed). */
int runsync_files_sent(const struct runsync *s);
long long runsync_bytes_sent(const struct runsync *s);
/* 1 when the node already held the identical tree at remote_dir. */
int runsync_kept(const struct runsync *s);
void runsync_free(struct runsync *s);

/* ------------------------------------------------------------ agent side
 * (runsync_agent.c; the agent's command table) */

/*
 *   sync_missing {"store", "manifest": sha256} -> {"missing": [index, ...]}
 *       the manifest object is read from the store; index is the line
 *       (0-based) of the first file of each object the store lacks
 *   sync_tree {"store", "manifest": sha256, "dir"} -> {"kept": bool,
 *       "linked": n, "copied": n}
 *
 * store and dir: absolute or "~/..." (filerecv_expand). Errors:
 * "bad-request" (malformed; a file path absolute, empty, with a "." or ".."
 * component or a control character), "missing" (an object is not in the
 * store), "exists" (dir is there, not empty, and not this very tree: an
 * older tree is never replaced), "io".
 */
json_t *runsync_agent_missing(json_t *req, const char **code, char *msg, size_t msglen);
json_t *runsync_agent_tree(json_t *req, const char **code, char *msg, size_t msglen);

/* A file of a parsed manifest (the agent's view: no data). */
struct runsync_entry {
	char *rel;
	unsigned mode;
	long long size;
	char sha256[65];
};

/*
 * Parse a manifest's text (pure). 0 with *out (new array, free with
 * runsync_entries_free) and *n, or -1 with msg naming the line and what is
 * wrong (a path that could leave the tree is refused here).
 */
int runsync_manifest_parse(const char *text, size_t len, struct runsync_entry **out, size_t *n,
                           char *msg, size_t msglen);
void runsync_entries_free(struct runsync_entry *e, size_t n);

/* 1 when rel is a safe relative path: not empty, not absolute, no empty,
 * "." or ".." component, no control character, not RUNSYNC_MARK. */
int runsync_rel_ok(const char *rel);

#endif
