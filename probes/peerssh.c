/*
 * peerssh.c - the agent's side of the node-to-node SSH check (peerssh.h):
 * one `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes PEER true` per
 * peer, PEERSSH_PARALLEL at a time, each killed at its deadline, and the
 * reason read from its stderr.
 */
#include "peerssh.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct {
	const char *id;
	const char *text;
} reasons[PEERSSH_NREASONS] = {
    [PEERSSH_OK] = {"ok", "ok"},
    [PEERSSH_HOSTKEY_UNKNOWN] = {"hostkey-unknown", "host key unknown"},
    [PEERSSH_HOSTKEY_CHANGED] = {"hostkey-changed", "host key changed"},
    [PEERSSH_DENIED] = {"denied", "permission denied"},
    [PEERSSH_REFUSED] = {"refused", "connection refused"},
    [PEERSSH_TIMEOUT] = {"timeout", "timeout"},
    [PEERSSH_UNREACHABLE] = {"unreachable", "no route to host"},
    [PEERSSH_RESOLVE] = {"resolve", "name does not resolve"},
    [PEERSSH_NO_CLIENT] = {"no-client", "no ssh client"},
    [PEERSSH_OTHER] = {"other", "ssh failed"},
};

const char *peerssh_reason_id(enum peerssh_reason r)
{
	return r < PEERSSH_NREASONS ? reasons[r].id : "other";
}

const char *peerssh_reason_text(enum peerssh_reason r)
{
	return r < PEERSSH_NREASONS ? reasons[r].text : "ssh failed";
}

enum peerssh_reason peerssh_reason_from_id(const char *id)
{
	for (int r = 0; r < PEERSSH_NREASONS; r++)
		if (id && strcmp(id, reasons[r].id) == 0)
			return (enum peerssh_reason)r;
	return PEERSSH_OTHER;
}

/* ---------------------------------------------------------------- classify */

/* ssh's words, strongest first: a changed key is also a failed
 * verification, and a denied login may follow a warning. */
static const struct {
	const char *words;
	enum peerssh_reason reason;
} patterns[] = {
    {"REMOTE HOST IDENTIFICATION HAS CHANGED", PEERSSH_HOSTKEY_CHANGED},
    {"has changed and you have requested strict checking", PEERSSH_HOSTKEY_CHANGED},
    {"host key is known for", PEERSSH_HOSTKEY_UNKNOWN},
    {"Host key verification failed", PEERSSH_HOSTKEY_UNKNOWN},
    {"Permission denied", PEERSSH_DENIED},
    {"Too many authentication failures", PEERSSH_DENIED},
    {"Connection refused", PEERSSH_REFUSED},
    {"Connection timed out", PEERSSH_TIMEOUT},
    {"Operation timed out", PEERSSH_TIMEOUT},
    {"No route to host", PEERSSH_UNREACHABLE},
    {"Network is unreachable", PEERSSH_UNREACHABLE},
    {"Could not resolve hostname", PEERSSH_RESOLVE},
    {"Name or service not known", PEERSSH_RESOLVE},
};

/* The line of err[0..len) holding the first byte at off, into detail. */
static void line_at(const char *err, size_t len, size_t off, char *detail)
{
	size_t s = off, e = off;

	while (s > 0 && err[s - 1] != '\n')
		s--;
	while (e < len && err[e] != '\n' && err[e] != '\r')
		e++;
	snprintf(detail, PEERSSH_DETAIL_MAX, "%.*s", (int)(e - s), err + s);
	/* plain ASCII: the line goes into JSON, which wants valid UTF-8 */
	for (char *d = detail; *d; d++)
		if ((unsigned char)*d < 0x20 || (unsigned char)*d > 0x7e)
			*d = '?';
}

static const char *find_words(const char *err, size_t len, const char *words)
{
	size_t wl = strlen(words);

	for (size_t k = 0; k + wl <= len; k++)
		if (memcmp(err + k, words, wl) == 0)
			return err + k;
	return NULL;
}

enum peerssh_reason peerssh_classify(int status, int timed_out, const char *err, size_t len,
                                     char *detail)
{
	size_t e = len;

	detail[0] = '\0';
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return PEERSSH_OK;
	for (size_t k = 0; k < CD_ARRAY_LEN(patterns); k++) {
		const char *at = find_words(err, len, patterns[k].words);

		if (at) {
			line_at(err, len, (size_t)(at - err), detail);
			return patterns[k].reason;
		}
	}
	/* the last line that says something */
	while (e > 0 && (err[e - 1] == '\n' || err[e - 1] == '\r' || err[e - 1] == ' '))
		e--;
	if (e > 0)
		line_at(err, e, e - 1, detail);
	if (timed_out)
		return PEERSSH_TIMEOUT;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return PEERSSH_NO_CLIENT;
	return PEERSSH_OTHER;
}

/* ---------------------------------------------------------------- the agent */

struct peer_child {
	const char *peer;
	pid_t pid; /* 0: not started; -1: finished */
	int fd;    /* its stderr, -1 once closed */
	int status;
	int timed_out;
	int64_t start_ms, end_ms;
	char err[PEERSSH_STDERR_MAX];
	size_t len;
};

/* Start `ssh ... PEER true` with stdin and stdout on /dev/null, stderr
 * into a pipe. A fork or pipe failure is the child's own 127-like end. */
static void child_start(struct peer_child *c, int timeout_ms)
{
	char cto[64];
	int p[2];

	/* ConnectTimeout in whole seconds, under our own deadline so that ssh
	 * says "timed out" itself where it can */
	snprintf(cto, sizeof(cto), "ConnectTimeout=%d",
	         timeout_ms > 2000 ? timeout_ms / 1000 - 1 : 1);
	c->start_ms = cd_now_ms();
	if (pipe2(p, O_CLOEXEC) < 0) {
		c->len = (size_t)snprintf(c->err, sizeof(c->err), "pipe: %s\n", strerror(errno));
		c->pid = -1;
		c->status = 255 << 8;
		c->end_ms = c->start_ms;
		return;
	}
	c->pid = fork();
	if (c->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		dup2(p[1], 2);
		execlp("ssh", "ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
		       cto, "-o", "LogLevel=ERROR", "-T", c->peer, "true", (char *)NULL);
		dprintf(2, "ssh: %s\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (c->pid < 0) {
		close(p[0]);
		c->len = (size_t)snprintf(c->err, sizeof(c->err), "fork: %s\n", strerror(errno));
		c->pid = -1;
		c->status = 255 << 8;
		c->end_ms = c->start_ms;
		return;
	}
	c->fd = p[0];
}

/* Read what the child wrote; at EOF reap it. The cap keeps the first
 * PEERSSH_STDERR_MAX bytes (ssh's reason comes first; the rest is drained). */
static void child_read(struct peer_child *c)
{
	char sink[1024];
	ssize_t r;

	if (c->len < sizeof(c->err) - 1)
		r = read(c->fd, c->err + c->len, sizeof(c->err) - 1 - c->len);
	else
		r = read(c->fd, sink, sizeof(sink));
	if (r < 0 && errno == EINTR)
		return;
	if (r > 0) {
		if (c->len < sizeof(c->err) - 1)
			c->len += (size_t)r;
		return;
	}
	close(c->fd);
	c->fd = -1;
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->pid = -1;
	c->end_ms = cd_now_ms();
}

static void child_kill(struct peer_child *c)
{
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->pid = -1;
	c->timed_out = 1;
	c->end_ms = cd_now_ms();
}

/* Run every child, PEERSSH_PARALLEL at a time, each until its deadline. */
static void run_all(struct peer_child *cs, size_t n, int timeout_ms)
{
	struct pollfd pfd[PEERSSH_PARALLEL];
	size_t idx[PEERSSH_PARALLEL], next = 0, running = 0;

	for (;;) {
		int64_t now = cd_now_ms(), wait = -1;
		size_t np = 0;

		running = 0;
		for (size_t k = 0; k < n; k++)
			running += cs[k].pid > 0;
		while (running < PEERSSH_PARALLEL && next < n) {
			child_start(&cs[next++], timeout_ms);
			running += cs[next - 1].pid > 0;
		}
		if (!running && next == n)
			return;
		for (size_t k = 0; k < n && np < PEERSSH_PARALLEL; k++) {
			int64_t left;

			if (cs[k].pid <= 0)
				continue;
			left = cs[k].start_ms + timeout_ms - now;
			if (left <= 0) {
				child_kill(&cs[k]);
				continue;
			}
			if (wait < 0 || left < wait)
				wait = left;
			pfd[np] = (struct pollfd){.fd = cs[k].fd, .events = POLLIN};
			idx[np++] = k;
		}
		if (!np)
			continue;
		if (poll(pfd, np, (int)wait) < 0 && errno != EINTR) {
			/* no way to wait: end what runs, and start nothing more */
			const char *why = strerror(errno);

			for (size_t k = 0; k < n; k++)
				if (cs[k].pid > 0)
					child_kill(&cs[k]);
			for (; next < n; next++) {
				cs[next].pid = -1;
				cs[next].status = 255 << 8;
				cs[next].len = (size_t)snprintf(cs[next].err, sizeof(cs[next].err),
				                                "poll: %s\n", why);
			}
			return;
		}
		for (size_t q = 0; q < np; q++)
			if (pfd[q].revents)
				child_read(&cs[idx[q]]);
	}
}

json_t *peerssh_agent_run(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *peers = json_object_get(req, "peers"), *t = json_object_get(req, "timeout_ms");
	json_t *results = NULL, *out = NULL;
	struct peer_child *cs = NULL;
	int timeout_ms = PEERSSH_TIMEOUT_MS;
	size_t n;

	n = json_array_size(peers);
	if (!json_is_array(peers) || n < 1 || n > PEERSSH_MAX_PEERS) {
		*code = "bad-request";
		snprintf(msg, msglen, "peer_ssh: \"peers\" must list 1 to %d names",
		         PEERSSH_MAX_PEERS);
		return NULL;
	}
	if (t) {
		json_int_t v = json_integer_value(t);

		if (!json_is_integer(t) || v < 1000 || v > 120000) {
			*code = "bad-request";
			snprintf(msg, msglen, "peer_ssh: \"timeout_ms\" must be 1000 to 120000");
			return NULL;
		}
		timeout_ms = (int)v;
	}
	cs = cd_calloc(n, sizeof(*cs));
	for (size_t k = 0; k < n; k++) {
		const char *p = json_string_value(json_array_get(peers, k));

		/* a name starting with '-' would be an ssh option */
		if (!p || !*p || *p == '-' || strlen(p) > 255 || strpbrk(p, " \t\n\r")) {
			*code = "bad-request";
			snprintf(msg, msglen, "peer_ssh: peer %zu is not a host name", k);
			goto out;
		}
		cs[k].peer = p;
		cs[k].fd = -1;
	}
	run_all(cs, n, timeout_ms);
	results = json_array();
	for (size_t k = 0; k < n; k++) {
		char detail[PEERSSH_DETAIL_MAX];
		enum peerssh_reason r =
		    peerssh_classify(cs[k].status, cs[k].timed_out, cs[k].err, cs[k].len, detail);

		json_array_append_new(
		    results, json_pack("{sssbsssssisI}", "peer", cs[k].peer, "ok", r == PEERSSH_OK,
		                       "reason", peerssh_reason_id(r), "detail", detail, "status",
		                       WIFEXITED(cs[k].status) ? WEXITSTATUS(cs[k].status) : -1,
		                       "ms", (json_int_t)(cs[k].end_ms - cs[k].start_ms)));
	}
	out = json_pack("{so}", "results", results);
out:
	free(cs);
	return out;
}
