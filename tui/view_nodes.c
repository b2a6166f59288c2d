/* SPDX-License-Identifier: MIT */
/*
 * view_nodes.c - the Nodes view: one row per node with its live state
 * (queued, connecting, auth, starting, probing, matrix, ok, failed and
 * why), hostname, OS, GPUs, torch and NCCL, and its number of findings.
 * `c` shows the facts grouped as clubak does: one line per distinct value
 * with the nodes that share it, folded into a hostlist. Enter opens a
 * node: everything known about it, its error, the findings naming it.
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* The nodes passing the filter, in order; returns how many. */
static size_t visible(struct tui *t, size_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < t->s.nhosts; i++) {
		const char *h = t->s.hosts[i];
		const struct nm_node *nd = t->s.m ? &t->s.m->nodes[i] : NULL;

		if (ui_filter_match(t, h) ||
		    (nd && nd->hostname[0] && ui_filter_match(t, nd->hostname)))
			out[n++] = i;
	}
	return n;
}

/* The state word of node i: "ok", "failed: refused", "probing"... */
static void state_word(struct tui *t, size_t i, char *buf, size_t len, enum ui_color *c)
{
	const struct tui_session *s = &t->s;
	enum netcheck_stage st = session_node_stage(s, i);
	const struct nm_node *n = s->m ? &s->m->nodes[i] : NULL;

	*c = ui_stage_color(st);
	if (s->check_state == TASK_IDLE || !n) {
		snprintf(buf, len, "not checked");
		*c = UI_DIM;
	} else if (st == NCS_FAILED) {
		snprintf(buf, len, "FAIL %s", n->error_code[0] ? n->error_code : "failed");
	} else if (st == NCS_DONE) {
		snprintf(buf, len, n->error[0] ? "partial" : "ok");
		*c = n->error[0] ? UI_WARN : UI_OK;
	} else {
		snprintf(buf, len, "%s...", netcheck_stage_name(st));
	}
}

/* "2.1.2/2.18.1", "-" parts when unknown */
static void torch_nccl(const struct nm_node *n, char *buf, size_t len)
{
	/* "2.1.2+cu121" -> "2.1.2": the local part is in the node's detail */
	int tlen = (int)strcspn(n->torch_version, "+");

	if (n->torch_version[0])
		snprintf(buf, len, "%.*s/%s", tlen, n->torch_version,
		         n->nccl_version[0] ? n->nccl_version : "-");
	else
		snprintf(buf, len, "%s/%s", n->torch_known ? "none" : "-",
		         n->nccl_version[0] ? n->nccl_version : "-");
}

/* ---------------------------------------------------------------- GPU health */

/* The GPU findings in a word the GPU column has room for. */
static const struct {
	const char *id, *word;
} gpu_words[] = {
    {"gpu-missing", "missing"},
    {"gpu-ecc-uncorrectable", "ecc"},
    {"gpu-row-remap-pending", "remap"},
    {"gpu-retired-pages-pending", "retired"},
    {"gpu-row-remap-failure", "remap!"},
    {"gpu-xid", "xid"},
    {"gpu-pcie-degraded", "pcie"},
    {"gpu-nvlink-down", "nvlink"},
    {"gpu-throttled", "clocks"},
    {"gpu-persistence-off", "persist"},
    {"gpu-mig-mismatch", "mig"},
    {"gpu-nic-far", "nic-far"},
    {"gpu-slow", "slow"},
};

static const char *gpu_word(const char *id)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(gpu_words); k++)
		if (strcmp(gpu_words[k].id, id) == 0)
			return gpu_words[k].word;
	return id + 4; /* "gpu-" */
}

/*
 * The GPU column of node n: its GPU count, then its worst GPU finding and
 * how many more ("8 ecc+2"), or "ok" once the check found none ("8 ok"); a
 * node without GPUs is "0". *c: the worst finding's colour.
 */
static void gpu_health(struct tui *t, size_t i, const struct nm_node *n, char *buf, size_t len,
                       enum ui_color *c)
{
	const struct finding *worst;
	size_t more = session_node_gpu_findings(&t->s, i, &worst);

	*c = UI_OK;
	if (!worst) {
		snprintf(buf, len, n->gpus && t->s.d ? "%d ok" : "%d", n->gpus);
		return;
	}
	*c = worst->severity == SEV_ERROR ? UI_FAIL : UI_WARN;
	if (more > 1)
		snprintf(buf, len, "%d %s+%zu", n->gpus, gpu_word(worst->id), more - 1);
	else
		snprintf(buf, len, "%d %s", n->gpus, gpu_word(worst->id));
}

/* The detail's GPU health: each GPU finding naming the node, worst first. */
static void gpu_lines(struct tui *t, size_t i, struct ui_text *x)
{
	const struct diagnosis *d = t->s.d;

	for (size_t k = 0; d && k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k]; /* worst first (struct diagnosis) */

		if (strncmp(f->id, "gpu-", 4) == 0 && finding_names(f, i))
			ui_text_add(x, A_NORMAL, 2, "gpu?      %s (%s): %s", f->id,
			            severity_name(f->severity), f->message);
	}
}

/* ---------------------------------------------------------------- grouped */

enum fact { F_STATE, F_OS, F_KERNEL, F_PYTHON, F_TORCH, F_NCCL, F_GPUS, F_NFACTS };
static const char *const fact_names[] = {"state", "os",   "kernel", "python",
                                         "torch", "nccl", "gpus"};

static void fact_value(struct tui *t, size_t i, enum fact f, char *buf, size_t len)
{
	const struct nm_node *n = t->s.m ? &t->s.m->nodes[i] : NULL;
	enum ui_color c;

	if (f == F_STATE) {
		state_word(t, i, buf, len, &c);
		return;
	}
	if (!n || !n->probed) {
		snprintf(buf, len, "(not probed)");
		return;
	}
	switch (f) {
	case F_OS:
		snprintf(buf, len, "%s", n->os[0] ? n->os : "(unknown)");
		break;
	case F_KERNEL:
		snprintf(buf, len, "%s", n->kernel[0] ? n->kernel : "(unknown)");
		break;
	case F_PYTHON:
		snprintf(buf, len, "%s", n->python_version[0] ? n->python_version : "(none)");
		break;
	case F_TORCH:
		snprintf(buf, len, "%s",
		         n->torch_version[0] ? n->torch_version
		                             : (n->torch_known ? "(none)" : "(unknown)"));
		break;
	case F_NCCL:
		snprintf(buf, len, "%s", n->nccl_version[0] ? n->nccl_version : "(none)");
		break;
	case F_GPUS: {
		enum ui_color gc;

		gpu_health(t, i, n, buf, len, &gc);
		break;
	}
	default:
		buf[0] = 0;
	}
}

/* The grouped lines: for each fact, each distinct value with its nodes. */
static void grouped_text(struct tui *t, struct ui_text *x)
{
	size_t *vis = cd_calloc(t->s.nhosts + 1, sizeof(*vis));
	size_t nvis = visible(t, vis);
	char(*vals)[160] = cd_calloc(nvis + 1, sizeof(*vals));
	int *done = cd_calloc(nvis + 1, sizeof(*done));

	ui_text_add(x, A_BOLD, 0, "%-8s %-24s %s", "FACT", "NODES", "VALUE");
	for (int f = 0; f < F_NFACTS; f++) {
		int first = 1;

		for (size_t k = 0; k < nvis; k++) {
			fact_value(t, vis[k], (enum fact)f, vals[k], sizeof(vals[k]));
			done[k] = 0;
		}
		for (size_t k = 0; k < nvis; k++) {
			struct hostlist *hl;
			char *fold;

			if (done[k])
				continue;
			hl = hostlist_new();
			for (size_t q = k; q < nvis; q++) {
				if (!done[q] && strcmp(vals[q], vals[k]) == 0) {
					char err[CD_ERRLEN];

					done[q] = 1;
					hostlist_add_arg(hl, t->s.hosts[vis[q]], err, sizeof(err));
				}
			}
			fold = hostlist_fold(hl);
			ui_text_add(x, A_NORMAL, 0, "%-8s %-24s %s", first ? fact_names[f] : "",
			            fold, vals[k]);
			first = 0;
			free(fold);
			hostlist_free(hl);
		}
	}
	free(done);
	free(vals);
	free(vis);
}

/* ---------------------------------------------------------------- detail */

static void detail_text(struct tui *t, size_t i, struct ui_text *x)
{
	const struct tui_session *s = &t->s;
	const struct nm_node *n = s->m ? &s->m->nodes[i] : NULL;
	char word[64];
	enum ui_color c;

	state_word(t, i, word, sizeof(word), &c);
	ui_text_add(x, A_BOLD, 0, "%s  %s", s->hosts[i], word);
	if (!n)
		return;
	if (n->hostname[0])
		ui_text_add(x, A_NORMAL, 2, "hostname  %s", n->hostname);
	if (n->os[0])
		ui_text_add(x, A_NORMAL, 2, "os        %s, kernel %s", n->os, n->kernel);
	if (n->probed) {
		ui_text_add(x, A_NORMAL, 2, "python    %s",
		            n->python_version[0] ? n->python_version : "(none)");
		ui_text_add(x, A_NORMAL, 2, "torch     %s",
		            n->torch_version[0] ? n->torch_version
		                                : (n->torch_known ? "(none)" : "(unknown)"));
		ui_text_add(x, A_NORMAL, 2, "nccl      %s",
		            n->nccl_version[0] ? n->nccl_version : "(none)");
		ui_text_add(x, A_NORMAL, 2, "gpus      %d", n->gpus);
		gpu_lines(t, i, x);
		ui_text_add(x, A_NORMAL, 2, "firewall  %s",
		            n->firewall_summary[0] ? n->firewall_summary : "(none seen)");
		if (n->python_error[0])
			ui_text_add(x, A_NORMAL, 2, "python?   %s", n->python_error);
	}
	if (n->error[0]) {
		ui_text_add(x, A_BOLD, 0, " ");
		ui_text_add(x, A_BOLD, 0, "Error (%s)",
		            n->error_code[0] ? n->error_code : "partial");
		ui_text_add(x, A_NORMAL, 2, "%s", n->error);
	}
	if (n->hostkey_fp[0])
		ui_text_add(x, A_NORMAL, 2, "host key offered: %s %s", n->hostkey_type,
		            n->hostkey_fp);
	if (!s->d)
		return;
	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, A_BOLD, 0, "Findings naming %s: %zu", s->hosts[i],
	            session_node_findings(s, i));
	for (size_t k = 0; k < s->d->nfindings; k++) {
		const struct finding *f = &s->d->findings[k];

		if (!finding_names(f, i))
			continue;
		ui_text_add(x, ui_attr(t, f->severity == SEV_ERROR ? UI_FAIL : UI_WARN), 2,
		            "%-7s %s", severity_name(f->severity), f->id);
		ui_text_add(x, A_NORMAL, 10, "%s", f->message);
	}
}

/* ---------------------------------------------------------------- view */

static size_t rows(struct tui *t, struct view_state *vs)
{
	size_t *vis;
	size_t n;

	if (vs->drill || vs->mode)
		return 0; /* a text: it scrolls */
	vis = cd_calloc(t->s.nhosts + 1, sizeof(*vis));
	n = visible(t, vis);
	free(vis);
	return n;
}

static void draw_list(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	size_t *vis = cd_calloc(t->s.nhosts + 1, sizeof(*vis));
	size_t n = visible(t, vis);
	int extra = w > 80 ? w - 80 : 0;
	int wn = 10 + extra / 4, wst = 14 + extra / 4, whn = 10, wos = 9 + extra / 2, wtn = 16;
	int wg = 9; /* "8 persist", "8 ecc+2"; a longer one is cut at its end */

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%-*s %-*s %-*s %-*s %-*s %-*s %4s", wn, "NODE",
	         wst, "STATE", whn, "HOSTNAME", wos, "OS", wg, "GPU", wtn, "TORCH/NCCL", "FIND");
	if (!n) {
		ui_print(y + 2, 2, w - 3, ui_attr(t, UI_DIM), "%s",
		         t->s.nhosts ? "no node matches the filter (Esc clears it)"
		                     : "no nodes yet: press H and give a hostlist");
		free(vis);
		return;
	}
	ui_scroll(&vs->sel, &vs->top, n, h - 1);
	for (int r = 0; r < h - 1 && vs->top + (size_t)r < n; r++) {
		size_t i = vis[vs->top + (size_t)r];
		const struct nm_node *nd = t->s.m ? &t->s.m->nodes[i] : NULL;
		int row = y + 1 + r, sel = vs->top + (size_t)r == vs->sel;
		int base = sel ? ui_attr(t, UI_SEL) : (int)A_NORMAL, x = 1;
		char word[64], tn[128], findings[16], gpu[32];
		enum ui_color c, gc;

		state_word(t, i, word, sizeof(word), &c);
		if (sel) {
			attron(base);
			mvhline(row, 0, ' ', w);
			attroff(base);
		}
		x += ui_print(row, x, wn + 1, base, "%-*s ", wn, t->s.hosts[i]);
		x += ui_print(row, x, wst + 1, sel ? base : ui_attr(t, c), "%-*s ", wst, word);
		if (nd && nd->probed) {
			torch_nccl(nd, tn, sizeof(tn));
			snprintf(findings, sizeof(findings), "%zu",
			         session_node_findings(&t->s, i));
			gpu_health(t, i, nd, gpu, sizeof(gpu), &gc);
			x += ui_print(row, x, w - x, base, "%-*.*s %-*.*s ", whn, whn, nd->hostname,
			              wos, wos, nd->os_short);
			x += ui_print(row, x, w - x, sel || gc == UI_OK ? base : ui_attr(t, gc),
			              "%-*.*s ", wg, wg, gpu);
			ui_print(row, x, w - x, base, "%-*.*s %4s", wtn, wtn, tn,
			         t->s.d ? findings : "");
		} else if (nd && nd->error[0] && c == UI_FAIL) {
			ui_print(row, x, w - x, sel ? base : ui_attr(t, UI_DIM), "%s", nd->error);
		}
	}
	free(vis);
}

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	struct ui_text x = {0};

	if (vs->drill) {
		size_t *vis = cd_calloc(t->s.nhosts + 1, sizeof(*vis));
		size_t n = visible(t, vis);

		if (vs->sel < n)
			detail_text(t, vis[vs->sel], &x);
		ui_text_draw(&x, y, h, w, &vs->scroll);
		free(vis);
	} else if (vs->mode) {
		grouped_text(t, &x);
		ui_text_draw(&x, y, h, w, &vs->scroll);
	} else {
		draw_list(t, vs, y, h, w);
	}
	ui_text_free(&x);
}

static int key(struct tui *t, struct view_state *vs, int ch)
{
	if (ch == 'c' && !vs->drill) {
		vs->mode = !vs->mode;
		vs->scroll = 0;
		return 1;
	}
	if (ch == 27 && vs->mode && !vs->drill) {
		vs->mode = 0;
		return 1;
	}
	return 0;
}

static int enter(struct tui *t, struct view_state *vs)
{
	return !vs->mode && rows(t, vs) > 0;
}

const struct view view_nodes = {
    .name = "Nodes",
    .hint = "Enter node detail; c group identical facts (clubak); r re-run the check",
    .rerun = RERUN_CHECK,
    .draw = draw,
    .rows = rows,
    .key = key,
    .enter = enter,
};
