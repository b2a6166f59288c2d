/* SPDX-License-Identifier: MIT */
/* test_back_srun.c - srun's lines that say it waits for Slurm
 * (core/transport_back_internal.h, back_srun_waits), on lines Slurm 22.05's
 * srun printed on the test cluster (tests/integration/test_cluster_slurm.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "transport_back_internal.h"

static void a_node_slurm_cannot_give_and_the_queued_job_are_waits(void **state)
{
	assert_int_equal(
	    back_srun_waits("srun: Required node not available (down, drained or reserved)"), 1);
	assert_int_equal(back_srun_waits("srun: job 1 queued and waiting for resources"), 1);
	assert_int_equal(
	    back_srun_waits("srun: Requested partition configuration not available now"), 1);
}

static void a_step_retried_inside_an_allocation_is_a_wait(void **state)
{
	assert_int_equal(back_srun_waits("srun: Job 5 step creation temporarily disabled, retrying "
	                                 "(Requested nodes are busy)"),
	                 1);
}

static void the_allocation_granted_and_the_step_created_end_the_wait(void **state)
{
	assert_int_equal(back_srun_waits("srun: job 1 has been allocated resources"), 0);
	assert_int_equal(back_srun_waits("srun: Step created for StepId=5.1"), 0);
}

static void other_lines_say_nothing_of_a_wait(void **state)
{
	assert_int_equal(back_srun_waits("srun: Job allocation 1 has been revoked"), -1);
	assert_int_equal(back_srun_waits("srun: error: node2: task 1: Exited with exit code 1"),
	                 -1);
	assert_int_equal(
	    back_srun_waits("clusterdoc-agent: node2: cannot connect back to the head at "
	                    "10.0.0.1:4000: Connection refused"),
	    -1);
	/* a task's own line that quotes srun's words is not srun's */
	assert_int_equal(back_srun_waits("node1: job 1 queued and waiting for resources"), -1);
	assert_int_equal(back_srun_waits(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_node_slurm_cannot_give_and_the_queued_job_are_waits),
	    cmocka_unit_test(a_step_retried_inside_an_allocation_is_a_wait),
	    cmocka_unit_test(the_allocation_granted_and_the_step_created_end_the_wait),
	    cmocka_unit_test(other_lines_say_nothing_of_a_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
