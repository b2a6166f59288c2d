/* SPDX-License-Identifier: MIT */
/*
 * job.c - the agent's background job and its log (see job.h).
 */
#include "job.h"
#include "cd.h"
#include "proto.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct line {
	int64_t wall_ms;
	const char *stream; /* a string literal */
	char *text;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t ended;
	const struct job_kind *kind;
	void *work;
	int running, finished, reaped;
	/* the log: lines first..next-1, the newest JOB_LOG_KEEP kept */
	struct line lines[JOB_LOG_KEEP];
	long long first, next;
	int exit_code, signal;
	char *error;
	json_t *result;
} job = {.mu = PTHREAD_MUTEX_INITIALIZER, .ended = PTHREAD_COND_INITIALIZER};

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *stream_name(const char *s)
{
	if (s && strcmp(s, "out") == 0)
		return "out";
	if (s && strcmp(s, "err") == 0)
		return "err";
	return "log";
}

/* Free the finished job's state and log (mu held). */
static void clear_locked(void)
{
	for (long long i = job.first; i < job.next; i++)
		free(job.lines[i % JOB_LOG_KEEP].text);
	free(job.error);
	json_decref(job.result);
	job.first = job.next = 0;
	job.error = NULL;
	job.result = NULL;
	job.kind = NULL;
	job.work = NULL;
	job.finished = job.running = 0;
}

/* Reap a finished job's work, outside the lock (it joins threads that may
 * log). */
static void reap(int force)
{
	const struct job_kind *k;
	void *w;

	pthread_mutex_lock(&job.mu);
	k = job.kind;
	w = job.work;
	if (!k || job.reaped) {
		pthread_mutex_unlock(&job.mu);
		return;
	}
	job.reaped = 1;
	pthread_mutex_unlock(&job.mu);
	k->reap(w, force);
}

int job_begin(const struct job_kind *kind, void *work, char *msg, size_t msglen)
{
	pthread_mutex_lock(&job.mu);
	if (job.running && !job.finished) {
		pthread_mutex_unlock(&job.mu);
		snprintf(msg, msglen, "a %s job is still running here; stop it first",
		         job.kind->name);
		return -1;
	}
	pthread_mutex_unlock(&job.mu);
	reap(0);
	pthread_mutex_lock(&job.mu);
	clear_locked();
	job.kind = kind;
	job.work = work;
	job.running = 1;
	job.reaped = 0;
	job.exit_code = -1;
	job.signal = 0;
	pthread_mutex_unlock(&job.mu);
	return 0;
}

int job_running(void)
{
	int r;

	pthread_mutex_lock(&job.mu);
	r = job.running && !job.finished;
	pthread_mutex_unlock(&job.mu);
	return r;
}

static void append_locked(const char *stream, const char *text, size_t len)
{
	struct line *l;

	if (job.next - job.first == JOB_LOG_KEEP) {
		free(job.lines[job.first % JOB_LOG_KEEP].text);
		job.first++;
	}
	l = &job.lines[job.next++ % JOB_LOG_KEEP];
	l->wall_ms = wall_ms();
	l->stream = stream_name(stream);
	l->text = cd_malloc(len + 1);
	memcpy(l->text, text, len);
	l->text[len] = '\0';
}

void job_log(const char *stream, const char *text, size_t len)
{
	if (len && text[len - 1] == '\n')
		len--;
	pthread_mutex_lock(&job.mu);
	do {
		size_t n = len > JOB_LINE_MAX ? JOB_LINE_MAX : len;

		append_locked(stream, text, n);
		text += n;
		len -= n;
	} while (len);
	pthread_mutex_unlock(&job.mu);
}

void job_logf(const char *stream, const char *fmt, ...)
{
	char line[JOB_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n >= 0)
		job_log(stream, line, strlen(line));
}

void job_finish(int exit_code, int signal, const char *error, json_t *result_take)
{
	pthread_mutex_lock(&job.mu);
	if (!job.running || job.finished) {
		pthread_mutex_unlock(&job.mu);
		json_decref(result_take);
		return;
	}
	job.finished = 1;
	job.exit_code = exit_code;
	job.signal = signal;
	job.error = error ? cd_strdup(error) : NULL;
	job.result = result_take;
	pthread_cond_broadcast(&job.ended);
	pthread_mutex_unlock(&job.mu);
}

/* The poll answer from line since (mu held). */
static json_t *answer_locked(long long since)
{
	json_t *lines = json_array(), *o;
	long long i = since < job.first ? job.first : since, dropped = job.first - since;
	size_t bytes = 0;

	if (i > job.next)
		i = job.next;
	for (; i < job.next && json_array_size(lines) < JOB_POLL_MAX_LINES &&
	       bytes < JOB_POLL_MAX_BYTES;
	     i++) {
		const struct line *l = &job.lines[i % JOB_LOG_KEEP];

		json_array_append_new(
		    lines, json_pack("[Iss]", (json_int_t)l->wall_ms, l->stream, l->text));
		bytes += strlen(l->text) + 32;
	}
	/* "done" only once every line has been read, so the head never misses
	 * the last ones. */
	o = json_pack("{sssIsIso}", "state", job.finished && i == job.next ? "done" : "running",
	              "next", (json_int_t)i, "dropped", (json_int_t)(dropped > 0 ? dropped : 0),
	              "lines", lines);
	if (job.finished && i == job.next) {
		json_object_set_new(o, "exit_code", json_integer(job.exit_code));
		json_object_set_new(o, "signal", json_integer(job.signal));
		json_object_set_new(o, "error", job.error ? json_string(job.error) : json_null());
		json_object_set(o, "result", job.result ? job.result : json_null());
	}
	return o;
}

json_t *job_poll(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long since = 0;
	json_t *o;

	if (proto_field_int(req, "since", 0, INT64_MAX, &since) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"since\" must be a line number");
	pthread_mutex_lock(&job.mu);
	if (!job.running) {
		pthread_mutex_unlock(&job.mu);
		return proto_handler_fail(code, "no-job", msg, msglen, "no job was started here");
	}
	o = answer_locked(since);
	pthread_mutex_unlock(&job.mu);
	if (strcmp(json_string_value(json_object_get(o, "state")), "done") == 0)
		reap(0); /* join its threads now rather than at the next start */
	return o;
}

/* Wait until the job has finished or timeout_ms passed; 1 when finished. */
static int wait_finished(int timeout_ms)
{
	struct timespec until;
	int fin;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&job.mu);
	while (!job.finished && pthread_cond_timedwait(&job.ended, &job.mu, &until) == 0)
		;
	fin = job.finished;
	pthread_mutex_unlock(&job.mu);
	return fin;
}

/* Stop the running job: ask, wait grace_ms (+ 2 s for the kind's own
 * escalation), then force. */
static void stop_job(int grace_ms)
{
	const struct job_kind *k;
	void *w;
	int running;

	pthread_mutex_lock(&job.mu);
	k = job.kind;
	w = job.work;
	running = job.running && !job.finished;
	pthread_mutex_unlock(&job.mu);
	if (!k)
		return;
	if (running) {
		k->stop(w, grace_ms);
		if (!wait_finished(grace_ms + 2000)) {
			/* first, so this says why rather than what the kill caused */
			job_finish(-1, 0, "the job did not end when asked to stop; it was killed",
			           NULL);
			reap(1);
			return;
		}
	}
	reap(0);
}

json_t *job_stop(json_t *req, const char **code, char *msg, size_t msglen)
{
	long long grace = 5000, since = -1;
	json_t *o;

	if (proto_field_int(req, "grace_ms", 0, 600000, &grace) < 0 ||
	    proto_field_int(req, "since", 0, INT64_MAX, &since) < 0)
		return proto_handler_fail(
		    code, "bad-request", msg, msglen,
		    "\"grace_ms\" must be 0 to 600000, \"since\" a line number");
	pthread_mutex_lock(&job.mu);
	if (!job.running) {
		pthread_mutex_unlock(&job.mu);
		return proto_handler_fail(code, "no-job", msg, msglen, "no job was started here");
	}
	pthread_mutex_unlock(&job.mu);
	stop_job((int)grace);
	pthread_mutex_lock(&job.mu);
	o = answer_locked(since < 0 ? job.next : since);
	pthread_mutex_unlock(&job.mu);
	return o;
}

void job_shutdown(void)
{
	stop_job(3000);
	pthread_mutex_lock(&job.mu);
	clear_locked();
	pthread_mutex_unlock(&job.mu);
}
