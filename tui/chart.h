/* SPDX-License-Identifier: MIT */
/*
 * chart.h - ASCII charts for the TUI, without curses: values in, rows of
 * characters out. The Bench view draws the bus bandwidth by size with it,
 * the Job view the loss by epoch; the views put the rows on the screen.
 *
 * A bar chart, width x height characters:
 *
 *     1.2 |            #
 *         |        #   #
 *     0.6 |    #   #   #
 *         |.   #   #   #
 *       0 +---------------
 *          8   1K  64K 4M
 *
 * the y axis on the left with three labels (the top, its half and 0; an
 * odd number of rows for the bars leaves the top row blank, so that the
 * middle row is the half),
 * one group of columns per value, '#' bars rounded to whole rows, a '.' on
 * the bottom row for a value above 0 too small for a row, nothing for a
 * value that is not there (NaN), and the x labels under the groups, every
 * k-th one when they would touch.
 */
#ifndef CD_TUI_CHART_H
#define CD_TUI_CHART_H

#include <stddef.h>

#define CHART_MAX_W 1024 /* a wider chart is drawn this wide */

struct chart {
	int width, height; /* of the grid, axis and labels included */
	char *cells;       /* height rows of width + 1 bytes, each row NUL-ended */
	int plot_x;        /* the first column after the y axis */
	int plot_y;        /* the first row of bars: 1 when a blank top row keeps plot_h even */
	int plot_h;        /* rows of bars (the axis and the labels excluded) */
	int group_w;       /* columns per value */
	int bar_w;         /* columns of '#' per value */
	double top;        /* the value of the top row: the largest, rounded up */
};

/*
 * Draw n values (NaN: absent; below 0: drawn as 0) as bars in a grid of
 * width x height, labels[k] (NULL: no label row) under value k. top is the
 * value of the top row, or 0 for the largest value rounded up as
 * chart_nice_top does. Returns 0 with c filled (free with chart_fini),
 * or -1 with c zeroed when the values do not fit: fewer than one column per
 * value, or fewer than 2 rows of bars.
 */
int chart_bars(struct chart *c, const double *v, size_t n, const char *const *labels, int width,
               int height, double top);

/* Row y of the grid (0 = the top), or "" outside it. */
const char *chart_row(const struct chart *c, int y);

/* The first column of value k's bar, from the grid's left edge. */
int chart_bar_x(const struct chart *c, size_t k);

/* Free the grid; c is zeroed. A zeroed chart is a no-op. */
void chart_fini(struct chart *c);

/* The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k at or above v (1 for
 * v <= 0): the top and its half stay short numbers. */
double chart_nice_top(double v);

/*
 * A meter "[####......]" width characters wide (brackets included) into buf
 * (len bytes), frac of its cells filled (clamped to 0 .. 1). A width under 3
 * gives "".
 */
void chart_meter(char *buf, size_t len, int width, double frac);

/* A size for an axis, in at most 5 characters: "8", "512", "1K", "256M",
 * "1G"; a size that is no whole multiple gets one decimal ("1.5K"). */
void chart_size_label(char *buf, size_t len, unsigned long long bytes);

/* A size for a sentence: "8 B", "1 KiB", "256 MiB", "11.2 MiB". */
void chart_bytes(char *buf, size_t len, long long bytes);

#endif
