/* SPDX-License-Identifier: MIT */
/*
 * view_network.h - what the Network view (view_network.c), its matrix
 * (view_network_grid.c) and its drill-down texts (view_network_detail.c)
 * share; private to those three.
 */
#ifndef CD_TUI_VIEW_NETWORK_H
#define CD_TUI_VIEW_NETWORK_H

#include <stddef.h>

#include "probes/predict.h"
#include "ui.h"

/* ---- view_network.c */

/* Node i's prediction (borrowed from t->s.d); NULL before the diagnosis or if i was not probed. */
const struct node_prediction *netview_prediction(const struct tui *t, size_t i);
/* 1 when one of the n picks p has address addr, else 0. */
int netview_picks_hold(const struct net_pick *p, int n, const char *addr);
/* 1 when NCCL (its transport or bootstrap) or Gloo would use addr, else 0. */
int netview_pick_used(const struct node_prediction *p, const char *addr);
/* Why peers cannot reach addr on node i ("loopback", or buf holding the first failure), or NULL. */
const char *netview_pick_trouble(const struct tui *t, size_t i, const char *addr, char *buf,
                                 size_t len);
/* The nodes passing the filter, in order: a new array (caller frees) of *n indexes. */
size_t *netview_visible_new(const struct tui *t, size_t *n);

/* The width of the host name column: the longest host name, 5 to 16. */
int netview_host_width(const struct tui *t);

/* The interface's state word, a static string: "down", "nolink" (no carrier) or "up". */
const char *netview_iface_state(const struct nm_iface *f);

/* ---- view_network_grid.c: the matrix (the view state's mode 1) */

/* 1 when the matrix made attempt a (its result is not "not-tested"), else 0. */
int netview_tested(const struct nm_attempt *a);
/* Draw the grid in rows [y, y + h), w columns; vs->sel is the row. */
void netview_grid_draw(struct tui *t, struct view_state *vs, int y, int h, int w);
/* The selected column, an index into the visible nodes; it may be past
 * their end after a filter (netview_grid_draw brings it back). */
size_t netview_grid_col(void);
/* Select the column to the left (delta < 0) or, while one is left of n,
 * to the right (delta > 0). */
void netview_grid_move(int delta, size_t n);

/* ---- view_network_detail.c: drill-down texts w columns wide, appended to x; t->s.m is set */

/* Pair from -> to: its attempts, routes on from, the firewall of to, the findings naming to. */
void netview_pair_text(struct tui *t, size_t from, size_t to, int w, struct ui_text *x);
/* Node i: its whole probe (or its stage or error) and the findings naming it. */
void netview_node_text(struct tui *t, size_t i, int w, struct ui_text *x);

#endif
