/* SPDX-License-Identifier: MIT */
/*
 * view_findings.c - the Findings view: what the diagnosis found, worst
 * first, one row each (severity, id, the nodes it names, its message).
 * Enter opens a finding: its title, nodes, message, evidence, what to do,
 * and the `clusterdoc fix` command whose fixers answer it, or a word that
 * it has to be done by hand. `f` plans that fix here and `y` applies it
 * (fix_panel.h).
 */
#include "fix_panel.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#include "fixers/fix.h"
#include "hostlist.h"

/* Columns of the list at 80; wider terminals give the rest to the message. */
#define SEV_W   5
#define ID_W    23
#define NODES_W 14

/* ---------------------------------------------------------------- helpers */

/* The nodes a finding names, folded ("node[1-4]"); free() it. */
static char *finding_hosts(const struct tui *t, const struct finding *f)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN], *fold;

	for (size_t k = 0; k < f->nnodes; k++)
		if (t->s.m && f->nodes[k] < t->s.m->nnodes)
			hostlist_add_arg(hl, t->s.m->nodes[f->nodes[k]].host, err, sizeof(err));
	fold = hostlist_fold(hl);
	hostlist_free(hl);
	return fold;
}

/* Whether the finding passes the filter: its text, or one of its nodes
 * (so that a hostlist filter such as node[3-4] keeps what names them). */
static int finding_visible(const struct tui *t, const struct finding *f)
{
	char *hosts, *text;
	int in;

	if (!t->filter[0])
		return 1;
	hosts = finding_hosts(t, f);
	text = cd_asprintf("%s %s %s", f->id, f->message ? f->message : "", hosts);
	in = ui_filter_match(t, text);
	for (size_t k = 0; k < f->nnodes && !in && t->s.m; k++)
		if (f->nodes[k] < t->s.m->nnodes)
			in = ui_filter_match(t, t->s.m->nodes[f->nodes[k]].host);
	free(text);
	free(hosts);
	return in;
}

/* The findings passing the filter, in the diagnosis's order (worst first). */
static size_t visible(const struct tui *t, size_t *out)
{
	const struct diagnosis *d = t->s.d;
	size_t n = 0;

	for (size_t k = 0; d && k < d->nfindings; k++)
		if (finding_visible(t, &d->findings[k]))
			out[n++] = k;
	return n;
}

static size_t count_visible(const struct tui *t)
{
	size_t *vis, n;

	if (!t->s.d)
		return 0;
	vis = cd_calloc(t->s.d->nfindings + 1, sizeof(*vis));
	n = visible(t, vis);
	free(vis);
	return n;
}

static enum ui_color severity_color(enum severity s)
{
	return s == SEV_ERROR ? UI_FAIL : s == SEV_WARNING ? UI_WARN : UI_DIM;
}

static const char *severity_word(enum severity s)
{
	return s == SEV_ERROR ? "ERROR" : s == SEV_WARNING ? "WARN" : "INFO";
}

static const char *catalogue_title(const char *id)
{
	for (size_t k = 0; k < finding_catalogue_len; k++)
		if (strcmp(finding_catalogue[k].id, id) == 0)
			return finding_catalogue[k].title;
	return NULL;
}

/* "3 errors, 2 warnings, 1 info" */
static void counts_line(const struct diagnosis *d, char *buf, size_t len)
{
	size_t n[3] = {0};

	for (size_t k = 0; k < d->nfindings; k++)
		if ((unsigned)d->findings[k].severity < 3)
			n[d->findings[k].severity]++;
	snprintf(buf, len, "%zu error%s, %zu warning%s, %zu info", n[SEV_ERROR],
	         n[SEV_ERROR] == 1 ? "" : "s", n[SEV_WARNING], n[SEV_WARNING] == 1 ? "" : "s",
	         n[SEV_INFO]);
}

/* ---------------------------------------------------------------- fix command */

/* The session's check options that `clusterdoc fix` must repeat to check
 * the same way: --master, --port, --probe-timeout when not the defaults. */
static void check_options(const struct tui *t, char *buf, size_t len)
{
	const struct netcheck_opts *o = &t->s.o.check;
	struct netcheck_opts def;
	size_t off = 0;

	netcheck_opts_init(&def);
	buf[0] = 0;
	if (o->master != def.master && o->master < t->s.nhosts)
		off +=
		    (size_t)snprintf(buf + off, len - off, " --master %s", t->s.hosts[o->master]);
	if (o->master_port != def.master_port && off < len)
		off += (size_t)snprintf(buf + off, len - off, " --port %d", o->master_port);
	if (o->probe_timeout_ms != def.probe_timeout_ms && off < len)
		snprintf(buf + off, len - off, " --probe-timeout %d", o->probe_timeout_ms);
}

/* The fixers answering the finding, and the command that applies them on
 * the session's nodes: the fix checks again on every node (the interfaces
 * are verified against all of them) and changes only those its findings
 * name. */
static void fix_text(struct tui *t, const struct finding *f, struct ui_text *x)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN], only[256], opts[256];
	char *all;

	ui_text_add(x, A_BOLD, 0, "Apply with clusterdoc");
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_answers_finding(&fixer_table[k], f))
			ui_text_add(x, A_NORMAL, 2, "fixer %-9s %s", fixer_table[k].id,
			            fixer_table[k].title);
	if (!fix_fixers_for(f, only, sizeof(only))) {
		ui_text_add(x, ui_attr(t, UI_WARN), 2, "no automatic fix: do it by hand");
		hostlist_free(hl);
		return;
	}
	for (size_t i = 0; i < t->s.nhosts; i++)
		hostlist_add_arg(hl, t->s.hosts[i], err, sizeof(err));
	all = hostlist_fold(hl);
	check_options(t, opts, sizeof(opts));
	ui_text_add(x, A_BOLD, 2,
	            "f shows the plan here (diffs, commands; nothing changes), "
	            "then y applies it");
	ui_text_add(x, A_NORMAL, 2, "or: clusterdoc fix -w %s%s%s%s --only %s --apply",
	            strpbrk(all, "[]*?") ? "'" : "", all, strpbrk(all, "[]*?") ? "'" : "", opts,
	            only);
	ui_text_add(x, ui_attr(t, UI_DIM), 2,
	            "without --apply it shows the plan and changes nothing");
	free(all);
	hostlist_free(hl);
}

/* ---------------------------------------------------------------- detail */

static void detail_text(struct tui *t, const struct finding *f, int w, struct ui_text *x)
{
	const char *title = catalogue_title(f->id);
	char *hosts = finding_hosts(t, f);

	ui_text_add(x, A_BOLD, 0, "%s  %s", severity_word(f->severity), f->id);
	if (title)
		ui_text_add(x, A_NORMAL, 2, "%s", title);
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, ui_attr(t, severity_color(f->severity)), 2, "severity  %s",
	            severity_name(f->severity));
	ui_text_add(x, A_NORMAL, 2, "nodes     %zu: %s", f->nnodes, f->nnodes ? hosts : "-");
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_NORMAL, 2, "%s", f->message);
	if (f->evidence && *f->evidence) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, A_BOLD, 0, "Evidence");
		ui_text_add(x, A_NORMAL, 2, "%s", f->evidence);
	}
	if (f->fix && *f->fix) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, A_BOLD, 0, "Fix");
		ui_text_add(x, A_NORMAL, 2, "%s", f->fix);
	}
	ui_text_add(x, A_NORMAL, 0, " ");
	fix_text(t, f, x);
	free(hosts);
}

/* ---------------------------------------------------------------- list */

/* The nodes cell: "1 node4", "4 node[1-4]", or "12 nodes" when too long;
 * *msg is the message without the "HOSTS: " it starts with, which the
 * cell already shows. */
static void nodes_cell(const struct tui *t, const struct finding *f, int width, char *buf,
                       size_t len, const char **msg)
{
	char *hosts = finding_hosts(t, f);
	size_t hl = strlen(hosts);

	*msg = f->message ? f->message : "";
	if (hl && strncmp(*msg, hosts, hl) == 0 && (*msg)[hl] == ':' && (*msg)[hl + 1] == ' ')
		*msg += hl + 2;
	if (!f->nnodes)
		snprintf(buf, len, "-");
	else if ((int)snprintf(buf, len, "%zu %s", f->nnodes, hosts) > width)
		snprintf(buf, len, "%zu nodes", f->nnodes);
	free(hosts);
}

static void draw_row(struct tui *t, const struct finding *f, int row, int sel, int w, int wn)
{
	int base = sel ? ui_attr(t, UI_SEL) : (int)A_NORMAL, x = 1;
	char nodes[128];
	const char *msg;

	if (sel) {
		attron(base);
		mvhline(row, 0, ' ', w);
		attroff(base);
	}
	nodes_cell(t, f, wn, nodes, sizeof(nodes), &msg);
	x += ui_print(row, x, SEV_W + 1, sel ? base : ui_attr(t, severity_color(f->severity)),
	              "%-*s ", SEV_W, severity_word(f->severity));
	x += ui_print(row, x, ID_W + 1, base, "%-*s ", ID_W, f->id);
	x += ui_print(row, x, wn + 1, base, "%-*s ", wn, nodes);
	ui_print(row, x, w - x, base, "%s", msg);
}

static void draw_list(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct diagnosis *d = t->s.d;
	size_t *vis = cd_calloc(d->nfindings + 1, sizeof(*vis));
	size_t n = visible(t, vis);
	int wn = NODES_W + (w > 80 ? (w - 80) / 4 : 0);
	char counts[128];

	counts_line(d, counts, sizeof(counts));
	if (!d->nfindings) {
		ui_print(y + 1, 2, w - 3, ui_attr(t, UI_OK), "%s",
		         "no findings: the network is ready for NCCL and Gloo");
		free(vis);
		return;
	}
	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%s", counts);
	if (n < d->nfindings)
		ui_print(y, 2 + (int)strlen(counts), w - 3 - (int)strlen(counts),
		         ui_attr(t, UI_WARN), "(%zu shown by the filter)", n);
	ui_print(y + 1, 1, w - 1, ui_attr(t, UI_TITLE), "%-*s %-*s %-*s %s", SEV_W, "SEV", ID_W,
	         "ID", wn, "NODES", "MESSAGE");
	if (!n) {
		ui_print(y + 3, 2, w - 3, ui_attr(t, UI_DIM),
		         "no finding matches the filter (Esc clears it)");
		free(vis);
		return;
	}
	ui_scroll(&vs->sel, &vs->top, n, h - 2);
	for (int r = 0; r < h - 2 && vs->top + (size_t)r < n; r++)
		draw_row(t, &d->findings[vis[vs->top + (size_t)r]], y + 2 + r,
		         vs->top + (size_t)r == vs->sel, w, wn);
	free(vis);
}

/* ---------------------------------------------------------------- view */

static size_t rows(struct tui *t, struct view_state *vs)
{
	return vs->drill ? 0 : count_visible(t); /* a detail and the fix panel scroll */
}

/* The diagnosis index of the selected finding, or -1. */
static long selected_finding(struct tui *t, struct view_state *vs)
{
	size_t *vis, n;
	long k = -1;

	if (!t->s.d)
		return -1;
	vis = cd_calloc(t->s.d->nfindings + 1, sizeof(*vis));
	n = visible(t, vis);
	if (vs->sel < n)
		k = (long)vis[vs->sel];
	free(vis);
	return k;
}

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct diagnosis *d = t->s.d;

	if (vs->mode && t->s.fix.state != FIXFLOW_IDLE) {
		fix_panel_draw(t, vs, y, h, w);
		return;
	}
	if (vs->mode) /* the flow was closed elsewhere (new hosts) */
		vs->mode = vs->drill = 0;
	if (!d) {
		ui_draw_check_waiting(t, y, w, "findings appear");
		return;
	}
	if (vs->drill) {
		size_t *vis = cd_calloc(d->nfindings + 1, sizeof(*vis));
		size_t n = visible(t, vis);
		struct ui_text x = {0};

		if (vs->sel < n)
			detail_text(t, &d->findings[vis[vs->sel]], w, &x);
		else
			ui_text_add(&x, ui_attr(t, UI_DIM), 1,
			            "this finding is gone (Esc goes back)");
		ui_text_draw(&x, y, h, w, &vs->scroll);
		ui_text_free(&x);
		free(vis);
		return;
	}
	draw_list(t, vs, y, h, w);
}

/* G in a detail goes to its end (the screen scrolls j/k/g there;
 * ui_text_draw keeps the scroll inside the text). */
static int key(struct tui *t, struct view_state *vs, int ch)
{
	long k;

	if (vs->mode && t->s.fix.state != FIXFLOW_IDLE)
		return fix_panel_key(t, vs, ch);
	if (ch == 'f') {
		if (fix_panel_reopen(t, vs))
			return 1;
		k = selected_finding(t, vs);
		if (k < 0)
			ui_message(t, 1, "no finding selected");
		else
			fix_panel_open(t, vs, (size_t)k);
		return 1;
	}
	if (vs->drill && (ch == 'G' || ch == KEY_END)) {
		vs->scroll = 1 << 20;
		return 1;
	}
	return 0;
}

static int enter(struct tui *t, struct view_state *vs)
{
	return count_visible(t) > 0;
}

const struct view view_findings = {
    .name = "Findings",
    .hint = "f plan the fix, y apply it; Enter evidence and fix; r re-run",
    .rerun = RERUN_CHECK,
    .draw = draw,
    .rows = rows,
    .key = key,
    .enter = enter,
};
