/* SPDX-License-Identifier: MIT */
/*
 * view_network.c - the Network view: each node's interfaces and addresses
 * with what NCCL and Gloo would pick on it, picks the reachability matrix
 * did not reach marked; `m` shows the matrix itself as a grid of
 * from -> to cells (j/k rows, h/l columns). Enter opens a node's whole
 * probe (the list) or every attempt between two nodes with the routes,
 * firewall rules and findings that explain them (the grid); those texts
 * are built in view_network_detail.c, and the grid is drawn by
 * view_network_grid.c.
 */
#include "view_network.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The nodes passing the filter, in order; returns how many. */
static size_t visible(const struct tui *t, size_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < t->s.nhosts; i++) {
		const struct nm_node *nd = t->s.m && i < t->s.m->nnodes ? &t->s.m->nodes[i] : NULL;

		if (ui_filter_match(t, t->s.hosts[i]) ||
		    (nd && nd->hostname[0] && ui_filter_match(t, nd->hostname)))
			out[n++] = i;
	}
	return n;
}

size_t *netview_visible_new(const struct tui *t, size_t *n)
{
	size_t *vis = cd_calloc(t->s.nhosts + 1, sizeof(*vis));

	*n = visible(t, vis);
	return vis;
}

/* ---------------------------------------------------------------- picks */

/* The diagnosis' prediction for node i, NULL before it or when i failed. */
const struct node_prediction *netview_prediction(const struct tui *t, size_t i)
{
	const struct tui_session *s = &t->s;

	if (!s->d || !s->m || i >= s->d->nnodes || !s->m->nodes[i].probed)
		return NULL;
	return &s->d->pred[i];
}

int netview_picks_hold(const struct net_pick *p, int n, const char *addr)
{
	for (int k = 0; k < n; k++)
		if (strcmp(p[k].addr, addr) == 0)
			return 1;
	return 0;
}

/* Whether NCCL (its transport or bootstrap) or Gloo would use addr. */
int netview_pick_used(const struct node_prediction *p, const char *addr)
{
	return netview_picks_hold(p->nccl.picks, p->nccl.npicks, addr) ||
	       netview_picks_hold(p->bootstrap.picks, p->bootstrap.npicks, addr) ||
	       netview_picks_hold(p->gloo.picks, p->gloo.npicks, addr);
}

/* Why peers cannot use addr on node i ("loopback", the first failed
 * result), or NULL when the matrix saw nothing wrong. */
const char *netview_pick_trouble(const struct tui *t, size_t i, const char *addr, char *buf,
                                 size_t len)
{
	switch (diagnose_addr_reach(t->s.m, i, addr, 0, 0, buf, len)) {
	case REACH_LOOPBACK:
		return "loopback";
	case REACH_SOME_BAD:
		return buf;
	default:
		return NULL;
	}
}

/* ---------------------------------------------------------------- segments */

/* One screen line built from pieces with their own attribute. */
struct seg_line {
	struct {
		char text[NM_NAME + NM_ADDR + 48];
		int attr;
	} s[48];
	int n, len;
};

static void seg_add(struct seg_line *l, int attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seg_add(struct seg_line *l, int attr, const char *fmt, ...)
{
	va_list ap;

	if (l->n == (int)CD_ARRAY_LEN(l->s))
		return;
	va_start(ap, fmt);
	vsnprintf(l->s[l->n].text, sizeof(l->s[0].text), fmt, ap);
	va_end(ap);
	l->s[l->n].attr = attr;
	l->len += (int)strlen(l->s[l->n].text);
	l->n++;
}

static void seg_draw(const struct seg_line *l, int row, int w, int extra)
{
	for (int k = 0, x = 1; k < l->n && x < w; k++)
		x += ui_print(row, x, w - x, l->s[k].attr | extra, "%s", l->s[k].text);
}

/* ---------------------------------------------------------------- the list */

int netview_host_width(const struct tui *t)
{
	int hw = 5;

	for (size_t i = 0; i < t->s.nhosts; i++)
		if ((int)strlen(t->s.hosts[i]) > hw)
			hw = (int)strlen(t->s.hosts[i]);
	return hw < 16 ? hw : 16;
}

/* "NCCL eth0 10.0.0.11, ens6 2001:db8::11 !no-route". The short form
 * keeps only the interface names of the picks after the first, and of a
 * first pick on address `known` (shown already). */
static void picks_segs(struct tui *t, size_t i, const char *label, const struct net_pick *pk, int n,
                       const char *error, int short_form, const char *known, struct seg_line *l)
{
	seg_add(l, ui_attr(t, UI_TITLE), "%s ", label);
	if (!n)
		seg_add(l, ui_attr(t, UI_FAIL), "FAIL %s", error[0] ? error : "no interface");
	for (int k = 0; k < n; k++) {
		char worst[32];
		const char *why = netview_pick_trouble(t, i, pk[k].addr, worst, sizeof(worst));

		seg_add(l, A_NORMAL, "%s%s", k ? ", " : "", pk[k].ifname);
		if (!short_form || (k == 0 && strcmp(pk[k].addr, known) != 0))
			seg_add(l, A_NORMAL, " %s", pk[k].addr);
		if (why)
			seg_add(l, ui_attr(t, UI_FAIL), " !%s", why);
	}
}

static void header_segs(struct tui *t, size_t i, int short_form, struct seg_line *l)
{
	const struct nm_node *n = &t->s.m->nodes[i];
	const struct node_prediction *p = netview_prediction(t, i);

	seg_add(l, A_BOLD, "%-*s  ", netview_host_width(t), t->s.hosts[i]);
	if (!n->probed && n->error[0]) {
		seg_add(l, ui_attr(t, UI_FAIL), "FAIL %s", n->error_code[0] ? n->error_code : "");
		return;
	}
	if (!n->probed) {
		seg_add(l, ui_attr(t, UI_RUN), "%s...",
		        netcheck_stage_name(session_node_stage(&t->s, i)));
		return;
	}
	if (!p) {
		seg_add(l, ui_attr(t, UI_DIM), "picks: after the check");
		return;
	}
	if (p->nccl.cannot_predict) {
		seg_add(l, ui_attr(t, UI_TITLE), "NCCL ");
		seg_add(l, ui_attr(t, UI_WARN), "cannot tell: %s", p->nccl.error);
	} else {
		picks_segs(t, i, "NCCL", p->nccl.picks, p->nccl.npicks, p->nccl.error, short_form,
		           "", l);
	}
	if (p->bootstrap.npicks && p->nccl.npicks &&
	    strcmp(p->bootstrap.picks[0].addr, p->nccl.picks[0].addr) != 0)
		picks_segs(t, i, "  boot", p->bootstrap.picks, 1, "", short_form, "", l);
	picks_segs(t, i, "  Gloo", p->gloo.picks,
	           p->gloo.npicks > 1 && short_form ? 1 : p->gloo.npicks, p->gloo.error, short_form,
	           p->nccl.npicks ? p->nccl.picks[0].addr : "", l);
}

const char *netview_iface_state(const struct nm_iface *f)
{
	return !f->up ? "down" : f->running ? "up" : "nolink";
}

static void iface_segs(struct tui *t, size_t i, const struct nm_iface *f, int wide,
                       struct seg_line *l)
{
	const struct nm_node *n = &t->s.m->nodes[i];
	const struct node_prediction *p = netview_prediction(t, i);
	int naddr = 0;

	seg_add(l, A_NORMAL, "  %-8s ", f->name);
	seg_add(l, ui_attr(t, f->up && f->running ? UI_NORMAL : UI_WARN), "%-6s ",
	        netview_iface_state(f));
	seg_add(l, A_NORMAL, "%5d %-6.6s ", f->mtu, f->kind[0] ? f->kind : "?");
	for (size_t a = 0; a < n->naddrs; a++) {
		const struct nm_addr *x = &n->addrs[a];
		char worst[32];
		const char *why;

		if (strcmp(x->ifname, f->name) != 0)
			continue;
		why = p && netview_pick_used(p, x->addr)
		          ? netview_pick_trouble(t, i, x->addr, worst, sizeof(worst))
		          : NULL;
		seg_add(l, A_NORMAL, "%s%s/%d", naddr ? "  " : " ", x->addr, x->prefix);
		if (strcmp(x->scope, "global") != 0 && (wide || strcmp(x->scope, "link") != 0))
			seg_add(l, ui_attr(t, UI_DIM), " %s", x->scope);
		if (why)
			seg_add(l, ui_attr(t, UI_FAIL), " !unreachable");
		naddr++;
	}
	if (!naddr)
		seg_add(l, ui_attr(t, UI_DIM), " (no address)");
}

/* Lines node i takes in the list: its header, then one per interface. */
static size_t block_lines(const struct tui *t, size_t i)
{
	const struct nm_node *n = &t->s.m->nodes[i];
	size_t k = 0;

	if (!n->probed)
		return n->error[0] ? 2 : 1;
	for (size_t f = 0; f < n->nifaces; f++)
		k += !n->ifaces[f].loopback;
	return 1 + (k ? k : 1);
}

static void draw_block(struct tui *t, size_t i, int sel, int *row, int end, int w)
{
	const struct nm_node *n = &t->s.m->nodes[i];
	struct seg_line l = {0};
	int shown = 0;

	header_segs(t, i, 0, &l);
	if (l.len > w - 1) {
		memset(&l, 0, sizeof(l));
		header_segs(t, i, 1, &l);
	}
	if (sel) {
		attron(ui_attr(t, UI_SEL));
		mvhline(*row, 0, ' ', w);
		attroff(ui_attr(t, UI_SEL));
	}
	seg_draw(&l, (*row)++, w, sel ? ui_attr(t, UI_SEL) : 0);
	if (!n->probed) {
		if (n->error[0] && *row < end)
			ui_print((*row)++, 3, w - 4, ui_attr(t, UI_FAIL), "%s", n->error);
		return;
	}
	for (size_t f = 0; f < n->nifaces && *row < end; f++) {
		if (n->ifaces[f].loopback)
			continue;
		memset(&l, 0, sizeof(l));
		iface_segs(t, i, &n->ifaces[f], w >= 100, &l);
		seg_draw(&l, (*row)++, w, 0);
		shown++;
	}
	if (!shown && *row < end)
		ui_print((*row)++, 3, w - 4, ui_attr(t, UI_DIM), "(no interface besides lo)");
}

static void draw_list(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	size_t n, *vis = netview_visible_new(t, &n);
	int row = y + 1, end = y + h, hw = netview_host_width(t);

	ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%-*s  %s", hw, "NODE",
	         "INTERFACES, ADDRESSES; WHAT NCCL/GLOO PICK   m matrix");
	if (!n) {
		ui_print(y + 2, 2, w - 3, ui_attr(t, UI_DIM),
		         "no node matches the filter (Esc clears it)");
		free(vis);
		return;
	}
	if (vs->sel >= n)
		vs->sel = n - 1;
	if (vs->top > vs->sel)
		vs->top = vs->sel;
	/* the selected node's whole block stays on screen */
	for (;;) {
		size_t lines = 0;

		for (size_t k = vs->top; k <= vs->sel; k++)
			lines += block_lines(t, vis[k]);
		if (vs->top == vs->sel || lines <= (size_t)(h - 1))
			break;
		vs->top++;
	}
	for (size_t k = vs->top; k < n && row < end; k++)
		draw_block(t, vis[k], k == vs->sel, &row, end, w);
	free(vis);
}

/* ---------------------------------------------------------------- view */

static size_t rows(struct tui *t, struct view_state *vs)
{
	size_t n, *vis;

	if (vs->drill || !t->s.m)
		return 0;
	vis = netview_visible_new(t, &n);
	free(vis);
	return n;
}

static void draw_detail(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	size_t n, *vis = netview_visible_new(t, &n);
	struct ui_text x = {0};

	if (vs->sel < n &&
	    (!vs->mode || (netview_grid_col() < n && vis[vs->sel] == vis[netview_grid_col()])))
		netview_node_text(t, vis[vs->sel], w, &x);
	else if (vs->sel < n && netview_grid_col() < n)
		netview_pair_text(t, vis[vs->sel], vis[netview_grid_col()], w, &x);
	ui_text_draw(&x, y, h, w, &vs->scroll);
	ui_text_free(&x);
	free(vis);
}

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	const struct tui_session *s = &t->s;

	if (!s->m) {
		ui_print(y + 1, 2, w - 3, ui_attr(t, s->check_error[0] ? UI_FAIL : UI_DIM), "%s",
		         s->check_error[0] ? s->check_error
		         : s->nhosts       ? "no check yet: press r to run it"
		                           : "no nodes yet: press H and give a hostlist");
		return;
	}
	if (vs->drill)
		draw_detail(t, vs, y, h, w);
	else if (vs->mode)
		netview_grid_draw(t, vs, y, h, w);
	else
		draw_list(t, vs, y, h, w);
}

static int key(struct tui *t, struct view_state *vs, int ch)
{
	if (vs->drill)
		return ch == 'm'; /* no toggle under a detail */
	if (ch == 'm') {
		vs->mode = !vs->mode;
		vs->top = 0;
		return 1;
	}
	if (!vs->mode)
		return 0;
	if (ch == 27) {
		vs->mode = 0;
		return 1;
	}
	if (ch == 'h' || ch == KEY_LEFT) {
		netview_grid_move(-1, 0);
		return 1;
	}
	if (ch == 'l' || ch == KEY_RIGHT) {
		netview_grid_move(1, rows(t, vs));
		return 1;
	}
	return 0;
}

static int enter(struct tui *t, struct view_state *vs)
{
	return rows(t, vs) > 0;
}

const struct view view_network = {
    .name = "Network",
    .hint = "m matrix/list; h l j k move in the matrix; Enter a node's probe or a pair's "
            "attempts; r re-run the check",
    .rerun = RERUN_CHECK,
    .draw = draw,
    .rows = rows,
    .key = key,
    .enter = enter,
};
