/* SPDX-License-Identifier: MIT */
/*
 * transport_back_local.c - the local-connect launcher
 * (transport_back_internal.h): the head spawns one local agent per node, a
 * batch per loop turn, each with its own node's key (measurement: many
 * nodes on one machine).
 */
#include "transport_back_internal.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void on_local_err(struct loop *loop, int fd, short revents, void *arg)
{
	back_launcher_read(arg, fd);
}

static void on_reap(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;
	int waiting = 0;

	b->reap_timer = 0;
	for (size_t i = 0; i < b->n; i++) {
		char how[64], msg[CD_ERRLEN];
		const char *last;
		int status;

		waiting |= !b->taken[i] && !b->dead[i];
		if (b->pids[i] <= 0 || waitpid(b->pids[i], &status, WNOHANG) != b->pids[i])
			continue;
		b->pids[i] = 0;
		b->live--;
		if (b->taken[i])
			continue;
		if (b->err_pipe >= 0)
			back_launcher_read(b, b->err_pipe);
		child_describe_status(status, how, sizeof(how));
		last = back_launcher_said(b, b->hosts[i]);
		snprintf(msg, sizeof(msg), "the local agent %s before it connected back%s%s", how,
		         last[0] ? ": " : "", last);
		back_fail_host(b, i, msg);
	}
	if (b->live || b->spawned < b->n)
		b->reap_timer =
		    loop_timer_add(loop, waiting ? REAP_BUSY_MS : REAP_IDLE_MS, on_reap, b);
}

/* Start the next batch of local agents; the loop accepts the first ones'
 * connections meanwhile, so none waits for the whole launch. */
static void spawn_batch(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;
	char *argv[] = {b->agent, "--connect", b->addr, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	size_t end = b->spawned + SPAWN_BATCH < b->n ? b->spawned + SPAWN_BATCH : b->n;

	b->spawn_timer = 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, b->err_pipe_w, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	for (; b->spawned < end; b->spawned++) {
		size_t i = b->spawned;
		char key[BACKAUTH_PROOF_HEX];
		int rc;

		/* Each agent gets its own node's key, never the run's secret:
		 * it can prove its own node and no other. */
		if (backauth_node_key(b->secret, b->hosts[i], key) < 0) {
			back_fail_host(b, i,
			               "not a node name the connect-back handshake can carry "
			               "([A-Za-z0-9._-], 1-127 characters)");
			continue;
		}
		snprintf(b->name_env, sizeof(b->name_env), "%s=%s", BACKAUTH_NAME_ENV, b->hosts[i]);
		snprintf(b->key_env, sizeof(b->key_env), "%s=%s", BACKAUTH_KEY_ENV, key);
		memset(key, 0, sizeof(key));
		rc = posix_spawn(&b->pids[i], b->agent, &fa, &attr, argv, b->envp);
		if (rc) {
			char msg[CD_ERRLEN];

			b->pids[i] = 0;
			snprintf(msg, sizeof(msg), "cannot start %s: %s", b->agent, strerror(rc));
			back_fail_host(b, i, msg);
		} else {
			b->live++;
			b->spawned_at[i] = 1;
			if (b->waiting[i])
				back_started(b->waiting[i]);
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (b->spawned < b->n) {
		b->spawn_timer = loop_timer_add(loop, 0, spawn_batch, b);
		return;
	}
	/* all started: no key is needed here any more */
	memset(b->key_env, 0, sizeof(b->key_env));
	close(b->err_pipe_w);
	b->err_pipe_w = -1;
}

int back_local_launch(struct backlisten *b, const char *agent, char *err, size_t errlen)
{
	size_t ne = 0;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "pipe: %s", strerror(errno));
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	b->err_pipe = p[0];
	b->err_pipe_w = p[1];
	loop_watch(b->loop, p[0], POLLIN, on_local_err, b);
	while (environ && environ[ne])
		ne++;
	b->envp = cd_calloc(ne + 3, sizeof(*b->envp));
	ne = 0;
	for (size_t i = 0; environ && environ[i]; i++)
		if (strncmp(environ[i], "CLUSTERDOC_BACK_", 16) != 0)
			b->envp[ne++] = environ[i];
	b->envp[ne] = b->key_env;
	b->envp[ne + 1] = b->name_env;
	b->agent = cd_strdup(agent);
	b->pids = cd_calloc(b->n ? b->n : 1, sizeof(*b->pids));
	b->reap_timer = loop_timer_add(b->loop, REAP_BUSY_MS, on_reap, b);
	spawn_batch(b->loop, b);
	return 0;
}

/* Wait for the local agent of node i until `until`; 1 once it is reaped. */
static int local_reaped(struct backlisten *b, size_t i, int64_t until)
{
	int status;

	while (b->pids[i] > 0 && waitpid(b->pids[i], &status, WNOHANG) == 0) {
		if (cd_now_ms() >= until)
			return 0;
		poll(NULL, 0, 5);
	}
	b->pids[i] = 0;
	return 1;
}

/* local-connect's row: wait for the local agents until `until`; those left
 * get SIGTERM (each kills the process groups it started: child_kill_all)
 * and LOCAL_TERM_MS to end, then SIGKILL (by their pids, which are this
 * head's children). */
void back_local_fini(struct backlisten *b, int64_t until)
{
	int64_t term_until;

	loop_timer_cancel(b->loop, b->reap_timer);
	loop_timer_cancel(b->loop, b->spawn_timer);
	for (size_t i = 0; b->pids && i < b->n; i++)
		if (!local_reaped(b, i, until))
			kill(b->pids[i], SIGTERM);
	term_until = cd_now_ms() + LOCAL_TERM_MS;
	for (size_t i = 0; b->pids && i < b->n; i++) {
		int status;

		if (!local_reaped(b, i, term_until)) {
			kill(b->pids[i], SIGKILL);
			waitpid(b->pids[i], &status, 0);
		}
	}
	if (b->err_pipe >= 0) {
		loop_unwatch(b->loop, b->err_pipe);
		close(b->err_pipe);
	}
	if (b->err_pipe_w >= 0)
		close(b->err_pipe_w);
	memset(b->key_env, 0, sizeof(b->key_env));
	free(b->agent);
	free(b->envp);
	free(b->pids);
}
