/*
 * sshpool_config.c - a node's SSHPOOL_NODE_CONFIG phase (sshpool_internal.h): its
 * ssh settings, from `ssh -G` (run as a loop child, under the connect
 * deadline) or OpenSSH's defaults, with the command line's -l, -p and -i
 * on top; then the transport starts.
 */
#include "sshpool_internal.h"
#include "cd.h"
#include "sshconfig.h"

#include <poll.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
void pool_node_config_stop(struct sshpool_node *node)
{
	struct loop *loop = node->pool->loop;

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

static void ssh_g_done(struct sshpool_node *node)
{
	struct sshpool *pool = node->pool;
	char err[CD_ERRLEN], how[64], *cmd;
	int status = node->ssh_g.status;

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
	char err[CD_ERRLEN];
	char *argv[SSH_G_ARGV];

	node->state = SSHPOOL_NODE_CONFIG;
	pool->active++;
	if (pool->opts.backend == SSHPOOL_BACKEND_OPENSSH || !pool->have_openssh ||
	    (pool->opts.local_localhost && strcmp(node->host, "localhost") == 0)) {
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
