/* SPDX-License-Identifier: MIT */
/* facts_gpu_watch.c - NVML's GPU facts from a child process, each GPU under
 * a deadline (see facts_gpu_watch.h). */
#include "probes/facts_gpu_watch.h"
#include "probes/facts.h"
#include "probes/facts_gpu.h"
#include "cd.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most of one record kept: a GPU's facts are a few KiB. */
#define RECORD_MAX (256 * 1024)

/* ---------------------------------------------------------------- the child */

/* What the child is asking, written by it before each query into a page it
 * shares with the parent (no system call per query), read by the parent
 * once the child is stuck or dead. */
struct asking_now {
	long gpu; /* the GPU being asked, -1 for the node's queries */
	char key[40], fn[80];
};

struct child {
	int fd;
	long gpu;
	struct asking_now *now; /* the shared page */
};

/* One record, a line of compact JSON; rec is taken. */
static void put_record(int fd, json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT);
	size_t len, off = 0;

	json_decref(rec);
	if (!s)
		return;
	len = strlen(s);
	s[len] = '\n'; /* over the NUL: written as len + 1 bytes, never read as a string */
	while (off < len + 1) {
		ssize_t n = write(fd, s + off, len + 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(s);
}

static void child_asking(void *arg, const char *key, const char *fn)
{
	struct child *c = arg;

	c->now->gpu = c->gpu;
	snprintf(c->now->key, sizeof(c->now->key), "%s", key);
	snprintf(c->now->fn, sizeof(c->now->fn), "%s", fn);
}

/* Ask NVML for the node's facts and GPUs start.. and report each; never
 * returns. */
static void child_main(int fd, unsigned int start, struct asking_now *now)
{
	struct child c = {.fd = fd, .gpu = -1, .now = now};
	struct gpu_watch w = {.asking = child_asking, .arg = &c};
	json_t *errors = json_object(), *driver;
	unsigned int count = 0;
	char msg[CD_ERRLEN];
	struct nvml n;
	int null = open("/dev/null", O_RDWR);

	/* the agent's stdin and stdout are its protocol: never the child's;
	 * nor the agent's listeners, sockets and pipes (no exec closes them) */
	fd = cd_fd_above_stderr(fd);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
	cd_close_all_but(fd, -1);
	child_asking(&c, "", "nvmlInit_v2");
	if (nvml_open(&n, msg, sizeof(msg)) < 0)
		facts_set_error(errors, "gpus", msg);
	driver = n.lib ? facts_gpu_driver(&n, &count, errors, &w) : json_null();
	put_record(fd,
	           json_pack("{s:s, s:o, s:I, s:o, s:s?}", "t", "node", "driver", driver, "count",
	                     (json_int_t)count, "errors", errors, "absent", n.lib ? NULL : msg));
	for (unsigned int i = start; i < count; i++) {
		json_t *e = json_object(), *g;

		c.gpu = i;
		g = facts_gpu_one(&n, i, e, &w);
		put_record(fd, json_pack("{s:s, s:I, s:o, s:o}", "t", "gpu", "gpu", (json_int_t)i,
		                         "facts", g, "errors", e));
	}
	c.gpu = -1;
	child_asking(&c, "", "nvmlShutdown");
	nvml_close(&n);
	_exit(0);
}

/* ---------------------------------------------------------------- the parent */

struct watch {
	json_t *gpus;           /* one slot per GPU, null until its record */
	json_t *driver;         /* the first child's; NULL until then */
	json_t *errors;         /* the node's facts errors */
	long count;             /* -1 until the first child's node record */
	struct asking_now *now; /* the child's last query, shared */
	json_t *absent;         /* why no NVML loads, when none does */
	int init_ms, gpu_ms;
	int64_t end_ms; /* the whole budget */
};

static void merge_errors(json_t *into, json_t *from)
{
	const char *k;
	json_t *v;

	json_object_foreach(from, k, v)
	{
		if (json_is_string(v))
			facts_gpu_add_error(into, k, json_string_value(v));
	}
}

/* One record of the child; 1 when it was an answer (the deadline starts
 * again), 0 otherwise. */
static int take(struct watch *w, const char *line)
{
	json_t *r = json_loads(line, 0, NULL), *g = json_object_get(r, "gpu");
	const char *t = json_string_value(json_object_get(r, "t"));
	long i = json_is_integer(g) ? (long)json_integer_value(g) : -1;
	int answer = 0;

	if (t && strcmp(t, "node") == 0) {
		answer = 1;
		if (w->count < 0) {
			json_int_t count = json_integer_value(json_object_get(r, "count"));

			w->count = count > 0 && count <= 1024 ? (long)count : 0;
			w->driver = json_incref(json_object_get(r, "driver"));
			w->absent = json_incref(json_object_get(r, "absent"));
			merge_errors(w->errors, json_object_get(r, "errors"));
			for (long k = 0; k < w->count; k++)
				json_array_append_new(w->gpus, json_null());
		}
	} else if (t && strcmp(t, "gpu") == 0 && i >= 0 && i < w->count) {
		answer = 1;
		json_array_set(w->gpus, (size_t)i, json_object_get(r, "facts"));
		merge_errors(w->errors, json_object_get(r, "errors"));
	}
	json_decref(r);
	return answer;
}

/* The most the GPU facts may take: the node's answers, then one GPU that
 * does not answer and the next process's start. */
static int budget_ms(const struct watch *w)
{
	return w->init_ms + 2 * w->gpu_ms;
}

/* The deadline of what the child asks now: its stage's, within the budget. */
static int64_t stage_deadline(const struct watch *w)
{
	int64_t d = cd_now_ms() + (w->count < 0 ? w->init_ms : w->gpu_ms);

	return d < w->end_ms ? d : w->end_ms;
}

/* The first GPU from start that has no record yet; count when none. */
static long next_unanswered(const struct watch *w, long start)
{
	while (start < w->count && !json_is_null(json_array_get(w->gpus, (size_t)start)))
		start++;
	return start;
}

enum child_end { CHILD_EXITED, CHILD_HUNG, CHILD_DONE /* all answered, maybe not exited */ };

/* Read the child's records until it closes the pipe or a deadline passes. */
static enum child_end follow(struct watch *w, int fd)
{
	char *acc = cd_malloc(RECORD_MAX + 1);
	size_t len = 0;
	int64_t deadline = stage_deadline(w);
	enum child_end how = CHILD_EXITED;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - cd_now_ms();
		char *nl;
		ssize_t n;

		if (left <= 0) {
			how = CHILD_HUNG;
			break;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = read(fd, acc + len, RECORD_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		acc[len] = '\0';
		while ((nl = memchr(acc, '\n', len))) {
			*nl = '\0';
			if (take(w, acc))
				deadline = stage_deadline(w);
			/* every GPU answered: nvmlShutdown is not waited for */
			if (w->count >= 0 && next_unanswered(w, 0) >= w->count)
				how = CHILD_DONE;
			len -= (size_t)(nl + 1 - acc);
			memmove(acc, nl + 1, len);
		}
		if (how == CHILD_DONE)
			break;
		if (len == RECORD_MAX) /* a record past the bound: dropped */
			len = 0;
	}
	free(acc);
	return how;
}

/* Reap pid within ms: 1 when it is reaped (or is no child of ours). */
static int reap_within(pid_t pid, int *status, int ms)
{
	for (int i = 0; i <= ms / 10; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Kill a child and reap it for up to a second: a process stuck in the
 * driver (state D) dies only when the driver lets it go, and is left. */
static void end_child(pid_t pid, int *status)
{
	kill(pid, SIGKILL);
	reap_within(pid, status, 1000);
}

/* GPU g kept with its health errors naming why it was not (all) asked:
 * its key's error is `hung`, every other `others`. */
static void keep_unasked(struct watch *w, long g, const char *hung_key, const char *hung,
                         const char *others)
{
	json_t *errs = json_object();
	const char *k;

	for (size_t i = 0; (k = facts_gpu_health_key(i)); i++)
		json_object_set_new(
		    errs, k, json_string(hung_key && strcmp(k, hung_key) == 0 ? hung : others));
	json_array_set_new(w->gpus, (size_t)g,
	                   json_pack("{s:I, s:{s:[], s:o}}", "index", (json_int_t)g, "health",
	                             "unsupported", "errors", errs));
}

/* What a child's end means, and from which GPU the next one starts: the
 * next start, or -1 when no child is to follow. */
static long settle(struct watch *w, enum child_end how, int status, long start)
{
	/* hung holds fn (< 80) and why (< 160); the others hold hung */
	char why[160], hung[256], others[320];
	long g;
	int secs = (w->count < 0 ? w->init_ms : w->gpu_ms) / 1000;

	if (how == CHILD_HUNG)
		snprintf(why, sizeof(why), "%s %d s", FACTS_NVML_NO_ANSWER, secs ? secs : 1);
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "NVML's process died of signal %d in it",
		         WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "NVML's process ended before answering");
	if (cd_now_ms() >= w->end_ms && how == CHILD_HUNG)
		snprintf(why, sizeof(why), "%s the %d s the GPU facts may take",
		         FACTS_NVML_NO_ANSWER, budget_ms(w) / 1000);
	snprintf(hung, sizeof(hung), "%s: %s", w->now->fn[0] ? w->now->fn : "NVML", why);
	if (w->count < 0) { /* the first child's nvmlInit, driver or count */
		facts_gpu_add_error(w->errors, "gpus", hung);
		return -1;
	}
	g = next_unanswered(w, start);
	if (g >= w->count)
		return -1;
	if (w->now->gpu == g) { /* the child was asking this GPU */
		snprintf(others, sizeof(others), "not asked: %s", hung);
		keep_unasked(w, g, w->now->key[0] ? w->now->key : NULL, hung, others);
		if (!w->now->key[0]) {
			char msg[320];

			snprintf(msg, sizeof(msg), "GPU %ld: %s", g, hung);
			facts_gpu_add_error(w->errors, "gpus", msg);
		}
		return cd_now_ms() < w->end_ms ? g + 1 : -2;
	}
	/* a later child's own nvmlInit: the whole driver is stuck */
	snprintf(others, sizeof(others), "not asked: %s (after GPU %ld)", hung, start - 1);
	for (; g < w->count; g++)
		if (json_is_null(json_array_get(w->gpus, (size_t)g)))
			keep_unasked(w, g, NULL, NULL, others);
	return -1;
}

static int env_ms(const char *name, int dflt)
{
	const char *v = getenv(name);
	int ms = v ? atoi(v) : 0;

	return ms > 0 ? ms : dflt;
}

void facts_gpu_watch_collect(json_t *facts, json_t *errors, char *absent, size_t absent_len)
{
	struct watch w = {.gpus = json_array(), .errors = errors, .count = -1};
	long start = 0;

	w.init_ms = env_ms("CLUSTERDOC_NVML_TIMEOUT_MS", FACTS_NVML_INIT_MS);
	w.gpu_ms = env_ms("CLUSTERDOC_NVML_TIMEOUT_MS", FACTS_NVML_GPU_MS);
	w.end_ms = cd_now_ms() + budget_ms(&w);
	w.now =
	    mmap(NULL, sizeof(*w.now), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w.now == MAP_FAILED) {
		char msg[CD_ERRLEN];

		snprintf(msg, sizeof(msg), "NVML's process could not start: mmap: %s",
		         strerror(errno));
		facts_gpu_add_error(errors, "gpus", msg);
		start = -1;
	}
	while (start >= 0) {
		int fds[2] = {-1, -1}, status = 0;
		enum child_end how;
		pid_t pid = -1, parent = getpid();

		/* before the fork: the child's first write is its nvmlInit */
		memset(w.now, 0, sizeof(*w.now));
		w.now->gpu = -1;
		if (pipe2(fds, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
			char msg[CD_ERRLEN];

			snprintf(msg, sizeof(msg), "NVML's process could not start: %s",
			         strerror(errno));
			facts_gpu_add_error(errors, "gpus", msg);
			if (pid < 0 && fds[0] >= 0) {
				close(fds[0]);
				close(fds[1]);
			}
			break;
		}
		if (pid == 0) {
			/* an agent that dies (ended at a deadline) takes this child
			 * with it: a child stuck in the driver is no job to keep */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			close(fds[0]);
			child_main(fds[1], (unsigned int)start, w.now);
		}
		close(fds[1]);
		how = follow(&w, fds[0]);
		close(fds[0]);
		/* a child that closed its pipe may still be held in the driver
		 * as it exits: reaped within a bound as a hung one is */
		if (how != CHILD_EXITED || !reap_within(pid, &status, 1000))
			end_child(pid, &status);
		if (how == CHILD_DONE)
			how = CHILD_EXITED;
		/* every GPU answered: a child stuck in nvmlShutdown is no loss */
		if (w.count >= 0 && next_unanswered(&w, start) >= w.count)
			break;
		start = settle(&w, how, status, start);
		if (start == -2) { /* the budget is spent: the GPUs left are not asked */
			char others[CD_ERRLEN];

			snprintf(others, sizeof(others),
			         "not asked: the %d s the GPU facts may take "
			         "were spent on GPUs that did not answer",
			         budget_ms(&w) / 1000);
			for (long g = next_unanswered(&w, 0); g < w.count;
			     g = next_unanswered(&w, g))
				keep_unasked(&w, g, NULL, NULL, others);
		}
	}
	if (w.now != MAP_FAILED)
		munmap(w.now, sizeof(*w.now));
	json_object_set_new(facts, "gpus", w.gpus);
	json_object_set_new(facts, "gpu_driver", w.driver ? w.driver : json_null());
	snprintf(absent, absent_len, "%s",
	         json_string_value(w.absent) ? json_string_value(w.absent) : "");
	json_decref(w.absent);
}
