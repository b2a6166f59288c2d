/* test_runopt.c - the job options `clusterdoc run` and the TUI's run line share
 * (jobs/runopt.h): every option of the table has its bounds tested here, both ends
 * taken and one past each refused with the option named, so both front ends accept
 * and refuse alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cd.h"
#include "jobs/runopt.h"

static const struct runopt *op(const char *name)
{
	const struct runopt *o = runopt_find(name, strlen(name));

	assert_non_null(o);
	return o;
}

/* apply name=arg to a fresh run_opts; the return code, err filled */
static int apply(const char *name, const char *arg, struct run_opts *o, char *err)
{
	run_opts_init(o);
	err[0] = '\0';
	return runopt_apply(op(name), arg, o, err, CD_ERRLEN);
}

/* The options with a number: the bounds each front end must agree on. */
static const struct {
	const char *name;
	const char *lo, *hi, *below, *above;
	const char *msg; /* the refusal of `above` */
} bounds[] = {
    {"nproc-per-node", "1", "1024", "0", "1025",
     "--nproc-per-node wants a number from 1 to 1024, not \"1025\""},
    {"master-port", "1", "65525", "0", "65526",
     "--master-port wants a number from 1 to 65525, not \"65526\""},
    {"kill-grace", "0", "600", "-1", "601",
     "--kill-grace wants a number from 0 to 600, not \"601\""},
    {"stall-timeout", "0", "604800", "-1", "604801",
     "--stall-timeout wants a number from 0 to 604800, not \"604801\""},
    {"job-timeout", "0", "604800", "-1", "604801",
     "--job-timeout wants a number from 0 to 604800, not \"604801\""},
    {"rendezvous-timeout", "0", "86400", "-1", "86401",
     "--rendezvous-timeout wants a number from 0 to 86400, not \"86401\""},
};

static void every_number_takes_its_bounds_and_refuses_one_past_each(void **state)
{
	struct run_opts o;
	char err[CD_ERRLEN];

	for (size_t k = 0; k < CD_ARRAY_LEN(bounds); k++) {
		assert_int_equal(apply(bounds[k].name, bounds[k].lo, &o, err), 0);
		assert_int_equal(apply(bounds[k].name, bounds[k].hi, &o, err), 0);
		assert_int_equal(apply(bounds[k].name, bounds[k].below, &o, err), CD_ERR_PARSE);
		assert_int_equal(apply(bounds[k].name, bounds[k].above, &o, err), CD_ERR_PARSE);
		assert_string_equal(err, bounds[k].msg);
		assert_int_equal(apply(bounds[k].name, "2x", &o, err), CD_ERR_PARSE);
		assert_int_equal(apply(bounds[k].name, "", &o, err), CD_ERR_PARSE);
	}
}

static void seconds_are_kept_as_milliseconds(void **state)
{
	struct run_opts o;
	char err[CD_ERRLEN];

	assert_int_equal(apply("kill-grace", "7", &o, err), 0);
	assert_int_equal(o.kill_grace_ms, 7000);
	assert_int_equal(apply("rendezvous-timeout", "0", &o, err), 0);
	assert_int_equal(o.rendezvous_timeout_ms, 0);
	assert_int_equal(apply("job-timeout", "90", &o, err), 0);
	assert_int_equal(o.timeout_ms, 90000);
}

static void the_words_are_checked(void **state)
{
	struct run_opts o;
	char err[CD_ERRLEN];

	assert_int_equal(apply("launcher", "mpirun", &o, err), 0);
	assert_int_equal(o.launcher, RUN_MPIRUN);
	assert_int_equal(apply("launcher", "none", &o, err), 0);
	assert_int_equal(o.launcher, RUN_NONE);
	assert_int_equal(apply("launcher", "slurm", &o, err), CD_ERR_PARSE);
	assert_non_null(strstr(err, "--launcher is torchrun, none or mpirun"));
	assert_int_equal(apply("nproc-per-node", "gpu", &o, err), 0);
	assert_int_equal(o.nproc_per_node, 0);
	assert_int_equal(apply("backend", "nccl", &o, err), CD_ERR_PARSE);
	assert_int_equal(apply("backend", "hccl", &o, err), 0);
	assert_int_equal(o.hccl, 1);
	assert_int_equal(apply("remote-dir", "runs", &o, err), CD_ERR_PARSE);
	assert_string_equal(err, "--remote-dir is absolute or ~/...: runs");
	assert_int_equal(apply("remote-dir", "~/jobs", &o, err), 0);
	assert_int_equal(apply("env", "A=1", &o, err), 0);
	assert_int_equal(apply("env", "1A=1", &o, err), CD_ERR_PARSE);
}

/* Every option of the table is in the bounds table or has its words tested above. */
static void every_option_of_the_table_is_tested(void **state)
{
	static const char *const words[] = {"launcher", "python", "iface",      "backend",
	                                    "env",      "chdir",  "remote-dir", "no-hang-ready"};

	for (size_t k = 0; k < runopts_len; k++) {
		int found = 0;

		for (size_t b = 0; b < CD_ARRAY_LEN(bounds); b++)
			found |= !strcmp(runopts[k].name, bounds[b].name);
		for (size_t w = 0; w < CD_ARRAY_LEN(words); w++)
			found |= !strcmp(runopts[k].name, words[w]);
		if (!found)
			fail_msg("--%s has no bounds test", runopts[k].name);
	}
}

static void an_unknown_name_is_not_found(void **state)
{
	assert_null(runopt_find("mast", 4));
	assert_null(runopt_find("sync", 4)); /* the command line's own */
	assert_non_null(runopt_find("master-port=29500", 11));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_number_takes_its_bounds_and_refuses_one_past_each),
	    cmocka_unit_test(seconds_are_kept_as_milliseconds),
	    cmocka_unit_test(the_words_are_checked),
	    cmocka_unit_test(every_option_of_the_table_is_tested),
	    cmocka_unit_test(an_unknown_name_is_not_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
