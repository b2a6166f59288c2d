/* SPDX-License-Identifier: MIT */
/*
 * job_process.c - a process tree as the agent's job (see job_process.h).
 *
 * agent ──fork──> reaper (setsid, PDEATHSIG=SIGTERM) ──fork──> command (own
 * process group G, exec). The reaper reports G and, at the end, the
 * command's wait status on a status pipe; the agent's reader thread turns
 * stdout/stderr into job lines and the status into job_finish.
 *
 * After fork the reaper runs in a copy of a threaded process, so it only
 * uses async-signal-safe calls (fork, exec, waitpid, kill, sigaction,
 * setitimer, write, _exit).
 */
#include "job_process.h"
#include "cd.h"
#include "filerecv.h"
#include "fsutil.h"
#include "job.h"
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define REAPER_TICK_MS 100
#define GROUP_WAIT_MS  2000 /* for the reaper to say the command's group */

static pid_t job_session; /* the last started job's reaper */

struct proc_work {
	pid_t reaper;
	pid_t group;    /* the command's process group, once the reaper said it */
	int group_read; /* proc_start read it already: the status pipe holds only the status */
	int out_fd, err_fd, status_fd;
	pthread_t reader;
	int reader_started;
	pthread_mutex_t mu;
	char out_acc[JOB_LINE_MAX], err_acc[JOB_LINE_MAX]; /* partial lines */
};

/* ------------------------------------------------------------ the reaper */

static volatile sig_atomic_t stop_asked;

static void on_stop_signal(int sig)
{
	stop_asked = 1;
}

/* The reaper's tick: only there to interrupt waitpid so the loop looks at
 * stop_asked again (a signal between the check and waitpid would be lost
 * otherwise). */
static void on_tick(int sig)
{
}

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* Runs in the reaper; never returns. */
static void reaper_main(pid_t agent, char **argv, char **envp, const char *cwd, int grace_ms,
                        int out_fd, int err_fd, int status_fd)
{
	struct itimerval tick = {.it_interval = {.tv_usec = REAPER_TICK_MS * 1000},
	                         .it_value = {.tv_usec = REAPER_TICK_MS * 1000}};
	struct sigaction sa = {0};
	sigset_t none;
	pid_t cmd;
	int status = 0, ticks_since_stop = -1;

	setsid();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: waitpid returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_tick;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&none);
	if (getppid() != agent)
		_exit(126); /* the agent died before PDEATHSIG was armed */

	/* Signals stay blocked (as the agent forked us) until both sides of
	 * this fork have their handlers right: a SIGTERM in between is held,
	 * not lost to the wrong handler. */
	cmd = fork();
	if (cmd == 0) {
		struct sigaction dfl = {0};
		int devnull = open("/dev/null", O_RDONLY);

		dfl.sa_handler = SIG_DFL;
		sigaction(SIGTERM, &dfl, NULL);
		sigaction(SIGHUP, &dfl, NULL);
		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGALRM, &dfl, NULL);
		sigaction(SIGPIPE, &dfl, NULL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		if (cwd && chdir(cwd) < 0) {
			write_all(2, "clusterdoc-agent: cannot enter the job's directory\n", 51);
			_exit(127);
		}
		execvpe(argv[0], argv, envp);
		write_all(2, "clusterdoc-agent: cannot run ", 29);
		write_all(2, argv[0], strlen(argv[0]));
		write_all(2, ": ", 2);
		write_all(2, strerror(errno), strlen(strerror(errno)));
		write_all(2, "\n", 1);
		_exit(127);
	}
	close(out_fd);
	close(err_fd);
	if (cmd < 0)
		_exit(125);
	setpgid(cmd, cmd); /* also here: no race with the child's own call */
	sigprocmask(SIG_SETMASK, &none, NULL);
	write_all(status_fd, &cmd, sizeof(cmd));
	setitimer(ITIMER_REAL, &tick, NULL);

	for (;;) {
		pid_t got;

		if (stop_asked && ticks_since_stop < 0) {
			ticks_since_stop = 0;
			kill(-cmd, SIGTERM);
		} else if (ticks_since_stop >= 0 &&
		           ++ticks_since_stop * REAPER_TICK_MS >= grace_ms) {
			kill(-cmd, SIGKILL);
		}
		got = waitpid(cmd, &status, 0);
		if (got == cmd)
			break;
		if (got < 0 && errno != EINTR)
			break;
	}
	/* What is left of the group (workers whose parent died) goes too. */
	kill(-cmd, SIGKILL);
	write_all(status_fd, &status, sizeof(status));
	_exit(0);
}

/* ------------------------------------------------------------ the agent */

/* Split what arrived on one stream into lines; keeps a partial line in acc. */
static void feed(const char *stream, char *acc, size_t *acc_len, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n' || *acc_len == JOB_LINE_MAX) {
			job_log(stream, acc, *acc_len);
			*acc_len = 0;
			if (p[i] == '\n')
				continue;
		}
		acc[(*acc_len)++] = p[i];
	}
}

static void *reader_main(void *arg)
{
	struct proc_work *w = arg;
	char *out_acc = w->out_acc, *err_acc = w->err_acc;
	size_t out_len = 0, err_len = 0, status_got = 0;
	unsigned char status_buf[sizeof(pid_t) + sizeof(int)];
	int fds[3] = {w->out_fd, w->err_fd, w->status_fd}, open_fds = 3, status = 0,
	    have_status = 0;
	int64_t drain_until = 0;
	char buf[65536];

	if (w->group_read) {
		memcpy(status_buf, &w->group, sizeof(pid_t));
		status_got = sizeof(pid_t);
	}

	while (open_fds > 0) {
		struct pollfd p[3];
		int np = 0, timeout = -1;

		for (int k = 0; k < 3; k++) {
			if (fds[k] >= 0)
				p[np++] = (struct pollfd){.fd = fds[k], .events = POLLIN};
		}
		if (drain_until) {
			/* The status is in: give the pipes a moment to drain, in
			 * case something outside the group still holds them. */
			timeout = (int)(drain_until - cd_now_ms());
			if (timeout <= 0)
				break;
		}
		if (poll(p, (nfds_t)np, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < 3; k++) {
			ssize_t n;
			int j;

			if (fds[k] < 0)
				continue;
			for (j = 0; j < np && p[j].fd != fds[k]; j++)
				;
			if (j == np || !p[j].revents)
				continue;
			n = read(fds[k], buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(fds[k]);
				fds[k] = -1;
				open_fds--;
				continue;
			}
			if (k == 0)
				feed("out", out_acc, &out_len, buf, (size_t)n);
			else if (k == 1)
				feed("err", err_acc, &err_len, buf, (size_t)n);
			else {
				for (ssize_t b = 0; b < n && status_got < sizeof(status_buf); b++)
					status_buf[status_got++] = (unsigned char)buf[b];
				if (status_got >= sizeof(pid_t)) {
					pid_t g;

					memcpy(&g, status_buf, sizeof(g));
					pthread_mutex_lock(&w->mu);
					w->group = g;
					pthread_mutex_unlock(&w->mu);
				}
				if (status_got == sizeof(status_buf)) {
					memcpy(&status, status_buf + sizeof(pid_t), sizeof(int));
					have_status = 1;
					drain_until = cd_now_ms() + 2000;
				}
			}
		}
	}
	for (int k = 0; k < 3; k++) {
		if (fds[k] >= 0)
			close(fds[k]);
	}
	if (out_len)
		job_log("out", out_acc, out_len);
	if (err_len)
		job_log("err", err_acc, err_len);
	waitpid(w->reaper, NULL, 0);
	if (!have_status)
		job_finish(-1, 0, "the job's reaper ended without the command's status", NULL);
	else if (WIFSIGNALED(status))
		job_finish(-1, WTERMSIG(status), NULL, NULL);
	else
		job_finish(WEXITSTATUS(status), 0, NULL, NULL);
	return NULL;
}

static void proc_stop(void *work, int grace_ms)
{
	struct proc_work *w = work;

	kill(w->reaper, SIGTERM);
}

static void proc_reap(void *work, int force)
{
	struct proc_work *w = work;

	if (force) {
		pthread_mutex_lock(&w->mu);
		if (w->group > 0)
			kill(-w->group, SIGKILL);
		pthread_mutex_unlock(&w->mu);
		kill(w->reaper, SIGKILL);
	}
	if (w->reader_started)
		pthread_join(w->reader, NULL);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static const struct job_kind process_kind = {
    .name = "process", .stop = proc_stop, .reap = proc_reap};

/* environ plus the request's env (a new array of new strings). */
static char **build_env(json_t *env)
{
	size_t n = 0, k = 0;
	const char *key;
	json_t *v;
	char **out;

	while (environ[n])
		n++;
	out = cd_calloc(n + json_object_size(env) + 1, sizeof(*out));
	json_object_foreach(env, key, v)
	{
		const char *val = json_string_value(v), *home = getenv("HOME");

		/* A value "~/..." is a path under this node's home, as a shell's
		 * assignment would have it: the head cannot know that home. */
		if (strncmp(val, "~/", 2) == 0 && home && home[0] == '/')
			out[k++] = cd_asprintf("%s=%s%s", key, home, val + 1);
		else
			out[k++] = cd_asprintf("%s=%s", key, val);
	}
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t klen = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		int overridden = 0;

		json_object_foreach(env, key, v)
		{
			if (strlen(key) == klen && strncmp(key, environ[i], klen) == 0)
				overridden = 1;
		}
		if (!overridden)
			out[k++] = cd_strdup(environ[i]);
	}
	return out;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The request's argv, env and cwd; -1 with msg. */
static int read_request(json_t *req, char ***argv, char ***envp, char *cwd, size_t cwdlen,
                        char *msg, size_t msglen)
{
	json_t *args = json_object_get(req, "argv"), *env = json_object_get(req, "env"), *v;
	const char *dir = json_string_value(json_object_get(req, "cwd")), *key;
	size_t i;

	*argv = NULL;
	*envp = NULL;
	cwd[0] = '\0';
	if (!json_is_array(args) || json_array_size(args) == 0 ||
	    json_array_size(args) > JOB_PROCESS_MAX_ARGS) {
		snprintf(msg, msglen, "\"argv\" must be 1 to %d strings", JOB_PROCESS_MAX_ARGS);
		return -1;
	}
	if (env && !json_is_object(env)) {
		snprintf(msg, msglen, "\"env\" must be an object of strings");
		return -1;
	}
	json_object_foreach(env, key, v)
	{
		if (!json_is_string(v) || !*key || strchr(key, '=')) {
			snprintf(msg, msglen, "env \"%.64s\" must be a string named without '='",
			         key);
			return -1;
		}
	}
	if (dir && filerecv_expand(dir, cwd, cwdlen, msg, msglen) < 0)
		return -1;
	*argv = cd_calloc(json_array_size(args) + 1, sizeof(**argv));
	json_array_foreach(args, i, v)
	{
		if (!json_is_string(v)) {
			snprintf(msg, msglen, "argv[%zu] is not a string", i);
			free_strv(*argv);
			*argv = NULL;
			return -1;
		}
		(*argv)[i] = cd_strdup(json_string_value(v));
	}
	if (env) {
		*envp = build_env(env);
	} else {
		json_t *none = json_object();

		*envp = build_env(none);
		json_decref(none);
	}
	return 0;
}

/* The command's process group, which the reaper writes first on the status
 * pipe right after its fork: read here so that proc_start's answer carries
 * it (the head ends the group itself when this agent stops answering).
 * 0 when it did not come within GROUP_WAIT_MS; the reader thread then
 * reads it as before. */
static pid_t read_group(int status_fd)
{
	struct pollfd p = {.fd = status_fd, .events = POLLIN};
	pid_t g = 0;
	ssize_t n;

	if (poll(&p, 1, GROUP_WAIT_MS) != 1)
		return 0;
	n = read(status_fd, &g, sizeof(g));
	return n == (ssize_t)sizeof(g) ? g : 0;
}

pid_t job_process_session(void)
{
	return job_running() ? job_session : 0;
}

json_t *job_process_start(json_t *req, const char **code, char *msg, size_t msglen)
{
	char **argv = NULL, **envp = NULL, cwd[PATH_MAX];
	int out[2] = {-1, -1}, err[2] = {-1, -1}, st[2] = {-1, -1};
	struct proc_work *w = NULL;
	json_t *result = NULL;
	pid_t agent = getpid();
	sigset_t all, old;
	long long grace = JOB_PROCESS_GRACE_MS;

	*code = "bad-request";
	if (proto_field_int(req, "grace_ms", 0, JOB_PROCESS_GRACE_MAX_MS, &grace) < 0) {
		snprintf(msg, msglen, "\"grace_ms\" must be 0 to %d", JOB_PROCESS_GRACE_MAX_MS);
		goto out;
	}
	if (read_request(req, &argv, &envp, cwd, sizeof(cwd), msg, msglen) < 0)
		goto out;
	*code = "io";
	if (cwd[0] && cd_mkdir_p(cwd, msg, msglen) < 0)
		goto out;
	if (job_running()) {
		*code = "busy";
		snprintf(msg, msglen, "a job is still running here; stop it first");
		goto out;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		snprintf(msg, msglen, "pipe: %s", strerror(errno));
		goto out;
	}
	w = cd_calloc(1, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	/* The reaper starts with every signal blocked, so a job_stop that comes
	 * before it has installed its handlers is held, not fatal to it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->reaper = fork();
	if (w->reaper != 0)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w->reaper < 0) {
		snprintf(msg, msglen, "fork: %s", strerror(errno));
		pthread_mutex_destroy(&w->mu);
		free(w);
		w = NULL;
		goto out;
	}
	if (w->reaper == 0) {
		close(out[0]);
		close(err[0]);
		close(st[0]);
		/* dup2 in the command clears O_CLOEXEC on 1 and 2 only. */
		reaper_main(agent, argv, envp, cwd[0] ? cwd : NULL, (int)grace, out[1], err[1],
		            st[1]);
	}
	close(out[1]);
	close(err[1]);
	close(st[1]);
	w->out_fd = out[0];
	w->err_fd = err[0];
	w->status_fd = st[0];
	out[0] = err[0] = st[0] = out[1] = err[1] = st[1] = -1;
	w->group = read_group(w->status_fd);
	w->group_read = w->group > 0;
	if (job_begin(&process_kind, w, msg, msglen) < 0) {
		*code = "busy";
		kill(w->reaper, SIGKILL);
		waitpid(w->reaper, NULL, 0);
		close(w->out_fd);
		close(w->err_fd);
		close(w->status_fd);
		pthread_mutex_destroy(&w->mu);
		free(w);
		goto out;
	}
	if (pthread_create(&w->reader, NULL, reader_main, w) == 0)
		w->reader_started = 1;
	else
		job_finish(-1, 0, "could not start the job's reader thread", NULL);
	job_session = w->reaper;
	result = json_pack("{sI}", "pid", (json_int_t)w->reaper);
	if (w->group > 0)
		json_object_set_new(result, "pgid", json_integer(w->group));
out:
	for (int k = 0; k < 2; k++) {
		if (out[k] >= 0)
			close(out[k]);
		if (err[k] >= 0)
			close(err[k]);
		if (st[k] >= 0)
			close(st[k]);
	}
	free_strv(argv);
	free_strv(envp);
	return result;
}
