/* netprobe_firewall.c - the network probe's "firewall" object (see
 * netprobe.h): nft, iptables-save, ip6tables-save and firewall-cmd run at
 * once as children under one deadline, their output capped, and the state of
 * ufw and firewalld. */
#include "probes/netprobe.h"
#include "probes/netprobe_internal.h"
#include "probes/facts.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_TOOL_DIRS "/usr/sbin:/sbin:/usr/bin:/bin"
#define TOOL_DEADLINE_MS  3000
#define TOOL_ERR_MAX      512   /* the start of a tool's stderr, for its error message */
#define TOOL_OUT_START    16384 /* first stdout buffer; grows to NETPROBE_FIREWALL_MAX + 1 */
#define MAX_TOOLS         4
#define REAP_GRACE_MS     1000
#define FIREWALLD_PIDFILE "/run/firewalld/firewalld.pid"

/* --- firewall tools -------------------------------------------------------- */

enum tool_state {
	TOOL_UNUSED,    /* not wanted */
	TOOL_MISSING,   /* not found in the tool directories */
	TOOL_NO_START,  /* posix_spawn failed: start_errno */
	TOOL_RUNNING,   /* started, not yet reaped */
	TOOL_EXITED,    /* reaped: status */
	TOOL_TIMED_OUT, /* killed at the deadline */
};

struct tool_run {
	const char *name;    /* "nft" */
	const char *args[4]; /* its arguments, NULL-terminated */
	enum tool_state state;
	int start_errno;
	pid_t pid;
	int out_fd, err_fd; /* -1 when closed */
	char *out;          /* stdout, out_len bytes of out_cap (+1) */
	size_t out_len, out_cap;
	int truncated;              /* stdout went past NETPROBE_FIREWALL_MAX */
	char err[TOOL_ERR_MAX + 1]; /* the start of stderr */
	size_t err_len;
	int status; /* waitpid status once TOOL_EXITED */
};

/* Find name in the ':'-separated dirs; 0 with its path, or -1. */
static int find_tool(const char *dirs, const char *name, char *path, size_t len)
{
	const char *d = dirs;

	while (*d) {
		size_t n = strcspn(d, ":");
		struct stat st;

		if (n && snprintf(path, len, "%.*s/%s", (int)n, d, name) < (int)len &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
			return 0;
		d += n;
		if (*d == ':')
			d++;
	}
	return -1;
}

static int tool_installed(const char *dirs, const char *name)
{
	char path[PATH_MAX];

	return find_tool(dirs, name, path, sizeof(path)) == 0;
}

/* posix_spawn the tool: stdin /dev/null, stdout and stderr to pipes, its
 * own process group (a deadline kills its children too), default SIGPIPE
 * (the agent may ignore it, and an ignored signal survives exec), and a
 * fixed environment so that its output does not depend on the login's. */
static int tool_spawn(struct tool_run *t, const char *path, int out_w, int err_w)
{
	static char *const env[] = {(char *)"PATH=" DEFAULT_TOOL_DIRS, (char *)"LC_ALL=C", NULL};
	char *argv[CD_ARRAY_LEN(t->args) + 1];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	size_t i = 0;
	int rc;

	argv[i++] = (char *)t->name;
	for (size_t k = 0; t->args[k] && i < CD_ARRAY_LEN(argv) - 1; k++)
		argv[i++] = (char *)t->args[k];
	argv[i] = NULL;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_w, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err_w, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                    POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	rc = posix_spawn(&t->pid, path, &fa, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static void tool_start(struct tool_run *t, const char *dirs)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;
	char path[PATH_MAX];

	t->out_fd = t->err_fd = -1;
	if (find_tool(dirs, t->name, path, sizeof(path)) < 0) {
		t->state = TOOL_MISSING;
		return;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		rc = errno;
	else
		rc = tool_spawn(t, path, out[1], err[1]);
	netprobe_close_fd(&out[1]);
	netprobe_close_fd(&err[1]);
	if (rc) {
		netprobe_close_fd(&out[0]);
		netprobe_close_fd(&err[0]);
		t->state = TOOL_NO_START;
		t->start_errno = rc;
		return;
	}
	t->state = TOOL_RUNNING;
	t->out_fd = out[0];
	t->err_fd = err[0];
	fcntl(t->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(t->err_fd, F_SETFL, O_NONBLOCK);
	t->out_cap = TOOL_OUT_START;
	t->out = cd_malloc(t->out_cap + 1);
}

/* SIGKILL the tool's process group. */
static void tool_kill(struct tool_run *t)
{
	kill(-t->pid, SIGKILL);
	kill(t->pid, SIGKILL);
}

/* One read of stdout. Past NETPROBE_FIREWALL_MAX the rest is not wanted:
 * the tool is killed and its pipes closed. */
static void tool_read_out(struct tool_run *t)
{
	ssize_t n;

	if (t->out_len == t->out_cap) {
		t->out_cap = t->out_cap * 2 > NETPROBE_FIREWALL_MAX + 1 ? NETPROBE_FIREWALL_MAX + 1
		                                                        : t->out_cap * 2;
		t->out = cd_realloc(t->out, t->out_cap + 1);
	}
	n = read(t->out_fd, t->out + t->out_len, t->out_cap - t->out_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		netprobe_close_fd(&t->out_fd);
		return;
	}
	t->out_len += (size_t)n;
	if (t->out_len > NETPROBE_FIREWALL_MAX) {
		t->truncated = 1;
		tool_kill(t);
		netprobe_close_fd(&t->out_fd);
		netprobe_close_fd(&t->err_fd);
	}
}

/* One read of stderr; only its start is kept (the first line says why). */
static void tool_read_err(struct tool_run *t)
{
	char chunk[4096];
	ssize_t n = read(t->err_fd, chunk, sizeof(chunk));
	size_t room = TOOL_ERR_MAX - t->err_len, take;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		netprobe_close_fd(&t->err_fd);
		return;
	}
	take = (size_t)n < room ? (size_t)n : room;
	memcpy(t->err + t->err_len, chunk, take);
	t->err_len += take;
	t->err[t->err_len] = '\0';
}

/* Read every running tool's pipes until all are closed or the deadline. */
static void tools_pump(struct tool_run *tools, size_t n, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2 * MAX_TOOLS];
		struct tool_run *owner[2 * MAX_TOOLS];
		int is_out[2 * MAX_TOOLS];
		nfds_t np = 0;
		int64_t left = deadline - cd_now_ms();

		for (size_t i = 0; i < n; i++) {
			int fds[2] = {tools[i].out_fd, tools[i].err_fd};

			for (int k = 0; k < 2; k++) {
				if (fds[k] < 0)
					continue;
				p[np] = (struct pollfd){.fd = fds[k], .events = POLLIN};
				owner[np] = &tools[i];
				is_out[np++] = k == 0;
			}
		}
		if (np == 0 || left <= 0)
			return;
		if (poll(p, np, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (nfds_t k = 0; k < np; k++) {
			/* an earlier read may have closed this tool's fds */
			if (!p[k].revents || (is_out[k] ? owner[k]->out_fd : owner[k]->err_fd) < 0)
				continue;
			if (is_out[k])
				tool_read_out(owner[k]);
			else
				tool_read_err(owner[k]);
		}
	}
}

/* waitpid until deadline; 1 when reaped (status set), 0 when still running.
 * A child that someone else reaped (ECHILD) counts as a clean exit. */
static int wait_until(pid_t pid, int64_t deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno == ECHILD) {
			*status = 0;
			return 1;
		}
		if (cd_now_ms() >= deadline)
			return 0;
		poll(NULL, 0, 2);
	}
}

/* Reap the tool, killing it when its pipes are still open at the deadline
 * or it has not exited by then. A process stuck in uninterruptible sleep
 * cannot die at once: it is left after a short grace. */
static void tool_finish(struct tool_run *t, int64_t deadline)
{
	if (t->state != TOOL_RUNNING)
		return;
	if (t->out_fd < 0 && t->err_fd < 0 && wait_until(t->pid, deadline, &t->status)) {
		t->state = TOOL_EXITED;
		return;
	}
	tool_kill(t);
	wait_until(t->pid, cd_now_ms() + REAP_GRACE_MS, &t->status);
	netprobe_close_fd(&t->out_fd);
	netprobe_close_fd(&t->err_fd);
	t->state = t->truncated ? TOOL_EXITED : TOOL_TIMED_OUT;
}

/* What went wrong with a run, as a new string; NULL when the tool exited
 * with status 0 or was stopped on purpose after too much output. */
static char *tool_failure(const struct tool_run *t)
{
	size_t first = strcspn(t->err, "\n");

	switch (t->state) {
	case TOOL_UNUSED:
	case TOOL_MISSING:
		return cd_strdup("not installed");
	case TOOL_NO_START:
		return cd_asprintf("cannot run %s: %s", t->name, strerror(t->start_errno));
	case TOOL_RUNNING:
	case TOOL_TIMED_OUT:
		return cd_asprintf("%s did not finish within %d s", t->name,
		                   TOOL_DEADLINE_MS / 1000);
	case TOOL_EXITED:
		break;
	}
	if (t->truncated || (WIFEXITED(t->status) && WEXITSTATUS(t->status) == 0))
		return NULL;
	if (WIFEXITED(t->status))
		return cd_asprintf("%s exited with status %d%s%.*s", t->name,
		                   WEXITSTATUS(t->status), first ? ": " : "", (int)first, t->err);
	return cd_asprintf("%s was killed by signal %d", t->name, WTERMSIG(t->status));
}

static void tool_fini(struct tool_run *t)
{
	free(t->out);
	t->out = NULL;
}

/* {"ruleset": <nft's JSON> | null, "truncated"?, "error"?} */
static json_t *nft_json(const struct tool_run *t)
{
	char *fail = tool_failure(t);
	json_t *o = json_object(), *ruleset = NULL;
	json_error_t je;

	if (!fail && t->truncated)
		fail = cd_asprintf("the ruleset is larger than %d bytes: left out",
		                   NETPROBE_FIREWALL_MAX);
	else if (!fail && !(ruleset = json_loadb(t->out, t->out_len, 0, &je)))
		fail = cd_asprintf("nft printed something that is not JSON: %s", je.text);
	json_object_set_new(o, "ruleset", ruleset ? ruleset : json_null());
	if (t->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (fail)
		json_object_set_new(o, "error", netprobe_text(fail));
	free(fail);
	return o;
}

/* {"rules": "<text>" | null, "truncated"?, "error"?}; truncated text keeps
 * its whole lines only. */
static json_t *iptables_json(const struct tool_run *t)
{
	char *fail = tool_failure(t);
	json_t *o = json_object();
	size_t len = t->out_len;

	if (fail) {
		json_object_set_new(o, "rules", json_null());
	} else {
		if (t->truncated) {
			len = NETPROBE_FIREWALL_MAX;
			while (len && t->out[len - 1] != '\n')
				len--;
		}
		json_object_set_new(o, "rules", facts_json_text(t->out, len));
	}
	if (t->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (fail)
		json_object_set_new(o, "error", netprobe_text(fail));
	free(fail);
	return o;
}

/* ufw.conf says ENABLED=yes (quotes and blanks allowed, as ufw allows). */
static int ufw_conf_enabled(const char *etc_root)
{
	char *path = cd_asprintf("%s/etc/ufw/ufw.conf", etc_root), *data = NULL;
	const char *p, *end, *line;
	size_t len, n;
	int enabled = 0;

	if (scan_read_file(path, SMALL_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, NULL, 0) == 0) {
		p = data;
		end = data + len;
		while (scan_next_line(&p, end, &line, &n)) {
			scan_trim(&line, &n);
			if (n < 8 || strncmp(line, "ENABLED=", 8) != 0)
				continue;
			line += 8, n -= 8;
			if (n >= 2 && (line[0] == '"' || line[0] == '\'') && line[n - 1] == line[0])
				line++, n -= 2;
			enabled = n == 3 && strncasecmp(line, "yes", 3) == 0;
		}
	}
	free(data);
	free(path);
	return enabled;
}

static const char *ufw_state(const char *etc_root, const char *dirs)
{
	if (!tool_installed(dirs, "ufw"))
		return "absent";
	return ufw_conf_enabled(etc_root) ? "active" : "inactive";
}

/* The process named in firewalld's pid file is alive. */
static int firewalld_pid_alive(void)
{
	char *s = netprobe_read_attr(FIREWALLD_PIDFILE), *end;
	long pid;

	if (!s)
		return 0;
	errno = 0;
	pid = strtol(s, &end, 10);
	free(s);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* firewall-cmd --state: "running" or "not running" on stdout. */
static const char *firewalld_state(int pid_alive, const struct tool_run *cmd, json_t *errors)
{
	const char *s;
	size_t n;
	char *fail;

	if (pid_alive)
		return "running";
	if (cmd->state == TOOL_MISSING || cmd->state == TOOL_UNUSED)
		return "absent";
	if (cmd->state != TOOL_EXITED) {
		fail = tool_failure(cmd);
		facts_set_error(errors, "firewall", fail);
		free(fail);
		return "not running";
	}
	s = cmd->out;
	n = cmd->out_len;
	scan_trim(&s, &n);
	return n == 7 && memcmp(s, "running", 7) == 0 ? "running" : "not running";
}

enum { NFT, IPTABLES, IP6TABLES, FIREWALL_CMD };

json_t *netprobe_collect_firewall(const struct netprobe_opts *o, json_t *errors)
{
	struct tool_run tools[MAX_TOOLS] = {
	    [NFT] = {.name = "nft", .args = {"-j", "list", "ruleset", NULL}},
	    [IPTABLES] = {.name = "iptables-save", .args = {NULL}},
	    [IP6TABLES] = {.name = "ip6tables-save", .args = {NULL}},
	    [FIREWALL_CMD] = {.name = "firewall-cmd", .args = {"--state", NULL}},
	};
	const char *dirs = o->tool_dirs ? o->tool_dirs : DEFAULT_TOOL_DIRS;
	const char *etc = netprobe_or_empty(o->etc_root);
	int pid_alive = firewalld_pid_alive();
	json_t *fw = json_object();
	int64_t deadline;

	/* all at once, under one deadline */
	for (size_t i = 0; i < MAX_TOOLS; i++) {
		tools[i].out_fd = tools[i].err_fd = -1;
		if (i != FIREWALL_CMD || !pid_alive)
			tool_start(&tools[i], dirs);
	}
	deadline = cd_now_ms() + TOOL_DEADLINE_MS;
	tools_pump(tools, MAX_TOOLS, deadline);
	for (size_t i = 0; i < MAX_TOOLS; i++)
		tool_finish(&tools[i], deadline);

	json_object_set_new(fw, "nft", nft_json(&tools[NFT]));
	json_object_set_new(fw, "iptables", iptables_json(&tools[IPTABLES]));
	json_object_set_new(fw, "ip6tables", iptables_json(&tools[IP6TABLES]));
	json_object_set_new(fw, "ufw", netprobe_text(ufw_state(etc, dirs)));
	json_object_set_new(
	    fw, "firewalld",
	    netprobe_text(firewalld_state(pid_alive, &tools[FIREWALL_CMD], errors)));
	for (size_t i = 0; i < MAX_TOOLS; i++)
		tool_fini(&tools[i]);
	return fw;
}
