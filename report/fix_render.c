/*
 * fix_render.c - the text and JSON of `clusterdoc fix` (fix_render.h).
 */
#include "fix_render.h"

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

		fprintf(f, "%s%.*s\n", indent, (int)n, s);
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

	fprintf(f, "\n%s%s\n", m->nodes[i].host, np->nactions ? "" : ": nothing to change");
	for (size_t k = 0; k < np->nactions; k++) {
		const struct fix_action *a = &np->actions[k];
		const struct fix_result *r = results ? &results[i][k] : NULL;

		fprintf(f, "  [%s]%s %s", a->fixer, a->sudo ? " (root)" : "", a->summary);
		if (a->shared_by)
			fprintf(f, " (one file, shared by %s)", a->shared_by);
		if (r)
			fprintf(f, "  -> %s%s%s", fix_status_name(r->status),
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

			fprintf(f, "    $ %s\n    undo: %s\n", line, undo);
			free(line);
			free(undo);
		}
	}
	for (size_t k = 0; k < np->nnotes && (!results || diffs); k++)
		fprintf(f, "  note: %s\n", np->notes[k]);
}

int fix_print_verify(FILE *f, const struct netmodel *m, const struct fix_plan *p,
                     const struct diagnosis *after, json_t *json_out)
{
	int bad = 0;

	for (size_t i = 0; i < p->nnodes; i++) {
		const struct fix_node_plan *np = &p->nodes[i];

		for (size_t q = 0; q < np->nwanted; q++) {
			const struct fixer *fx = fixer_find(np->wanted[q]);
			char still[CD_ERRLEN + 64] = "";
			const char *how = "verified";

			/* port-range answers no finding: verified when the new check
			 * reads the plan's target range */
			if (strcmp(fx->id, "port-range") == 0 &&
			    (m->nodes[i].port_lo != p->port_lo ||
			     m->nodes[i].port_hi != p->port_hi))
				snprintf(still, sizeof(still),
				         "ip_local_port_range is %d-%d, not %d-%d",
				         m->nodes[i].port_lo, m->nodes[i].port_hi, p->port_lo,
				         p->port_hi);
			for (size_t k = 0; after && k < after->nfindings; k++) {
				const struct finding *fd = &after->findings[k];

				if (finding_names(fd, i) && fd->severity == SEV_ERROR &&
				    fixer_answers(fx, fd->id))
					snprintf(still + strlen(still),
					         sizeof(still) - strlen(still), "%s%s",
					         still[0] ? ", " : "", fd->id);
			}
			if (!after)
				snprintf(still, sizeof(still), "the second check did not run");
			else if (!m->nodes[i].probed)
				snprintf(still, sizeof(still), "not checked: %s",
				         m->nodes[i].error);
			if (still[0]) {
				how = "NOT FIXED: ";
				bad++;
			}
			if (f)
				fprintf(f, "  %-12s %-9s %s%s\n", m->nodes[i].host, fx->id, how,
				        still);
			if (json_out)
				json_array_append_new(
				    json_out,
				    json_pack("{sssssbss}", "node", m->nodes[i].host, "fixer",
				              fx->id, "verified", !still[0], "still", still));
		}
	}
	return bad;
}

void fix_print_undo(FILE *f, const struct fix_journal *j, const struct fix_result *results)
{
	for (size_t k = j->nchanges; k-- > 0;) {
		const struct fix_change *c = &j->changes[k];
		const struct fix_result *r = &results[k];

		fprintf(f, "  %-12s [%s] %s  -> %s%s%s\n", c->host, c->fixer, c->summary,
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
