/* SPDX-License-Identifier: MIT */
/*
 * chart.c - ASCII bar charts and meters for the TUI (chart.h).
 */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"

#define GROUP_MAX_W 8 /* few values get bars this wide at most, not the whole width */

double chart_nice_top(double v)
{
	static const double steps[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
	double p = 1;

	if (!(v > 0) || !isfinite(v))
		return 1;
	while (p * 10 <= v)
		p *= 10;
	while (p > v)
		p /= 10;
	for (size_t i = 0; i < CD_ARRAY_LEN(steps); i++)
		if (steps[i] * p >= v * (1 - 1e-12))
			return steps[i] * p;
	return 10 * p;
}

/* Row y of the grid. */
static char *cell_row(struct chart *c, int y)
{
	return c->cells + (size_t)y * (size_t)(c->width + 1);
}

/* Row y of the bars (0 = the top bar row), then the axis at plot_h. */
static char *plot_row(struct chart *c, int y)
{
	return cell_row(c, c->plot_y + y);
}

/* Text right-aligned in columns [0, w) of bar row y. */
static void put_right(struct chart *c, int y, int w, const char *text)
{
	int len = (int)strlen(text);

	if (len > w)
		len = w;
	memcpy(plot_row(c, y) + w - len, text, (size_t)len);
}

static double largest(const double *v, size_t n)
{
	double m = 0;

	for (size_t k = 0; k < n; k++)
		if (!isnan(v[k]) && v[k] > m)
			m = v[k];
	return m;
}

/* The y axis, its labels and the x axis; sets plot_x. */
static void draw_axes(struct chart *c)
{
	char top[32], mid[32];
	int mid_row = c->plot_h / 2, label_w;

	snprintf(top, sizeof(top), "%.3g", c->top);
	snprintf(mid, sizeof(mid), "%.3g", c->top * (c->plot_h - mid_row) / c->plot_h);
	label_w = (int)(strlen(top) > strlen(mid) ? strlen(top) : strlen(mid));
	if (label_w > c->width / 3)
		label_w = c->width / 3;
	c->plot_x = label_w + 2;
	for (int y = 0; y < c->plot_h; y++)
		plot_row(c, y)[label_w + 1] = '|';
	put_right(c, 0, label_w, top);
	if (mid_row > 0)
		put_right(c, mid_row, label_w, mid);
	put_right(c, c->plot_h, label_w, "0");
	plot_row(c, c->plot_h)[label_w + 1] = '+';
	memset(plot_row(c, c->plot_h) + c->plot_x, '-', (size_t)(c->width - c->plot_x));
}

static void draw_bar(struct chart *c, size_t k, double v)
{
	int x = chart_bar_x(c, k), rows;

	if (isnan(v))
		return;
	rows = v > 0 ? (int)(v / c->top * c->plot_h + 0.5) : 0;
	if (rows > c->plot_h)
		rows = c->plot_h;
	if (rows == 0 && v > 0) {
		memset(plot_row(c, c->plot_h - 1) + x, '.', (size_t)c->bar_w);
		return;
	}
	for (int y = c->plot_h - rows; y < c->plot_h; y++)
		memset(plot_row(c, y) + x, '#', (size_t)c->bar_w);
}

/* Every stride-th label, the stride the smallest that keeps a space
 * between two labels; a label that would pass the right edge is left out. */
static void draw_labels(struct chart *c, const char *const *labels, size_t n)
{
	size_t longest = 1, stride;
	char *row = plot_row(c, c->plot_h + 1);

	for (size_t k = 0; k < n; k++)
		if (labels[k] && strlen(labels[k]) > longest)
			longest = strlen(labels[k]);
	stride = (longest + 1 + (size_t)c->group_w - 1) / (size_t)c->group_w;
	for (size_t k = 0; k < n; k += stride) {
		int x = chart_bar_x(c, k);
		size_t len = labels[k] ? strlen(labels[k]) : 0;

		if (x + (int)len <= c->width)
			memcpy(row + x, labels[k] ? labels[k] : "", len);
	}
}

int chart_bars(struct chart *c, const double *v, size_t n, const char *const *labels, int width,
               int height, double top)
{
	memset(c, 0, sizeof(*c));
	if (width > CHART_MAX_W)
		width = CHART_MAX_W;
	c->width = width;
	c->height = height;
	c->plot_h = height - 1 - (labels ? 1 : 0);
	if (c->plot_h > 2 && c->plot_h % 2) {
		c->plot_y = 1;
		c->plot_h--;
	}
	c->top = top > 0 ? top : chart_nice_top(largest(v, n));
	if (n == 0 || c->plot_h < 2 || width < 8)
		goto fail;
	c->cells = cd_calloc((size_t)height, (size_t)width + 1);
	for (int y = 0; y < height; y++)
		memset(cell_row(c, y), ' ', (size_t)width);
	draw_axes(c);
	if ((size_t)(width - c->plot_x) < n)
		goto fail;
	c->group_w = (width - c->plot_x) / (int)n;
	if (c->group_w > GROUP_MAX_W)
		c->group_w = GROUP_MAX_W;
	c->bar_w = c->group_w >= 3 ? c->group_w - 1 : 1;
	for (size_t k = 0; k < n; k++)
		draw_bar(c, k, v[k]);
	if (labels)
		draw_labels(c, labels, n);
	return 0;
fail:
	chart_fini(c);
	return -1;
}

const char *chart_row(const struct chart *c, int y)
{
	if (!c->cells || y < 0 || y >= c->height)
		return "";
	return c->cells + (size_t)y * (size_t)(c->width + 1);
}

int chart_bar_x(const struct chart *c, size_t k)
{
	return c->plot_x + (int)k * c->group_w + (c->group_w - c->bar_w);
}

void chart_fini(struct chart *c)
{
	free(c->cells);
	memset(c, 0, sizeof(*c));
}

void chart_meter(char *buf, size_t len, int width, double frac)
{
	int cells = width - 2, full;

	if (len == 0)
		return;
	buf[0] = 0;
	if (width < 3 || (size_t)width >= len)
		return;
	if (!(frac > 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	full = (int)(frac * cells + 0.5);
	buf[0] = '[';
	memset(buf + 1, '#', (size_t)full);
	memset(buf + 1 + full, '.', (size_t)(cells - full));
	buf[width - 1] = ']';
	buf[width] = 0;
}

void chart_size_label(char *buf, size_t len, unsigned long long bytes)
{
	static const char units[] = "KMGTP";
	unsigned long long scale = 1;
	int u = -1;

	while (u + 1 < (int)sizeof(units) - 1 && bytes >= scale * 1024) {
		scale *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", bytes);
	else if (bytes % scale == 0)
		snprintf(buf, len, "%llu%c", bytes / scale, units[u]);
	else
		snprintf(buf, len, "%.1f%c", (double)bytes / (double)scale, units[u]);
}

void chart_bytes(char *buf, size_t len, long long bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = -1;

	while (u + 1 < (int)CD_ARRAY_LEN(units) && (v >= 1024 || v <= -1024)) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%lld B", bytes);
	else if (v == (double)(long long)v)
		snprintf(buf, len, "%lld %s", (long long)v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}
