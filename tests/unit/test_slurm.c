/* SPDX-License-Identifier: MIT */
/* test_slurm.c - parsing `scontrol show node -o`, and the scontrol calls
 * against a stand-in script (tests/fakes/scontrol); child_run's deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "cd.h"
#include "child.h"
#include "slurm.h"

/* As Slurm 22.05 prints it, shortened in the middle. */
static const char drained_line[] =
    "NodeName=gpu07 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=64 "
    "State=IDLE+DRAIN ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A "
    "Partitions=gpu BootTime=2026-11-20T08:00:00 CfgTRES=cpu=64 AllocTRES= "
    "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "
    "Reason=clusterdoc: ipv6-no-route,master-port-blocked [root@2026-11-21T10:00:00]\n";

static void parse_reads_state_and_reason_without_the_stamp(void **state)
{
	struct slurm_node n;

	assert_int_equal(slurm_node_parse(drained_line, &n), 0);
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_string_equal(n.reason, "clusterdoc: ipv6-no-route,master-port-blocked");
	assert_true(n.drained);
	assert_false(n.down);
}

static void parse_of_a_node_without_reason_has_an_empty_one(void **state)
{
	struct slurm_node n;

	assert_int_equal(slurm_node_parse("NodeName=n1 Arch=x86_64 State=MIXED Weight=1\n", &n), 0);
	assert_string_equal(n.state, "MIXED");
	assert_string_equal(n.reason, "");
	assert_false(n.drained);
}

static void parse_does_not_take_a_key_inside_another_one(void **state)
{
	struct slurm_node n;

	/* "OldState=" and "MyReason=" must not be read as State= and Reason= */
	assert_int_equal(slurm_node_parse("NodeName=n1 OldState=DOWN State=DOWN*+DRAIN "
	                                  "MyReason=x Reason=NHC: disk [slurm@2026-01-01T00:00:00]",
	                                  &n),
	                 0);
	assert_string_equal(n.state, "DOWN*+DRAIN");
	assert_string_equal(n.reason, "NHC: disk");
	assert_true(n.down);
}

static void parse_refuses_what_is_not_a_node_record(void **state)
{
	struct slurm_node n;

	assert_int_equal(slurm_node_parse("slurm_load_node error: Unable to contact slurm "
	                                  "controller\n",
	                                  &n),
	                 CD_ERR_PARSE);
}

/* ---- against the stand-in scontrol ---- */

struct fx {
	char dir[64], log[96], state[96];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char path[160];
	FILE *f;

	snprintf(fx->dir, sizeof(fx->dir), "/tmp/cdslurmXXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->log, sizeof(fx->log), "%s/log", fx->dir);
	snprintf(fx->state, sizeof(fx->state), "%s/state", fx->dir);
	mkdir(fx->state, 0700);
	snprintf(path, sizeof(path), "%s/node1", fx->state);
	f = fopen(path, "w");
	fputs("IDLE\t\n", f);
	fclose(f);
	setenv("SCONTROL_LOG", fx->log, 1);
	setenv("SCONTROL_STATE", fx->state, 1);
	setenv("CLUSTERDOC_SCONTROL", "tests/fakes/scontrol" /* run from the top */, 1);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void drain_passes_the_reason_as_one_argument_and_get_reads_it_back(void **state)
{
	struct fx *fx = *state;
	struct slurm_node n;
	char err[CD_ERRLEN], line[256] = "";
	FILE *f;

	assert_int_equal(slurm_drain("node1", "clusterdoc: ipv6-no-route", err, sizeof(err)), 0);
	assert_int_equal(slurm_node_get("node1", &n, err, sizeof(err)), 0);
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_string_equal(n.reason, "clusterdoc: ipv6-no-route");
	f = fopen(fx->log, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "update|NodeName=node1|State=DRAIN|Reason=clusterdoc: "
	                          "ipv6-no-route\n");
	assert_int_equal(slurm_resume("node1", err, sizeof(err)), 0);
	assert_int_equal(slurm_node_get("node1", &n, err, sizeof(err)), 0);
	assert_string_equal(n.state, "IDLE");
	assert_false(n.drained);
}

static void unknown_node_is_notfound_with_scontrols_words(void **state)
{
	struct slurm_node n;
	char err[CD_ERRLEN];

	assert_int_equal(slurm_node_get("node9", &n, err, sizeof(err)), CD_ERR_NOTFOUND);
	assert_non_null(strstr(err, "Node node9 not found"));
}

static void missing_scontrol_is_an_error_naming_it(void **state)
{
	struct slurm_node n;
	char err[CD_ERRLEN];

	setenv("CLUSTERDOC_SCONTROL", "/nonexistent/scontrol", 1);
	assert_true(slurm_node_get("node1", &n, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/scontrol"));
	assert_non_null(strstr(err, "exited with status 127"));
}

/* ---- child_run ---- */

static void child_run_collects_both_streams_and_the_status(void **state)
{
	char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	struct buf out, errout;
	char err[CD_ERRLEN];
	int status = 0;

	buf_init(&out, 1024);
	buf_init(&errout, 1024);
	assert_int_equal(child_run(argv, &out, &errout, 5000, &status, err, sizeof(err)), 0);
	assert_string_equal(out.data, "out\n");
	assert_string_equal(errout.data, "err\n");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	buf_fini(&out);
	buf_fini(&errout);
}

static void child_run_kills_a_child_past_its_deadline(void **state)
{
	char *argv[] = {"sleep", "30", NULL};
	struct buf out, errout;
	char err[CD_ERRLEN];
	int status = 0;
	int64_t t0 = cd_now_ms();

	buf_init(&out, 1024);
	buf_init(&errout, 1024);
	assert_int_equal(child_run(argv, &out, &errout, 200, &status, err, sizeof(err)),
	                 CD_ERR_TIMEOUT);
	assert_true(cd_now_ms() - t0 < 2000);
	assert_non_null(strstr(err, "sleep did not finish within 200 ms"));
	buf_fini(&out);
	buf_fini(&errout);
}

static void child_run_refuses_more_output_than_the_buf_holds(void **state)
{
	char *argv[] = {"sh", "-c", "head -c 5000 /dev/zero", NULL};
	struct buf out, errout;
	char err[CD_ERRLEN];
	int status = 0;

	buf_init(&out, 100);
	buf_init(&errout, 100);
	assert_int_equal(child_run(argv, &out, &errout, 5000, &status, err, sizeof(err)),
	                 CD_ERR_IO);
	buf_fini(&out);
	buf_fini(&errout);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parse_reads_state_and_reason_without_the_stamp),
	    cmocka_unit_test(parse_of_a_node_without_reason_has_an_empty_one),
	    cmocka_unit_test(parse_does_not_take_a_key_inside_another_one),
	    cmocka_unit_test(parse_refuses_what_is_not_a_node_record),
	    cmocka_unit_test_setup_teardown(
	        drain_passes_the_reason_as_one_argument_and_get_reads_it_back, setup, teardown),
	    cmocka_unit_test_setup_teardown(unknown_node_is_notfound_with_scontrols_words, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(missing_scontrol_is_an_error_naming_it, setup,
	                                    teardown),
	    cmocka_unit_test(child_run_collects_both_streams_and_the_status),
	    cmocka_unit_test(child_run_kills_a_child_past_its_deadline),
	    cmocka_unit_test(child_run_refuses_more_output_than_the_buf_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
