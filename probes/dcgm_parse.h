/* SPDX-License-Identifier: MIT */
/*
 * dcgm_parse.h - the parser of `dcgmi diag -r N -j` (DCGM's GPU diagnostic,
 * JSON output) into the results that are not a pass.
 *
 * The format, from DCGM's own source (github.com/NVIDIA/DCGM,
 * nvvs/src/JsonOutput.cpp: the comment at its top documents the document it
 * writes):
 *
 *   {"DCGM GPU Diagnostic": {
 *     "test_categories": [{"category": "Deployment|Hardware|Integration|...",
 *       "tests": [{"name": "<name>",
 *         "results": [{"gpu_ids": "<id>" (a CSV of ids for the deployment
 *                      tests, which have one result for all GPUs),
 *                      "status": "PASS|FAIL|WARN|SKIPPED" (any case),
 *                      "warnings": ["<text>"] or [{"warning": "<text>",
 *                                   "error_id": N, ...}] (optional),
 *                      "info": ["<text>"] (optional)}]}]}],
 *     "version": "<version>"}}
 *
 * DCGM 4 moves "tests" to the top level and names a result's GPU by
 * "entity_id" (a number, with "entity_group": "GPU"); both shapes are read.
 * dcgmi may print a line before the document ("Successfully ran diagnostic
 * for group."): the text from the first '{' to the last '}' is parsed.
 */
#ifndef CD_PROBES_DCGM_PARSE_H
#define CD_PROBES_DCGM_PARSE_H

#include <stddef.h>

#define DCGM_RESULTS_MAX 256 /* results kept; more are counted in dropped */
#define DCGM_TEXT_MAX    256 /* a test name's or a message's bytes kept */

enum dcgm_status { DCGM_FAIL = 0, DCGM_WARN };

/* One result that is not a pass or a skip. */
struct dcgm_result {
	enum dcgm_status status;
	int gpu;                     /* the GPU's index, -1 for all (a deployment test) */
	char test[64];               /* the test's name, as DCGM spells it */
	char message[DCGM_TEXT_MAX]; /* its warnings joined by "; ", else "" */
};

struct dcgm_report {
	struct dcgm_result results[DCGM_RESULTS_MAX];
	size_t n;         /* results kept */
	size_t dropped;   /* results past DCGM_RESULTS_MAX */
	size_t tests;     /* results read in all (passes and skips included) */
	char version[32]; /* DCGM's version, "" when not said */
};

/*
 * Parse len bytes of buf (not NUL-terminated) into *out (zeroed first).
 * Returns 0, or -1 with why in err when buf holds no document of either
 * shape. A result of a shape not understood is skipped, never invented.
 * Pure: no I/O, nothing kept.
 */
int dcgm_parse(const char *buf, size_t len, struct dcgm_report *out, char *err, size_t errlen);

#endif
