/* SPDX-License-Identifier: MIT */
/*
 * test_facts_torch_bg.c - a torch import slower than the request's deadline
 * goes on in a detached finisher (facts_torch_bg.h) and warms the cache: the
 * next request is warm, a request during the import starts no second one,
 * and the finisher does not hold the agent's stdout. A fake interpreter (a
 * shell script) counts its runs; its import takes IMPORT_S seconds. Every
 * test waits for the finisher to end (it holds the lock until it exits).
 */
#include "probes/facts.h"
#include "probes/facts_python.h"
#include "probes/facts_torch_bg.h"
#include "cd.h"
#include "fsutil.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The deadline leaves step 1 (a shell script) room on a loaded machine. */
#define IMPORT_S       "5"
#define IMPORT_MS      5000 /* what the fake reports as import_ms, too */
#define DEADLINE_MS    2000
#define SLACK_MS       1500 /* a request ends this long before the import at the latest */
#define FINISHER_WAIT  10000
#define TIMEOUT_PREFIX "importing torch took longer than "

struct fx {
	char dir[64];
	char *py;    /* the fake interpreter */
	char *calls; /* one line per run of it: "info" or "torch" */
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int fx_setup(void **state)
{
	struct fx *f = cd_calloc(1, sizeof(*f));
	char *site, *torch, *init;
	FILE *o;

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_torchbg.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	unsetenv("PYTHONPATH");
	unsetenv("CUDA_VISIBLE_DEVICES");
	f->calls = cd_asprintf("%s/calls", f->dir);
	f->py = cd_asprintf("%s/python3", f->dir);
	site = cd_asprintf("%s/site", f->dir);
	torch = cd_asprintf("%s/torch", site);
	init = cd_asprintf("%s/__init__.py", torch);
	if (cd_mkdir_p(torch, NULL, 0) < 0 || !(o = fopen(init, "w")))
		return -1;
	fclose(o);
	/* step 1 at once; the torch script after IMPORT_S seconds */
	if (!(o = fopen(f->py, "w")))
		return -1;
	fprintf(o,
	        "#!/bin/sh\n"
	        "case \"$2\" in\n"
	        "*'import torch'*)\n"
	        "  echo torch >>'%s'\n"
	        "  sleep " IMPORT_S "\n"
	        "  echo '{\"version\": \"2.3.1\", \"cuda_available\": false, \"cuda_version\": "
	        "null, \"nccl_version\": null, \"import_ms\": 5000}' ;;\n"
	        "*)\n"
	        "  echo info >>'%s'\n"
	        "  echo '{\"executable\": \"'\"$0\"'\", \"version\": \"3.11.9\", "
	        "\"executable_mtime_ns\": 1, \"torch_origin\": \"%s/__init__.py\", "
	        "\"torch_mtime_ns\": 2, \"paths\": [\"%s\"]}' ;;\n"
	        "esac\n",
	        f->calls, f->calls, torch, site);
	if (fclose(o) != 0 || chmod(f->py, 0755) != 0)
		return -1;
	free(site);
	free(torch);
	free(init);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->py);
	free(f->calls);
	free(f);
	return 0;
}

/* How many times the fake imported torch. */
static int imports(const struct fx *f)
{
	char line[64];
	FILE *o = fopen(f->calls, "r");
	int n = 0;

	if (!o)
		return 0;
	while (fgets(line, sizeof(line), o))
		n += strcmp(line, "torch\n") == 0;
	fclose(o);
	return n;
}

/* The lock file the finisher holds (the only *.lock in the fixture's
 * directory), or NULL before any import. */
static char *lock_path(const struct fx *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	char *path = NULL;

	assert_non_null(d);
	while (!path && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0)
			path = cd_asprintf("%s/%s", f->dir, e->d_name);
	}
	closedir(d);
	return path;
}

/* 1 while a finisher holds the lock. */
static int import_running(const struct fx *f)
{
	char *path = lock_path(f);
	int fd, busy;

	assert_non_null(path);
	assert_true((fd = open(path, O_RDWR | O_CLOEXEC)) >= 0);
	busy = flock(fd, LOCK_EX | LOCK_NB) < 0;
	close(fd);
	free(path);
	return busy;
}

/* Wait until the finisher has exited (it lets go of the lock only then). */
static void wait_finisher(const struct fx *f)
{
	int64_t give_up = cd_now_ms() + FINISHER_WAIT;

	while (import_running(f) && cd_now_ms() < give_up)
		usleep(20 * 1000);
	assert_false(import_running(f));
}

struct req {
	json_t *facts, *errors;
	int64_t ms; /* how long facts_python_collect took */
};

static void request(const struct fx *f, int timeout_ms, struct req *r)
{
	struct facts_opts o;
	int64_t t0 = cd_now_ms();

	facts_opts_init(&o);
	o.python = f->py;
	o.cache_dir = f->dir;
	o.python_timeout_ms = timeout_ms;
	r->facts = json_object();
	r->errors = json_object();
	facts_python_collect(&o, NULL, r->facts, r->errors);
	r->ms = cd_now_ms() - t0;
}

static void req_fini(struct req *r)
{
	json_decref(r->facts);
	json_decref(r->errors);
}

static const char *torch_error(const struct req *r)
{
	const char *e = json_string_value(json_object_get(r->errors, "torch"));

	assert_non_null(e);
	return e;
}

/* Assert that msg is TIMEOUT_PREFIX, the budget in seconds, then "s; " and
 * tail. */
static void assert_timeout(const char *msg, const char *tail)
{
	const char *p = msg + strlen(TIMEOUT_PREFIX);

	assert_int_equal(strncmp(msg, TIMEOUT_PREFIX, strlen(TIMEOUT_PREFIX)), 0);
	assert_non_null(p = strstr(p, " s; "));
	assert_string_equal(p + 4, tail);
}

/* The pid a timeout message names after "(pid ". */
static long named_pid(const char *msg)
{
	const char *p = strstr(msg, "(pid ");

	assert_non_null(p);
	return strtol(p + 5, NULL, 10);
}

/* /proc/PID/comm without its newline, in buf; "" when it cannot be read. */
static const char *comm_of(long pid, char *buf, size_t len)
{
	char path[64];
	FILE *o;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	buf[0] = '\0';
	if ((o = fopen(path, "r"))) {
		if (!fgets(buf, (int)len, o))
			buf[0] = '\0';
		fclose(o);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void assert_warm(const struct req *r)
{
	json_t *torch = json_object_get(r->facts, "torch");

	assert_int_equal(json_object_size(r->errors), 0);
	assert_string_equal(json_string_value(json_object_get(torch, "version")), "2.3.1");
	assert_true(json_is_true(json_object_get(torch, "cached")));
}

static void test_slow_import_goes_on_and_the_next_request_is_warm(void **state)
{
	struct fx *f = *state;
	char want[256], comm[32];
	struct req r1, r2;

	request(f, DEADLINE_MS, &r1);
	assert_true(r1.ms >= DEADLINE_MS);
	assert_true(r1.ms < IMPORT_MS - SLACK_MS);
	snprintf(want, sizeof(want),
	         "the import goes on in the background (pid %ld) and its facts are cached when "
	         "it ends",
	         named_pid(torch_error(&r1)));
	assert_timeout(torch_error(&r1), want);
	assert_true(named_pid(want) > 0);
	assert_true(json_is_null(json_object_get(r1.facts, "torch")));
	assert_true(import_running(f));
	assert_string_equal(comm_of(named_pid(want), comm, sizeof(comm)), FACTS_TORCH_BG_NAME);

	wait_finisher(f);
	request(f, DEADLINE_MS, &r2);
	assert_warm(&r2);
	assert_int_equal(imports(f), 1);
	req_fini(&r1);
	req_fini(&r2);
}

static void test_request_during_an_import_starts_no_second_one(void **state)
{
	struct fx *f = *state;
	struct req r1, r2;
	char want[256];

	request(f, DEADLINE_MS, &r1);
	request(f, DEADLINE_MS, &r2);
	snprintf(want, sizeof(want),
	         "an earlier import on this node is still running (pid %ld) and its facts are "
	         "cached when it ends",
	         named_pid(torch_error(&r1)));
	assert_timeout(torch_error(&r2), want);
	assert_true(r2.ms < IMPORT_MS - SLACK_MS);

	wait_finisher(f);
	assert_int_equal(imports(f), 1);
	req_fini(&r1);
	req_fini(&r2);
}

static void test_request_that_outwaits_an_earlier_import_gets_its_cache(void **state)
{
	struct fx *f = *state;
	struct req r1, r2;

	request(f, DEADLINE_MS, &r1);
	request(f, FINISHER_WAIT, &r2); /* waits for the lock, then reads the cache */
	assert_warm(&r2);
	assert_null(json_object_get(json_object_get(r2.facts, "torch"), "import_ms"));
	assert_int_equal(imports(f), 1);

	wait_finisher(f);
	req_fini(&r1);
	req_fini(&r2);
}

static void test_import_in_time_is_answered_as_before(void **state)
{
	struct fx *f = *state;
	json_t *torch;
	struct req r;

	request(f, FINISHER_WAIT, &r);
	torch = json_object_get(r.facts, "torch");
	assert_int_equal(json_object_size(r.errors), 0);
	assert_true(json_is_false(json_object_get(torch, "cached")));
	assert_int_equal(json_integer_value(json_object_get(torch, "import_ms")), IMPORT_MS);
	assert_int_equal(imports(f), 1);

	wait_finisher(f);
	req_fini(&r);
}

/* No cache file (HOME unset): nothing could be warmed, so the import is the
 * caller's own child and is killed at the deadline, as it always was. */
static void test_without_a_cache_file_the_import_is_killed_at_the_deadline(void **state)
{
	struct fx *f = *state;
	const char *home = getenv("HOME");
	char *saved = home ? cd_strdup(home) : NULL;
	json_t *facts = json_object(), *errors = json_object();
	const char *e;
	struct facts_opts o;

	unsetenv("HOME");
	facts_opts_init(&o);
	o.python = f->py;
	o.python_timeout_ms = DEADLINE_MS;
	facts_python_collect(&o, NULL, facts, errors);
	if (saved)
		setenv("HOME", saved, 1);
	e = json_string_value(json_object_get(errors, "torch"));
	assert_non_null(e);
	assert_int_equal(strncmp(e, TIMEOUT_PREFIX, strlen(TIMEOUT_PREFIX)), 0);
	assert_null(strchr(e, ';'));
	assert_null(lock_path(f));
	assert_int_equal(imports(f), 1);
	json_decref(facts);
	json_decref(errors);
	free(saved);
}

/* The agent's stdout is the SSH channel: sshd waits until every process that
 * holds it has closed it, so the finisher must not keep it open. */
static void test_finisher_does_not_hold_the_agents_stdout(void **state)
{
	struct fx *f = *state;
	int out[2], status, running_at_eof;
	int64_t t0 = cd_now_ms(), eof_ms = -1;
	char buf[256];
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct req r;
		const char *e;

		/* out[1] stays open too, as the agent's connect-back socket does
		 * beside its stdout */
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		close(out[0]);
		request(f, DEADLINE_MS, &r);
		e = json_string_value(json_object_get(r.errors, "torch"));
		_exit(e && strstr(e, "goes on in the background") ? 0 : 1);
	}
	close(out[1]);
	while (cd_now_ms() - t0 < FINISHER_WAIT) {
		struct pollfd p = {.fd = out[0], .events = POLLIN};

		if (poll(&p, 1, 100) > 0 && read(out[0], buf, sizeof(buf)) == 0) {
			eof_ms = cd_now_ms() - t0;
			break;
		}
	}
	running_at_eof = import_running(f);
	close(out[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(eof_ms >= 0);
	assert_true(eof_ms < IMPORT_MS - SLACK_MS);
	assert_true(running_at_eof);

	wait_finisher(f);
	assert_int_equal(imports(f), 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_slow_import_goes_on_and_the_next_request_is_warm),
	    T(test_request_during_an_import_starts_no_second_one),
	    T(test_request_that_outwaits_an_earlier_import_gets_its_cache),
	    T(test_import_in_time_is_answered_as_before),
	    T(test_finisher_does_not_hold_the_agents_stdout),
	    T(test_without_a_cache_file_the_import_is_killed_at_the_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
