/* SPDX-License-Identifier: MIT */
/*
 * run_agent.c - the orphan check of `clusterdoc run` on a node
 * (run_agent.h): /proc read once, nothing changed.
 */
#include "jobs/run_agent.h"
#include "probes/procscan.h"
#include "cd.h"
#include "scan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENVIRON_CAP (1 << 20)

int run_agent_environ_has_var(const char *environ, size_t len, const char *name_value)
{
	size_t wlen = strlen(name_value);
	const char *p = environ, *end = environ + len;

	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);

		if (n == wlen && memcmp(p, name_value, wlen) == 0)
			return 1;
		p += n + 1;
	}
	return 0;
}

int run_agent_environ_has(const char *environ, size_t len, const char *run_id)
{
	char want[128];

	snprintf(want, sizeof(want), "CLUSTERDOC_RUN=%s", run_id);
	return run_agent_environ_has_var(environ, len, want);
}

static int on_gpu_fd(long fd, const char *target, size_t len, void *arg)
{
	(void)fd;
	(void)len;
	(void)arg;
	return strncmp(target, "/dev/nvidia", 11) == 0;
}

/* 1 when pid has a /dev/nvidia* device open. */
static int holds_gpu(long pid)
{
	return procscan_fds(pid, 0, on_gpu_fd, NULL);
}

static void read_small(long pid, const char *what, char *out, size_t outlen)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	scan_read_flat(path, 4096, out, outlen);
}

/* 1 when pid is the agent or one of its ancestors. */
static int is_self_line(long pid)
{
	long p = (long)getpid();

	for (int depth = 0; p > 1 && depth < 64; depth++) {
		char path[64], *data = NULL, err[CD_ERRLEN];
		size_t len = 0;
		const char *close;

		if (p == pid)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		if (scan_read_file(path, 4096, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
			return 0;
		close = strrchr(data, ')');
		if (!close || sscanf(close + 1, " %*c %ld", &p) != 1)
			p = 0;
		free(data);
	}
	return 0;
}

json_t *run_agent_orphans(json_t *req, const char **code, char *msg, size_t msglen)
{
	const char *run = json_string_value(json_object_get(req, "run"));
	const char *rank = json_string_value(json_object_get(req, "node_rank"));
	char rank_var[64] = "";
	json_t *procs, *gpus;
	DIR *d;
	struct dirent *e;
	uid_t me = getuid();

	if (!run || !*run || strlen(run) > 64) {
		*code = "bad_request";
		snprintf(msg, msglen, "\"run\" (a run id) is required");
		return NULL;
	}
	if (rank && strlen(rank) < 32)
		snprintf(rank_var, sizeof(rank_var), "NODE_RANK=%s", rank);
	d = opendir("/proc");
	if (!d) {
		*code = "io";
		snprintf(msg, msglen, "cannot read /proc");
		return NULL;
	}
	procs = json_array();
	gpus = json_array();
	while ((e = readdir(d))) {
		char path[300], *env = NULL, err[CD_ERRLEN], comm[64], cmdline[512];
		size_t len = 0;
		struct stat st;
		int mine, gpu;
		long pid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = atol(e->d_name);
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0 || st.st_uid != me || is_self_line(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		mine = scan_read_file(path, ENVIRON_CAP, SCAN_FILE_TO_EOF, &env, &len, err,
		                      sizeof(err)) == 0 &&
		       run_agent_environ_has(env, len, run) &&
		       (!rank_var[0] || run_agent_environ_has_var(env, len, rank_var));
		free(env);
		gpu = holds_gpu(pid);
		if (!mine && !gpu)
			continue;
		read_small(pid, "comm", comm, sizeof(comm));
		if (mine && json_array_size(procs) < RUN_AGENT_MAX_LISTED) {
			read_small(pid, "cmdline", cmdline, sizeof(cmdline));
			json_array_append_new(procs, json_pack("{sIssssso}", "pid", (json_int_t)pid,
			                                       "comm", comm, "cmdline", cmdline,
			                                       "gpu", json_boolean(gpu)));
		}
		if (gpu && json_array_size(gpus) < RUN_AGENT_MAX_LISTED)
			json_array_append_new(
			    gpus, json_pack("{sIss}", "pid", (json_int_t)pid, "comm", comm));
	}
	closedir(d);
	return json_pack("{soso}", "processes", procs, "gpu_holders", gpus);
}
