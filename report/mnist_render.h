/* SPDX-License-Identifier: MIT */
/*
 * mnist_render.h - what `clusterdoc mnist` prints from a finished job
 * (jobs/mnist.h): the text summary and the JSON report. The ranks'
 * live output is not here: the front end shows it as it comes. Nothing else
 * is done: the exit status is the caller's.
 */
#ifndef CD_MNIST_RENDER_H
#define CD_MNIST_RENDER_H

#include <jansson.h>

#include "jobs/mnist.h"

/* To stdout: "# clusterdoc mnist: MODE mode (BACKEND), N rank(s) on M
 * node(s)", the mode note, one line per node that got an address, the loss
 * of each epoch, the test accuracy, the embedded mode's parameter hashes,
 * the phase times and, when the job failed, "FAILED: WHY" with each node's
 * errors, the earliest first error first (local wall-clock times). */
void mnist_print_text(const struct mnist_report *rep);

/* The JSON report: {"version": 1, "mode", "mode_note", "backend", "nranks",
 * "nodes", "epochs", "test", ["params_identical", "param_sha256" in embedded
 * mode], "failed", "failure", "timing_ms"}. The caller frees it with
 * json_decref. */
json_t *mnist_report_json(const struct mnist_report *rep);

/* mnist_report_json to stdout, indented by 2, with a final newline. */
void mnist_print_json(const struct mnist_report *rep);

#endif
