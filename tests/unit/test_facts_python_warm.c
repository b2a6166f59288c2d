/* SPDX-License-Identifier: MIT */
/*
 * test_facts_python_warm.c - the warm key of the Python/torch facts
 * (facts_pywarm.h): a warm request starts no Python at all, and each thing
 * the key holds, when it changes, starts Python again (and imports torch
 * only when the cold key changed too). A fake interpreter (a shell script)
 * counts its runs; a last test uses the real /usr/bin/python3 with torch.
 */
#include "probes/facts.h"
#include "probes/facts_python.h"
#include "probes/facts_pywarm.h"
#include "cd.h"
#include "fsutil.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const saved_env[] = {"PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES"};

struct fx {
	char dir[64];
	char *py;    /* the fake interpreter, dir/bin/python3 */
	char *calls; /* one line per run of it */
	char *site;  /* the fake's only sys.path directory */
	char *env[3];
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/*
 * The fake: step 1 reports itself ($0) as sys.executable, torch in dir/site; the
 * torch script (the one that imports torch) prints torch 2.3.1 with CUDA.
 * Every run appends "info" or "torch" to dir/calls.
 */
static void write_fake(struct fx *f, const char *path, const char *version)
{
	FILE *o = fopen(path, "w");

	assert_non_null(o);
	fprintf(o,
	        "#!/bin/sh\n"
	        "case \"$2\" in\n"
	        "*'import torch'*)\n"
	        "  echo torch >>'%s'\n"
	        "  echo '{\"version\": \"2.3.1\", \"cuda_available\": true, \"cuda_version\": "
	        "\"12.1\", \"nccl_version\": \"2.20.5\", \"import_ms\": 1500}' ;;\n"
	        "*)\n"
	        "  echo info >>'%s'\n"
	        "  echo '{\"executable\": \"'\"$0\"'\", \"version\": \"%s\", "
	        "\"executable_mtime_ns\": 1, \"torch_origin\": \"%s/torch/__init__.py\", "
	        "\"torch_mtime_ns\": 2, \"paths\": [\"%s\"]}' ;;\n"
	        "esac\n",
	        f->calls, f->calls, version, f->site, f->site);
	assert_int_equal(fclose(o), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static int fx_setup(void **state)
{
	struct fx *f = cd_calloc(1, sizeof(*f));
	char *torch, *init, *bin;
	FILE *o;

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_pywarm.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(saved_env[i]);

		f->env[i] = v ? cd_strdup(v) : NULL;
	}
	unsetenv("PYTHONPATH");
	unsetenv("CUDA_VISIBLE_DEVICES");
	f->calls = cd_asprintf("%s/calls", f->dir);
	f->site = cd_asprintf("%s/site", f->dir);
	torch = cd_asprintf("%s/torch", f->site);
	init = cd_asprintf("%s/__init__.py", torch);
	bin = cd_asprintf("%s/bin", f->dir);
	f->py = cd_asprintf("%s/python3", bin);
	if (cd_mkdir_p(torch, NULL, 0) < 0 || cd_mkdir_p(bin, NULL, 0) < 0 ||
	    !(o = fopen(init, "w")))
		return -1;
	fclose(o);
	write_fake(f, f->py, "3.11.9");
	free(torch);
	free(init);
	free(bin);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	for (size_t i = 0; i < 3; i++) {
		if (f->env[i])
			setenv(saved_env[i], f->env[i], 1);
		else
			unsetenv(saved_env[i]);
		free(f->env[i]);
	}
	nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->py);
	free(f->calls);
	free(f->site);
	free(f);
	return 0;
}

/* How many times the fake ran, and how many of them imported torch. */
static void count_calls(const struct fx *f, int *runs, int *imports)
{
	char line[64];
	FILE *o = fopen(f->calls, "r");

	*runs = *imports = 0;
	if (!o)
		return;
	while (fgets(line, sizeof(line), o)) {
		(*runs)++;
		*imports += strcmp(line, "torch\n") == 0;
	}
	fclose(o);
}

/* Run the probe with interpreter py (NULL: "python3" from PATH), caching in
 * the fixture's directory; assert that it found torch and return whether
 * the torch facts came from the cache. */
static int probe(const struct fx *f, const char *py, const char *gpu_driver, int no_cache)
{
	json_t *facts = json_object(), *errors = json_object(), *torch;
	struct facts_opts o;
	int cached;

	facts_opts_init(&o);
	o.python = py;
	o.cache_dir = f->dir;
	o.python_timeout_ms = 10000;
	o.no_cache = no_cache;
	facts_python_collect(&o, gpu_driver, facts, errors);
	assert_int_equal(json_object_size(errors), 0);
	torch = json_object_get(facts, "torch");
	assert_string_equal(json_string_value(json_object_get(torch, "version")), "2.3.1");
	assert_true(json_is_true(json_object_get(torch, "cuda_available")));
	assert_string_equal(json_string_value(json_object_get(torch, "nccl_version")), "2.20.5");
	assert_non_null(json_object_get(facts, "python"));
	cached = json_is_true(json_object_get(torch, "cached"));
	json_decref(facts);
	json_decref(errors);
	return cached;
}

/* Probe and assert the runs (+runs, +imports since the last call) and
 * "cached". */
#define EXPECT(f, py, drv, no_cache, want_cached, want_runs, want_imports)  \
	do {                                                                \
		int r0, i0, r1, i1;                                         \
		count_calls(f, &r0, &i0);                                   \
		assert_int_equal(probe(f, py, drv, no_cache), want_cached); \
		count_calls(f, &r1, &i1);                                   \
		assert_int_equal(r1 - r0, want_runs);                       \
		assert_int_equal(i1 - i0, want_imports);                    \
	} while (0)

static void test_warm_request_starts_no_python(void **state)
{
	struct fx *f = *state;

	EXPECT(f, f->py, "550.54.15", 0, 0, 2, 1); /* cold: step 1 and the import */
	EXPECT(f, f->py, "550.54.15", 0, 1, 0, 0); /* warm: nothing runs */
	EXPECT(f, f->py, "550.54.15", 0, 1, 0, 0);
}

static void test_warm_answer_is_the_recorded_python(void **state)
{
	struct fx *f = *state;
	json_t *facts = json_object(), *errors = json_object(), *py;
	struct facts_opts o;

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	facts_opts_init(&o);
	o.python = f->py;
	o.cache_dir = f->dir;
	facts_python_collect(&o, NULL, facts, errors);
	py = json_object_get(facts, "python");
	assert_string_equal(json_string_value(json_object_get(py, "path")), f->py);
	assert_string_equal(json_string_value(json_object_get(py, "version")), "3.11.9");
	assert_null(json_object_get(json_object_get(facts, "torch"), "import_ms"));
	json_decref(facts);
	json_decref(errors);
}

static void test_new_pythonpath_runs_step_1_but_not_the_import(void **state)
{
	struct fx *f = *state;

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	setenv("PYTHONPATH", "/opt/extra", 1);
	EXPECT(f, f->py, NULL, 0, 1, 1, 0); /* same cold key: torch from the cache */
	EXPECT(f, f->py, NULL, 0, 1, 0, 0); /* and the new warm key was recorded */
}

static void test_new_cuda_visible_devices_imports_torch_again(void **state)
{
	struct fx *f = *state;

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	setenv("CUDA_VISIBLE_DEVICES", "1", 1);
	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	EXPECT(f, f->py, NULL, 0, 1, 0, 0);
}

static void test_new_driver_version_imports_torch_again(void **state)
{
	struct fx *f = *state;

	EXPECT(f, f->py, "535.104.05", 0, 0, 2, 1);
	EXPECT(f, f->py, "550.54.15", 0, 0, 2, 1);
	EXPECT(f, f->py, "550.54.15", 0, 1, 0, 0);
}

static void test_package_installed_on_sys_path_runs_step_1(void **state)
{
	struct fx *f = *state;
	char *pkg = cd_asprintf("%s/numpy", f->site);

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	/* a new entry changes the directory's mtime; make sure the clock moved */
	usleep(20 * 1000);
	assert_int_equal(mkdir(pkg, 0755), 0);
	EXPECT(f, f->py, NULL, 0, 1, 1, 0);
	EXPECT(f, f->py, NULL, 0, 1, 0, 0);
	free(pkg);
}

static void test_replaced_torch_init_runs_step_1(void **state)
{
	struct fx *f = *state;
	char *init = cd_asprintf("%s/torch/__init__.py", f->site);
	char *tmp = cd_asprintf("%s.new", init);
	FILE *o;

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	/* as dpkg and pip do: a new file renamed over the old one */
	assert_non_null(o = fopen(tmp, "w"));
	fputs("# 2.3.2\n", o);
	fclose(o);
	assert_int_equal(rename(tmp, init), 0);
	EXPECT(f, f->py, NULL, 0, 1, 1, 0);
	free(init);
	free(tmp);
}

static void test_rewritten_interpreter_runs_step_1(void **state)
{
	struct fx *f = *state;
	char *tmp = cd_asprintf("%s.new", f->py);

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	write_fake(f, tmp, "3.11.9");
	assert_int_equal(rename(tmp, f->py), 0);
	EXPECT(f, f->py, NULL, 0, 1, 1, 0);
	free(tmp);
}

static void test_python3_earlier_in_path_is_noticed(void **state)
{
	struct fx *f = *state;
	char *bin2 = cd_asprintf("%s/bin2", f->dir), *py2 = cd_asprintf("%s/python3", bin2);
	char *path = cd_asprintf("%s:%s/bin:/usr/bin:/bin", bin2, f->dir);

	assert_int_equal(mkdir(bin2, 0755), 0);
	setenv("PATH", path, 1);
	EXPECT(f, NULL, NULL, 0, 0, 2, 1);
	EXPECT(f, NULL, NULL, 0, 1, 0, 0);
	write_fake(f, py2, "3.12.4"); /* same PATH, another python3 found first */
	EXPECT(f, NULL, NULL, 0, 0, 2, 1);
	EXPECT(f, NULL, NULL, 0, 1, 0, 0);
	free(bin2);
	free(py2);
	free(path);
}

static void test_no_cache_always_runs_python(void **state)
{
	struct fx *f = *state;

	EXPECT(f, f->py, NULL, 0, 0, 2, 1);
	EXPECT(f, f->py, NULL, 1, 0, 2, 1);
}

static void test_which_follows_path_like_execvp(void **state)
{
	struct fx *f = *state;
	char *path = cd_asprintf("/nonexistent:%s/bin", f->dir), *got;

	setenv("PATH", path, 1);
	got = facts_pywarm_which("python3");
	assert_string_equal(got, f->py);
	free(got);
	got = facts_pywarm_which("./relative/python3"); /* a path is taken as it is */
	assert_string_equal(got, "./relative/python3");
	free(got);
	assert_null(facts_pywarm_which("no-such-python"));
	assert_null(facts_pywarm_which(""));
	free(path);
}

static void test_key_of_a_missing_interpreter_is_null(void **state)
{
	setenv("PATH", "/nonexistent", 1);
	assert_null(facts_pywarm_key("python3", "/usr/bin/python3", NULL, NULL, NULL));
}

/* The real interpreter with Debian's python3-torch: the second request is
 * answered from the cache (the fakes above show that no child runs then). */
static void test_real_python_warm_request_is_fast(void **state)
{
	struct fx *f = *state;
	json_t *facts, *errors;
	struct facts_opts o;
	int64_t t0, ms;

	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	facts_opts_init(&o);
	o.python = "/usr/bin/python3";
	o.cache_dir = f->dir;
	o.python_timeout_ms = 60000;
	for (int i = 0; i < 2; i++) {
		facts = json_object();
		errors = json_object();
		t0 = cd_now_ms();
		facts_python_collect(&o, NULL, facts, errors);
		ms = cd_now_ms() - t0;
		if (!json_is_object(json_object_get(facts, "torch"))) {
			json_decref(facts);
			json_decref(errors);
			skip(); /* python3-torch is not installed */
		}
		assert_int_equal(json_object_size(errors), 0);
		assert_int_equal(
		    json_is_true(json_object_get(json_object_get(facts, "torch"), "cached")), i);
		json_decref(facts);
		json_decref(errors);
	}
	print_message("warm request with the real python3: %lld ms\n", (long long)ms);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_warm_request_starts_no_python),
	    T(test_warm_answer_is_the_recorded_python),
	    T(test_new_pythonpath_runs_step_1_but_not_the_import),
	    T(test_new_cuda_visible_devices_imports_torch_again),
	    T(test_new_driver_version_imports_torch_again),
	    T(test_package_installed_on_sys_path_runs_step_1),
	    T(test_replaced_torch_init_runs_step_1),
	    T(test_rewritten_interpreter_runs_step_1),
	    T(test_python3_earlier_in_path_is_noticed),
	    T(test_no_cache_always_runs_python),
	    T(test_which_follows_path_like_execvp),
	    T(test_key_of_a_missing_interpreter_is_null),
	    T(test_real_python_warm_request_is_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
