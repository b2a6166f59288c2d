/* SPDX-License-Identifier: MIT */
/*
 * gpuburn_render.h - what `clusterdoc gpu-burn` prints from its report
 * (collectives/gpuburn.h): a table as nccl-tests prints one ("#" header
 * and summary lines around one row per GPU), and the JSON report. The
 * lines are also the entry point of a view that shows them (the TUI's
 * Bench view): gpuburn_render_lines. Nothing else is done: the exit status
 * is the caller's.
 */
#ifndef CD_GPUBURN_RENDER_H
#define CD_GPUBURN_RENDER_H

#include <jansson.h>
#include <stdio.h>

/*
 * The report as lines of text, without newlines: the header ("# clusterdoc
 * gpu-burn: ..."), the column line, one row per GPU (node, gpu, model,
 * dtype, TFLOP/s, % of its model's median, GB/s, %, status: ok, SLOW or
 * FAILED: why) and one per node that ran nothing (its error code and why),
 * then "# Median per model", "# Per node", one "# gpu-slow" line per slow
 * GPU and "# GPUs: ...". Returns the count; *lines is a NULL-terminated
 * array of new strings (gpuburn_render_free).
 */
size_t gpuburn_render_lines(const json_t *rep, char ***lines);
void gpuburn_render_free(char **lines);

/* gpuburn_render_lines to f, one per line. */
void gpuburn_print_text(const json_t *rep, FILE *f);

/* The report to f as JSON, indented by 2, with a final newline. */
void gpuburn_print_json(const json_t *rep, FILE *f);

#endif
