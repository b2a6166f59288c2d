/* SPDX-License-Identifier: MIT */
/*
 * fix_render.c - the text and JSON of `clusterdoc fix` (fix_render.h).
 */
#include "fix_render.h"
#include "termtext.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fixers/textdiff.h"

/* Characters a shell word may hold without quotes. */
static int shell_plain(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr(
		        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,%+@",
		        *s))
			return 0;
	return 1;
}

char *fix_command_line(char *const *argv, int sudo)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 16);
	if (sudo)
		buf_append_str(&b, "sudo -n ");
	for (char *const *a = argv; a && *a; a++) {
		if (a != argv)
			buf_append_str(&b, " ");
		if (shell_plain(*a)) {
			buf_append_str(&b, *a);
			continue;
		}
		buf_append_str(&b, "'");
		for (const char *c = *a; *c; c++)
			buf_append_str(&b, *c == '\'' ? "'\\''" : (char[]){*c, 0});
		buf_append_str(&b, "'");
	}
	s = cd_strndup((const char *)b.data, b.len);
	buf_fini(&b);
	return s;
}

static void print_indented(FILE *f, const char *text, const char *indent)
{
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, "\n");

		termtext_printf(f, "%s%.*s\n", indent, (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static char *action_diff(const struct fix_action *a)
{
	char label[600];

	snprintf(label, sizeof(label), "%s (clusterdoc fix)", a->path);
	return textdiff_unified(a->before, a->before_len, a->after, a->after_len, a->path, label,
	                        3);
}

void fix_print_plan(FILE *f, const struct netmodel *m, const struct fix_plan *p,
                    struct fix_result *const *results)
{
	for (size_t i = 0; i < p->nnodes; i++)
		fix_print_plan_node(f, m, p, i, results, 0);
}

void fix_print_plan_node(FILE *f, const struct netmodel *m, const struct fix_plan *p, size_t i,
                         struct fix_result *const *results, int diffs)
{
	const struct fix_node_plan *np = &p->nodes[i];

	termtext_printf(f, "\n%s%s\n", m->nodes[i].host, np->nactions ? "" : ": nothing to change");
	for (size_t k = 0; k < np->nactions; k++) {
		const struct fix_action *a = &np->actions[k];
		const struct fix_result *r = results ? &results[i][k] : NULL;

		termtext_printf(f, "  [%s]%s %s", a->fixer, a->sudo ? " (root)" : "", a->summary);
		if (a->shared_by)
			termtext_printf(f, " (one file, shared by %s)", a->shared_by);
		if (r)
			termtext_printf(f, "  -> %s%s%s", fix_status_name(r->status),
			                r->message[0] ? ": " : "", r->message);
		fputc('\n', f);
		if (r && !diffs)
			continue; /* the plan was shown before it was applied */
		if (a->kind == FIX_FILE) {
			char *d = action_diff(a);

			print_indented(f, d, "    ");
			free(d);
		} else {
			char *line = fix_command_line(a->argv, a->sudo);
			char *undo = fix_command_line(a->undo, a->sudo);

			termtext_printf(f, "    $ %s\n    undo: %s\n", line, undo);
			free(line);
			free(undo);
		}
	}
	for (size_t k = 0; k < np->nnotes && (!results || diffs); k++)
		termtext_printf(f, "  note: %s\n", np->notes[k]);
}

void fix_print_verify(FILE *f, const struct netmodel *m2, const struct fix_verification *v)
{
	for (size_t k = 0; k < v->n; k++) {
		const struct fix_verdict *x = &v->v[k];
		const char *host = m2->nodes[x->node].host;

		if (x->kind == FIX_VERDICT_FIXER)
			termtext_printf(f, "  %-12s %-9s %s%s\n", host, x->fixer,
			                x->verified ? "verified" : "NOT FIXED: ", x->still);
		else if (x->verified)
			termtext_printf(f, "  %s: %s verified (logged in by key)\n", host,
			                x->fixer);
		else
			termtext_printf(f, "  %s: %s NOT FIXED: %s\n", host, x->fixer, x->still);
	}
}

void fix_verify_json(json_t *out, const struct netmodel *m2, const struct fix_verification *v)
{
	for (size_t k = 0; k < v->n; k++) {
		const struct fix_verdict *x = &v->v[k];
		const char *host = m2->nodes[x->node].host;

		if (x->kind == FIX_VERDICT_FIXER)
			json_array_append_new(out, json_pack("{sssssbss}", "node", host, "fixer",
			                                     x->fixer, "verified", x->verified,
			                                     "still", x->still));
		else
			json_array_append_new(out,
			                      json_pack("{s:s, s:s, s:b}", "node", host, "fixer",
			                                x->fixer, "verified", x->verified));
	}
}

static const char *login_user(const struct fix_login *l)
{
	return l->user[0] ? l->user : "the login user";
}

void fix_print_login(FILE *f, const struct fix_login *l, const struct netmodel *m)
{
	if (!l->nlogin)
		return;
	termtext_printf(f, "\nlog in (ssh-key):\n");
	if (!l->key.exists)
		termtext_printf(
		    f,
		    "  head: create %s (ed25519, no passphrase: the logins that follow are "
		    "unattended)\n",
		    l->key.path);
	for (size_t i = 0; i < l->n; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!l->login[i])
			continue;
		termtext_printf(f, "  %s (%s):\n", n->host, n->error_code);
		if (fix_login_records_hostkey(n))
			termtext_printf(
			    f,
			    "    record its host key %s %s in known_hosts; compare it first with "
			    "`ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub` on the node's console\n",
			    n->hostkey_type, n->hostkey_fp,
			    strstr(n->hostkey_type, "ed25519") ? "ed25519"
			    : strstr(n->hostkey_type, "ecdsa") ? "ecdsa"
			                                       : "rsa");
		termtext_printf(
		    f,
		    "    %s %s%s%s%s (%s.pub) to %s's ~/.ssh/authorized_keys, logging in once by "
		    "password or keyboard-interactive\n",
		    fix_login_refused_keys(n) ? "add" : "if it refuses the keys, add",
		    l->key.exists ? "the head's key " : "the new key", l->key.type,
		    l->key.exists ? " " : "", l->key.fp, l->key.path, login_user(l));
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
		    nodes, json_pack("{s:s, s:s, s:o, s:b}", "host", n->host, "error_code",
		                     n->error_code, "record_hostkey",
		                     fix_login_records_hostkey(n)
		                         ? json_pack("{s:s, s:s}", "type", n->hostkey_type,
		                                     "fingerprint", n->hostkey_fp)
		                         : json_null(),
		                     "password", fix_login_refused_keys(n)));
	}
	json_object_set_new(o, "nodes", nodes);
	return o;
}

void fix_print_login_run(FILE *f, const struct fix_login *l, const struct netmodel *m,
                         const struct fix_login_outcome *o)
{
	if (l->key_created)
		termtext_printf(f, "\nhead: created %s (%s %s)\n", l->key.path, l->key.type,
		                l->key.fp);
	if (!o->p) {
		termtext_printf(f, "\nssh-key: %s\n", o->error);
		return;
	}
	termtext_printf(f, "\nlogged in (ssh-key):\n");
	for (size_t i = 0; i < l->n; i++)
		if (l->login[i])
			fix_print_plan_node(f, m, o->p, i, o->results, 1);
}

void fix_login_run_json(json_t *out, const struct fix_login *l, const struct netmodel *m,
                        const struct fix_login_outcome *o)
{
	if (!o->p)
		return;
	for (size_t i = 0; i < l->n; i++) {
		const struct fix_node_plan *np = &o->p->nodes[i];
		json_t *acts;

		if (!l->login[i])
			continue;
		acts = json_array();
		for (size_t k = 0; k < np->nactions; k++) {
			const struct fix_result *res = &o->results[i][k];

			json_array_append_new(
			    acts, json_pack("{s:s, s:s, s:s, s:s}", "fixer", np->actions[k].fixer,
			                    "summary", np->actions[k].summary, "status",
			                    fix_status_name(res->status), "message", res->message));
		}
		json_array_append_new(
		    out, json_pack("{s:s, s:o, s:s?}", "host", m->nodes[i].host, "actions", acts,
		                   "error", o->states[i].gathered ? NULL : o->states[i].error));
	}
}

void fix_print_undo(FILE *f, const struct fix_journal *j, const struct fix_result *results)
{
	for (size_t k = j->nchanges; k-- > 0;) {
		const struct fix_change *c = &j->changes[k];
		const struct fix_result *r = &results[k];

		termtext_printf(f, "  %-12s [%s] %s  -> %s%s%s\n", c->host, c->fixer, c->summary,
		                r->status == FIX_APPLIED     ? "undone"
		                : r->status == FIX_UNCHANGED ? "already as before"
		                                             : fix_status_name(r->status),
		                r->message[0] ? ": " : "", r->message);
	}
}

static json_t *argv_json(char *const *argv)
{
	json_t *a = json_array();

	for (char *const *s = argv; s && *s; s++)
		json_array_append_new(a, json_string(*s));
	return a;
}

json_t *fix_plan_json(const struct netmodel *m, const struct fix_plan *p,
                      struct fix_result *const *results)
{
	json_t *nodes = json_array();

	for (size_t i = 0; i < p->nnodes; i++) {
		const struct fix_node_plan *np = &p->nodes[i];
		json_t *acts = json_array(), *notes = json_array();

		for (size_t k = 0; k < np->nactions; k++) {
			const struct fix_action *a = &np->actions[k];
			json_t *o = json_pack("{sssssssb}", "fixer", a->fixer, "kind",
			                      a->kind == FIX_FILE ? "file" : "command", "summary",
			                      a->summary, "sudo", a->sudo);

			if (a->kind == FIX_FILE) {
				char *d = action_diff(a);

				json_object_set_new(o, "path", json_string(a->path));
				if (a->shared_by)
					json_object_set_new(o, "shared_by",
					                    json_string(a->shared_by));
				json_object_set_new(o, "diff", json_string(d));
				free(d);
			} else {
				json_object_set_new(o, "argv", argv_json(a->argv));
				json_object_set_new(o, "undo", argv_json(a->undo));
			}
			if (results) {
				json_object_set_new(
				    o, "status",
				    json_string(fix_status_name(results[i][k].status)));
				json_object_set_new(o, "message",
				                    json_string(results[i][k].message));
			}
			json_array_append_new(acts, o);
		}
		for (size_t k = 0; k < np->nnotes; k++)
			json_array_append_new(notes, json_string(np->notes[k]));
		json_array_append_new(nodes, json_pack("{sssoso}", "host", m->nodes[i].host,
		                                       "actions", acts, "notes", notes));
	}
	return json_pack("{sissso}", "version", 1, "run", p->run, "nodes", nodes);
}

void fix_print_list_line(FILE *f, const struct fix_journal *j)
{
	/* the nodes the changes reach, not the nodes the run asked */
	size_t nodes = fix_journal_nodes_changed(j), unknown = fix_journal_unknown(j);
	/* a run killed (SIGKILL, a crash) has no stamp, but the intents it sent
	 * without an answer say it stopped before its end */
	int interrupted = j->interrupted || unknown;

	termtext_printf(f, "%s  %zu change%s on %zu node%s", j->run, j->nchanges,
	                j->nchanges == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
	if (j->undo_failed && !j->undone)
		termtext_printf(
		    f, "  (%sundo failed for %zu of %zu; again: clusterdoc fix --undo %s)\n",
		    interrupted ? "interrupted; " : "", j->undo_failed, j->nchanges, j->run);
	else if (interrupted && !j->nchanges)
		fputs("  (interrupted; nothing changed)\n", f);
	else if (interrupted && j->undone)
		fputs("  (interrupted; undone)\n", f);
	else if (interrupted)
		termtext_printf(
		    f,
		    "  (interrupted: %zu of %zu made, %zu of unknown outcome; undo with "
		    "clusterdoc fix --undo %s)\n",
		    j->nchanges - unknown, j->nchanges, unknown, j->run);
	else
		fprintf(f, "%s\n", j->undone ? "  (undone)" : "");
}
