/* SPDX-License-Identifier: MIT */
/*
 * fix_login.c - the ssh-key stage of `clusterdoc fix` (fix_login.h).
 */
#include "fix_login.h"
#include "cd.h"
#include "childrun.h"
#include "fix_run.h"
#include "secret.h"
#include "sshconfig.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int is_login_code(const char *code)
{
	return !strcmp(code, "auth") || !strcmp(code, "auth-rsa-sha1") ||
	       !strcmp(code, "hostkey-unknown");
}

int fix_login_refused_keys(const struct nm_node *n)
{
	return !strncmp(n->error_code, "auth", 4);
}

void fix_login_init(struct fix_login *l, const struct netmodel *m, const struct fix_opts *fo)
{
	memset(l, 0, sizeof(*l));
	l->n = m->nnodes;
	l->login = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*l->login));
	if (!fix_login_selected(fo))
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *nd = &m->nodes[i];

		if (nd->probed || !is_login_code(nd->error_code))
			continue;
		l->login[i] = 1;
		l->nlogin++;
		l->need_password |= fix_login_refused_keys(nd);
		if (!l->host[0])
			snprintf(l->host, sizeof(l->host), "%s", nd->host);
	}
}

/* The user and the head's key from s (`ssh -G`'s settings, or OpenSSH's
 * defaults). */
static int key_from(struct fix_login *l, const struct ssh_settings *s, char *err, size_t errlen)
{
	const struct sshpool_opts *pool = l->pool;

	snprintf(l->user, sizeof(l->user), "%s", pool->user ? pool->user : s->user ? s->user : "");
	if (pool->identity) {
		char *one[] = {(char *)pool->identity};

		return head_key_find(one, 1, getenv("HOME"), &l->key, err, errlen) < 0 ? -1 : 0;
	}
	return head_key_find(s->identity_files, s->n_identity_files, getenv("HOME"), &l->key, err,
	                     errlen) < 0
	           ? -1
	           : 0;
}

/* ssh -G's settings for l->host when it said them, else the defaults. */
static int key_from_output(struct fix_login *l, const struct childrun_result *res, char *err,
                           size_t errlen)
{
	struct ssh_settings s;
	char perr[CD_ERRLEN];
	int rc;

	ssh_settings_init(&s);
	if (!res || res->rc < 0 || !WIFEXITED(res->status) || WEXITSTATUS(res->status) != 0 ||
	    sshconfig_parse_g(res->out->data, res->out->len, getenv("HOME"), &s, perr,
	                      sizeof(perr)) < 0)
		sshconfig_defaults(l->host, NULL, l->pool->user, &s);
	rc = key_from(l, &s, err, errlen);
	ssh_settings_fini(&s);
	return rc;
}

static void on_ssh_g(const struct childrun_result *res, void *arg)
{
	struct fix_login *l = arg;
	char err[CD_ERRLEN] = "";
	int rc;

	l->child = NULL;
	rc = key_from_output(l, res, err, sizeof(err));
	l->done(l->arg, rc, err);
}

int fix_login_find_key(struct fix_login *l, struct loop *loop, const struct netmodel *m,
                       const struct sshpool_opts *pool, fix_login_cb done, void *arg, char *err,
                       size_t errlen)
{
	char *argv[8], cerr[CD_ERRLEN];
	int n = 0;

	if (!l->nlogin)
		return 1;
	l->pool = pool;
	l->done = done;
	l->arg = arg;
	argv[n++] = "ssh";
	if (pool->ssh_config) {
		argv[n++] = "-F";
		argv[n++] = (char *)pool->ssh_config;
	}
	argv[n++] = "-G";
	argv[n++] = "--";
	argv[n++] = l->host;
	argv[n] = NULL;
	l->child =
	    childrun_start(loop, argv, 10000, 1 << 20, 1 << 16, on_ssh_g, l, cerr, sizeof(cerr));
	if (l->child)
		return 0;
	return key_from_output(l, NULL, err, errlen) < 0 ? -1 : 1;
}

static void on_keygen(const struct childrun_result *res, void *arg)
{
	struct fix_login *l = arg;
	char err[CD_ERRLEN] = "";
	int rc;

	l->child = NULL;
	if (res->rc < 0)
		rc = cd_errf(err, sizeof(err), res->rc, "%s", res->error);
	else
		rc = head_key_created(&l->key, res->status, res->err->data, err, sizeof(err));
	l->key_created = rc == 0;
	l->done(l->arg, rc, err);
}

int fix_login_create_key(struct fix_login *l, struct loop *loop, fix_login_cb done, void *arg,
                         char *err, size_t errlen)
{
	char host[256], *argv[HEAD_KEY_ARGV];

	if (l->key.exists)
		return 1;
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "head");
	host[sizeof(host) - 1] = '\0';
	snprintf(l->comment, sizeof(l->comment), "clusterdoc@%s", host);
	if (head_key_create_argv(&l->key, l->comment, argv, err, errlen) < 0)
		return -1;
	l->done = done;
	l->arg = arg;
	l->child =
	    childrun_start(loop, argv, HEAD_KEY_TIMEOUT_MS, 4096, 4096, on_keygen, l, err, errlen);
	return l->child ? 0 : -1;
}

void fix_login_fini(struct fix_login *l)
{
	childrun_cancel(l->child);
	free(l->login);
	head_key_fini(&l->key);
	memset(l, 0, sizeof(*l));
}

/* A node whose host key the stage records (it offered one we did not know). */
int fix_login_records_hostkey(const struct nm_node *n)
{
	return !strcmp(n->error_code, "hostkey-unknown") && n->hostkey_fp[0];
}

size_t fix_login_changes(const struct fix_login *l, const struct netmodel *m)
{
	size_t c = 0;

	if (!l->nlogin)
		return 0;
	c += !l->key.exists;
	for (size_t i = 0; i < l->n; i++)
		if (l->login[i])
			c += 1 + fix_login_records_hostkey(&m->nodes[i]);
	return c;
}

size_t fix_login_hostkeys(const struct fix_login *l, const struct netmodel *m)
{
	size_t c = 0;

	for (size_t i = 0; i < l->n; i++)
		c += l->login[i] && fix_login_records_hostkey(&m->nodes[i]);
	return c;
}

static const char *user_or(const struct fix_login *l)
{
	return l->user[0] ? l->user : "the login user";
}

/* ---------------------------------------------------------------- apply */

struct consent {
	const struct fix_login *l;
	const struct netmodel *m;
};

/* Record exactly the host key the plan showed for that node. */
static int consent_to_key(const char *node, const char *keytype, const char *fp, void *arg)
{
	const struct consent *c = arg;

	for (size_t i = 0; i < c->l->n; i++) {
		const struct nm_node *n = &c->m->nodes[i];

		if (c->l->login[i] && fix_login_records_hostkey(n) && !strcmp(n->host, node) &&
		    !strcmp(n->hostkey_type, keytype) && !strcmp(n->hostkey_fp, fp))
			return 1;
	}
	return 0;
}

void fix_login_password_prompt(const struct fix_login *l, const struct netmodel *m, char *out,
                               size_t len)
{
	size_t used;

	snprintf(out, len, "Password for %s on", user_or(l));
	for (size_t i = 0; i < l->n; i++) {
		used = strlen(out);
		if (l->login[i] && fix_login_refused_keys(&m->nodes[i]) && used + 64 < len)
			snprintf(out + used, len - used, " %s", m->nodes[i].host);
	}
	used = strlen(out);
	snprintf(out + used, len - used, ": ");
}

/* One run of the stage on a loop: its own pool (the password, the consent
 * to the host keys shown), a gather, a plan and an apply. */
struct fix_login_run {
	struct loop *loop;
	struct fix_login *l;
	const struct netmodel *m;
	const struct diagnosis *d;
	struct fix_opts fo;
	struct sshpool_opts po;
	struct consent cons;
	struct fix_journal *j;
	char *pw; /* FIX_PASSWORD_MAX bytes, wiped when the run is freed */
	struct fix_node_state *states;
	int *skip;
	struct fix_result **results;
	struct sshpool *pool;
	struct fix_run *s;
	struct fix_plan *p;
	char error[CD_ERRLEN]; /* why the stage could not plan, "" */
	char jerr[CD_ERRLEN];  /* why the journal could not be saved, "" */
	void (*done)(void *);
	void *arg;
};

/* The fix run's phases end on a loop turn of their own (fanout.h):
 * what follows runs from there. */
static void on_applied(void *arg)
{
	struct fix_login_run *r = arg;

	r->done(r->arg);
}

static void on_gathered(void *arg)
{
	struct fix_login_run *r = arg;

	r->fo.only = fixer_login_stage()->id;
	r->fo.login = r->l->login;
	r->fo.head_pubkey = r->l->key.publine;
	r->p = fix_plan_build(r->m, r->d, r->states, &r->fo, r->j->run, r->error, sizeof(r->error));
	if (!r->p) {
		r->done(r->arg);
		return;
	}
	for (size_t i = 0; i < r->l->n; i++)
		r->results[i] = cd_calloc(r->p->nodes[i].nactions + 1, sizeof(**r->results));
	fix_run_apply(r->s, r->p, r->j, r->results, r->jerr, sizeof(r->jerr), on_applied, r);
}

struct fix_login_run *fix_login_start(struct loop *loop, struct fix_login *l,
                                      const struct netmodel *m, const struct diagnosis *d,
                                      const struct fix_opts *fo, const struct sshpool_opts *pool,
                                      const char *password, const char *const *hosts,
                                      struct fix_journal *j, void (*done)(void *), void *arg,
                                      char *err, size_t errlen)
{
	struct fix_login_run *r;

	if (!l->key.exists) {
		cd_errf(err, errlen, CD_ERR_NOTFOUND, "the head has no key to add: %s",
		        l->key.path);
		return NULL;
	}
	r = cd_calloc(1, sizeof(*r));
	*r = (struct fix_login_run){.loop = loop,
	                            .l = l,
	                            .m = m,
	                            .d = d,
	                            .fo = *fo,
	                            .po = *pool,
	                            .cons = {.l = l, .m = m},
	                            .j = j,
	                            .pw = cd_calloc(1, FIX_PASSWORD_MAX),
	                            .states = cd_calloc(l->n + 1, sizeof(*r->states)),
	                            .skip = cd_calloc(l->n + 1, sizeof(*r->skip)),
	                            .results = cd_calloc(l->n + 1, sizeof(*r->results)),
	                            .done = done,
	                            .arg = arg};
	for (size_t i = 0; i < l->n; i++) {
		fix_node_state_init(&r->states[i]);
		r->skip[i] = !l->login[i];
	}
	if (password) {
		snprintf(r->pw, FIX_PASSWORD_MAX, "%s", password);
		r->po.password = r->pw;
	}
	r->po.backend = SSHPOOL_BACKEND_LIBSSH2; /* the openssh transport cannot take a password */
	r->po.hostkey_consent = consent_to_key;
	r->po.consent_arg = &r->cons;
	r->pool = sshpool_new(loop, &r->po, err, errlen);
	if (!r->pool) {
		fix_login_run_free(r);
		return NULL;
	}
	r->s = fix_run_new(loop, r->pool, hosts, l->n);
	fix_run_gather(r->s, r->states, r->skip, NULL, on_gathered, r);
	return r;
}

void fix_login_run_outcome(const struct fix_login_run *r, struct fix_login_outcome *o)
{
	*o = (struct fix_login_outcome){.p = r->p,
	                                .error = r->error,
	                                .results = r->results,
	                                .states = r->states,
	                                .journal_error = r->jerr};
}

int fix_login_run_failed(const struct fix_login_run *r)
{
	const struct fix_login *l = r->l;
	int failed = 0;

	if (!r->p)
		return (int)l->nlogin;
	for (size_t i = 0; i < l->n; i++) {
		const struct fix_node_plan *np = &r->p->nodes[i];
		int bad = !r->states[i].gathered;

		if (!l->login[i])
			continue;
		for (size_t k = 0; k < np->nactions; k++)
			bad |= r->results[i][k].status == FIX_FAILED ||
			       r->results[i][k].status == FIX_SKIPPED;
		failed += bad;
	}
	return failed;
}

void fix_login_run_disconnect(struct fix_login_run *r)
{
	if (!r)
		return;
	secret_wipe(r->pw, FIX_PASSWORD_MAX);
	fix_run_free(r->s);
	r->s = NULL;
	sshpool_free(r->pool);
	r->pool = NULL;
}

void fix_login_run_free(struct fix_login_run *r)
{
	if (!r)
		return;
	secret_wipe(r->pw, FIX_PASSWORD_MAX);
	free(r->pw);
	for (size_t i = 0; i < r->l->n; i++) {
		if (r->results)
			free(r->results[i]);
		fix_node_state_fini(&r->states[i]);
	}
	free(r->results);
	free(r->states);
	free(r->skip);
	fix_plan_free(r->p);
	fix_run_free(r->s);
	sshpool_free(r->pool);
	free(r);
}
