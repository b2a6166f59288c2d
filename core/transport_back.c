/* SPDX-License-Identifier: MIT */
/*
 * transport_back.c - the connect-back transport (transport_back.h): a
 * node's conn, pumping the agent's socket like transport_proc.c pumps
 * pipes once the listener handed it over (transport_back_accept.c); the
 * listener's life; the table of launchers (transport_back_srun.c,
 * transport_back_local.c) and their stderr. transport_back_internal.h
 * says which file does what.
 */
#include "transport_back_internal.h"
#include "cd.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launchers, one row per enum launcher, in its order. */
static const struct back_launcher launchers[] = {
    [LAUNCHER_SSH] = {LAUNCHER_SSH, "ssh", NULL, NULL, NULL, NULL},
    [LAUNCHER_SRUN] = {LAUNCHER_SRUN, "srun", back_srun_launch, back_srun_line, back_srun_fini,
                       back_srun_waiting},
    [LAUNCHER_LOCAL_CONNECT] = {LAUNCHER_LOCAL_CONNECT, "local-connect", back_local_launch, NULL,
                                back_local_fini, NULL},
};

const char *launcher_name(enum launcher l)
{
	return (size_t)l < sizeof(launchers) / sizeof(launchers[0]) ? launchers[l].name : "ssh";
}

int launcher_parse(const char *s)
{
	for (size_t k = 0; k < sizeof(launchers) / sizeof(launchers[0]); k++)
		if (strcmp(s, launchers[k].name) == 0)
			return (int)launchers[k].kind;
	return -1;
}

const char *backlisten_address(const struct backlisten *b)
{
	return b->addr;
}

static const struct backlisten *sort_ctx;
static int by_name(const void *x, const void *y)
{
	return strcmp(sort_ctx->hosts[*(const size_t *)x], sort_ctx->hosts[*(const size_t *)y]);
}

/* The index of the node named name, or -1. */
long back_find_host(const struct backlisten *b, const char *name)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, b->hosts[b->order[mid]]);

		if (c == 0)
			return (long)b->order[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* ---- a node's conn ---- */

static void back_fail(struct conn *c, const char *code, const char *msg)
{
	struct backconn *p = c->priv;

	if (p->failed)
		return;
	p->failed = 1;
	c->ev->failed(c, code, msg);
}

static void on_sock(struct loop *loop, int fd, short revents, void *arg)
{
	struct conn *c = arg;
	struct backconn *p = c->priv;
	char msg[CD_ERRLEN];

	if (revents & POLLOUT) {
		if (buf_write_fd(&c->out, fd) == CD_ERR_IO) {
			snprintf(msg, sizeof(msg), "the agent's connection broke: %s",
			         strerror(errno));
			back_fail(c, "agent", msg);
			return;
		}
		back_watch(c);
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		ssize_t n = buf_read_fd(&c->in, fd);

		if (n > 0) {
			c->ev->data(c);
		} else if (n == CD_ERR_TOOBIG) {
			back_fail(c, "agent",
			          "the agent sent more than the buffer cap without a newline");
		} else if (n == 0) {
			loop_unwatch(loop, fd);
			if (!p->failed) {
				p->failed = 1; /* nothing more will be reported */
				c->ev->closed(c);
			}
		} else if (n == CD_ERR_IO) {
			snprintf(msg, sizeof(msg), "the agent's connection broke: %s",
			         strerror(errno));
			back_fail(c, "agent", msg);
		}
	}
}

void back_watch(struct conn *c)
{
	struct backconn *p = c->priv;

	if (p->fd >= 0 && !p->failed)
		loop_watch(c->loop, p->fd, (short)(POLLIN | (c->out.len ? POLLOUT : 0)), on_sock,
		           c);
}

/* The launcher started the node's agent (local-connect knows when): the
 * owner's handshake deadline runs from now, not from the whole launch. */
void back_started(struct conn *c)
{
	struct backconn *p = c->priv;

	if (p->started || p->failed)
		return;
	p->started = 1;
	c->ev->connected(c);
}

static int back_start(struct conn *c)
{
	struct backlisten *b = c->cfg->back;
	struct backconn *p = cd_calloc(1, sizeof(*p));
	long i = b ? back_find_host(b, c->label) : -1;

	p->fd = -1;
	c->priv = p;
	if (i < 0) {
		back_fail(c, "launcher", "the node is not one the launcher started");
		return CD_ERR_IO;
	}
	p->host = (size_t)i;
	b->waiting[i] = c;
	if (b->dead[i]) {
		back_fail(c, "launcher", b->dead[i]);
		return CD_ERR_IO;
	}
	if (b->spawned_at[i])
		back_started(c);
	if (!p->failed && b->parked[i])
		back_adopt(b, (size_t)i, b->parked[i]);
	return 0;
}

static void back_flush(struct conn *c)
{
	struct backconn *p = c->priv;

	if (!p || p->fd < 0 || p->failed)
		return;
	if (buf_write_fd(&c->out, p->fd) == CD_ERR_IO) {
		char msg[CD_ERRLEN];

		snprintf(msg, sizeof(msg), "the agent's connection broke: %s", strerror(errno));
		back_fail(c, "agent", msg);
		return;
	}
	back_watch(c);
}

static void back_close(struct conn *c)
{
	struct backconn *p = c->priv;
	struct backlisten *b = c->cfg->back;

	if (!p)
		return;
	if (p->fd >= 0) {
		loop_unwatch(c->loop, p->fd);
		close(p->fd);
	}
	if (b && p->host < b->n && b->waiting[p->host] == c)
		b->waiting[p->host] = NULL;
	free(p);
	c->priv = NULL;
}

const struct transport_ops transport_back = {
    .name = "connect-back",
    .upload_mode = UPLOAD_NONE,
    .start = back_start,
    .flush = back_flush,
    .close = back_close,
};

/* ---- the listener's life, and what every node's failure says ---- */

/* The launcher could not start host i's agent (msg says why, in its words). */
void back_fail_host(struct backlisten *b, size_t i, const char *msg)
{
	char flood[160] = "";

	if (b->taken[i] || b->dead[i])
		return;
	if (b->dropped >= FLOOD_MIN)
		snprintf(flood, sizeof(flood),
		         "; meanwhile %zu connections to %s did not prove themselves (a flood or a "
		         "scanner)",
		         b->dropped, b->addr);
	b->dead[i] = cd_asprintf("%s%s%s", msg, flood,
	                         b->twice >= 0 && (size_t)b->twice != i ? b->note : "");
	if (b->waiting[i])
		back_fail(b->waiting[i], "launcher", b->dead[i]);
}

size_t backlisten_dropped(const struct backlisten *b)
{
	return b->dropped;
}

int backlisten_flooded(const struct backlisten *b)
{
	return b->dropped >= FLOOD_MIN;
}

const char *backlisten_waiting(const struct backlisten *b)
{
	const char *w = b->launcher->waiting ? b->launcher->waiting(b) : NULL;

	return w ? w : "";
}

const char *backlisten_note(const struct backlisten *b, const char *host)
{
	long i = back_find_host(b, host);

	return b->twice >= 0 && i != b->twice ? b->note : "";
}

struct backlisten *backlisten_new(struct loop *loop, enum launcher l, const char *listen_arg,
                                  char *const hosts[], size_t n, int handshake_timeout_ms,
                                  char *err, size_t errlen)
{
	struct backlisten *b = cd_calloc(1, sizeof(*b));

	b->loop = loop;
	b->kind = l;
	b->launcher = &launchers[l];
	b->fd = -1;
	b->err_pipe = -1;
	b->err_pipe_w = -1;
	b->handshake_ms = handshake_timeout_ms;
	b->twice = -1;
	b->n = n;
	b->hosts = cd_calloc(n ? n : 1, sizeof(*b->hosts));
	b->order = cd_calloc(n ? n : 1, sizeof(*b->order));
	for (size_t i = 0; i < n; i++) {
		b->hosts[i] = cd_strdup(hosts[i]);
		b->order[i] = i;
	}
	sort_ctx = b;
	qsort(b->order, n, sizeof(*b->order), by_name);
	b->waiting = cd_calloc(n ? n : 1, sizeof(*b->waiting));
	b->parked = cd_calloc(n ? n : 1, sizeof(*b->parked));
	b->taken = cd_calloc(n ? n : 1, 1);
	b->spawned_at = cd_calloc(n ? n : 1, 1);
	b->dead = cd_calloc(n ? n : 1, sizeof(*b->dead));
	b->exited = cd_calloc(n ? n : 1, sizeof(*b->exited));
	buf_init(&b->err, LAUNCHER_ERR_MAX);
	cd_random_token(b->secret, 33);
	cd_random_token(b->secret + 32, 33);
	b->pend_max = n + PEND_SPARE;
	back_raise_nofile(n + b->pend_max);
	if (back_listen(b, listen_arg, err, errlen) < 0) {
		backlisten_free(b);
		return NULL;
	}
	return b;
}

int backlisten_launch(struct backlisten *b, const char *agent_path, char *err, size_t errlen)
{
	if (!b->launcher->launch)
		return cd_errf(err, errlen, CD_ERR_IO, "the %s launcher starts no agents here",
		               b->launcher->name);
	return b->launcher->launch(b, agent_path, err, errlen);
}

void backlisten_free(struct backlisten *b)
{
	int64_t until = cd_now_ms() + LAUNCHER_EXIT_MS;

	if (!b)
		return;
	if (b->fd >= 0) {
		loop_unwatch(b->loop, b->fd);
		close(b->fd);
	}
	loop_timer_cancel(b->loop, b->pause_timer);
	while (b->pends)
		back_pend_free(b->pends, 1);
	for (size_t i = 0; b->parked && i < b->n; i++)
		if (b->parked[i])
			back_pend_free(b->parked[i], 1);
	/* The agents' sockets are closed: they end on their own. */
	if (b->launcher->fini)
		b->launcher->fini(b, until);
	for (size_t i = 0; i < b->n; i++) {
		free(b->hosts[i]);
		free(b->dead[i]);
		free(b->exited[i]);
	}
	memset(b->secret, 0, sizeof(b->secret));
	buf_fini(&b->err);
	free(b->hosts);
	free(b->order);
	free(b->waiting);
	free(b->parked);
	free(b->taken);
	free(b->spawned_at);
	free(b->dead);
	free(b->exited);
	free(b);
}

/* ---- the launcher's stderr ---- */

/* A line of the launcher's stderr: kept, then given to its launcher's row. */
static void launcher_line(struct backlisten *b, const char *line)
{
	buf_append_str(&b->err, line);
	buf_append_str(&b->err, "\n");
	if (b->err.len > LAUNCHER_ERR_MAX / 2)
		buf_consume(&b->err, b->err.len - LAUNCHER_ERR_MAX / 2);
	if (b->launcher->line)
		b->launcher->line(b, line);
}

void back_launcher_read(struct backlisten *b, int fd)
{
	char tmp[4096];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			if (tmp[k] == '\n') {
				b->errline[b->errline_len] = '\0';
				launcher_line(b, b->errline);
				b->errline_len = 0;
			} else if (b->errline_len < sizeof(b->errline) - 1) {
				b->errline[b->errline_len++] = tmp[k];
			}
		}
	}
	if (n == 0)
		loop_unwatch(b->loop, fd);
}

/* The last line the launcher printed, or "". */
const char *back_launcher_last(struct backlisten *b)
{
	static char last[512];
	const char *s = b->err.data, *end, *start;

	last[0] = '\0';
	if (!s || !b->err.len)
		return last;
	end = s + b->err.len;
	while (end > s && end[-1] == '\n')
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(last, sizeof(last), "%.*s", (int)(end - start), start);
	return last;
}

/* The last line of the launcher's output that names host ("NAME:"), or "". */
const char *back_launcher_said(struct backlisten *b, const char *host)
{
	static char said[512];
	const char *s = b->err.data, *end, *at = NULL, *p;
	size_t hl = strlen(host);

	said[0] = '\0';
	if (!s)
		return said;
	end = s + b->err.len;
	for (p = s; p < end && (p = strstr(p, host)); p += hl)
		if (p[hl] == ':' && (p == s || p[-1] == ' ' || p[-1] == '\n'))
			at = p;
	if (!at)
		return said;
	while (at > s && at[-1] != '\n')
		at--;
	snprintf(said, sizeof(said), "%.*s", (int)strcspn(at, "\n"), at);
	return said;
}
