/* SPDX-License-Identifier: MIT */
/*
 * fix_run.h - the head's side of `clusterdoc fix`: through the SSH pool,
 * gather what the fixers need from each node, apply a plan, and undo a
 * journal. Non-blocking: every phase runs from the event loop and calls
 * done(arg) once when every node has finished or failed, on a loop turn of
 * its own (core/fanout.h), never from inside a pool callback or the call
 * that started the phase: done may start the next phase or free the session.
 *
 * The agent requests used are fixers/nodefile.h's (whoami, file_read,
 * file_write) and fixers/noderun.h's (run); root goes through the agent's
 * non-interactive sudo, never a password prompt.
 *
 * One node that fails (SSH, sudo, a conflict) never stops the others; its
 * results say why, naming the node.
 */
#ifndef CD_FIXERS_FIX_RUN_H
#define CD_FIXERS_FIX_RUN_H

#include "fix.h"
#include "fix_journal.h"
#include "loop.h"
#include "sshpool.h"

enum fix_status {
	FIX_PENDING,
	FIX_APPLIED,   /* changed the node */
	FIX_UNCHANGED, /* the node already was as planned (e.g. a shared home) */
	FIX_FAILED,    /* message says why */
	FIX_SKIPPED,   /* an earlier step of the same fixer failed */
};

const char *fix_status_name(enum fix_status s);

struct fix_result {
	enum fix_status status;
	char message[FIX_MSGLEN];
};

struct fix_run;

/* A session over pool for the hosts (added to the pool in this order). */
struct fix_run *fix_run_new(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                            size_t n);
/* Closes the nodes' agents. */
void fix_run_free(struct fix_run *s);

/*
 * Connect and fill states[i] (fix_node_state_init'ed by the caller) for
 * every node with skip[i] == 0: the user, the rc file, env.sh, ~/.nccl.conf,
 * /etc/hosts, ~/.ssh/authorized_keys and FIX_SYSCTL_PORTS, and, where fw_iface[i] is not NULL, the
 * firewall (nft, ufw, firewalld with that interface's zone). A node that fails has gathered = 0 and
 * error set.
 */
/* More files for the next gather to read, after its own, into the states'
 * files (paths borrowed until it ends). */
void fix_run_gather_extra(struct fix_run *s, const char *const *paths, size_t n);

void fix_run_gather(struct fix_run *s, struct fix_node_state *states, const int *skip,
                    const char *const *fw_iface, void (*done)(void *), void *arg);

/*
 * Apply plan on the gathered nodes: each node's actions in order, the nodes
 * at once. results[i] has plan->nodes[i].nactions entries. Write-ahead:
 * each change is added to j as an intent and j is saved (fsync'd) before
 * the change is sent; its outcome is saved when the node answers. A change
 * whose intent cannot be saved is not sent (it fails, and journal_err gets
 * the first failure to save).
 */
void fix_run_apply(struct fix_run *s, const struct fix_plan *plan, struct fix_journal *j,
                   struct fix_result **results, char *journal_err, size_t errlen,
                   void (*done)(void *), void *arg);

/*
 * From now on send no new change: each node finishes the request it has in
 * flight (its outcome is recorded as usual) and its other changes are
 * skipped ("not sent: interrupted"). The phase's done comes as usual.
 */
void fix_run_stop(struct fix_run *s);

/*
 * Connect to the journal's hosts (the session's) and undo j's changes,
 * newest first on each host: a file gets its old bytes back (or is removed)
 * only when it still holds what the run wrote; a command's undo runs.
 * A change of unknown outcome (an interrupted run) is looked up first: a
 * file holding its old bytes, an nft rule with the run's comment not in its
 * chain, an iptables rule `-C` does not find were never made ("not
 * applied", FIX_UNCHANGED); others are undone as above.
 * results has j->nchanges entries.
 */
void fix_run_undo(struct fix_run *s, const struct fix_journal *j, struct fix_result *results,
                  void (*done)(void *), void *arg);

#endif
