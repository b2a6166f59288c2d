/* SPDX-License-Identifier: MIT */
/*
 * homegroups.c - the home-id token and the groups of nodes sharing a home
 * (homegroups.h).
 */
#include "homegroups.h"
#include "base64.h"
#include "cd.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void homegroups_token_new(char out[HOMEGROUPS_TOKEN_LEN])
{
	cd_random_token(out, HOMEGROUPS_TOKEN_LEN);
	snprintf(out + 32, HOMEGROUPS_TOKEN_LEN - 32, "\n");
}

json_t *homegroups_req_mark(const char *token, const char *expect)
{
	json_t *req = proto_request(0, "file_write");
	size_t len = strlen(token);
	char *b64 = cd_malloc(base64_encoded_size(len));

	base64_encode(token, len, b64);
	json_object_set_new(req, "path", json_string(CD_HOME_ID));
	json_object_set_new(req, "data", json_string(b64));
	json_object_set_new(req, "expect", json_string(expect));
	json_object_set_new(req, "mode", json_integer(0600));
	free(b64);
	return req;
}

json_t *homegroups_req_read(void)
{
	json_t *req = proto_request(0, "file_read");

	json_object_set_new(req, "path", json_string(CD_HOME_ID));
	return req;
}

void homegroups_expect(const json_t *res, char *out, size_t len)
{
	const char *sha = json_string_value(json_object_get(res, "sha256"));

	snprintf(out, len, "%s",
	         json_is_true(json_object_get(res, "exists")) && sha && sha[0] ? sha : "absent");
}

int homegroups_token(const json_t *res, char out[HOMEGROUPS_TOKEN_LEN])
{
	const char *b64 = json_string_value(json_object_get(res, "data"));
	size_t len = 0;
	char *data = NULL;
	int ok;

	if (b64 && json_is_true(json_object_get(res, "exists")))
		data = base64_decode_new(b64, strlen(b64), &len);
	/* a token is 32 characters and a newline; anything far off is not ours */
	ok = data && len >= 16 && len <= HOMEGROUPS_TOKEN_LEN;
	if (ok)
		snprintf(out, HOMEGROUPS_TOKEN_LEN, "%.*s", (int)strcspn(data, "\n"), data);
	free(data);
	return ok;
}

int homegroups_same(const char *a, const char *b)
{
	return a && b && a[0] && strcmp(a, b) == 0;
}

void homegroups_leaders(const char *const *tokens, size_t n, long *leader)
{
	for (size_t i = 0; i < n; i++) {
		leader[i] = (long)i;
		for (size_t j = 0; j < i && tokens[i]; j++) {
			if (homegroups_same(tokens[j], tokens[i])) {
				leader[i] = (long)j;
				break;
			}
		}
	}
}

long homegroups_split(long *leader, size_t i)
{
	long was = *leader;

	*leader = (long)i;
	return was;
}
