/* SPDX-License-Identifier: MIT */
/*
 * fix_journal.h - the undo journal of `clusterdoc fix --apply`, kept on the
 * head: one JSON file per run, $XDG_STATE_HOME/clusterdoc/runs/RUN.json
 * (default ~/.local/state/clusterdoc/runs/), directory 0700, file 0600
 * (it holds the files' old contents, and an rc file may hold secrets).
 *
 * It records what the run changed, in order, and only that: a file's bytes
 * before and the SHA-256 after (undo puts the bytes back only when the file
 * still has exactly what the run wrote), or a command with the command that
 * undoes it. It is written ahead: a change's intent is on disk (the file
 * and its directory fsync'd) before the change is sent to its node, and its
 * outcome after the node answers, so a run that is interrupted at any point
 * (Ctrl-C, a crash, a lost node) can still be undone: a change whose
 * outcome is unknown is looked up on its node by the undo.
 *
 * Format (version 1): {"version": 1, "run", "created": unix seconds,
 * "hosts": [...], "undone": unix seconds or absent, "changes": [{"host",
 * "fixer", "summary", "kind": "file"|"cmd", "sudo", file: "path",
 * "before_exists", "before" (base64), "after_exists", "after_sha256",
 * "backup" (the node's copy, or null), "shared_by" (the nodes that read the
 * file, as a host list, when a shared home makes it more than host);
 * cmd: "argv", "undo"}]}.
 *
 * Version 2 is version 1 plus, per change, "outcome": "applied" or
 * "unknown" (sent, no answer recorded; absent means "applied"), and
 * "interrupted": unix seconds when the run was stopped before its end. A
 * journal is written as version 1 whenever it has neither (a run that
 * finished), so a clusterdoc that reads only version 1 still undoes it;
 * loading takes both. A change whose answer was "failed" or "unchanged"
 * is dropped from the file: nothing to undo.
 *
 * Either version may hold "undo_failed": how many changes the last undo
 * could not restore (absent: none, or no undo yet); readers that do not
 * know it undo as before.
 */
#ifndef CD_FIXERS_FIX_JOURNAL_H
#define CD_FIXERS_FIX_JOURNAL_H

#include <stddef.h>

#include "fix.h"

/* What is known of a change's fate on its node. */
enum fix_outcome {
	FIX_OUTCOME_APPLIED, /* the node said it was made (or an old journal) */
	FIX_OUTCOME_UNKNOWN, /* the intent: sent, no answer recorded */
	FIX_OUTCOME_DROPPED, /* the node said it was not made: not saved */
};

struct fix_change {
	char *host;
	enum fix_outcome outcome;
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
	long long undone;      /* 0 = not undone */
	long long interrupted; /* 0 = the run got to its end */
	size_t undo_failed;    /* the last undo could not restore this many */
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

/* An intent: action a on host, about to be sent, outcome unknown. For a
 * command whose undo names its result ("{handle}"), the undo is resolved
 * when the answer comes (fix_journal_resolve). Then saved by the caller. */
struct fix_change *fix_journal_intend(struct fix_journal *j, const char *host,
                                      const struct fix_action *a);

/* The changes that count: saved ones (applied or of unknown outcome). */
size_t fix_journal_count(const struct fix_journal *j);
/* Of them, those whose outcome is unknown. */
size_t fix_journal_unknown(const struct fix_journal *j);

/* Remove the dropped changes from j->changes (none is pending then). */
void fix_journal_compact(struct fix_journal *j);

/* How many nodes the recorded changes reach: each change's host and, for a
 * file in a shared home, every node that reads it. */
size_t fix_journal_nodes_changed(const struct fix_journal *j);

/* Write the journal atomically (directory created 0700, file 0600), the
 * file and the directory fsync'd: on disk when it returns 0. */
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
