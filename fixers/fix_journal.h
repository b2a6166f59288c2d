/*
 * fix_journal.h - the undo journal of `clusterdoc fix --apply`, kept on the
 * head: one JSON file per run, $XDG_STATE_HOME/clusterdoc/runs/RUN.json
 * (default ~/.local/state/clusterdoc/runs/), directory 0700, file 0600
 * (it holds the files' old contents, and an rc file may hold secrets).
 *
 * It records what the run changed, in order, and only that: a file's bytes
 * before and the SHA-256 after (undo puts the bytes back only when the file
 * still has exactly what the run wrote), or a command with the command that
 * undoes it. It is saved after every change, so a run that is interrupted
 * can still be undone up to where it got.
 *
 * Format (version 1): {"version": 1, "run", "created": unix seconds,
 * "hosts": [...], "undone": unix seconds or absent, "changes": [{"host",
 * "fixer", "summary", "kind": "file"|"cmd", "sudo", file: "path",
 * "before_exists", "before" (base64), "after_exists", "after_sha256",
 * "backup" (the node's copy, or null), "shared_by" (the nodes that read the
 * file, as a host list, when a shared home makes it more than host);
 * cmd: "argv", "undo"}]}.
 */
#ifndef CD_FIXERS_FIX_JOURNAL_H
#define CD_FIXERS_FIX_JOURNAL_H

#include <stddef.h>

#include "fix.h"

struct fix_change {
	char *host;
	char *fixer;
	char *summary;
	enum fix_action_kind kind;
	int sudo;
	/* file */
	char *path;
	int before_exists;
	char *before;
	size_t before_len;
	int after_exists;
	char after_sha256[65];
	char *backup;
	char *shared_by; /* NULL, or a host list: a file in a shared home */
	/* cmd */
	char **argv;
	char **undo;
};

struct fix_journal {
	char run[40];
	long long created;
	long long undone; /* 0 = not undone */
	char **hosts;
	size_t nhosts;
	struct fix_change *changes;
	size_t nchanges;
};

/* A new run id: UTC "YYYYMMDD-HHMMSS-xxxx" (4 random hex digits). */
void fix_run_id(char *out, size_t len);

/* The journal's directory (no trailing slash): $XDG_STATE_HOME/clusterdoc/
 * runs or $HOME/.local/state/clusterdoc/runs. 0, or CD_ERR_NOTFOUND when
 * neither variable is set. */
int fix_journal_dir(char *out, size_t len, char *err, size_t errlen);

struct fix_journal *fix_journal_new(const char *run, const char *const *hosts, size_t nhosts);
void fix_journal_free(struct fix_journal *j);

/* Append a change (copied) made by action a on host. */
struct fix_change *fix_journal_add(struct fix_journal *j, const char *host,
                                   const struct fix_action *a);

/* How many nodes the recorded changes reach: each change's host and, for a
 * file in a shared home, every node that reads it. */
size_t fix_journal_nodes_changed(const struct fix_journal *j);

/* Write the journal atomically (directory created 0700, file 0600). */
int fix_journal_save(const struct fix_journal *j, char *err, size_t errlen);

/*
 * Load run's journal. CD_ERR_NOTFOUND with a message listing how to find
 * runs (`clusterdoc fix --list`), or CD_ERR_PARSE for a file that is not a
 * journal; NULL *out then. run must be a run id (no '/').
 */
int fix_journal_load(const char *run, struct fix_journal **out, char *err, size_t errlen);

/* The run ids of the journals in the directory, newest first (strings and
 * array are new; free each and the array). 0 runs when the directory does
 * not exist. */
int fix_journal_list(char ***runs, size_t *n, char *err, size_t errlen);

#endif
