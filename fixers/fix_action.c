/* SPDX-License-Identifier: MIT */
/*
 * fix_action.c - what every fixer uses to make its part of a plan (fix.h,
 * fix_internal.h): the nodes' gathered state, a file to change ("this block
 * in that file"), a command to run (its argv), a note, whether a node needs
 * sudo. The fixers' table and the driver that calls them are fix_plan.c's.
 */
#include "fix.h"
#include "blockedit.h"
#include "fix_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A change on node i runs as root through sudo unless the login is root. */
int fix_needs_sudo(const struct fix_ctx *c, size_t i)
{
	return c->states[i].uid != 0;
}

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
