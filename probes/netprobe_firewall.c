/* SPDX-License-Identifier: MIT */
/* netprobe_firewall.c - the network probe's "firewall" object (see
 * netprobe.h): nft, iptables-save, ip6tables-save and firewall-cmd run at
 * once as children (core/childrun.h, on a private loop) under one deadline,
 * their output capped, and the state of ufw and firewalld. */
#include "probes/netprobe.h"
#include "probes/netprobe_internal.h"
#include "probes/facts.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_TOOL_DIRS "/usr/sbin:/sbin:/usr/bin:/bin"
#define TOOL_DEADLINE_MS  3000
#define TOOL_ERR_MAX      512 /* the start of a tool's stderr, for its error message */
#define MAX_TOOLS         4
#define FIREWALLD_PIDFILE "/run/firewalld/firewalld.pid"

/* --- firewall tools -------------------------------------------------------- */

enum tool_state {
	TOOL_UNUSED,    /* not wanted */
	TOOL_MISSING,   /* not found in the tool directories */
	TOOL_NO_START,  /* could not be started: start_errno */
	TOOL_RUNNING,   /* started, not yet ended */
	TOOL_EXITED,    /* ended: status */
	TOOL_TIMED_OUT, /* killed at the deadline */
};

struct tool_run {
	const char *name;    /* "nft" */
	const char *args[4]; /* its arguments, NULL-terminated */
	enum tool_state state;
	int start_errno;
	char *out; /* stdout, out_len bytes (NUL-terminated) */
	size_t out_len;
	int truncated;              /* stdout went past NETPROBE_FIREWALL_MAX */
	char err[TOOL_ERR_MAX + 1]; /* the start of stderr */
	int status;                 /* waitpid status once TOOL_EXITED */
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

/* A tool's run ended (childrun.h): keep what tool_failure and the JSON read.
 * Past NETPROBE_FIREWALL_MAX of stdout the rest is not wanted: the cap
 * stopped the tool, which then counts as exited. */
static void tool_done(const struct childrun_result *res, void *arg)
{
	struct tool_run *t = arg;

	t->truncated = res->out_truncated;
	if (res->rc == CD_ERR_TIMEOUT) {
		t->state = TOOL_TIMED_OUT;
	} else if (res->spawn_errno) {
		t->state = TOOL_NO_START;
		t->start_errno = res->spawn_errno;
	} else {
		t->state = TOOL_EXITED;
		t->status = res->status;
	}
	t->out_len = res->out->len;
	t->out = cd_malloc(t->out_len + 1);
	memcpy(t->out, res->out->data ? res->out->data : "", t->out_len);
	t->out[t->out_len] = '\0';
	snprintf(t->err, sizeof(t->err), "%s", res->err->data ? res->err->data : "");
}

/* Start the tool on loop: stdin empty, its own process group (the deadline
 * kills its children too), no signal blocked, and a fixed environment so
 * that its output does not depend on the login's. */
static void tool_start(struct tool_run *t, const char *dirs, struct loop *loop)
{
	static char *const env[] = {(char *)"PATH=" DEFAULT_TOOL_DIRS, (char *)"LC_ALL=C", NULL};
	char *argv[CD_ARRAY_LEN(t->args) + 1];
	char path[PATH_MAX], err[CD_ERRLEN];
	struct childrun_opts o = {
	    .timeout_ms = TOOL_DEADLINE_MS,
	    .out_max = NETPROBE_FIREWALL_MAX,
	    .out_cap = CHILDRUN_CAP_STOP,
	    .err_max = TOOL_ERR_MAX,
	    .err_cap = CHILDRUN_CAP_HEAD,
	    .start = {.path = path, .env = env, .env_only = 1, .own_group = 1},
	};
	size_t i = 0;

	if (find_tool(dirs, t->name, path, sizeof(path)) < 0) {
		t->state = TOOL_MISSING;
		return;
	}
	argv[i++] = (char *)t->name;
	for (size_t k = 0; t->args[k] && i < CD_ARRAY_LEN(argv) - 1; k++)
		argv[i++] = (char *)t->args[k];
	argv[i] = NULL;
	t->state = TOOL_RUNNING;
	errno = 0;
	if (!childrun_start_opts(loop, argv, &o, tool_done, t, err, sizeof(err))) {
		t->state = TOOL_NO_START;
		t->start_errno = errno ? errno : EIO;
	}
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
	struct loop *loop = loop_new();

	/* all at once, each under the same deadline, on a private loop that
	 * runs until the last one ended */
	for (size_t i = 0; i < MAX_TOOLS; i++)
		if (i != FIREWALL_CMD || !pid_alive)
			tool_start(&tools[i], dirs, loop);
	loop_run(loop);
	loop_free(loop);

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
