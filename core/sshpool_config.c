/* SPDX-License-Identifier: MIT */
/*
 * sshpool_config.c - a node's SSHPOOL_NODE_CONFIG phase (sshpool_internal.h): its
 * ssh settings, from `ssh -G` (run as a loop child, under the connect
 * deadline) or OpenSSH's defaults, with the command line's -l, -p and -i
 * on top; then the transport starts.
 *
 * When no ssh_config can give two hosts different settings
 * (sshconfig_host_dependent), one `ssh -G` serves the whole pool: the first
 * node runs it, the nodes that come meanwhile wait for it, and every node
 * takes its output with the "hostname" line made for itself. Should that
 * `ssh -G` fail, each node runs its own, so that each says why.
 *
 * A node whose settings libssh2 cannot honour (sshkeys.h) is sent to the
 * openssh transport here, and the pool's notice hears it once per run and
 * key.
 */
#include "sshpool_internal.h"
#include "cd.h"
#include "sshconfig.h"
#include "sshkeys.h"

#include <ctype.h>
#include <poll.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
enum share_mode {
	SHARE_IDLE,    /* the next node runs the shared `ssh -G` */
	SHARE_RUNNING, /* the leader runs it; others wait */
	SHARE_DONE,    /* head + tail are the answer */
	SHARE_NONE,    /* `ssh -G` per node */
};

struct ssh_g_share {
	enum share_mode mode;
	struct sshpool_node *leader;
	char *head, *tail; /* the output before and after its "hostname" line */
	uint64_t kick_timer;
};

static void ssh_g_start(struct sshpool_node *node);
static void config_from_share(struct sshpool_node *node);

/* The waiters go on, from the loop's next turn (never from inside another
 * node's failure): with the shared answer, or each with its own `ssh -G`. */
static void on_kick(struct loop *loop, void *arg)
{
	struct sshpool *pool = arg;

	pool->ssh_g_share->kick_timer = 0;
	for (size_t i = 0; i < pool->n; i++) {
		struct sshpool_node *w = pool->nodes[i];

		if (!w->ssh_g_waiting || w->state != SSHPOOL_NODE_CONFIG)
			continue;
		w->ssh_g_waiting = 0;
		if (pool->ssh_g_share->mode == SHARE_DONE)
			config_from_share(w);
		else
			ssh_g_start(w);
	}
}

static void share_kick(struct sshpool *pool)
{
	if (!pool->ssh_g_share->kick_timer)
		pool->ssh_g_share->kick_timer = loop_timer_add(pool->loop, 0, on_kick, pool);
}

void pool_config_share_free(struct sshpool *pool)
{
	struct ssh_g_share *sh = pool->ssh_g_share;

	if (!sh)
		return;
	if (sh->kick_timer)
		loop_timer_cancel(pool->loop, sh->kick_timer);
	free(sh->head);
	free(sh->tail);
	free(sh);
	pool->ssh_g_share = NULL;
}

/* The pool's share, made (and its mode decided) on first use. */
static struct ssh_g_share *share_of(struct sshpool *pool)
{
	struct passwd *pw;

	if (pool->ssh_g_share)
		return pool->ssh_g_share;
	pool->ssh_g_share = cd_calloc(1, sizeof(*pool->ssh_g_share));
	/* OpenSSH reads ~/.ssh/config from the passwd entry, not $HOME */
	pw = getpwuid(getuid());
	if (sshconfig_host_dependent(pool->opts.ssh_config, pw ? pw->pw_dir : NULL))
		pool->ssh_g_share->mode = SHARE_NONE;
	return pool->ssh_g_share;
}

void pool_node_config_stop(struct sshpool_node *node)
{
	struct loop *loop = node->pool->loop;
	struct ssh_g_share *sh = node->pool->ssh_g_share;

	node->ssh_g_waiting = 0;
	if (sh && sh->leader == node) {
		/* stopped before its answer (a deadline, the pool's end) */
		sh->leader = NULL;
		sh->mode = SHARE_NONE;
		share_kick(node->pool);
	}
	if (node->ssh_g.out_fd >= 0)
		loop_unwatch(loop, node->ssh_g.out_fd);
	if (node->ssh_g.pid_fd >= 0)
		loop_unwatch(loop, node->ssh_g.pid_fd);
	child_fini(&node->ssh_g);
	buf_fini(&node->ssh_g_out);
}

/* Settings for the transport: what ssh -G said, then our command line on top. */
static void node_apply_overrides(struct sshpool_node *node)
{
	const struct sshpool_opts *o = &node->pool->opts;
	struct ssh_settings *s = &node->conn.ssh;

	if (o->user) {
		free(s->user);
		s->user = cd_strdup(o->user);
	}
	if (o->port > 0)
		s->port = o->port;
	if (o->identity) {
		/* -i KEY replaces the identity files of ssh_config (agent keys are
		 * still offered first unless IdentitiesOnly is set). */
		for (size_t i = 0; i < s->n_identity_files; i++)
			free(s->identity_files[i]);
		free(s->identity_files);
		s->identity_files = cd_malloc(sizeof(char *));
		s->identity_files[0] = cd_strdup(o->identity);
		s->n_identity_files = 1;
	}
}

/* Does the user hold a Kerberos ticket cache (GSSAPI would be tried with
 * it)? KRB5CCNAME, else MIT's default file. */
static int have_krb5_ticket(void)
{
	const char *cc = getenv("KRB5CCNAME");
	char path[64];
	struct stat st;

	if (cc && *cc)
		return 1;
	snprintf(path, sizeof(path), "/tmp/krb5cc_%u", (unsigned)getuid());
	return stat(path, &st) == 0;
}

const char *pool_node_switch_key(const struct sshpool_node *node)
{
	const struct ssh_settings *s = &node->conn.ssh;

	if (s->switch_key)
		return s->switch_key;
	if (s->gssapi && have_krb5_ticket())
		return sshkeys_find("gssapiauthentication", 20)->name;
	return NULL;
}

/*
 * Say once per run and key that nodes go through ssh(1): the keys already
 * said are the table's own strings, so pointers compare. Process-wide on
 * purpose: a run that makes several pools (check, then bench) says it once.
 */
static void announce_switch(struct sshpool_node *node, const char *key)
{
	static const char *said[32];
	static size_t n_said;
	const struct sshpool_opts *o = &node->pool->opts;
	char line[CD_ERRLEN];

	for (size_t i = 0; i < n_said; i++)
		if (said[i] == key)
			return;
	if (n_said < CD_ARRAY_LEN(said))
		said[n_said++] = key;
	if (!o->notice)
		return;
	snprintf(line, sizeof(line), "%s: %s in %s: using the openssh transport for this node",
	         node->host, key, o->ssh_config ? o->ssh_config : "ssh_config");
	o->notice(line, o->notice_arg);
}

/* ProxyJump and ProxyCommand are kept for openssh_start: our host key
 * policy reaches the jump host; a ProxyCommand's exit status is reported. */
void pool_node_switch_to_openssh(struct sshpool_node *node, const char *key)
{
	struct conn *c = &node->conn;

	if (c->ssh.proxyjump)
		c->proxy_jump = cd_strdup(c->ssh.proxyjump);
	else if (c->ssh.proxy_command)
		c->proxy_command = cd_strdup(c->ssh.proxy_command);
	announce_switch(node, key);
	pool_node_reset_to_overrides(node);
	c->ops = &transport_openssh;
}

/* Settings for a transport that reads ssh_config itself: only what our
 * command line sets (port 0 = ssh_config decides). */
void pool_node_reset_to_overrides(struct sshpool_node *node)
{
	ssh_settings_fini(&node->conn.ssh);
	ssh_settings_init(&node->conn.ssh);
	node->conn.ssh.port = 0;
	node_apply_overrides(node);
}

/*
 * The `ssh -G` command line run for node, NULL-terminated into argv (at
 * most SSH_G_ARGV entries): -F FILE when one was given, since it changes
 * the answer (-l, -p and -i are applied on top afterwards, so they do not).
 */
#define SSH_G_ARGV 8
static void ssh_g_argv(const struct sshpool_node *node, char *argv[SSH_G_ARGV])
{
	int n = 0;

	argv[n++] = "ssh";
	if (node->pool->opts.ssh_config) {
		argv[n++] = "-F";
		argv[n++] = (char *)node->pool->opts.ssh_config;
	}
	argv[n++] = "-G";
	argv[n++] = "--";
	argv[n++] = node->host;
	argv[n] = NULL;
}

/* The same command as one line for the user to paste (new; the caller frees it). */
static char *ssh_g_command(const struct sshpool_node *node)
{
	char *argv[SSH_G_ARGV], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		cd_fatal("out of memory opening a memory stream");
	ssh_g_argv(node, argv);
	for (int i = 0; argv[i]; i++) {
		if (i)
			fputc(' ', f);
		cd_fput_shell_word(f, argv[i]);
	}
	fclose(f);
	return text;
}

/* Keep the leader's output as the pool's answer, split around its
 * "hostname" line; without one, `ssh -G` runs per node. */
static void share_keep(struct sshpool *pool, const char *text, size_t len)
{
	struct ssh_g_share *sh = pool->ssh_g_share;
	const char *p = text, *end = text + len, *line = NULL;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if ((size_t)(end - p) > 9 && strncmp(p, "hostname ", 9) == 0) {
			line = p;
			p = eol ? eol + 1 : end;
			break;
		}
		p = eol ? eol + 1 : end;
	}
	sh->leader = NULL;
	if (!line || memchr(text, '\0', len)) {
		sh->mode = SHARE_NONE;
		return;
	}
	sh->head = cd_asprintf("%.*s", (int)(line - text), text);
	sh->tail = cd_asprintf("%.*s", (int)(end - p), p);
	sh->mode = SHARE_DONE;
}

/* The node's settings from the shared answer; then its transport starts. */
static void config_from_share(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	struct ssh_g_share *sh = pool->ssh_g_share;
	char err[CD_ERRLEN], *text, *host = cd_strdup(node->host);

	for (char *c = host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	text = cd_asprintf("%shostname %s\n%s", sh->head, host, sh->tail);
	ssh_settings_fini(&node->conn.ssh);
	ssh_settings_init(&node->conn.ssh);
	if (sshconfig_parse_g(text, strlen(text), pool->home, &node->conn.ssh, err, sizeof(err)) <
	    0) {
		free(text);
		free(host);
		pool_node_fail(node, "ssh", "%s: cannot read `ssh -G` output: %s", node->host, err);
		return;
	}
	free(text);
	free(host);
	pool_node_cancel_deadline(node);
	node_apply_overrides(node);
	pool_node_start_transport(node);
}

static void ssh_g_done(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	char err[CD_ERRLEN], how[64], *cmd;
	int status = node->ssh_g.status;

	if (pool->ssh_g_share && pool->ssh_g_share->leader == node) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			share_keep(pool, node->ssh_g_out.data ? node->ssh_g_out.data : "",
			           node->ssh_g_out.len);
		else
			pool->ssh_g_share->leader = NULL, pool->ssh_g_share->mode = SHARE_NONE;
		share_kick(pool);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		child_describe_status(status, how, sizeof(how));
		pool_node_config_stop(node);
		/* The reason first: a long name or path may cut the hint, not it. */
		cmd = ssh_g_command(node);
		pool_node_fail(node, "ssh",
		               "%s: `ssh -G` %s: the ssh_config for this host is invalid (run `%s` "
		               "to see why)",
		               node->host, how, cmd);
		free(cmd);
		return;
	}
	ssh_settings_fini(&node->conn.ssh);
	ssh_settings_init(&node->conn.ssh);
	if (sshconfig_parse_g(node->ssh_g_out.data ? node->ssh_g_out.data : "", node->ssh_g_out.len,
	                      pool->home, &node->conn.ssh, err, sizeof(err)) < 0) {
		pool_node_config_stop(node);
		pool_node_fail(node, "ssh", "%s: cannot read `ssh -G` output: %s", node->host, err);
		return;
	}
	pool_node_config_stop(node);
	node_apply_overrides(node);
	pool_node_start_transport(node);
}

static void on_ssh_g(struct loop *loop, int fd, short revents, void *arg)
{
	struct sshpool_node *node = arg;

	if (fd == node->ssh_g.out_fd) {
		ssize_t n = buf_read_fd(&node->ssh_g_out, fd);

		if (n == CD_ERR_TOOBIG) {
			pool_node_config_stop(node);
			pool_node_fail(node, "ssh", "%s: `ssh -G` printed more than %d bytes",
			               node->host, SSH_G_OUT_MAX);
			return;
		}
		if (n == 0 || n == CD_ERR_IO)
			loop_unwatch(loop, fd);
		return;
	}
	loop_unwatch(loop, fd);
	if (child_reap(&node->ssh_g)) {
		/* Take what is still in the pipe before judging. */
		while (buf_read_fd(&node->ssh_g_out, node->ssh_g.out_fd) > 0)
			;
		ssh_g_done(node);
	}
}

void pool_node_config_begin(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	struct ssh_g_share *sh;

	pool_node_set_state(node, SSHPOOL_NODE_CONFIG);
	pool->active++;
	if (pool->opts.backend == SSHPOOL_BACKEND_OPENSSH || !pool->have_openssh ||
	    pool_node_is_local(node)) {
		/* The openssh backend reads ssh_config itself; without OpenSSH we
		 * fall back to the defaults it would use. */
		if (pool->opts.backend == SSHPOOL_BACKEND_OPENSSH) {
			pool_node_reset_to_overrides(node);
		} else {
			const char *user = getenv("USER");
			struct passwd *pw = getpwuid(getuid());

			if (!user)
				user = pw ? pw->pw_name : "root";
			sshconfig_defaults(node->host, pool->home, user, &node->conn.ssh);
			node_apply_overrides(node);
		}
		pool_node_start_transport(node);
		return;
	}
	sh = share_of(pool);
	if (sh->mode != SHARE_NONE && sshconfig_host_plain(node->host)) {
		if (sh->mode == SHARE_DONE) {
			config_from_share(node);
			return;
		}
		if (sh->mode == SHARE_RUNNING) {
			node->ssh_g_waiting = 1;
			pool_node_set_deadline(node, pool->opts.connect_timeout_ms,
			                       "config-timeout");
			return;
		}
		sh->mode = SHARE_RUNNING;
		sh->leader = node;
	}
	ssh_g_start(node);
}

/* Run the node's own `ssh -G`. */
static void ssh_g_start(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	char err[CD_ERRLEN];
	char *argv[SSH_G_ARGV];

	ssh_g_argv(node, argv);
	if (child_start(&node->ssh_g, argv, NULL, err, sizeof(err)) < 0) {
		pool_node_fail(node, "ssh", "%s: %s", node->host, err);
		return;
	}
	child_close_stdin(&node->ssh_g);
	loop_watch(pool->loop, node->ssh_g.out_fd, POLLIN, on_ssh_g, node);
	loop_watch(pool->loop, node->ssh_g.pid_fd, POLLIN, on_ssh_g, node);
	pool_node_set_deadline(node, pool->opts.connect_timeout_ms, "config-timeout");
}
