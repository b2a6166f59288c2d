/* SPDX-License-Identifier: MIT */
/* test_runopt.c - the job options `clusterdoc run` and the TUI's run line share
 * (jobs/runopt.h), read through the one option loop (core/optgroup.h): every
 * option of the group has its bounds tested here, both ends taken and one past
 * each refused with the option named, so both front ends accept and refuse
 * alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cd.h"
#include "jobs/runopt.h"

/* Parse the words argv[1..argc) as the TUI's run line does: the group
 * through the one loop (core/optgroup.h). The return code, err filled, *first
 * the first word after the options. */
static int parse_words(int argc, char **argv, struct run_opts *o, int *first, char *err)
{
	struct runopt_dst dst = {.o = o};
	struct optset_loop l = {.shortopts = "+", .quiet = 1};
	struct optset set;

	run_opts_init(o);
	optset_init(&set);
	optset_add_group(&set, &runopt_group, NULL, &dst);
	return optset_getopt(&set, &l, argc, argv, first, err, CD_ERRLEN);
}

/* apply --name=arg (or --name alone when arg is NULL) to a fresh run_opts */
static int apply(const char *name, const char *arg, struct run_opts *o, char *err)
{
	char word[128];
	char *argv[] = {"R", word, "true", NULL};
	int first = 0, rc;

	snprintf(word, sizeof(word), "--%s%s%s", name, arg ? "=" : "", arg ? arg : "");
	rc = parse_words(3, argv, o, &first, err);
	return rc < 0 ? CD_ERR_PARSE : rc;
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
	assert_int_equal(apply("backend", "tcp", &o, err), CD_ERR_PARSE);
	assert_string_equal(err, "--backend is nccl, gloo or hccl, not \"tcp\"");
	assert_int_equal(apply("backend", "hccl", &o, err), 0);
	assert_int_equal(o.hccl, 1);
	assert_int_equal(o.gloo, 0);
	/* gloo: the gate counts no finding of NCCL's IB transport alone */
	assert_int_equal(apply("backend", "gloo", &o, err), 0);
	assert_int_equal(o.gloo, 1);
	assert_int_equal(o.hccl, 0);
	assert_int_equal(apply("backend", "nccl", &o, err), 0);
	assert_int_equal(o.gloo, 0);
	assert_int_equal(o.hccl, 0);
	assert_int_equal(apply("remote-dir", "runs", &o, err), CD_ERR_PARSE);
	assert_string_equal(err, "--remote-dir is absolute or ~/...: runs");
	assert_int_equal(apply("remote-dir", "~/jobs", &o, err), 0);
	assert_int_equal(apply("env", "A=1", &o, err), 0);
	assert_int_equal(apply("env", "1A=1", &o, err), CD_ERR_PARSE);
}

/* Every option of the group is in the bounds table or has its words tested above. */
static void every_option_of_the_group_is_tested(void **state)
{
	static const char *const words[] = {"launcher", "python", "iface",      "backend",
	                                    "env",      "chdir",  "remote-dir", "no-hang-ready"};

	for (size_t k = 0; k < runopt_group.ndefs; k++) {
		const char *name = runopt_group.defs[k].name;
		int found = 0;

		for (size_t b = 0; b < CD_ARRAY_LEN(bounds); b++)
			found |= !strcmp(name, bounds[b].name);
		for (size_t w = 0; w < CD_ARRAY_LEN(words); w++)
			found |= !strcmp(name, words[w]);
		if (!found)
			fail_msg("--%s has no bounds test", name);
	}
}

/* The line's words as the TUI hands them: an abbreviation, an option of the
 * command line only, a value where none is taken, a missing value. */
static void the_line_refuses_what_is_not_an_option_of_the_group(void **state)
{
	struct run_opts o;
	char err[CD_ERRLEN];
	char *abbrev[] = {"R", "--mast", "1", "true", NULL};
	char *sync[] = {"R", "--sync", "/x", "true", NULL};
	char *flag[] = {"R", "--no-hang-ready=1", "true", NULL};
	char *missing[] = {"R", "--chdir", NULL};
	char *none[] = {"R", "--chdir", "/x", NULL};
	char *line[] = {"R", "--master-port", "2", "--", "--chdir", "x", NULL};
	int first = 0;

	assert_int_equal(parse_words(4, abbrev, &o, &first, err), CD_ERR_PARSE);
	assert_string_equal(err, "unknown option --mast; did you mean --master-port?");
	assert_true(parse_words(4, sync, &o, &first, err) < 0);
	assert_non_null(strstr(err, "unknown option --sync"));
	assert_true(parse_words(3, flag, &o, &first, err) < 0);
	assert_string_equal(err, "--no-hang-ready takes no value");
	assert_true(parse_words(2, missing, &o, &first, err) < 0);
	assert_string_equal(err, "--chdir needs a value");
	assert_int_equal(parse_words(3, none, &o, &first, err), 0);
	assert_int_equal(first, 3); /* no command: the front end says so */
	assert_int_equal(parse_words(6, line, &o, &first, err), 0);
	assert_int_equal(o.master_port, 2);
	assert_int_equal(first, 4); /* after "--", the command's own words */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_number_takes_its_bounds_and_refuses_one_past_each),
	    cmocka_unit_test(seconds_are_kept_as_milliseconds),
	    cmocka_unit_test(the_words_are_checked),
	    cmocka_unit_test(every_option_of_the_group_is_tested),
	    cmocka_unit_test(the_line_refuses_what_is_not_an_option_of_the_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
