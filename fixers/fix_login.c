/*
 * fix_login.c - the ssh-key stage of `clusterdoc fix` (fix_login.h).
 */
#include "fix_login.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "report/fix_render.h"
#include "fixers/fix_run.h"
#include "cli/phase.h"
#include "secret.h"
#include "sshconfig.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PASSWORD_MAX 1024

static int is_login_code(const char *code)
{
	return !strcmp(code, "auth") || !strcmp(code, "auth-rsa-sha1") ||
	       !strcmp(code, "hostkey-unknown");
}

static int refused_keys(const struct nm_node *n)
{
	return !strncmp(n->error_code, "auth", 4);
}

/* The settings OpenSSH would use for host (`ssh -G`), else the defaults. */
static void host_settings(const char *host, const struct sshpool_opts *po, struct ssh_settings *s)
{
	char *argv[8], err[CD_ERRLEN];
	struct buf out, errout;
	int n = 0, status = 0;

	argv[n++] = "ssh";
	if (po->ssh_config) {
		argv[n++] = "-F";
		argv[n++] = (char *)po->ssh_config;
	}
	argv[n++] = "-G";
	argv[n++] = "--";
	argv[n++] = (char *)host;
	argv[n] = NULL;
	buf_init(&out, 1 << 20);
	buf_init(&errout, 1 << 16);
	if (child_run(argv, &out, &errout, 10000, &status, err, sizeof(err)) < 0 ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sshconfig_parse_g(out.data, out.len, getenv("HOME"), s, err, sizeof(err)) < 0)
		sshconfig_defaults(host, NULL, po->user, s);
	buf_fini(&out);
	buf_fini(&errout);
}

int fix_login_prepare(struct fix_login *l, const struct netmodel *m, const struct fix_opts *fo,
                      const struct sshpool_opts *pool, char *err, size_t errlen)
{
	struct ssh_settings s;
	size_t first = m->nnodes;
	int rc;

	memset(l, 0, sizeof(*l));
	l->n = m->nnodes;
	l->login = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*l->login));
	if (!fix_selected(fo, "ssh-key"))
		return 0;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *nd = &m->nodes[i];

		if (nd->probed || !is_login_code(nd->error_code))
			continue;
		l->login[i] = 1;
		l->nlogin++;
		l->need_password |= refused_keys(nd);
		if (first == m->nnodes)
			first = i;
	}
	if (!l->nlogin)
		return 0;
	ssh_settings_init(&s);
	host_settings(m->nodes[first].host, pool, &s);
	snprintf(l->user, sizeof(l->user), "%s", pool->user ? pool->user : s.user ? s.user : "");
	if (pool->identity) {
		char *one[] = {(char *)pool->identity};

		rc = head_key_find(one, 1, getenv("HOME"), &l->key, err, errlen);
	} else {
		rc = head_key_find(s.identity_files, s.n_identity_files, getenv("HOME"), &l->key,
		                   err, errlen);
	}
	ssh_settings_fini(&s);
	return rc < 0 ? -1 : 0;
}

void fix_login_fini(struct fix_login *l)
{
	free(l->login);
	head_key_fini(&l->key);
	memset(l, 0, sizeof(*l));
}

/* A node whose host key the stage records (it offered one we did not know). */
static int records_hostkey(const struct nm_node *n)
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
			c += 1 + records_hostkey(&m->nodes[i]);
	return c;
}

size_t fix_login_hostkeys(const struct fix_login *l, const struct netmodel *m)
{
	size_t c = 0;

	for (size_t i = 0; i < l->n; i++)
		c += l->login[i] && records_hostkey(&m->nodes[i]);
	return c;
}

static const char *user_or(const struct fix_login *l)
{
	return l->user[0] ? l->user : "the login user";
}

void fix_login_print(FILE *f, const struct fix_login *l, const struct netmodel *m)
{
	if (!l->nlogin)
		return;
	fprintf(f, "\nlog in (ssh-key):\n");
	if (!l->key.exists)
		fprintf(f,
		        "  head: create %s (ed25519, no passphrase: the logins that follow are "
		        "unattended)\n",
		        l->key.path);
	for (size_t i = 0; i < l->n; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!l->login[i])
			continue;
		fprintf(f, "  %s (%s):\n", n->host, n->error_code);
		if (records_hostkey(n))
			fprintf(
			    f,
			    "    record its host key %s %s in known_hosts; compare it first with "
			    "`ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub` on the node's console\n",
			    n->hostkey_type, n->hostkey_fp,
			    strstr(n->hostkey_type, "ed25519") ? "ed25519"
			    : strstr(n->hostkey_type, "ecdsa") ? "ecdsa"
			                                       : "rsa");
		fprintf(
		    f,
		    "    %s %s%s%s%s (%s.pub) to %s's ~/.ssh/authorized_keys, logging in once by "
		    "password or keyboard-interactive\n",
		    refused_keys(n) ? "add" : "if it refuses the keys, add",
		    l->key.exists ? "the head's key " : "the new key", l->key.type,
		    l->key.exists ? " " : "", l->key.fp, l->key.path, user_or(l));
	}
}

json_t *fix_login_json(const struct fix_login *l, const struct netmodel *m)
{
	json_t *o = json_object(), *nodes = json_array();

	json_object_set_new(o, "head_key",
	                    json_pack("{s:s, s:b, s:s?}", "path", l->key.path, "exists",
	                              l->key.exists, "fingerprint",
	                              l->key.exists ? l->key.fp : NULL));
	for (size_t i = 0; i < l->n; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!l->login[i])
			continue;
		json_array_append_new(
		    nodes,
		    json_pack("{s:s, s:s, s:o, s:b}", "host", n->host, "error_code", n->error_code,
		              "record_hostkey",
		              records_hostkey(n) ? json_pack("{s:s, s:s}", "type", n->hostkey_type,
		                                             "fingerprint", n->hostkey_fp)
		                                 : json_null(),
		              "password", refused_keys(n)));
	}
	json_object_set_new(o, "nodes", nodes);
	return o;
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

		if (c->l->login[i] && records_hostkey(n) && !strcmp(n->host, node) &&
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
		if (l->login[i] && refused_keys(&m->nodes[i]) && used + 64 < len)
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
	char *pw; /* PASSWORD_MAX bytes, wiped when the run is freed */
	struct fix_node_state *states;
	int *skip;
	struct fix_result **results;
	struct sshpool *pool;
	struct fix_session *s;
	struct fix_plan *p;
	char error[CD_ERRLEN]; /* why the stage could not plan, "" */
	char jerr[CD_ERRLEN];  /* why the journal could not be saved, "" */
	uint64_t timer;
	void (*done)(void *);
	void *arg;
};

/* Create the head's key when it has none (ssh-keygen, waited for: once). */
static int ensure_head_key(struct fix_login *l, char *err, size_t errlen)
{
	char comment[300], host[256];

	if (l->key.exists)
		return 0;
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "head");
	host[sizeof(host) - 1] = '\0';
	snprintf(comment, sizeof(comment), "clusterdoc@%s", host);
	if (head_key_create(&l->key, comment, err, errlen) < 0)
		return -1;
	l->key_created = 1;
	return 0;
}

static void run_finish(struct loop *loop, void *arg)
{
	struct fix_login_run *r = arg;

	r->timer = 0;
	r->done(r->arg);
}

/* The session calls back from inside its own callbacks: what follows runs
 * on the loop's next turn. */
static void next_turn(struct fix_login_run *r, loop_timer_cb cb)
{
	r->timer = loop_timer_add(r->loop, 0, cb, r);
}

static void on_applied(void *arg)
{
	next_turn(arg, run_finish);
}

static void plan_and_apply(struct loop *loop, void *arg)
{
	struct fix_login_run *r = arg;

	r->timer = 0;
	r->fo.only = "ssh-key";
	r->fo.login = r->l->login;
	r->fo.head_pubkey = r->l->key.publine;
	r->p = fix_plan_build(r->m, r->d, r->states, &r->fo, r->j->run, r->error, sizeof(r->error));
	if (!r->p) {
		run_finish(loop, r);
		return;
	}
	for (size_t i = 0; i < r->l->n; i++)
		r->results[i] = cd_calloc(r->p->nodes[i].nactions + 1, sizeof(**r->results));
	fix_session_apply(r->s, r->p, r->j, r->results, r->jerr, sizeof(r->jerr), on_applied, r);
}

static void on_gathered(void *arg)
{
	next_turn(arg, plan_and_apply);
}

struct fix_login_run *fix_login_start(struct loop *loop, struct fix_login *l,
                                      const struct netmodel *m, const struct diagnosis *d,
                                      const struct fix_opts *fo, const struct sshpool_opts *pool,
                                      const char *password, const char *const *hosts,
                                      struct fix_journal *j, void (*done)(void *), void *arg,
                                      char *err, size_t errlen)
{
	struct fix_login_run *r;

	if (ensure_head_key(l, err, errlen) < 0)
		return NULL;
	r = cd_calloc(1, sizeof(*r));
	*r = (struct fix_login_run){.loop = loop,
	                            .l = l,
	                            .m = m,
	                            .d = d,
	                            .fo = *fo,
	                            .po = *pool,
	                            .cons = {.l = l, .m = m},
	                            .j = j,
	                            .pw = cd_calloc(1, PASSWORD_MAX),
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
		snprintf(r->pw, PASSWORD_MAX, "%s", password);
		r->po.password = r->pw;
	}
	r->po.backend = SSH_BACKEND_LIBSSH2; /* the openssh transport cannot take a password */
	r->po.hostkey_consent = consent_to_key;
	r->po.consent_arg = &r->cons;
	r->pool = sshpool_new(loop, &r->po, err, errlen);
	if (!r->pool) {
		fix_login_run_free(r);
		return NULL;
	}
	r->s = fix_session_new(loop, r->pool, hosts, l->n);
	fix_session_gather(r->s, r->states, r->skip, NULL, on_gathered, r);
	return r;
}

int fix_login_run_report(const struct fix_login_run *r, FILE *f, json_t *json_out)
{
	const struct fix_login *l = r->l;
	int failed = 0;

	if (f && l->key_created)
		fprintf(f, "\nhead: created %s (%s %s)\n", l->key.path, l->key.type, l->key.fp);
	if (!r->p) {
		if (f)
			fprintf(f, "\nssh-key: %s\n", r->error);
		return (int)l->nlogin;
	}
	if (f)
		fprintf(f, "\nlogged in (ssh-key):\n");
	for (size_t i = 0; i < l->n; i++) {
		const struct fix_node_plan *np = &r->p->nodes[i];
		int bad = !r->states[i].gathered;
		json_t *acts;

		if (!l->login[i])
			continue;
		acts = json_array();
		for (size_t k = 0; k < np->nactions; k++) {
			const struct fix_result *res = &r->results[i][k];

			bad |= res->status == FIX_FAILED || res->status == FIX_SKIPPED;
			json_array_append_new(
			    acts, json_pack("{s:s, s:s, s:s, s:s}", "fixer", np->actions[k].fixer,
			                    "summary", np->actions[k].summary, "status",
			                    fix_status_name(res->status), "message", res->message));
		}
		if (f)
			fix_print_plan_node(f, r->m, r->p, i, r->results, 1);
		if (json_out)
			json_array_append_new(
			    json_out, json_pack("{s:s, s:o, s:s?}", "host", r->m->nodes[i].host,
			                        "actions", acts, "error",
			                        r->states[i].gathered ? NULL : r->states[i].error));
		else
			json_decref(acts);
		failed += bad;
	}
	return failed;
}

const char *fix_login_run_journal_error(const struct fix_login_run *r)
{
	return r->jerr;
}

void fix_login_run_free(struct fix_login_run *r)
{
	if (!r)
		return;
	if (r->timer)
		loop_timer_cancel(r->loop, r->timer);
	secret_wipe(r->pw, PASSWORD_MAX);
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
	fix_session_free(r->s);
	sshpool_free(r->pool);
	free(r);
}

int fix_login_apply(struct fix_login *l, const struct netmodel *m, const struct diagnosis *d,
                    const struct fix_opts *fo, const struct sshpool_opts *pool,
                    const char *const *hosts, struct fix_journal *j, FILE *f, json_t *json_out)
{
	struct phase ph = {.loop = loop_new()};
	struct fix_login_run *r = NULL;
	char *pw = cd_calloc(1, PASSWORD_MAX), err[CD_ERRLEN], prompt[512];
	int failed = (int)l->nlogin;

	if (l->need_password) {
		if (ensure_head_key(l, err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
			goto out;
		}
		fix_login_password_prompt(l, m, prompt, sizeof(prompt));
		if (secret_ask(prompt, pw, PASSWORD_MAX, err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
			goto out;
		}
	}
	r = fix_login_start(ph.loop, l, m, d, fo, pool, l->need_password ? pw : NULL, hosts, j,
	                    phase_done, &ph, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
		goto out;
	}
	phase_wait(&ph);
	if (fix_login_run_journal_error(r)[0])
		fprintf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n",
		        fix_login_run_journal_error(r));
	failed = fix_login_run_report(r, f, json_out);
out:
	fix_login_run_free(r);
	secret_wipe(pw, PASSWORD_MAX);
	free(pw);
	loop_free(ph.loop);
	return failed;
}

int fix_login_verify(FILE *f, const struct fix_login *l, const struct netmodel *m2,
                     json_t *json_out)
{
	int bad = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct nm_node *n = &m2->nodes[i];

		if (!l->login[i])
			continue;
		bad += !n->probed;
		if (f && n->probed)
			fprintf(f, "  %s: ssh-key verified (logged in by key)\n", n->host);
		else if (f)
			fprintf(f, "  %s: ssh-key NOT FIXED: %s (%s)\n", n->host, n->error,
			        n->error_code);
		if (json_out)
			json_array_append_new(json_out,
			                      json_pack("{s:s, s:s, s:b}", "node", n->host, "fixer",
			                                "ssh-key", "verified", n->probed));
	}
	return bad;
}
