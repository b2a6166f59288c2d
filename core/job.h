/* SPDX-License-Identifier: MIT */
/*
 * job.h - the agent's one background job: work that outlives the request
 * that started it (a torchrun process tree, the embedded trainer's threads),
 * with a log the head reads by polling, so the agent keeps answering
 * requests while the job runs.
 *
 *   job_poll  {"since": n} -> {"state": "running"|"done", "next": m,
 *             "dropped": k, "lines": [[wall_ms, "out"|"err"|"log", text]...],
 *             and once done: "exit_code", "signal", "error", "result"}
 *             lines n..m-1 (at most JOB_POLL_MAX_LINES and about
 *             JOB_POLL_MAX_BYTES of text per answer; poll again with m);
 *             "dropped" counts lines of n.. that were no longer kept
 *   job_stop  {"grace_ms": 5000, "since": n} -> what job_poll {"since": n}
 *             answers once the job has ended (without "since": no lines):
 *             asks the job to stop, waits up to grace_ms, then kills what
 *             is left and waits for it
 *
 * One job at a time: a start while one runs fails with "busy"; starting
 * after a job is done frees the old one. A kind (job_process.c, the trainer)
 * starts its work and then calls job_begin; its threads report with
 * job_log* and end with job_finish exactly once.
 */
#ifndef CD_JOB_H
#define CD_JOB_H

#include <jansson.h>
#include <stddef.h>

#define JOB_LOG_KEEP       20000 /* newest lines kept */
#define JOB_LINE_MAX       4096  /* longer output lines are split */
#define JOB_POLL_MAX_LINES 2000
#define JOB_POLL_MAX_BYTES (256 * 1024)

struct job_kind {
	const char *name;
	/* Ask the work to end: called once from job_stop or job_shutdown on the
	 * main thread; must not block. */
	void (*stop)(void *work, int grace_ms);
	/* The work has ended (job_finish was called) or must be abandoned after
	 * force: kill what is left, join threads, free work. Called once. */
	void (*reap)(void *work, int force);
};

/* Make work the current job. -1 with msg when a job is still running. */
int job_begin(const struct job_kind *kind, void *work, char *msg, size_t msglen);
/* 1 when a job runs (begun, not finished). */
int job_running(void);

/* Append a line (thread-safe; a trailing '\n' is dropped; a line longer than
 * JOB_LINE_MAX is split). stream is "out", "err" or "log". */
void job_log(const char *stream, const char *text, size_t len);
void job_logf(const char *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The job has ended: exit_code (or -1), signal (or 0), error (NULL or a
 * message), result (NULL or an object, taken). Thread-safe; the first call
 * counts. */
void job_finish(int exit_code, int signal, const char *error, json_t *result_take);

json_t *job_poll(json_t *req, const char **code, char *msg, size_t msglen);
json_t *job_stop(json_t *req, const char **code, char *msg, size_t msglen);

/* Stop and reap the job at the agent's exit (nothing is left behind). */
void job_shutdown(void);

#endif
