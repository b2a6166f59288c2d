/* SPDX-License-Identifier: MIT */
/*
 * fix_run_internal.h - what fix_run.c, fix_gather.c and fix_apply.c share:
 * the session and its nodes, and the steps and requests of each phase.
 * Not for use outside those files.
 */
#ifndef CD_FIXERS_FIX_RUN_INTERNAL_H
#define CD_FIXERS_FIX_RUN_INTERNAL_H

#include <jansson.h>

#include "fanout.h"
#include "fix_run.h"

#define RUN_TIMEOUT_MS 20000

enum fx_mode { FX_GATHER, FX_HOME_ID, FX_APPLY, FX_UNDO };

struct fix_run_node {
	struct fix_run *s;
	size_t i;
	struct sshpool_node *pn;
	int step;
	int finished;
	const char *failed_fixer; /* apply: the fixer whose step failed */
	size_t intent;            /* apply: the journal index of the change in flight */
	uint64_t pause_timer;     /* apply: CLUSTERDOC_TEST_JOURNAL_PAUSE_MS's wait */
	int looked_up;            /* undo: the unknown change at step was looked up */
	char **found_undo;        /* undo: its undo, resolved by the look-up */
	char home_expect[68];     /* gather: the home token as read before the mark
	                             ("absent" or its sha256), what the mark replaces */

	/* apply and undo first ask sudo whether it allows every root command
	 * the node will run (sudo -n -l), so a refusal changes nothing */
	int prepared, who_known;
	unsigned uid;
	char user[64];
	json_t *paths;  /* whoami's "paths": where each program is */
	char ***checks; /* the argvs to ask about */
	size_t nchecks, checked, nrefused;
	char refused[FIX_MSGLEN];
};

struct fix_run {
	struct loop *loop;
	struct sshpool *pool;
	struct fix_run_node *nodes;
	size_t n;
	struct fanout *fan; /* the phase's barrier: one answer per node taking part */
	enum fx_mode mode;
	int started;
	int stopping; /* fix_run_stop: no new change is sent */
	void (*done)(void *);
	void *arg;
	void (*gather_done)(void *); /* after the home-id pass */
	void *gather_arg;

	/* gather */
	struct fix_node_state *states;
	const int *skip;
	const char *const *fw_iface;
	const char *const *extra; /* fix_run_gather_extra's paths, read last */
	size_t nextra;
	/* apply */
	const struct fix_plan *plan;
	struct fix_journal *j;
	struct fix_result **results;
	char *journal_err;
	size_t journal_errlen;
	/* undo */
	const struct fix_journal *uj;
	struct fix_result *uresults;
};

/* Start the phase s->mode: the nodes taking part each owe the barrier one
 * answer; ready nodes begin at once, the others when ready. s->done runs
 * on a later loop turn once every node finished or failed. */
void fix_run_begin(struct fix_run *s);
/* Node x's next step in the phase (the reply callbacks call it). */
void fix_run_step(struct fix_run_node *x);
void fix_run_gather_step(struct fix_run_node *x);
void fix_run_home_id_step(struct fix_run_node *x);
void fix_run_apply_step(struct fix_run_node *x);
void fix_run_undo_step(struct fix_run_node *x);
/* Before a node's first change: whoami, then `sudo -n -l` for each root
 * command; a refusal fails the node with nothing changed. */
void fix_run_prepare_step(struct fix_run_node *x);
/* Node x has finished the phase (once). */
void fix_run_node_done(struct fix_run_node *x);
/* Node x failed: msg goes to what the phase reports for it; then done. */
void fix_run_node_fail(struct fix_run_node *x, const char *msg);
/* Send req to x's agent; -1 (the node is done) when it cannot be sent. */
int fix_run_send(struct fix_run_node *x, json_t *req, sshpool_reply_cb cb);

/* For a change of unknown outcome, the command that tells whether it was
 * made (nft's chain listing, iptables -C), or NULL: a file, or a command
 * whose undo is harmless when it was not (new argv). */
char **fix_run_lookup_argv(const struct fix_change *c);

/* Requests (new references). */
json_t *fix_run_req_whoami(void);
json_t *fix_run_req_run(const char *const *argv, int sudo);
json_t *fix_run_req_file_write(const char *path, const char *data, size_t len, int remove,
                               const char *expect, unsigned mode, const char *backup, int sudo);
/* A string member of a reply ("" when absent). */
const char *fix_run_str(json_t *o, const char *key);
/* The first line of a command's stderr (or stdout), for a message. */
void fix_run_first_line(json_t *res, char *out, size_t len);
/* The message for a root command sudo refuses on x's node. */
void fix_run_sudo_refusal(struct fix_run_node *x, const char *const *argv, const char *why,
                          char *out, size_t len);

#endif
