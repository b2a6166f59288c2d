/* SPDX-License-Identifier: MIT */
/*
 * bench_render.h - what `clusterdoc bench` prints from a finished run
 * (collectives/bench.h): the text report as nccl-tests prints it, the JSON
 * report (docs/report-format.md, version 1) and the failures of ranks and
 * nodes. Nothing else is done: the exit status is the caller's.
 */
#ifndef CD_BENCH_RENDER_H
#define CD_BENCH_RENDER_H

#include <jansson.h>

#include "collectives/bench.h"

/* To stdout: the header line ("# clusterdoc bench: tcp backend, ..."), the
 * backend note, one "#  HOST rank N  IFACE ADDR (RULE)" line per node, then
 * nccl-tests' size table (out-of-place columns, "# Out of bounds values",
 * "# Avg bus bandwidth") or, with o->pairs, the per-link table and the slow
 * nodes; then, after the table, "# NCCL's network ..." and one
 * bench_net_line per node whose NCCL run answered (nccl backend). o is the
 * options the run was started with. */
void bench_print_text(const struct bench_report *rep, const struct bench_opts *o);

/* The JSON report: {"version": 1, "command": "bench", "backend", "nranks",
 * "nodes", "results", "failures", "avg_busbw_gbps", "slow_nodes",
 * "elapsed_ms", ["backend_note"], ["links" with o->pairs]}; a node whose
 * NCCL run answered has "network" (bench_net_json). The caller frees it
 * with json_decref. */
json_t *bench_report_json(const struct bench_report *rep, const struct bench_opts *o);

/* bench_report_json to stdout, indented by 2, with a final newline. */
void bench_print_json(const struct bench_report *rep, const struct bench_opts *o);

/* To stderr: one "clusterdoc bench: rank R (HOST) KIND: MESSAGE" line (or
 * "clusterdoc bench: HOST KIND: MESSAGE" for a node) per failure. */
void bench_print_failures(const struct bench_report *rep);

#endif
