/*
 * session_run.c - the TUI's `clusterdoc run` job (session.h): the command
 * line typed in the Job view, split into words (shellwords.h), started
 * with run_start on the session's nodes and its own pool, its lines kept
 * with the MNIST job's (the Job view shows one job at a time), stopped by
 * run_stop.
 */
#include "session.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "shellwords.h"

#define NONE_PREFIX "none:"

/* ---------------------------------------------------------------- events */

/* torchrun --tee prefixes a worker's line with "[ROLE<local rank>]:"
 * ("[default0]:"): that worker's global rank, else the node's first one;
 * *rest is the text after the prefix. */
static int line_rank(const struct run_node *n, const char *text, const char **rest)
{
	const char *p = text, *digits;
	int local;

	*rest = text;
	if (*p != '[')
		return n->first_rank;
	while (*++p && *p != ']' && !isdigit((unsigned char)*p))
		;
	digits = p;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == digits || p[0] != ']' || p[1] != ':')
		return n->first_rank;
	local = atoi(digits);
	if (local >= n->nranks)
		return n->first_rank;
	*rest = p[2] == ' ' ? p + 3 : p + 2;
	return n->first_rank + local;
}

static void on_run_line(void *arg, size_t node, const char *stream, const char *text)
{
	struct tui_session *s = arg;
	const struct run_report *rep = run_report(s->run);
	const char *rest = text;
	int rank = -1;

	if (node < rep->nnodes)
		rank = line_rank(&rep->nodes[node], text, &rest);
	session_job_add_line(s, node, rank, stream, rest);
}

static void on_run_phase(void *arg, const char *what)
{
	struct tui_session *s = arg;

	snprintf(s->job_phase, sizeof(s->job_phase), "%s", what);
	session_changed(s);
}

static void on_run_done(void *arg)
{
	struct tui_session *s = arg;
	const struct run_report *r = run_report(s->run);

	s->job_state = r->failed ? TASK_FAILED : TASK_DONE;
	snprintf(s->job_phase, sizeof(s->job_phase), "done");
	s->job_ended_ms = cd_now_ms();
	session_changed(s);
}

static const struct run_events run_events = {
    .line = on_run_line,
    .phase = on_run_phase,
    .done = on_run_done,
};

/* ---------------------------------------------------------------- api */

void session_run_clear(struct tui_session *s)
{
	run_free(s->run);
	s->run = NULL;
	shellwords_free(s->run_argv);
	for (size_t i = 0; s->run_ifaces && i < s->nhosts; i++)
		free(s->run_ifaces[i]);
	free(s->run_ifaces);
	s->run_ifaces = NULL;
	s->run_argv = NULL;
	s->run_argc = 0;
	free(s->run_cmdline);
	s->run_cmdline = NULL;
}

int session_run_start(struct tui_session *s, const char *cmdline, char *err, size_t errlen)
{
	struct run_opts o;
	const char *words = cmdline;
	char **argv = NULL;
	size_t argc = 0;
	int rc;

	if (s->job_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the %s is running already",
		               s->job_kind == JOB_RUN ? "run" : "MNIST job");
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	run_opts_init(&o);
	while (*words == ' ')
		words++;
	if (strncmp(words, NONE_PREFIX, strlen(NONE_PREFIX)) == 0) {
		o.launcher = RUN_NONE;
		words += strlen(NONE_PREFIX);
	}
	rc = shellwords_split(words, &argv, &argc, err, errlen);
	if (rc < 0)
		return rc;
	if (run_check_placeholders((const char *const *)argv, argc, err, errlen) < 0) {
		shellwords_free(argv);
		return CD_ERR_PARSE;
	}
	session_job_clear(s);
	s->job_kind = JOB_RUN;
	s->run_argv = argv;
	s->run_argc = argc;
	s->run_cmdline = cd_strdup(cmdline);
	s->job_pool = sshpool_new(s->loop, s->o.pool, s->job_error, sizeof(s->job_error));
	if (!s->job_pool) {
		s->job_state = TASK_FAILED;
		return cd_errf(err, errlen, CD_ERR_IO, "%s", s->job_error);
	}
	s->job_error[0] = 0;
	s->job_state = TASK_RUNNING;
	s->job_started_ms = cd_now_ms();
	s->job_ended_ms = 0;
	/* copied: a check started while the run plans frees its diagnosis */
	if (s->check_state == TASK_DONE && s->d && s->d->nnodes == s->nhosts) {
		s->run_ifaces = cd_calloc(s->nhosts, sizeof(*s->run_ifaces));
		for (size_t i = 0; i < s->nhosts; i++)
			s->run_ifaces[i] = cd_strdup(s->d->pred[i].data_iface);
		o.ifaces = (const char *const *)s->run_ifaces;
	}
	o.python = s->o.check.python; /* --python: torchrun's interpreter */
	o.argv = (const char *const *)s->run_argv;
	o.argc = s->run_argc;
	o.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->run = run_start(s->loop, s->job_pool, (const char *const *)s->hosts, s->nhosts, &o,
	                   &run_events, s);
	session_changed(s);
	return 0;
}

int session_run_stop(struct tui_session *s, char *err, size_t errlen)
{
	if (s->job_kind != JOB_RUN || !s->run || s->job_state != TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "no run is going");
	run_stop(s->run, "stopped from the TUI (S): stopped the job on every node");
	session_changed(s);
	return 0;
}

const struct run_report *session_run_report(const struct tui_session *s)
{
	return s->run && s->job_kind == JOB_RUN ? run_report(s->run) : NULL;
}
