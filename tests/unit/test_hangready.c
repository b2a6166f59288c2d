/* SPDX-License-Identifier: MIT */
/* test_hangready.c - the hang-ready environment, and its sitecustomize run
 * by this machine's python3: stacks dumped on the signal with the process
 * going on, and a sitecustomize further down the path still run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cd.h"
#include "jobs/hangready.h"
#include "fsutil.h"
#include "sha256.h"

static char top[PATH_MAX]; /* the group's temporary directory */

static void assert_env(const struct hangready *h, const char *const *want, size_t n)
{
	assert_int_equal(h->nenv, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(h->env[i], want[i]);
}

/* ================================================================ the environment */

static void env_for_a_known_recent_torch_names_every_file_under_the_run_dir(void **state)
{
	static const char *const want[] = {
	    "TORCH_NCCL_TRACE_BUFFER_SIZE=2000",
	    "TORCH_NCCL_DUMP_ON_TIMEOUT=1",
	    "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=~/.cache/clusterdoc/runs/R/hang/nccl_trace_rank_",
	    "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=~/.cache/clusterdoc/runs/R/hang/nccl_trace_pipe_",
	    "PYTHONPATH=~/.cache/clusterdoc/runs/R/hang:/opt/lib:/srv/py",
	    "CLUSTERDOC_DUMP_SIGNAL=SIGUSR2",
	};
	struct hangready h;
	char err[CD_ERRLEN];

	assert_int_equal(hangready_build("~/.cache/clusterdoc/runs/R/", "2.3.1+cu121",
	                                 "/opt/lib:/srv/py", &h, err, sizeof(err)),
	                 0);
	assert_env(&h, want, CD_ARRAY_LEN(want));
	assert_int_equal(h.dump_signal, SIGUSR2);
	hangready_free(&h);
}

/* torch 2.8 reads the ring's size as TORCH_FR_BUFFER_SIZE and warns about the
 * old name in the job's log; the file and pipe keep their names. */
static void env_for_torch_2_8_and_later_names_the_buffer_torch_fr(void **state)
{
	static const struct {
		const char *version, *buffer;
	} cases[] = {
	    {"2.7.1+cu126", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000"},
	    {"2.8.0", "TORCH_FR_BUFFER_SIZE=2000"},
	    {"2.11.0+cu130", "TORCH_FR_BUFFER_SIZE=2000"},
	    {"3.0", "TORCH_FR_BUFFER_SIZE=2000"},
	    {"", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000"},
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		struct hangready h;
		char err[CD_ERRLEN];

		assert_int_equal(hangready_build("/r", cases[i].version, "", &h, err, sizeof(err)),
		                 0);
		assert_int_equal(h.nenv, 6);
		assert_string_equal(h.env[0], cases[i].buffer);
		assert_string_equal(h.env[2],
		                    "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/r/hang/nccl_trace_rank_");
		assert_string_equal(h.env[3],
		                    "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/r/hang/nccl_trace_pipe_");
		hangready_free(&h);
	}
}

static void env_for_an_unknown_torch_still_sets_the_nccl_variables(void **state)
{
	struct hangready h;
	char err[CD_ERRLEN];

	assert_int_equal(hangready_build("/scratch/run", "", NULL, &h, err, sizeof(err)), 0);
	assert_int_equal(h.nenv, 6);
	assert_string_equal(h.env[4], "PYTHONPATH=/scratch/run/hang");
	hangready_free(&h);
}

static void env_for_debians_torch_1_13_leaves_the_nccl_variables_out(void **state)
{
	static const char *const want[] = {"PYTHONPATH=/r/hang", "CLUSTERDOC_DUMP_SIGNAL=SIGUSR2"};
	struct hangready h;
	char err[CD_ERRLEN];

	assert_int_equal(hangready_build("/r", "1.13.1", "", &h, err, sizeof(err)), 0);
	assert_env(&h, want, CD_ARRAY_LEN(want));
	hangready_free(&h);
}

static void a_run_dir_that_cannot_go_into_pythonpath_is_refused(void **state)
{
	static const char *const bad[] = {"", "runs/R", "/a:b", "/a\nb"};
	struct hangready h;
	char err[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		assert_int_equal(hangready_build(bad[i], "", NULL, &h, err, sizeof(err)),
		                 CD_ERR_PARSE);
		assert_int_equal(h.nenv, 0);
		assert_null(h.site.data);
		hangready_free(&h);
	}
}

static void the_site_file_is_the_sitecustomize_with_its_hash(void **state)
{
	struct hangready h;
	char err[CD_ERRLEN], hex[SHA256_HEX_LEN];

	assert_int_equal(hangready_build("/r", "", NULL, &h, err, sizeof(err)), 0);
	assert_string_equal(h.site.rel, "hang/sitecustomize.py");
	assert_int_equal(h.site.mode, 0644);
	sha256_data_hex(h.site.data, h.site.len, hex);
	assert_string_equal(h.site.sha256, hex);
	assert_memory_equal(h.site.data, "# clusterdoc-hang-ready", 23);
	hangready_free(&h);
}

/* ================================================================ python3 */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void write_file(const char *path, const void *data, size_t len)
{
	char err[CD_ERRLEN];

	assert_int_equal(cd_mkdir_parent(path, err, sizeof(err)), 0);
	assert_int_equal(cd_write_file_atomic(path, data, len, 0644, err, sizeof(err)), 0);
}

static int python3_present(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ||
	       system("python3 -c pass >/dev/null 2>&1") == 0;
}

struct py {
	pid_t pid;
	int in, out, err; /* its stdin, stdout and stderr */
};

/* python3 -c code, with PYTHONPATH=pythonpath (and the hang-ready signal). */
static void py_start(struct py *p, const char *pythonpath, const char *code)
{
	int in[2], out[2], err[2];

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		setenv("PYTHONPATH", pythonpath, 1);
		setenv("CLUSTERDOC_DUMP_SIGNAL", "SIGUSR2", 1);
		unsetenv("PYTHONSTARTUP");
		/* Debian's own python3 first: the one whose site.py and
		 * sitecustomize the nodes have */
		execl("/usr/bin/python3", "python3", "-c", code, (char *)NULL);
		execlp("python3", "python3", "-c", code, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->in = in[1];
	p->out = out[0];
	p->err = err[0];
}

/* Read fd until it holds want or 10 s pass; what was read into buf. */
static void read_until(int fd, const char *want, char *buf, size_t len)
{
	size_t used = 0;
	int64_t until = cd_now_ms() + 10000;

	buf[0] = '\0';
	while (!strstr(buf, want) && cd_now_ms() < until && used + 1 < len) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(fd, buf + used, len - used - 1);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
	}
}

static int py_wait(struct py *p)
{
	int status;

	close(p->in);
	assert_int_equal(waitpid(p->pid, &status, 0), p->pid);
	close(p->out);
	close(p->err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The stack file the process pid wrote into dir; its text into buf. */
static int read_stacks(const char *dir, pid_t pid, char *buf, size_t len)
{
	char cmd[PATH_MAX + 200];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "cat %s/py_stacks_*_%d.txt 2>/dev/null", dir, (int)pid);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	pclose(f);
	return (int)n;
}

static void place_site(const char *run_dir)
{
	struct hangready h;
	char err[CD_ERRLEN], path[PATH_MAX + 64];

	assert_int_equal(hangready_build(run_dir, "", NULL, &h, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/%s", run_dir, h.site.rel);
	write_file(path, h.site.data, h.site.len);
	hangready_free(&h);
}

static const char wait_code[] = "import sys\n"
                                "def in_the_training_step():\n"
                                "    print('ready', flush=True)\n"
                                "    sys.stdin.readline()\n"
                                "    print('still here', flush=True)\n"
                                "in_the_training_step()\n";

static void python_dumps_its_stacks_on_the_signal_and_keeps_running(void **state)
{
	char run[PATH_MAX + 16], hang[PATH_MAX + 32], other[PATH_MAX + 32], path[PATH_MAX + 64];
	char pythonpath[3 * PATH_MAX], out[4096], stacks[8192];
	int64_t until;
	struct py p;

	if (!python3_present())
		skip();
	snprintf(run, sizeof(run), "%s/run1", top);
	snprintf(hang, sizeof(hang), "%s/hang", run);
	snprintf(other, sizeof(other), "%s/other1", top);
	place_site(run);
	/* the user's own sitecustomize, further down the path */
	snprintf(path, sizeof(path), "%s/sitecustomize.py", other);
	write_file(path, "import os\nopen(os.path.join(os.path.dirname(__file__), 'ran'), 'w')\n",
	           68);
	snprintf(pythonpath, sizeof(pythonpath), "%s:%s", hang, other);

	py_start(&p, pythonpath, wait_code);
	read_until(p.out, "ready\n", out, sizeof(out));
	assert_string_equal(out, "ready\n");
	assert_int_equal(kill(p.pid, SIGUSR2), 0);
	until = cd_now_ms() + 10000;
	while (cd_now_ms() < until && (read_stacks(hang, p.pid, stacks, sizeof(stacks)) <= 0 ||
	                               !strstr(stacks, "in_the_training_step")))
		usleep(20000);
	assert_non_null(strstr(stacks, "# pid "));
	assert_non_null(strstr(stacks, "in_the_training_step"));
	assert_int_equal(write(p.in, "go\n", 3), 3);
	read_until(p.out, "still here\n", out, sizeof(out));
	assert_string_equal(out, "still here\n");
	read_until(p.err, "\n", out, sizeof(out));
	assert_string_equal(out, ""); /* not a warning */
	assert_int_equal(py_wait(&p), 0);
	snprintf(path, sizeof(path), "%s/ran", other);
	assert_int_equal(access(path, F_OK), 0);
}

static void a_failing_hidden_sitecustomize_is_one_warning_not_a_failed_job(void **state)
{
	char run[PATH_MAX + 16], other[PATH_MAX + 32], path[PATH_MAX + 64];
	char pythonpath[3 * PATH_MAX], out[4096], err[4096], want[PATH_MAX + 128];
	struct py p;

	if (!python3_present())
		skip();
	snprintf(run, sizeof(run), "%s/run2", top);
	snprintf(other, sizeof(other), "%s/other2", top);
	place_site(run);
	snprintf(path, sizeof(path), "%s/sitecustomize.py", other);
	write_file(path, "raise RuntimeError('broken site')\n", 34);
	snprintf(pythonpath, sizeof(pythonpath), "%s/hang:%s", run, other);

	py_start(&p, pythonpath, "print('job ran', flush=True)\n");
	read_until(p.out, "job ran\n", out, sizeof(out));
	read_until(p.err, "\n", err, sizeof(err));
	assert_int_equal(py_wait(&p), 0);
	assert_string_equal(out, "job ran\n");
	snprintf(want, sizeof(want),
	         "clusterdoc hang-ready: %s/sitecustomize.py failed: broken site\n", other);
	assert_string_equal(err, want);
}

static void a_second_copy_on_the_path_is_not_chained_into_a_loop(void **state)
{
	char run[PATH_MAX + 16], run2[PATH_MAX + 16], pythonpath[3 * PATH_MAX], out[4096],
	    err[4096];
	struct py p;

	if (!python3_present())
		skip();
	snprintf(run, sizeof(run), "%s/run3", top);
	snprintf(run2, sizeof(run2), "%s/run4", top);
	place_site(run);
	place_site(run2);
	snprintf(pythonpath, sizeof(pythonpath), "%s/hang:%s/hang", run, run2);
	py_start(&p, pythonpath,
	         "import sys\nprint(sorted(m for m in sys.modules if 'sitecustomize' in m), "
	         "flush=True)\n");
	read_until(p.out, "\n", out, sizeof(out));
	read_until(p.err, "\n", err, sizeof(err));
	assert_int_equal(py_wait(&p), 0);
	assert_non_null(strstr(out, "'sitecustomize'"));
	/* Debian ships a sitecustomize of its own: still chained */
	if (access("/usr/bin/python3", X_OK) == 0 &&
	    system("/usr/bin/python3 -S -c 'import sys,os; sys.exit(not any(os.path.isfile(p + "
	           "\"/sitecustomize.py\") for p in sys.path))'") == 0)
		assert_non_null(strstr(out, "'_clusterdoc_chained_sitecustomize'"));
	assert_string_equal(err, "");
	/* the second copy did not run: it wrote no stack file */
	assert_int_equal(read_stacks(run2, p.pid, err, sizeof(err)), 0);
	snprintf(pythonpath, sizeof(pythonpath), "%s/hang", run2);
	assert_int_equal(read_stacks(pythonpath, p.pid, err, sizeof(err)), 0);
	snprintf(pythonpath, sizeof(pythonpath), "%s/hang", run);
	assert_true(read_stacks(pythonpath, p.pid, err, sizeof(err)) > 0);
}

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/cd-hangready-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	snprintf(top, sizeof(top), "%s", tmpl);
	return 0;
}

static int group_teardown(void **state)
{
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(env_for_a_known_recent_torch_names_every_file_under_the_run_dir),
	    cmocka_unit_test(env_for_torch_2_8_and_later_names_the_buffer_torch_fr),
	    cmocka_unit_test(env_for_an_unknown_torch_still_sets_the_nccl_variables),
	    cmocka_unit_test(env_for_debians_torch_1_13_leaves_the_nccl_variables_out),
	    cmocka_unit_test(a_run_dir_that_cannot_go_into_pythonpath_is_refused),
	    cmocka_unit_test(the_site_file_is_the_sitecustomize_with_its_hash),
	    cmocka_unit_test(python_dumps_its_stacks_on_the_signal_and_keeps_running),
	    cmocka_unit_test(a_failing_hidden_sitecustomize_is_one_warning_not_a_failed_job),
	    cmocka_unit_test(a_second_copy_on_the_path_is_not_chained_into_a_loop),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
