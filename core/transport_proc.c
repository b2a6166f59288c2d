/* SPDX-License-Identifier: MIT */
/*
 * transport_proc.c - the two transports that run a child process and pump
 * its pipes: `openssh` (the system ssh binary) and `local` (the agent
 * itself, for localhost and tests). They differ only in the argv they run
 * and in how they explain a child that dies before the agent answered.
 */
#include "cd.h"
#include "child.h"
#include "transport.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a local agent has to end its children on SIGTERM before it is
 * killed (it needs microseconds; a loaded machine gets slack). */
#define LOCAL_AGENT_TERM_MS 1000

struct proc {
	struct child child;
	int out_eof, err_eof, exited;
	int failed;   /* failure already reported */
	int got_data; /* the remote side has spoken: we are past authentication */
};

void conn_stderr_append(struct conn *c, const char *p, size_t n)
{
	if (n > c->errtail.max) {
		p += n - c->errtail.max;
		n = c->errtail.max;
	}
	if (c->errtail.len + n > c->errtail.max)
		buf_consume(&c->errtail, c->errtail.len + n - c->errtail.max);
	buf_append(&c->errtail, p, n);
}

void conn_stderr_last_line(const struct conn *c, char *dst, size_t len)
{
	const char *s = c->errtail.data, *end, *start;

	dst[0] = '\0';
	if (!s || !c->errtail.len)
		return;
	end = s + c->errtail.len;
	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(dst, len, "%.*s", (int)(end - start), start);
}

static void proc_fail(struct conn *c, const char *code, const char *msg)
{
	struct proc *p = c->priv;

	if (p->failed)
		return;
	p->failed = 1;
	c->ev->failed(c, code, msg);
}

/*
 * The ssh_config's ProxyCommand, run by a shell that prints its exit status
 * on stderr when it ends, so that one that ends before the session began
 * can be told from ssh's "Connection closed" (openssh_explain). ssh(1)
 * still expands its %-tokens (the wrapper has none of its own); the command
 * runs in a subshell of /bin/sh rather than in $SHELL (docs/ssh.md).
 */
#define PROXY_EXIT_MARK "clusterdoc-proxycommand-exit="

static char *proxy_wrap(const char *cmd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		cd_fatal("out of memory opening a memory stream");
	/* in a subshell, so that an `exit` in the command still reports */
	fputs("ProxyCommand=sh -c '(\n", f);
	for (const char *p = cmd; *p; p++)
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	fputs("\n)\ns=$?; echo " PROXY_EXIT_MARK "$s >&2; exit $s'", f);
	fclose(f);
	return text;
}

/* A ProxyCommand that ended before the session: its exit status (from the
 * wrapper's line) and the line it printed before it, into msg. Returns 0
 * when that is what happened, -1 otherwise. */
static int proxy_explain(struct conn *c, char *msg, size_t len)
{
	const char *tail = c->errtail.data, *mark, *end, *start;
	int status;

	if (!c->proxy_command || !tail || !c->errtail.len ||
	    !(mark = memmem(tail, c->errtail.len, PROXY_EXIT_MARK, strlen(PROXY_EXIT_MARK))) ||
	    sscanf(mark + strlen(PROXY_EXIT_MARK), "%d", &status) != 1)
		return -1;
	/* the proxy's own last line, before the mark */
	end = mark;
	while (end > tail && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	start = end;
	while (start > tail && start[-1] != '\n')
		start--;
	snprintf(msg, len,
	         "ProxyCommand in %s (`%.120s`) exited with status %d before the SSH session "
	         "began%s%.*s",
	         c->cfg->ssh_config ? c->cfg->ssh_config : "ssh_config", c->proxy_command, status,
	         end > start ? ": " : "", (int)(end - start), start);
	return 0;
}

/*
 * Map OpenSSH's messages to our failure codes (docs/architecture.md lists
 * them). ssh exits 255 for its own errors; anything else is the remote side.
 */
static void openssh_explain(struct conn *c, int status)
{
	static const struct {
		const char *needle, *code;
	} map[] = {
	    {"Could not resolve hostname", "resolve"},
	    {"Connection refused", "refused"},
	    {"banner exchange", "handshake-timeout"},
	    {"Connection timed out", "connect-timeout"},
	    {"No route to host", "unreachable"},
	    {"REMOTE HOST IDENTIFICATION HAS CHANGED", "hostkey-changed"},
	    {"No ED25519 host key is known", "hostkey-unknown"},
	    {"No ECDSA host key is known", "hostkey-unknown"},
	    {"No RSA host key is known", "hostkey-unknown"},
	    {"Host key verification failed", "hostkey-unknown"},
	    {"Permission denied", "auth"},
	    {"Too many authentication failures", "auth"},
	};
	char last[200], msg[CD_ERRLEN], how[64];
	const char *tail = c->errtail.data ? c->errtail.data : "";
	const struct proc *p = c->priv;

	conn_stderr_last_line(c, last, sizeof(last));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 255 && !p->got_data &&
	    proxy_explain(c, msg, sizeof(msg)) == 0) {
		proc_fail(c, "proxy", msg);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 255) {
		for (size_t i = 0; i < CD_ARRAY_LEN(map); i++) {
			if (strstr(tail, map[i].needle)) {
				snprintf(msg, sizeof(msg), "ssh: %s", last);
				proc_fail(c, map[i].code, msg);
				return;
			}
		}
		snprintf(msg, sizeof(msg), "ssh failed: %s", last[0] ? last : "no message");
		proc_fail(c, "ssh", msg);
		return;
	}
	child_describe_status(status, how, sizeof(how));
	snprintf(msg, sizeof(msg), "remote command %s%s%s", how, last[0] ? ": " : "", last);
	proc_fail(c, "agent", msg);
}

static void local_explain(struct conn *c, int status)
{
	char last[200], msg[CD_ERRLEN], how[64];

	conn_stderr_last_line(c, last, sizeof(last));
	child_describe_status(status, how, sizeof(how));
	snprintf(msg, sizeof(msg), "agent %s%s%s", how, last[0] ? ": " : "", last);
	proc_fail(c, "agent", msg);
}

static void proc_watch(struct conn *c);

/* Once stdout is closed and the child reaped, tell the owner how it ended. */
static void proc_maybe_done(struct conn *c)
{
	struct proc *p = c->priv;

	if (!p->out_eof || !p->exited || p->failed)
		return;
	if (WIFEXITED(p->child.status) && WEXITSTATUS(p->child.status) == 0) {
		p->failed = 1; /* nothing more will be reported */
		c->ev->closed(c);
	} else if (c->ops == &transport_openssh) {
		openssh_explain(c, p->child.status);
	} else {
		local_explain(c, p->child.status);
	}
}

static void on_fd(struct loop *loop, int fd, short revents, void *arg)
{
	struct conn *c = arg;
	struct proc *p = c->priv;
	char tmp[4096];

	if (fd == p->child.out_fd) {
		ssize_t n = buf_read_fd(&c->in, fd);

		if (n == CD_ERR_TOOBIG) {
			proc_fail(c, "agent",
			          "the agent sent more than the buffer cap without a newline");
			return;
		}
		if (n > 0) {
			if (!p->got_data) {
				p->got_data = 1;
				c->ev->authenticated(c);
				if (p->failed)
					return;
			}
			c->ev->data(c);
			return;
		}
		if (n == 0 || n == CD_ERR_IO) {
			p->out_eof = 1;
			loop_unwatch(loop, fd);
		}
	} else if (fd == p->child.err_fd) {
		ssize_t n = read(fd, tmp, sizeof(tmp));

		if (n > 0) {
			conn_stderr_append(c, tmp, (size_t)n);
			return;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			p->err_eof = 1;
			loop_unwatch(loop, fd);
		}
	} else if (fd == p->child.in_fd) {
		int rc = buf_write_fd(&c->out, fd);

		if (rc == CD_ERR_IO) {
			/* The child closed its stdin (it died, or exec failed): its
			 * exit explains why better than EPIPE would. */
			buf_reset(&c->out);
		}
		proc_watch(c);
		return;
	} else if (fd == p->child.pid_fd) {
		loop_unwatch(loop, fd);
		if (child_reap(&p->child))
			p->exited = 1;
	}
	/* Drain stderr before explaining an exit: the reason is there. */
	if (p->exited && !p->err_eof) {
		ssize_t n;

		while ((n = read(p->child.err_fd, tmp, sizeof(tmp))) > 0)
			conn_stderr_append(c, tmp, (size_t)n);
	}
	proc_maybe_done(c);
}

static void proc_watch(struct conn *c)
{
	struct proc *p = c->priv;

	if (p->child.in_fd >= 0) {
		if (c->out.len)
			loop_watch(c->loop, p->child.in_fd, POLLOUT, on_fd, c);
		else
			loop_unwatch(c->loop, p->child.in_fd);
	}
}

static int proc_start_argv(struct conn *c, char *const argv[])
{
	struct proc *p = cd_calloc(1, sizeof(*p));
	char err[CD_ERRLEN];

	c->priv = p;
	if (child_start(&p->child, argv, NULL, err, sizeof(err)) < 0) {
		proc_fail(c, "agent", err);
		return CD_ERR_IO;
	}
	loop_watch(c->loop, p->child.out_fd, POLLIN, on_fd, c);
	loop_watch(c->loop, p->child.err_fd, POLLIN, on_fd, c);
	if (p->child.pid_fd >= 0)
		loop_watch(c->loop, p->child.pid_fd, POLLIN, on_fd, c);
	proc_watch(c);
	return 0;
}

static void proc_flush(struct conn *c)
{
	if (c->priv)
		proc_watch(c);
}

static void proc_close(struct conn *c)
{
	struct proc *p = c->priv;

	if (!p)
		return;
	if (p->child.in_fd >= 0)
		loop_unwatch(c->loop, p->child.in_fd);
	loop_unwatch(c->loop, p->child.out_fd);
	loop_unwatch(c->loop, p->child.err_fd);
	if (p->child.pid_fd >= 0)
		loop_unwatch(c->loop, p->child.pid_fd);
	/* A local agent still running (the check's deadline) is asked first:
	 * on SIGTERM it kills the process groups it started (dcgmi, Python
	 * probes), which SIGKILL to it alone would leave running. */
	if (c->ops == &transport_local)
		child_end(&p->child, SIGTERM, LOCAL_AGENT_TERM_MS);
	else
		child_fini(&p->child);
	free(p);
	c->priv = NULL;
}

static int openssh_start(struct conn *c)
{
	const char *shk =
	    c->cfg->accept_new ? "StrictHostKeyChecking=accept-new" : "StrictHostKeyChecking=yes";
	char *argv[32], ct[48], port[16], *proxy = NULL;
	int n = 0, rc;

	argv[n++] = "ssh";
	argv[n++] = "-T";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = (char *)shk;
	argv[n++] = "-o";
	argv[n++] = "UpdateHostKeys=no";
	snprintf(ct, sizeof(ct), "ConnectTimeout=%d", (c->cfg->connect_timeout_ms + 999) / 1000);
	argv[n++] = "-o";
	argv[n++] = ct;
	if (c->cfg->ssh_config) {
		argv[n++] = "-F";
		argv[n++] = (char *)c->cfg->ssh_config;
	}
	/* Only what the user set on our command line overrides ssh_config. */
	if (c->ssh.user) {
		argv[n++] = "-l";
		argv[n++] = c->ssh.user;
	}
	if (c->ssh.port > 0) {
		snprintf(port, sizeof(port), "%d", c->ssh.port);
		argv[n++] = "-p";
		argv[n++] = port;
	}
	if (c->ssh.n_identity_files) {
		argv[n++] = "-i";
		argv[n++] = c->ssh.identity_files[0];
	}
	/* OpenSSH does not pass our -o options to the ssh it starts for a
	 * ProxyJump, so the jump host's key would be checked only as the
	 * user's ssh_config says. A ProxyCommand given first wins over the
	 * config's ProxyJump and applies our policy to the jump host too.
	 * A chain of jumps keeps the config's ProxyJump (documented). */
	if (c->proxy_jump && !strchr(c->proxy_jump, ',')) {
		proxy = cd_asprintf("ProxyCommand=ssh -T -o BatchMode=yes -o %s%s%s -W [%%h]:%%p "
		                    "ssh://%s",
		                    shk, c->cfg->ssh_config ? " -F " : "",
		                    c->cfg->ssh_config ? c->cfg->ssh_config : "", c->proxy_jump);
		argv[n++] = "-o";
		argv[n++] = proxy;
	}
	if (!proxy && c->proxy_command) {
		proxy = proxy_wrap(c->proxy_command);
		argv[n++] = "-o";
		argv[n++] = proxy;
	}
	argv[n++] = "--";
	argv[n++] = (char *)c->label;
	argv[n++] = c->command;
	argv[n] = NULL;
	rc = proc_start_argv(c, argv);
	free(proxy);
	return rc;
}

static int local_start(struct conn *c)
{
	char *argv[] = {(char *)c->cfg->agent_path, "--stdio", NULL};
	int rc = proc_start_argv(c, argv);

	/* No network and no login: the agent is ready as soon as it runs. */
	if (rc == 0) {
		struct proc *p = c->priv;

		p->got_data = 1;
		c->ev->connected(c);
		c->ev->authenticated(c);
	}
	return rc;
}

const struct transport_ops transport_openssh = {
    .name = "openssh",
    .upload_mode = UPLOAD_STREAM,
    .start = openssh_start,
    .flush = proc_flush,
    .close = proc_close,
};

const struct transport_ops transport_local = {
    .name = "local",
    .upload_mode = UPLOAD_NONE,
    .start = local_start,
    .flush = proc_flush,
    .close = proc_close,
};
