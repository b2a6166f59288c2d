/* SPDX-License-Identifier: MIT */
/*
 * report.h - where `check` and `bench` results land besides the terminal:
 * a Prometheus textfile (--prom FILE), a Pushgateway (--push URL) and a
 * JUnit XML file (--junit FILE). The metric names, labels and test cases are
 * documented in docs/report-format.md; the code that builds them from a
 * command's results is in report_check.c and report_bench.c.
 */
#ifndef CD_REPORT_H
#define CD_REPORT_H

#include "collectives/bench.h"
#include "junit.h"
#include "loop.h"
#include "probes/diagnose.h"
#include "probes/netmodel.h"
#include "prom.h"

/* What --prom, --push and --junit asked for (their parsing and help are the
 * front end's: cli/opt_report.c). */
struct report_opts {
	const char *prom_path;  /* --prom FILE */
	const char *push_url;   /* --push URL */
	const char *junit_path; /* --junit FILE */
};

/* Whether any report was asked for. */
int report_wanted(const struct report_opts *o);

/* What a command knows at its end, for the reports. */
struct report_run {
	const char *command;  /* "check" or "bench" */
	double elapsed_s;     /* the whole command */
	long long started_at; /* Unix time the command started */
	int exit_status;      /* what the command will exit with */
};

/*
 * Build the check's metrics and test cases. A node that could not be
 * checked has only clusterdoc_check_node_up 0 and its node-unreachable
 * finding (probe-incomplete when it was only slow): what is not known is
 * not reported as 0.
 */
struct prom *report_check_prom(const struct netmodel *m, const struct diagnosis *d,
                               const struct report_run *run);
struct junit *report_check_junit(const struct netmodel *m, const struct diagnosis *d,
                                 const struct report_run *run);

/*
 * The head's own load during a check, from its event loop (loop_stats): a
 * loop whose timers fired REPORT_HEAD_LAG_MS or more past their due time
 * means the head's machine was overloaded (or the head was stopped), so its
 * deadlines ran late and timings, and a node that looked slow, may be the
 * head's doing. _json: {"loop_lag_ms", "longest_turn_ms", "overloaded"}
 * for the JSON report's "head_load"; _note: one line on f when overloaded,
 * nothing otherwise.
 */
#define REPORT_HEAD_LAG_MS 500
json_t *report_check_head_load_json(const struct loop_stats *st);
void report_check_head_load_note(FILE *f, const struct loop_stats *st);

/* The same for a bench run. min_bw: --check-min-bw in GB/s, 0 = none. */
struct prom *report_bench_prom(const struct bench_report *rep, const struct bench_opts *o,
                               const struct report_run *run);
struct junit *report_bench_junit(const struct bench_report *rep, const struct bench_opts *o,
                                 double min_bw, const struct report_run *run);

/* The same for a gpu-burn report (collectives/gpuburn.h), metrics only. */
struct prom *report_gpuburn_prom(const json_t *rep, const struct report_run *run);

/* A new set of metrics holding what every command reports of its run:
 * clusterdoc_info{version}, clusterdoc_<command>_last_run_timestamp_seconds,
 * _duration_seconds and _exit_status (described by exit_help). */
struct prom *report_prom_new(const struct report_run *run, const char *exit_help);

/* Unix time t as ISO 8601 in UTC, "2026-11-21T10:00:00". */
void report_timestamp(long long t, char *buf, size_t cap);

/*
 * Write the file(s) and push the metrics that o asks for. prom and junit may
 * be NULL when not asked. Each failure is printed on stderr as
 * "clusterdoc CMD: --prom FILE: ..." and the others are still attempted.
 * Returns 0, or -1 when any failed.
 */
int report_emit(const struct report_opts *o, const struct report_run *run, const struct prom *prom,
                const struct junit *junit);

#endif
