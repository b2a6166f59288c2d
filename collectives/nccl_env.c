/* SPDX-License-Identifier: MIT */
/* nccl_env.c - a bench request's NCCL variables in the agent's environment
 * for the request's NCCL calls (see nccl_env.h). */
#include "collectives/nccl_env.h"

#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 63

/* The variables the bench sets itself to read NCCL's lines back. */
static const char *const own[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};

int nccl_env_is_own(const char *name)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(own); k++)
		if (strcmp(name, own[k]) == 0)
			return 1;
	return 0;
}

static int name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len <= 5 || len > NAME_MAX_LEN || strncmp(name, "NCCL_", 5) != 0)
		return 0;
	for (const char *c = name + 5; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return 0;
	return 1;
}

int nccl_env_check(const json_t *env, char *err, size_t errlen)
{
	const char *name;
	json_t *v;

	if (!env)
		return 0;
	if (!json_is_object(env))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "env must be an object of NCCL variables");
	if (json_object_size(env) > NCCL_ENV_MAX)
		return cd_errf(err, errlen, CD_ERR_PARSE, "env has %zu variables, at most %d",
		               json_object_size(env), NCCL_ENV_MAX);
	json_object_foreach((json_t *)env, name, v)
	{
		const char *value = json_string_value(v);

		if (!name_ok(name))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "env: %.80s is not an NCCL variable (NCCL_ and capitals, "
			               "digits, _)",
			               name);
		if (nccl_env_is_own(name))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "env: %s is the bench's own (its NCCL lines)", name);
		if (!value)
			return cd_errf(err, errlen, CD_ERR_PARSE, "env: %s is not a string", name);
		if (strlen(value) >= NCCL_ENV_VALUE_MAX || json_string_length(v) != strlen(value) ||
		    strchr(value, '\n'))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "env: %s's value is longer than %d bytes or holds a newline "
			               "or a NUL",
			               name, NCCL_ENV_VALUE_MAX - 1);
	}
	return 0;
}

void nccl_env_begin(struct nccl_env_scope *s, const json_t *env)
{
	const char *name;
	json_t *v;

	memset(s, 0, sizeof(*s));
	json_object_foreach((json_t *)env, name, v)
	{
		const char *old = getenv(name);

		if (s->n == NCCL_ENV_MAX || !json_is_string(v))
			break;
		s->name[s->n] = cd_strdup(name);
		s->saved[s->n] = old ? cd_strdup(old) : NULL;
		s->n++;
		setenv(name, json_string_value(v), 1);
	}
}

void nccl_env_end(struct nccl_env_scope *s)
{
	while (s->n > 0) {
		size_t k = --s->n;

		if (s->saved[k])
			setenv(s->name[k], s->saved[k], 1);
		else
			unsetenv(s->name[k]);
		free(s->saved[k]);
		free(s->name[k]);
	}
}
