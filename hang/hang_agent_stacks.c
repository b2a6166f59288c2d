/* SPDX-License-Identifier: MIT */
/*
 * hang_agent_stacks.c - the Python stacks of `hang_sample` (hang_agent.h):
 * the hang-ready dump signal of a `clusterdoc run` rank and its stacks file,
 * or py-spy where it is installed.
 */
#include "cd.h"
#include "childrun.h"
#include "loop.h"
#include "hang/hang_agent.h"
#include "hang/hang_agent_internal.h"
#include "probes/procscan.h"
#include "scan.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PYSPY_MS 5000

/* The hang-ready directory of a `clusterdoc run` rank: the PYTHONPATH entry
 * ending in "/hang" that holds the sitecustomize. */
static int hang_dir(const struct procscan_rank *r, char *dir, size_t len)
{
	const char *p = r->pythonpath;

	if (!r->clusterdoc_run[0])
		return 0;
	while (*p) {
		size_t n = strcspn(p, ":");
		char site[512];
		struct stat st;

		if (n > 5 && n < len && memcmp(p + n - 5, "/hang", 5) == 0) {
			snprintf(dir, len, "%.*s", (int)n, p);
			snprintf(site, sizeof(site), "%s/sitecustomize.py", dir);
			if (stat(site, &st) == 0)
				return 1;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return 0;
}

/* The stacks file of pid in dir (py_stacks_<host>_<pid>.txt, the host as
 * the job's python named it), its size in *size; 0 when none yet. */
static int stacks_file(const char *dir, long pid, char *path, size_t len, off_t *size)
{
	char suffix[32];
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	*size = 0;
	if (!d)
		return 0;
	snprintf(suffix, sizeof(suffix), "_%ld.txt", pid);
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name), k = strlen(suffix);
		struct stat st;

		if (strncmp(e->d_name, "py_stacks_", 10) != 0 || n <= k ||
		    strcmp(e->d_name + n - k, suffix) != 0)
			continue;
		snprintf(path, len, "%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0) {
			*size = st.st_size;
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/* 1 when pid has a handler installed for signo (its /proc/PID/status
 * SigCgt), read now: a signal without one ends the process. */
static int handles_signal(long pid, int signo)
{
	char path[64], *data = NULL, err[CD_ERRLEN];
	size_t len = 0;
	uint64_t mask = 0;
	int rc;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (scan_read_file(path, 64 << 10, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return 0;
	rc = procscan_status_sigcgt(data, len, &mask, err, sizeof(err));
	free(data);
	return rc == 0 && procscan_sig_caught(mask, signo);
}

struct pending_dump {
	json_t *proc; /* borrowed */
	long pid;
	char dir[512];
	off_t before;
};

/* What the file holds past offset from (the last dump), capped. */
static void take_dump(struct pending_dump *pd)
{
	char path[1024], *data = NULL, err[CD_ERRLEN];
	size_t len = 0, start;
	off_t size;

	if (!stacks_file(pd->dir, pd->pid, path, sizeof(path), &size) || size <= pd->before) {
		json_object_set_new(
		    pd->proc, "stacks_note",
		    json_string("the dump signal was sent but no stacks came within the "
		                "wait (a handler of its own for SIGUSR2?)"));
		return;
	}
	if (scan_read_file(path, 4 << 20, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0) {
		json_object_set_new(pd->proc, "stacks_note", json_string(err));
		return;
	}
	start = (size_t)pd->before < len ? (size_t)pd->before : 0;
	if (len - start > HANG_AGENT_STACKS_CAP) {
		start = len - HANG_AGENT_STACKS_CAP;
		json_object_set_new(pd->proc, "stacks_truncated", json_true());
	}
	json_object_set_new(pd->proc, "stacks", json_stringn(data + start, len - start));
	json_object_set_new(pd->proc, "stacks_how", json_string("hang-ready"));
	free(data);
}

struct pyspy_ctx {
	struct loop *loop;
	json_t *proc; /* borrowed */
};

static void pyspy_done(const struct childrun_result *r, void *arg)
{
	struct pyspy_ctx *c = arg;

	if (r->rc == 0 && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0) {
		size_t n =
		    r->out->len < HANG_AGENT_STACKS_CAP ? r->out->len : HANG_AGENT_STACKS_CAP;

		json_object_set_new(c->proc, "stacks", json_stringn(r->out->data, n));
		json_object_set_new(c->proc, "stacks_how", json_string("py-spy"));
	} else {
		json_object_set_new(c->proc, "stacks_note",
		                    json_sprintf("py-spy dump failed: %s%.*s", r->error,
		                                 (int)(r->err->len > 200 ? 200 : r->err->len),
		                                 r->err->len ? r->err->data : ""));
	}
	loop_stop(c->loop);
}

/* py-spy dump --pid PID, under a deadline (it ptraces the process briefly:
 * only when stacks are asked for, and only where py-spy is installed). */
static void pyspy_dump(const char *pyspy, json_t *proc, long pid)
{
	struct pyspy_ctx c = {.loop = loop_new(), .proc = proc};
	char pidtext[24], err[CD_ERRLEN];
	char *argv[] = {(char *)pyspy, "dump", "--pid", pidtext, NULL};

	snprintf(pidtext, sizeof(pidtext), "%ld", pid);
	if (childrun_start(c.loop, argv, PYSPY_MS, 1 << 20, 4096, pyspy_done, &c, err, sizeof(err)))
		loop_run(c.loop); /* until pyspy_done: childrun's deadline bounds it */
	else
		json_object_set_new(proc, "stacks_note", json_string(err));
	loop_free(c.loop);
}

int hang_agent_find_pyspy(char *path, size_t len)
{
	const char *env = getenv("PATH");
	char home[512];
	const char *h = getenv("HOME");

	while (env && *env) {
		size_t n = strcspn(env, ":");

		snprintf(path, len, "%.*s/py-spy", (int)n, env);
		if (n && access(path, X_OK) == 0)
			return 1;
		env += n;
		if (*env == ':')
			env++;
	}
	if (h) {
		snprintf(home, sizeof(home), "%s/.local/bin/py-spy", h);
		if (access(home, X_OK) == 0) {
			snprintf(path, len, "%s", home);
			return 1;
		}
	}
	return 0;
}

/* Stacks for every rank: the hang-ready signal to each (all first, then one
 * wait), py-spy where installed, else a note saying how to get them. */
void hang_agent_collect_stacks(json_t *procs, const char *pyspy, int wait_ms)
{
	struct pending_dump pd[HANG_AGENT_MAX_PROCS];
	size_t npd = 0, i;
	json_t *p;
	int64_t deadline;

	json_array_foreach(procs, i, p)
	{
		long pid = (long)json_integer_value(json_object_get(p, "pid"));
		struct procscan_rank r = {0};
		json_t *env = json_object_get(p, "env");
		char path[1024];

		if (strcmp(json_string_value(json_object_get(p, "role")), "rank") != 0)
			continue;
		snprintf(r.clusterdoc_run, sizeof(r.clusterdoc_run), "%s",
		         json_string_value(json_object_get(env, "CLUSTERDOC_RUN")));
		snprintf(r.pythonpath, sizeof(r.pythonpath), "%s",
		         json_string_value(json_object_get(p, "_pythonpath")));
		if (npd < HANG_AGENT_MAX_PROCS && hang_dir(&r, pd[npd].dir, sizeof(pd[npd].dir))) {
			/* a shell or any program that did not install the handler
			 * would die of the signal, and its job with it */
			if (!handles_signal(pid, SIGUSR2)) {
				json_object_set_new(
				    p, "stacks_note",
				    json_string(
				        "no stacks: the rank does not handle the dump signal "
				        "(SIGUSR2 has no handler in its /proc/PID/status "
				        "SigCgt: not a Python process, or it replaced the "
				        "handler), so it was not sent"));
				continue;
			}
			/* a stopped rank runs no handler until SIGCONT: the signal
			 * would wait for the whole dump wait, then fire when it goes on */
			if (strchr("Tt",
			           (json_string_value(json_object_get(p, "state")) ?: "?")[0])) {
				json_object_set_new(
				    p, "stacks_note",
				    json_string(
				        "no stacks: the rank is stopped (state T or t), so "
				        "it runs no handler; the dump signal was not sent"));
				continue;
			}
			pd[npd].proc = p;
			pd[npd].pid = pid;
			stacks_file(pd[npd].dir, pid, path, sizeof(path), &pd[npd].before);
			if (kill((pid_t)pid, SIGUSR2) == 0)
				npd++;
			continue;
		}
		if (pyspy) {
			pyspy_dump(pyspy, p, pid);
			continue;
		}
		json_object_set_new(
		    p, "stacks_note",
		    json_string(
		        "no stacks: start the job with `clusterdoc run` (hang-ready: stacks on "
		        "SIGUSR2), or install py-spy on the node (pip install py-spy)"));
	}
	/* faulthandler writes within milliseconds; wait until every file grew
	 * and stopped growing, or the wait ends */
	deadline = cd_now_ms() + wait_ms;
	while (npd && cd_now_ms() < deadline) {
		size_t done = 0;
		struct timespec ts = {0, 50 * 1000000L};

		nanosleep(&ts, NULL);
		for (size_t k = 0; k < npd; k++) {
			char path[1024];
			off_t size;

			if (stacks_file(pd[k].dir, pd[k].pid, path, sizeof(path), &size) &&
			    size > pd[k].before)
				done++;
		}
		if (done == npd) {
			nanosleep(&ts, NULL); /* the last lines of a dump */
			break;
		}
	}
	for (size_t k = 0; k < npd; k++)
		take_dump(&pd[k]);
}
