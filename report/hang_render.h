/* SPDX-License-Identifier: MIT */
/*
 * hang_render.h - what `clusterdoc hang` prints from its verdict
 * (hang/hang_analyze.h): the suspects first, in words, then the
 * ranks grouped by what they do (identical states folded), each rank (with
 * its GPU's utilisation where NVML gave it), NCCL RAS's communicators (one
 * line each: stuck, progressing or idle), the Flight Recorder's last
 * collective per rank with its stack frames, the nodes that could not be
 * read, and how to get stacks when there were none. Printers
 * only print: the verdict is data.
 */
#ifndef CD_REPORT_HANG_RENDER_H
#define CD_REPORT_HANG_RENDER_H

#include <jansson.h>
#include <stdio.h>

/* The text report of verdict v to f. */
void hang_print_text(const json_t *v, FILE *f);
/* v as JSON (it begins with "version") to f, one document and a newline. */
void hang_print_json(const json_t *v, FILE *f);

#endif
