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
 * is asked once (secret.h: the terminal, or SSH_ASKPASS), only when a node
 * refused the keys, is tried once per node, and is wiped after the stage.
 */
#ifndef CD_FIXERS_FIX_LOGIN_H
#define CD_FIXERS_FIX_LOGIN_H

#include <jansson.h>
#include <stdio.h>

#include "fixers/fix.h"
#include "fixers/fix_journal.h"
#include "fixers/fix_sshkey.h"
#include "loop.h"
#include "sshpool.h"

struct fix_login {
	size_t n;
	int *login;        /* [n]: the stage acts on node i */
	size_t nlogin;     /* nodes with login[i] */
	int need_password; /* a node refused the keys (error code auth*) */
	struct head_key key;
	int key_created; /* the stage created the head's key */
	char user[64];   /* the login user, for the prompt ("" when unknown) */
};

/*
 * Which nodes of m (after a check) the stage acts on, when ssh-key is
 * selected in fo: error code auth, auth-rsa-sha1 or hostkey-unknown. And the
 * head's key: -i KEY, else the identity files `ssh -G` gives for the first
 * such node. 0, or -1 with err when the head's public key cannot be read.
 */
int fix_login_prepare(struct fix_login *l, const struct netmodel *m, const struct fix_opts *fo,
                      const struct sshpool_opts *pool, char *err, size_t errlen);
void fix_login_fini(struct fix_login *l);

/* Planned changes: the key to create, host keys to record, keys to add. */
size_t fix_login_changes(const struct fix_login *l, const struct netmodel *m);

/* Of those, the host keys it records (the nodes whose key was unknown). */
size_t fix_login_hostkeys(const struct fix_login *l, const struct netmodel *m);

/* The plan of the stage, as text (nothing when no node is concerned). */
void fix_login_print(FILE *f, const struct fix_login *l, const struct netmodel *m);
/* The same as JSON: {"head_key": {...}, "nodes": [...]}; new reference. */
json_t *fix_login_json(const struct fix_login *l, const struct netmodel *m);

/* "Password for USER on node1 node2: ", for the nodes that refused the keys. */
void fix_login_password_prompt(const struct fix_login *l, const struct netmodel *m, char *out,
                               size_t len);

/*
 * The stage from an event loop (after the user confirmed the plan): create
 * the head's key if it has none (ssh-keygen, waited for), log in with
 * password (NULL when no node refused the keys; copied, and wiped when the
 * run is freed) recording exactly the host keys the plan showed, gather and
 * plan ssh-key on those nodes, apply it and add the changes to j (saved).
 * done(arg) is called once, from the loop. NULL with err when the key could
 * not be created or the pool could not start. l, m, d, hosts and j must
 * outlive the run.
 */
struct fix_login_run;
struct fix_login_run *fix_login_start(struct loop *loop, struct fix_login *l,
                                      const struct netmodel *m, const struct diagnosis *d,
                                      const struct fix_opts *fo, const struct sshpool_opts *pool,
                                      const char *password, const char *const *hosts,
                                      struct fix_journal *j, void (*done)(void *), void *arg,
                                      char *err, size_t errlen);
/* What the run did, after done: the key created, then per node its actions
 * and results (fix_print_plan_node) on f (NULL: nothing printed), and
 * {"host", "actions": [...], "error"} objects added to json_out (NULL:
 * none). Returns the number of nodes the stage did not complete. */
int fix_login_run_report(const struct fix_login_run *r, FILE *f, json_t *json_out);
/* Why the journal could not be saved, or "". */
const char *fix_login_run_journal_error(const struct fix_login_run *r);
/* Closes its agents and wipes the password. */
void fix_login_run_free(struct fix_login_run *r);

/*
 * The stage for `clusterdoc fix`: asks the password on the terminal (or
 * SSH_ASKPASS) when a node refused the keys, runs fix_login_start on a loop
 * of its own and prints its report on f. Returns the number of nodes the
 * stage did not complete.
 */
int fix_login_apply(struct fix_login *l, const struct netmodel *m, const struct diagnosis *d,
                    const struct fix_opts *fo, const struct sshpool_opts *pool,
                    const char *const *hosts, struct fix_journal *j, FILE *f, json_t *json_out);

/* After a new check m2: each node of the stage must now be reached by key.
 * Prints a line per node, adds {"host", "fixer", "verified"} to json_out.
 * Returns the nodes not verified. */
int fix_login_verify(FILE *f, const struct fix_login *l, const struct netmodel *m2,
                     json_t *json_out);

#endif
