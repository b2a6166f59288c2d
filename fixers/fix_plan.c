/*
 * fix_plan.c - the fixers' table and the planning driver (fix.h): which
 * fixers act on which node, and the helpers that turn "this block in that
 * file" or "this command" into a plan's actions.
 */
#include "fix.h"
#include "blockedit.h"
#include "fix_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int selected(const struct fix_opts *o, const struct fixer *f);

const struct fixer fixer_table[] = {
    {.id = "ssh-key",
     .title = "the head's key in authorized_keys of nodes that refuse it, and their host keys",
     .by_default = 1,
     .findings = fix_sshkey_findings,
     .plan = fix_sshkey_plan,
     .login_stage = 1},
    {.id = "env",
     .title = "the verified interface variables in every login shell",
     .by_default = 1,
     .findings = fix_env_findings,
     .plan = fix_env_plan},
    {.id = "hosts",
     .title = "the hostname mapped to the data address in /etc/hosts",
     .by_default = 1,
     .findings = fix_hosts_findings,
     .plan = fix_hosts_plan},
    {.id = "firewall",
     .title = "TCP from the cluster's subnet allowed on the data interface",
     .by_default = 1,
     .findings = fix_firewall_findings,
     .plan = fix_firewall_plan,
     .reads_firewall = 1},
    {.id = "port-range",
     .title = "a narrower ip_local_port_range, and the firewall opens only it and MASTER_PORT",
     .by_default = 0,
     .findings = fix_ports_findings,
     .plan = fix_ports_plan,
     .narrows_ports = 1,
     .verify = fix_ports_verify},
};
const size_t fixer_table_len = CD_ARRAY_LEN(fixer_table);

const struct fixer *fixer_find(const char *id)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (strcmp(fixer_table[k].id, id) == 0)
			return &fixer_table[k];
	return NULL;
}

const struct fixer *fixer_login_stage(void)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].login_stage)
			return &fixer_table[k];
	return NULL;
}

int fixer_answers(const struct fixer *f, const char *id)
{
	for (const char *const *p = f->findings; p && *p; p++)
		if (strcmp(*p, id) == 0)
			return 1;
	return 0;
}

size_t fix_fixers_for(const char *id, char *out, size_t len)
{
	size_t n = 0, off = 0;

	out[0] = 0;
	for (size_t k = 0; k < fixer_table_len; k++) {
		if (!fixer_answers(&fixer_table[k], id) || off >= len)
			continue;
		off +=
		    (size_t)snprintf(out + off, len - off, "%s%s", n ? "," : "", fixer_table[k].id);
		n++;
	}
	return n;
}

void fix_gather_inputs(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, struct fix_node_state *states, int *skip,
                       const char **fw_iface)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const char *ifname = NULL, *addr;

		fix_node_state_init(&states[i]);
		skip[i] = !m->nodes[i].probed;
		if (fix_wants_firewall(m, d, o, i) && fix_data_iface(m, d, i, &ifname, &addr) < 0)
			ifname = NULL;
		fw_iface[i] = ifname;
	}
}

int fixer_applies(const struct fixer *f, const struct diagnosis *d, size_t i)
{
	for (size_t k = 0; k < d->nfindings; k++) {
		if (finding_names(&d->findings[k], i) && fixer_answers(f, d->findings[k].id))
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- state */

void fix_node_state_init(struct fix_node_state *s)
{
	memset(s, 0, sizeof(*s));
	s->ufw_active = -1;
	s->firewalld_running = -1;
}

void fix_node_state_copy_files(struct fix_node_state *dst, const struct fix_node_state *src)
{
	fix_node_state_init(dst);
	for (size_t k = 0; k < src->nfiles; k++) {
		struct fix_file_state *f = fix_state_add_file(dst, src->files[k].path);

		f->read = src->files[k].read;
		f->exists = src->files[k].exists;
		f->data =
		    src->files[k].data ? cd_strndup(src->files[k].data, src->files[k].len) : NULL;
		f->len = src->files[k].len;
		f->mode = src->files[k].mode;
		memcpy(f->error, src->files[k].error, sizeof(f->error));
	}
}

void fix_node_state_fini(struct fix_node_state *s)
{
	for (size_t k = 0; k < s->nfiles; k++) {
		free(s->files[k].path);
		free(s->files[k].data);
	}
	free(s->files);
	free(s->nft_json);
	free(s->ufw_status);
	free(s->firewalld_rules);
	fix_node_state_init(s);
}

struct fix_file_state *fix_state_add_file(struct fix_node_state *s, const char *path)
{
	struct fix_file_state *f;

	s->files = cd_realloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	f = &s->files[s->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = cd_strdup(path);
	return f;
}

const struct fix_file_state *fix_state_file(const struct fix_node_state *s, const char *path)
{
	for (size_t k = 0; k < s->nfiles; k++)
		if (strcmp(s->files[k].path, path) == 0)
			return &s->files[k];
	return NULL;
}

const char *fix_rc_file(const char *shell, int *read_by_ssh)
{
	const char *base = strrchr(shell ? shell : "", '/');

	base = base ? base + 1 : shell ? shell : "";
	*read_by_ssh = 1;
	if (strcmp(base, "bash") == 0)
		return "~/.bashrc";
	if (strcmp(base, "zsh") == 0)
		return "~/.zshenv";
	*read_by_ssh = 0;
	return "~/.profile";
}

/* ---------------------------------------------------------------- helpers */

int fix_data_iface(const struct netmodel *m, const struct diagnosis *d, size_t i,
                   const char **ifname, const char **addr)
{
	const struct node_prediction *pr = &d->pred[i];

	if (pr->data_iface[0] && pr->data_addr[0]) {
		*ifname = pr->data_iface;
		*addr = pr->data_addr;
		return 0;
	}
	if (pr->bootstrap.npicks > 0 && strncmp(pr->bootstrap.picks[0].addr, "127.", 4) != 0 &&
	    strcmp(pr->bootstrap.picks[0].addr, "::1") != 0) {
		*ifname = pr->bootstrap.picks[0].ifname;
		*addr = pr->bootstrap.picks[0].addr;
		return 0;
	}
	return -1;
}

void fix_note(struct fix_node_plan *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = cd_vasprintf(fmt, ap);
	va_end(ap);
	p->notes = cd_realloc(p->notes, (p->nnotes + 1) * sizeof(*p->notes));
	p->notes[p->nnotes++] = s;
}

static struct fix_action *add_action(struct fix_node_plan *p, const char *fixer,
                                     enum fix_action_kind kind, int sudo, const char *summary)
{
	struct fix_action *a;

	p->actions = cd_realloc(p->actions, (p->nactions + 1) * sizeof(*p->actions));
	a = &p->actions[p->nactions++];
	memset(a, 0, sizeof(*a));
	a->fixer = fixer;
	a->kind = kind;
	a->sudo = sudo;
	a->summary = cd_strdup(summary);
	return a;
}

struct fix_file_state *fix_work_file(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                                     const char *fixer, const char *path)
{
	for (size_t k = 0; k < c->work[i].nfiles; k++) {
		struct fix_file_state *w = &c->work[i].files[k];

		if (strcmp(w->path, path) != 0)
			continue;
		if (w->read)
			return w;
		fix_note(p, "%s: %s left as is: %s", fixer, path,
		         w->error[0] ? w->error : "it could not be read");
		return NULL;
	}
	fix_note(p, "%s: %s left as is: it was not read", fixer, path);
	return NULL;
}

int fix_plan_text(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const char *fixer,
                  const char *path, int sudo, char *after_take, size_t after_len, unsigned mode,
                  const char *summary)
{
	struct fix_file_state *w = fix_work_file(c, i, p, fixer, path);
	struct fix_action *a;

	if (!w) {
		free(after_take);
		return -1;
	}
	if (w->exists && after_len == w->len && memcmp(after_take, w->data, after_len) == 0) {
		free(after_take);
		fix_note(p, "%s: %s already is as planned", fixer, path);
		return 0;
	}
	a = add_action(p, fixer, FIX_FILE, sudo, summary);
	a->path = cd_strdup(path);
	a->before_exists = w->exists;
	a->before = w->exists ? cd_strndup(w->data, w->len) : NULL;
	a->before_len = w->exists ? w->len : 0;
	a->after = after_take;
	a->after_len = after_len;
	a->mode = w->exists ? w->mode : mode;
	/* the next fixer that edits this file starts from this content */
	free(w->data);
	w->data = cd_strndup(after_take, after_len);
	w->len = after_len;
	w->exists = 1;
	w->mode = a->mode;
	return 0;
}

int fix_plan_block(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const char *fixer,
                   const char *path, int sudo, const char *name, const char *body,
                   enum blockedit_where where, unsigned mode, const char *summary)
{
	struct fix_file_state *w = fix_work_file(c, i, p, fixer, path);
	char err[CD_ERRLEN], *out = NULL;
	size_t outlen = 0;

	if (!w)
		return -1;
	if (blockedit_set(w->data ? w->data : "", w->len, "#", name, body, where, &out, &outlen,
	                  err, sizeof(err)) < 0) {
		fix_note(p, "%s: %s left as is: %s; fix or remove the clusterdoc markers by hand",
		         fixer, path, err);
		return -1;
	}
	return fix_plan_text(c, i, p, fixer, path, sudo, out, outlen, mode, summary);
}

void fix_plan_cmd(struct fix_node_plan *p, const char *fixer, int sudo, const char *summary,
                  char **argv_take, char **undo_take)
{
	struct fix_action *a = add_action(p, fixer, FIX_CMD, sudo, summary);

	a->argv = argv_take;
	a->undo = undo_take;
}

char **fix_argv(const char *first, ...)
{
	va_list ap;
	char **v = NULL;
	size_t n = 0;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *)) {
		v = cd_realloc(v, (n + 2) * sizeof(*v));
		v[n++] = cd_strdup(s);
	}
	va_end(ap);
	if (!v)
		v = cd_malloc(sizeof(*v));
	v[n] = NULL;
	return v;
}

char **fix_argv_copy(char *const *argv)
{
	size_t n = 0;
	char **c;

	while (argv && argv[n])
		n++;
	c = cd_calloc(n + 1, sizeof(*c));
	for (size_t k = 0; k < n; k++)
		c[k] = cd_strdup(argv[k]);
	return c;
}

int fix_argv_equal(const char *const *a, const char *const *b)
{
	static const char *const empty[] = {NULL};
	size_t k = 0;

	a = a ? a : empty;
	b = b ? b : empty;
	while (a[k] && b[k] && strcmp(a[k], b[k]) == 0)
		k++;
	return !a[k] && !b[k];
}

void fix_argv_free(char **argv)
{
	for (char **s = argv; s && *s; s++)
		free(*s);
	free(argv);
}

/* ---------------------------------------------------------------- driver */

void fix_action_fini(struct fix_action *a)
{
	free(a->summary);
	free(a->path);
	free(a->before);
	free(a->after);
	free(a->shared_by);
	fix_argv_free(a->argv);
	fix_argv_free(a->undo);
}

int fix_selected(const struct fix_opts *o, const char *id)
{
	const struct fixer *f = fixer_find(id);

	return f && selected(o, f);
}

int fix_login_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].login_stage && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

int fix_ports_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].narrows_ports && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

int fix_checked_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (!fixer_table[k].login_stage && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

void fix_port_range(const struct fix_opts *o, int *lo, int *hi)
{
	int given = o && o->port_lo && o->port_hi;

	*lo = given ? o->port_lo : 49152;
	*hi = given ? o->port_hi : 65535;
}

/* The fixers selected: --only's list, else the default ones. */
static int selected(const struct fix_opts *o, const struct fixer *f)
{
	const char *s, *e;

	if (!o || !o->only)
		return f->by_default;
	for (s = o->only; *s; s = *e ? e + 1 : e) {
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		if ((size_t)(e - s) == strlen(f->id) && strncmp(s, f->id, (size_t)(e - s)) == 0)
			return 1;
	}
	return 0;
}

int fix_check_only(const struct fix_opts *o, char *err, size_t errlen)
{
	const char *s, *e;

	if (!o || !o->only)
		return 0;
	for (s = o->only; *s; s = *e ? e + 1 : e) {
		char id[32];

		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		snprintf(id, sizeof(id), "%.*s", (int)(e - s), s);
		if (!fixer_find(id)) {
			char known[128] = "";

			for (size_t k = 0; k < fixer_table_len; k++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
				         "%s%s", k ? ", " : "", fixer_table[k].id);
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--only: no fixer \"%s\" (known: %s)", id, known);
		}
	}
	return 0;
}

int fix_wants_firewall(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, size_t i)
{
	if (i >= m->nnodes)
		return 0;
	for (size_t k = 0; k < fixer_table_len; k++) {
		const struct fixer *f = &fixer_table[k];

		if (f->reads_firewall && selected(o, f) && fixer_applies(f, d, i))
			return 1;
	}
	return 0;
}

struct fix_plan *fix_plan_build(const struct netmodel *m, const struct diagnosis *d,
                                const struct fix_node_state *states, const struct fix_opts *o,
                                const char *run, char *err, size_t errlen)
{
	struct fix_plan *p;
	struct job_plan *plan = NULL;
	struct fix_ctx c = {.m = m, .d = d, .states = states, .o = o, .run = run};

	if (fix_check_only(o, err, errlen) < 0)
		return NULL;
	p = cd_calloc(1, sizeof(*p));
	snprintf(p->run, sizeof(p->run), "%s", run);
	if (fix_ports_selected(o))
		fix_port_range(o, &p->port_lo, &p->port_hi);
	p->nnodes = m->nnodes;
	p->nodes = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*p->nodes));
	c.work = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*c.work));
	for (size_t i = 0; i < m->nnodes; i++)
		fix_node_state_copy_files(&c.work[i], &states[i]);
	if (d)
		c.plan = plan = job_plan_from_check(m, d, 0, NULL);

	for (size_t i = 0; i < m->nnodes; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		/* a node that refused the head's keys was gathered by password:
		 * only ssh-key can plan for it, the check knows nothing else */
		int login = o && o->login && o->login[i];

		if (!m->nodes[i].probed && !login) {
			fix_note(np, "not checked: %s", m->nodes[i].error);
			continue;
		}
		if (!states[i].gathered) {
			fix_note(np, "%s", states[i].error[0] ? states[i].error : "not reached");
			continue;
		}
		for (size_t k = 0; k < fixer_table_len; k++) {
			const struct fixer *f = &fixer_table[k];
			size_t before = np->nactions;

			if (!selected(o, f) || (!m->nodes[i].probed && !f->login_stage))
				continue;
			/* port-range style fixers act when asked; the others when
			 * one of their findings names the node */
			if (f->by_default && !fixer_applies(f, d, i))
				continue;
			np->wanted =
			    cd_realloc(np->wanted, (np->nwanted + 1) * sizeof(*np->wanted));
			np->wanted[np->nwanted++] = f->id;
			f->plan(&c, i, np);
			if (np->nactions > before) {
				np->fixers =
				    cd_realloc(np->fixers, (np->nfixers + 1) * sizeof(*np->fixers));
				np->fixers[np->nfixers++] = f->id;
			}
		}
		p->nactions += np->nactions;
	}
	for (size_t i = 0; i < m->nnodes; i++)
		fix_node_state_fini(&c.work[i]);
	free(c.work);
	job_plan_free(plan);
	fix_plan_share_homes(m, states, p);
	return p;
}

void fix_plan_free(struct fix_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nnodes; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		for (size_t k = 0; k < np->nactions; k++)
			fix_action_fini(&np->actions[k]);
		free(np->actions);
		for (size_t k = 0; k < np->nnotes; k++)
			free(np->notes[k]);
		free(np->notes);
		free(np->fixers);
		free(np->wanted);
	}
	free(p->nodes);
	free(p);
}
