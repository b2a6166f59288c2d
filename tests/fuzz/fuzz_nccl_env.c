/* SPDX-License-Identifier: MIT */
/* fuzz_nccl_env.c - libFuzzer harness for a bench request's "env" on the agent
 * (collectives/nccl_env.h): whatever JSON the head sends, the check never
 * crashes, and what it accepts is only NCCL variables with bounded,
 * single-line string values; a scope of them gives the environment back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "collectives/nccl_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *env = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	char err[CD_ERRLEN];
	struct nccl_env_scope s;
	const char *name;
	json_t *v, *before;

	if (!env)
		return 0;
	if (nccl_env_check(env, err, sizeof(err)) == 0) {
		json_object_foreach(env, name, v)
		{
			const char *value = json_string_value(v);

			if (strncmp(name, "NCCL_", 5) != 0 || strcmp(name, "NCCL_DEBUG") == 0 ||
			    strcmp(name, "NCCL_DEBUG_FILE") == 0 ||
			    strcmp(name, "NCCL_DEBUG_SUBSYS") == 0 || !value ||
			    strchr(value, '\n') || strlen(value) >= NCCL_ENV_VALUE_MAX)
				abort();
		}
		before = json_object();
		json_object_foreach(env, name, v)
		{
			const char *was = getenv(name);

			json_object_set_new(before, name, was ? json_string(was) : json_null());
		}
		nccl_env_begin(&s, env);
		nccl_env_end(&s);
		json_object_foreach(before, name, v)
		{
			const char *now = getenv(name);

			if (json_is_null(v) ? now != NULL
			                    : !now || strcmp(now, json_string_value(v)) != 0)
				abort(); /* the agent's own value is back */
		}
		json_decref(before);
	}
	json_decref(env);
	return 0;
}
