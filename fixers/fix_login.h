/* SPDX-License-Identifier: MIT */
/*
 * fix_login.h - the ssh-key fixer's own stage of `clusterdoc fix`: nodes
 * the check could not log in to (they refused every key of the head, or
 * their host key is in no known_hosts file) are reached once by password
 * or keyboard-interactive, get the head's public key in a marked block of
 * ~/.ssh/authorized_keys, and from then on are reached by key.
 *
 * Host keys stay verified. An unknown host key is shown in the plan with its
 * fingerprint; applying is consent to record exactly that key (a node that
 * offers another one is refused) before any password is sent. The password
 * is asked once by the front end, only when a node refused the keys, is
 * tried once per node, and is wiped after the stage.
 *
 * Nothing here blocks: `ssh -G` (which key the head logs in with) and
 * `ssh-keygen` (the head's key, when it has none) run as children of the
 * caller's loop (childrun.h). The stage's text and JSON are
 * report/fix_render.h's; fix_flow.h drives the stage.
 */
#ifndef CD_FIXERS_FIX_LOGIN_H
#define CD_FIXERS_FIX_LOGIN_H

#include "fix.h"
#include "fix_journal.h"
#include "fix_run.h"
#include "fix_sshkey.h"
#include "loop.h"
#include "sshpool.h"

struct childrun;

/* The most a password may hold, its NUL included: the buffers the front
 * ends ask into (secret.h) and the stage's copy are this size. */
#define FIX_PASSWORD_MAX 1024

/* The end of fix_login_find_key or fix_login_create_key: rc 0, or < 0 with
 * err. Called from the loop. */
typedef void (*fix_login_cb)(void *arg, int rc, const char *err);

struct fix_login {
	size_t n;
	int *login;        /* [n]: the stage acts on node i */
	size_t nlogin;     /* nodes with login[i] */
	int need_password; /* a node refused the keys (error code auth*) */
	struct head_key key;
	int key_created; /* the stage created the head's key */
	char user[64];   /* the login user, for the prompt ("" when unknown) */

	/* the child in flight (ssh -G, ssh-keygen) and whom it answers */
	struct childrun *child;
	const struct sshpool_opts *pool;
	char host[256];
	char comment[300];
	fix_login_cb done;
	void *arg;
};

/*
 * Which nodes of m (after a check) the stage acts on, when a fixer with the
 * login_stage role is selected in fo (fix.h): error code auth,
 * auth-rsa-sha1 or hostkey-unknown. Pure; fix_login_fini frees.
 */
void fix_login_init(struct fix_login *l, const struct netmodel *m, const struct fix_opts *fo);

/*
 * The head's key: -i KEY (pool->identity), else the identity files `ssh -G`
 * gives for the first node of the stage, and the login user. `ssh -G` runs
 * as a child of loop (pool is borrowed until done). Returns 1 when there
 * was nothing to run (no node, or `ssh -G` could not start: OpenSSH's
 * defaults are used) and the key is known, 0 when done(arg, ...) will be
 * called, or -1 with err when the head's public key cannot be read.
 */
int fix_login_find_key(struct fix_login *l, struct loop *loop, const struct netmodel *m,
                       const struct sshpool_opts *pool, fix_login_cb done, void *arg, char *err,
                       size_t errlen);

/*
 * Create the head's key when it has none (ssh-keygen as a child of loop,
 * ed25519 without a passphrase: the logins that follow are unattended).
 * Returns 1 when the key exists already, 0 when done(arg, ...) will be
 * called, or -1 with err when ssh-keygen cannot be started.
 */
int fix_login_create_key(struct fix_login *l, struct loop *loop, fix_login_cb done, void *arg,
                         char *err, size_t errlen);

/* Cancels a child in flight and frees what l holds. */
void fix_login_fini(struct fix_login *l);

/* Node n offered a host key the stage records (one we did not know). */
int fix_login_records_hostkey(const struct nm_node *n);
/* Node n refused the head's keys: it is logged in to by password. */
int fix_login_refused_keys(const struct nm_node *n);

/* Planned changes: the key to create, host keys to record, keys to add. */
size_t fix_login_changes(const struct fix_login *l, const struct netmodel *m);

/* Of those, the host keys it records (the nodes whose key was unknown). */
size_t fix_login_hostkeys(const struct fix_login *l, const struct netmodel *m);

/* "Password for USER on node1 node2: ", for the nodes that refused the keys. */
void fix_login_password_prompt(const struct fix_login *l, const struct netmodel *m, char *out,
                               size_t len);

/*
 * The stage from an event loop (after the user confirmed the plan, and
 * with the head's key existing: fix_login_create_key): log in with password
 * (NULL when no node refused the keys; copied, and wiped when the run is
 * freed) recording exactly the host keys the plan showed, gather and plan
 * ssh-key on those nodes, apply it and add the changes to j (saved).
 * done(arg) is called once, from the loop. NULL with err when the key is
 * missing or the pool could not start. l, m, d, hosts and j must outlive
 * the run.
 */
struct fix_login_run;
struct fix_login_run *fix_login_start(struct loop *loop, struct fix_login *l,
                                      const struct netmodel *m, const struct diagnosis *d,
                                      const struct fix_opts *fo, const struct sshpool_opts *pool,
                                      const char *password, const char *const *hosts,
                                      struct fix_journal *j, void (*done)(void *), void *arg,
                                      char *err, size_t errlen);

/* What a run did, after done, for the printers (borrowed from the run). */
struct fix_login_outcome {
	const struct fix_plan *p; /* NULL: the stage could not plan (error says why) */
	const char *error;
	struct fix_result *const *results;   /* [n][p->nodes[i].nactions] */
	const struct fix_node_state *states; /* [n]: gathered, error */
	const char *journal_error;           /* why the journal could not be saved, or "" */
};
void fix_login_run_outcome(const struct fix_login_run *r, struct fix_login_outcome *o);

/* The nodes of the stage it did not complete (all of them when it could
 * not plan): not gathered, or a change failed or was skipped. */
int fix_login_run_failed(const struct fix_login_run *r);

/* Closes its agents and wipes the password, keeping the outcome. */
void fix_login_run_disconnect(struct fix_login_run *r);
/* Closes its agents and wipes the password. NULL is a no-op. */
void fix_login_run_free(struct fix_login_run *r);

#endif
