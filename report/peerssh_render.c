/* SPDX-License-Identifier: MIT */
/*
 * peerssh_render.c - the node-to-node SSH report (peerssh_render.h).
 */
#include "peerssh_render.h"
#include "jsondoc.h"
#include "termtext.h"

#include <string.h>

int peerssh_exit_status(const struct peerssh_matrix *m)
{
	if (m->n < 2 || peerssh_matrix_untested(m))
		return 2;
	return peerssh_matrix_failed(m) ? 1 : 0;
}

/* A cell in the matrix: "ok", the reason's words, "-" on the diagonal,
 * "?" when not asked. */
static const char *cell_word(const struct peerssh_matrix *m, size_t i, size_t j)
{
	const struct peerssh_cell *c = peerssh_cell_at(m, i, j);

	if (i == j)
		return "-";
	if (!c->tested)
		return "?";
	return peerssh_reason_text(c->reason);
}

void peerssh_print_text(const struct peerssh_matrix *m, FILE *f)
{
	size_t w = 4, cw = 2, pairs = m->n > 1 ? m->n * (m->n - 1) : 0;
	size_t bad = peerssh_matrix_failed(m), untested = peerssh_matrix_untested(m);
	json_t *findings;
	size_t k;
	json_t *fd;

	for (size_t i = 0; i < m->n; i++) {
		w = strlen(m->hosts[i]) > w ? strlen(m->hosts[i]) : w;
		for (size_t j = 0; j < m->n; j++)
			cw = strlen(cell_word(m, i, j)) > cw ? strlen(cell_word(m, i, j)) : cw;
	}
	cw = cw > w ? cw : w;
	termtext_printf(f, "node-to-node SSH (what mpirun needs): %zu of %zu pairs log in",
	                pairs - bad - untested, pairs);
	if (bad)
		termtext_printf(f, ", %zu fail", bad);
	if (untested)
		termtext_printf(f, ", %zu not tested", untested);
	termtext_printf(f, "\n\n%-*s", (int)w + 5, "from \\ to");
	for (size_t j = 0; j < m->n; j++)
		termtext_printf(f, "  %-*s", (int)cw, m->hosts[j]);
	termtext_printf(f, "\n");
	for (size_t i = 0; i < m->n; i++) {
		termtext_printf(f, "%-*s", (int)w + 5, m->hosts[i]);
		for (size_t j = 0; j < m->n; j++)
			termtext_printf(f, "  %-*s", (int)cw, cell_word(m, i, j));
		termtext_printf(f, "\n");
	}
	if (bad || untested)
		termtext_printf(f, "\nfailing pairs:\n");
	for (size_t i = 0; i < m->n; i++) {
		if (m->node_error[i][0])
			termtext_printf(f, "  %s -> *: not asked: %s\n", m->hosts[i],
			                m->node_error[i]);
		for (size_t j = 0; j < m->n; j++) {
			const struct peerssh_cell *c = peerssh_cell_at(m, i, j);

			if (i == j || !c->tested || c->reason == PEERSSH_OK)
				continue;
			termtext_printf(f, "  %s -> %s: %s%s%s%s\n", m->hosts[i], m->hosts[j],
			                peerssh_reason_text(c->reason),
			                c->detail[0] ? " (ssh: \"" : "", c->detail,
			                c->detail[0] ? "\")" : "");
		}
	}
	findings = peerssh_matrix_findings(m);
	if (json_array_size(findings))
		termtext_printf(f, "\nfindings:\n");
	json_array_foreach(findings, k, fd)
	{
		termtext_printf(f, "  %s %s: %s\n    %s\n    fix: %s\n",
		                json_string_value(json_object_get(fd, "severity")),
		                json_string_value(json_object_get(fd, "id")),
		                json_string_value(json_object_get(fd, "title")),
		                json_string_value(json_object_get(fd, "message")),
		                json_string_value(json_object_get(fd, "fix")));
	}
	json_decref(findings);
}

void peerssh_print_json(const struct peerssh_matrix *m, int exit_status, json_t *fix_take, FILE *f)
{
	json_t *o = json_pack("{sisososi}", "version", 1, "peer_ssh", peerssh_matrix_json(m),
	                      "findings", peerssh_matrix_findings(m), "exit", exit_status);

	if (fix_take)
		json_object_set_new(o, "fix", fix_take);

	jsondoc_dumpf(o, f, JSON_COMPACT);
	fputc('\n', f);
	json_decref(o);
}

json_t *peerssh_fix_json(const struct fix_plan *plan, const char *const *hosts,
                         struct fix_result *const *results, const char *journal_error)
{
	json_t *nodes = json_array();
	size_t failed = 0;

	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct fix_node_plan *np = &plan->nodes[i];
		json_t *acts = json_array(), *notes = json_array();

		for (size_t k = 0; k < np->nactions; k++) {
			json_t *a = json_pack("{s:s?, s:s}", "path", np->actions[k].path, "summary",
			                      np->actions[k].summary);

			if (results) {
				json_object_set_new(
				    a, "status",
				    json_string(fix_status_name(results[i][k].status)));
				json_object_set_new(a, "message",
				                    json_string(results[i][k].message));
				failed += results[i][k].status == FIX_FAILED ||
				          results[i][k].status == FIX_SKIPPED;
			}
			json_array_append_new(acts, a);
		}
		for (size_t k = 0; k < np->nnotes; k++)
			json_array_append_new(notes, json_string(np->notes[k]));
		json_array_append_new(nodes, json_pack("{s:s, s:o, s:o}", "host", hosts[i],
		                                       "actions", acts, "notes", notes));
	}
	return json_pack("{s:s, s:I, s:b, s:I, s:s, s:o}", "run", plan->run, "changes",
	                 (json_int_t)plan->nactions, "applied", results != NULL, "failed",
	                 (json_int_t)failed, "journal_error", journal_error ? journal_error : "",
	                 "nodes", nodes);
}

void peerssh_print_fix_text(const struct fix_plan *plan, const char *const *hosts,
                            struct fix_result *const *results, const char *journal_error,
                            int asking, FILE *f)
{
	termtext_printf(f, "\npeer-ssh fix (%s): %zu change%s %s\n", plan->run, plan->nactions,
	                plan->nactions == 1 ? "" : "s",
	                results  ? "applied"
	                : asking ? "planned"
	                         : "planned (dry run)");
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct fix_node_plan *np = &plan->nodes[i];

		for (size_t k = 0; k < np->nactions; k++)
			termtext_printf(f, "  %s: %s: %s%s%s%s\n", hosts[i], np->actions[k].path,
			                np->actions[k].summary, results ? " [" : "",
			                results ? fix_status_name(results[i][k].status) : "",
			                results ? "]" : "");
		for (size_t k = 0; k < np->nnotes; k++)
			termtext_printf(f, "  %s: note: %s\n", hosts[i], np->notes[k]);
	}
	if (journal_error && *journal_error)
		termtext_printf(f, "journal: %s\n", journal_error);
	if (results && plan->nactions)
		termtext_printf(f, "undo: clusterdoc fix --undo %s\n", plan->run);
	else if (!results && plan->nactions && !asking)
		termtext_printf(f, "apply: clusterdoc mpi-check --fix --apply\n");
}
