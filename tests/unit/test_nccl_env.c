/* SPDX-License-Identifier: MIT */
/*
 * test_nccl_env.c - a bench request's NCCL variables on the agent
 * (collectives/nccl_env.h): which "env" objects are taken, and that a scope
 * sets them and then gives the agent back its own values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cd.h"
#include "collectives/nccl_env.h"

static void check_text(const char *text, int want_ok, const char *want_err)
{
	json_error_t je;
	json_t *env = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	char err[CD_ERRLEN] = "";

	assert_non_null(env);
	assert_int_equal(nccl_env_check(env, err, sizeof(err)) == 0, want_ok);
	if (want_err)
		assert_string_equal(err, want_err);
	json_decref(env);
}

static void the_plans_variables_and_none_are_taken(void **state)
{
	char err[CD_ERRLEN];

	assert_int_equal(nccl_env_check(NULL, err, sizeof(err)), 0);
	check_text("{}", 1, NULL);
	check_text("{\"NCCL_SOCKET_IFNAME\": \"=eth0\", \"NCCL_SOCKET_FAMILY\": \"AF_INET6\", "
	           "\"NCCL_IB_HCA\": \"=mlx5_0:1,mlx5_1\", \"NCCL_IB_GID_INDEX\": \"3\"}",
	           1, NULL);
}

static void anything_else_is_refused_naming_the_variable(void **state)
{
	check_text("[\"NCCL_IB_HCA=x\"]", 0, "env must be an object of NCCL variables");
	check_text("{\"LD_PRELOAD\": \"/tmp/x.so\"}", 0,
	           "env: LD_PRELOAD is not an NCCL variable (NCCL_ and capitals, digits, _)");
	check_text("{\"NCCL_\": \"x\"}", 0,
	           "env: NCCL_ is not an NCCL variable (NCCL_ and capitals, digits, _)");
	check_text("{\"NCCL_ib_hca\": \"x\"}", 0,
	           "env: NCCL_ib_hca is not an NCCL variable (NCCL_ and capitals, digits, _)");
	check_text("{\"NCCL_DEBUG_FILE\": \"/dev/stdout\"}", 0,
	           "env: NCCL_DEBUG_FILE is the bench's own (its NCCL lines)");
	check_text("{\"NCCL_IB_GID_INDEX\": 3}", 0, "env: NCCL_IB_GID_INDEX is not a string");
	check_text("{\"NCCL_IB_HCA\": \"a\\nb\"}", 0,
	           "env: NCCL_IB_HCA's value is longer than 511 bytes or holds a newline or a NUL");
	check_text("{\"NCCL_IB_HCA\": \"a\\u0000b\"}", 0,
	           "env: NCCL_IB_HCA's value is longer than 511 bytes or holds a newline or a NUL");
	check_text("{\"NCCL_A\":\"1\",\"NCCL_B\":\"1\",\"NCCL_C\":\"1\",\"NCCL_D\":\"1\","
	           "\"NCCL_E\":\"1\",\"NCCL_F\":\"1\",\"NCCL_G\":\"1\",\"NCCL_H\":\"1\","
	           "\"NCCL_I\":\"1\",\"NCCL_J\":\"1\",\"NCCL_K\":\"1\",\"NCCL_L\":\"1\","
	           "\"NCCL_M\":\"1\",\"NCCL_N\":\"1\",\"NCCL_O\":\"1\",\"NCCL_P\":\"1\","
	           "\"NCCL_Q\":\"1\"}",
	           0, "env has 17 variables, at most 16");
}

static void a_scope_sets_them_then_restores_the_agents_own(void **state)
{
	json_t *env = json_pack("{ssss}", "NCCL_IB_HCA", "=mlx5_0", "NCCL_IB_GID_INDEX", "3");
	struct nccl_env_scope s;

	setenv("NCCL_IB_HCA", "mlx5_9", 1);
	unsetenv("NCCL_IB_GID_INDEX");
	nccl_env_begin(&s, env);
	assert_string_equal(getenv("NCCL_IB_HCA"), "=mlx5_0");
	assert_string_equal(getenv("NCCL_IB_GID_INDEX"), "3");
	nccl_env_end(&s);
	assert_string_equal(getenv("NCCL_IB_HCA"), "mlx5_9");
	assert_null(getenv("NCCL_IB_GID_INDEX"));
	nccl_env_begin(&s, NULL); /* none: nothing changes */
	nccl_env_end(&s);
	assert_string_equal(getenv("NCCL_IB_HCA"), "mlx5_9");
	unsetenv("NCCL_IB_HCA");
	json_decref(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_plans_variables_and_none_are_taken),
	    cmocka_unit_test(anything_else_is_refused_naming_the_variable),
	    cmocka_unit_test(a_scope_sets_them_then_restores_the_agents_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
