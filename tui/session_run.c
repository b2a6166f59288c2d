/* SPDX-License-Identifier: MIT */
/*
 * session_run.c - the TUI's `clusterdoc run` job (session.h): the command
 * line typed in the Job view, split into words (shellwords.h), started
 * with run_start on the session's nodes and its own pool, its lines kept
 * with the MNIST job's (the Job view shows one job at a time), stopped by
 * run_stop.
 */
#include "session.h"
#include "jobs/jobgate.h"
#include "job_process.h"
#include "jobs/runopt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "shellwords.h"

#define NONE_PREFIX "none:"
#define MAX_ENV     16

/* ---------------------------------------------------------------- options */

/* The --env words so far (runopt_dst.env). */
struct line_env {
	const char **env;
	size_t nenv;
};

static int add_env(void *arg, const char *kv, char *err, size_t errlen)
{
	struct line_env *e = arg;

	if (e->nenv == MAX_ENV)
		return cd_errf(err, errlen, CD_ERR_PARSE, "more than %d --env variables", MAX_ENV);
	e->env[e->nenv++] = kv;
	return 0;
}

/*
 * The job's options (jobs/runopt.h, as `clusterdoc run` takes them, through
 * the same group and loop) at the front of words[0..n), into o and e;
 * *first is the command's first word. 0, or CD_ERR_PARSE with err (an
 * unknown option, a bad value, no command after the options).
 */
static int parse_line_opts(char **words, size_t n, struct run_opts *o, struct line_env *e,
                           size_t *first, char *err, size_t errlen)
{
	struct runopt_dst dst = {.o = o, .env = add_env, .env_arg = e};
	struct optset_loop l = {.shortopts = "+", .quiet = 1};
	struct optset set;
	char **argv = cd_calloc(n + 2, sizeof(*argv));
	int at = 0, rc;

	/* getopt_long reads from argv[1]: the line's words follow the key's name */
	argv[0] = "R";
	memcpy(argv + 1, words, n * sizeof(*argv));
	optset_init(&set);
	optset_add_group(&set, &runopt_group, NULL, &dst);
	rc = optset_getopt(&set, &l, (int)n + 1, argv, &at, err, errlen);
	free(argv);
	if (rc == OPTSET_HELP || (rc == OPTSET_USAGE && !err[0])) {
		char names[512];

		runopt_names(names, sizeof(names));
		return cd_errf(err, errlen, CD_ERR_PARSE, "the options of R: %s", names);
	}
	if (rc < 0)
		return CD_ERR_PARSE;
	if ((size_t)at > n)
		return cd_errf(err, errlen, CD_ERR_PARSE, "no command after the options");
	*first = (size_t)at - 1;
	return 0;
}

unsigned session_run_line_uses(const char *cmdline)
{
	struct run_opts o;
	struct line_env lenv = {0};
	char **argv = NULL, err[CD_ERRLEN];
	size_t argc = 0, first = 0;
	unsigned uses = JOB_USES_ALL;

	run_opts_init(&o);
	while (*cmdline == ' ')
		cmdline++;
	if (strncmp(cmdline, NONE_PREFIX, strlen(NONE_PREFIX)) == 0)
		cmdline += strlen(NONE_PREFIX);
	if (shellwords_split(cmdline, &argv, &argc, err, sizeof(err)) < 0)
		return uses;
	lenv.env = cd_calloc(MAX_ENV + 1, sizeof(*lenv.env));
	if (parse_line_opts(argv, argc, &o, &lenv, &first, err, sizeof(err)) == 0 && o.gloo)
		uses = JOB_USES_SOCKETS;
	free(lenv.env);
	shellwords_free(argv);
	return uses;
}

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
	free(s->run_env);
	s->run_env = NULL;
	s->run_argv = NULL;
	s->run_argc = 0;
	free(s->run_cmdline);
	s->run_cmdline = NULL;
}

int session_run_start(struct tui_session *s, const char *cmdline, char *err, size_t errlen)
{
	struct run_opts o;
	struct job_plan *plan = NULL;
	const char *words = cmdline;
	const char **env = NULL;
	struct line_env lenv = {0};
	char **argv = NULL;
	size_t argc = 0, nenv = 0, first = 0;
	int rc;

	if (s->job_state == TASK_RUNNING)
		return cd_errf(err, errlen, CD_ERR_REFUSED, "the %s is running already",
		               SESSION_JOB_KIND(s)->name);
	if (!s->nhosts)
		return cd_errf(err, errlen, CD_ERR_NOTFOUND, "no nodes: give a hostlist first");
	run_opts_init(&o);
	o.master_port = 0; /* typed or not: without it, the plan's */
	while (*words == ' ')
		words++;
	if (strncmp(words, NONE_PREFIX, strlen(NONE_PREFIX)) == 0) {
		o.launcher = RUN_NONE;
		words += strlen(NONE_PREFIX);
	}
	rc = shellwords_split(words, &argv, &argc, err, errlen);
	if (rc < 0)
		return rc;
	env = cd_calloc(MAX_ENV + 1, sizeof(*env));
	lenv.env = env;
	rc = parse_line_opts(argv, argc, &o, &lenv, &first, err, errlen);
	nenv = lenv.nenv;
	if (rc == 0 && strncmp(argv[first], NONE_PREFIX, strlen(NONE_PREFIX)) == 0) {
		/* "none:" after the options too: "--chdir /x none: ./a.out" */
		o.launcher = RUN_NONE;
		memmove(argv[first], argv[first] + strlen(NONE_PREFIX),
		        strlen(argv[first]) - strlen(NONE_PREFIX) + 1);
		if (!argv[first][0] && ++first == argc)
			rc = cd_errf(err, errlen, CD_ERR_PARSE, "no command after none:");
	}
	if (rc == 0 && run_check_placeholders((const char *const *)argv + first, argc - first, err,
	                                      errlen) < 0)
		rc = CD_ERR_PARSE;
	if (rc < 0) {
		shellwords_free(argv);
		free(env);
		return rc;
	}
	session_job_clear(s);
	s->job_kind = JOB_RUN;
	s->run_argv = argv;
	s->run_argc = argc;
	s->run_env = env;
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
	/* the plan of the session's check (run_start copies it: a check
	 * started while the run plans frees its diagnosis) */
	o.plan = plan = session_plan(s, o.master_port, o.iface);
	if (!o.master_port)
		o.master_port = 29500;
	o.python = s->o.check.python; /* --python: torchrun's interpreter */
	o.argv = (const char *const *)s->run_argv + first;
	o.argc = s->run_argc - first;
	o.env = s->run_env;
	o.nenv = nenv;
	o.request_timeout_ms = s->o.pool->request_timeout_ms;
	s->run = run_start(s->loop, s->job_pool, (const char *const *)s->hosts, s->nhosts, &o,
	                   &run_events, s);
	job_plan_free(plan);
	session_changed(s);
	return 0;
}

static int mnist_live(const struct tui_session *s)
{
	return s->job != NULL;
}

static void mnist_stop_job(struct tui_session *s, const char *why)
{
	mnist_stop(s->job, why);
}

static int run_live(const struct tui_session *s)
{
	return s->run != NULL;
}

static void run_stop_job(struct tui_session *s, const char *why)
{
	run_stop(s->run, why);
}

static void mnist_progress(const struct tui_session *s, char *buf, size_t len)
{
	const struct mnist_report *r = session_job_report(s);

	snprintf(buf, len, "job: %s, epoch %d/%d", s->job_phase[0] ? s->job_phase : "starting",
	         r ? r->epochs_done : 0, s->o.mnist.epochs);
}

static void run_progress(const struct tui_session *s, char *buf, size_t len)
{
	const struct run_report *r = session_run_report(s);

	snprintf(buf, len, "run %s: %s", r ? r->run_id : "",
	         s->job_phase[0] ? s->job_phase : "starting");
}

const struct job_kind_ops job_kinds[] = {
    [JOB_MNIST] = {.name = "MNIST job",
                   .live = mnist_live,
                   .stop = mnist_stop_job,
                   .progress = mnist_progress},
    [JOB_RUN] = {.name = "run", .live = run_live, .stop = run_stop_job, .progress = run_progress},
};

int session_run_stop(struct tui_session *s, char *err, size_t errlen)
{
	if (s->job_state != TASK_RUNNING || !SESSION_JOB_KIND(s)->live(s))
		return cd_errf(err, errlen, CD_ERR_REFUSED, "no run and no MNIST job is going");
	SESSION_JOB_KIND(s)->stop(s, "stopped from the TUI (S): stopped the job on every node");
	session_changed(s);
	return 0;
}

const struct run_report *session_run_report(const struct tui_session *s)
{
	return s->run && s->job_kind == JOB_RUN ? run_report(s->run) : NULL;
}
