/*
 * fix_login.c - the ssh-key stage of `clusterdoc fix` (fix_login.h).
 */
#include "fix_login.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "fix_render.h"
#include "fixers/fix_run.h"
#include "phase.h"
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

static void password_prompt(const struct fix_login *l, const struct netmodel *m, char *out,
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

int fix_login_apply(struct fix_login *l, const struct netmodel *m, const struct diagnosis *d,
                    const struct fix_opts *fo, const struct sshpool_opts *pool,
                    const char *const *hosts, struct fix_journal *j, FILE *f, json_t *json_out)
{
	struct consent cons = {.l = l, .m = m};
	struct sshpool_opts po = *pool;
	struct fix_opts o2 = *fo;
	struct phase ph = {.loop = loop_new()};
	struct fix_node_state *states = cd_calloc(l->n, sizeof(*states));
	int *skip = cd_calloc(l->n, sizeof(*skip));
	struct fix_result **results = cd_calloc(l->n, sizeof(*results));
	struct sshpool *sp = NULL;
	struct fix_session *s = NULL;
	struct fix_plan *p = NULL;
	char *pw = cd_calloc(1, PASSWORD_MAX), err[CD_ERRLEN], jerr[CD_ERRLEN] = "", comment[300];
	char prompt[512], host[256];
	int failed = (int)l->nlogin;

	for (size_t i = 0; i < l->n; i++) {
		fix_node_state_init(&states[i]);
		skip[i] = !l->login[i];
	}
	if (!l->key.exists) {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "head");
		host[sizeof(host) - 1] = '\0';
		snprintf(comment, sizeof(comment), "clusterdoc@%s", host);
		if (head_key_create(&l->key, comment, err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
			goto out;
		}
		if (f)
			fprintf(f, "\nhead: created %s (%s %s)\n", l->key.path, l->key.type,
			        l->key.fp);
	}
	if (l->need_password) {
		password_prompt(l, m, prompt, sizeof(prompt));
		if (secret_ask(prompt, pw, PASSWORD_MAX, err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
			goto out;
		}
		po.password = pw;
	}
	po.backend = SSH_BACKEND_LIBSSH2; /* the openssh transport cannot take a password */
	po.hostkey_consent = consent_to_key;
	po.consent_arg = &cons;
	sp = sshpool_new(ph.loop, &po, err, sizeof(err));
	if (!sp) {
		fprintf(stderr, "clusterdoc fix: %s\n", err);
		goto out;
	}
	s = fix_session_new(ph.loop, sp, hosts, l->n);
	fix_session_gather(s, states, skip, NULL, phase_done, &ph);
	phase_wait(&ph);

	o2.only = "ssh-key";
	o2.login = l->login;
	o2.head_pubkey = l->key.publine;
	p = fix_plan_build(m, d, states, &o2, j->run, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "clusterdoc fix: %s\n", err);
		goto out;
	}
	for (size_t i = 0; i < l->n; i++)
		results[i] = cd_calloc(p->nodes[i].nactions + 1, sizeof(**results));
	fix_session_apply(s, p, j, results, jerr, sizeof(jerr), phase_done, &ph);
	phase_wait(&ph);
	if (jerr[0])
		fprintf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n", jerr);

	failed = 0;
	if (f)
		fprintf(f, "\nlogged in (ssh-key):\n");
	for (size_t i = 0; i < l->n; i++) {
		const struct fix_node_plan *np = &p->nodes[i];
		int bad = !states[i].gathered;
		json_t *acts = json_array();

		if (!l->login[i])
			continue;
		for (size_t k = 0; k < np->nactions; k++) {
			const struct fix_result *r = &results[i][k];

			bad |= r->status == FIX_FAILED || r->status == FIX_SKIPPED;
			json_array_append_new(
			    acts, json_pack("{s:s, s:s, s:s, s:s}", "fixer", np->actions[k].fixer,
			                    "summary", np->actions[k].summary, "status",
			                    fix_status_name(r->status), "message", r->message));
		}
		if (f)
			fix_print_plan_node(f, m, p, i, results, 1);
		if (json_out)
			json_array_append_new(
			    json_out,
			    json_pack("{s:s, s:o, s:s?}", "host", m->nodes[i].host, "actions", acts,
			              "error", states[i].gathered ? NULL : states[i].error));
		else
			json_decref(acts);
		failed += bad;
	}
out:
	secret_wipe(pw, PASSWORD_MAX);
	free(pw);
	for (size_t i = 0; i < l->n; i++) {
		free(results[i]);
		fix_node_state_fini(&states[i]);
	}
	free(results);
	free(states);
	free(skip);
	fix_plan_free(p);
	fix_session_free(s);
	sshpool_free(sp);
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
