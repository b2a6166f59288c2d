/* SPDX-License-Identifier: MIT */
/* test_push.c - the head's file push (jobs/mnist_push.c) against the agent's
 * real file_stat/file_put/file_commit (core/filerecv.c), through a stand-in
 * for sshpool_request: its answers come either while the request is being
 * sent, as the libssh2 transport delivers them (it reads the agent's answers
 * in the same flush that writes a request), or later, from the loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd.h"
#include "filerecv.h"
#include "sha256.h"
#include "sshpool.h"
#include "jobs/mnist_internal.h"

static char home[] = "/tmp/cd-push-XXXXXX";

/* ------------------------------------------------- the stand-in transport */

enum answer { ANSWER_WHILE_SENDING, ANSWER_LATER };

struct sent {
	json_t *req;
	sshpool_reply_cb cb;
	void *arg;
};

static struct {
	enum answer answer;
	struct sent queue[64]; /* requests not answered yet (ANSWER_LATER) */
	size_t queued;
	char log[64][160]; /* every request, in the order it was sent */
	size_t logged;
} wire;

static void log_request(json_t *req)
{
	const char *type = json_string_value(json_object_get(req, "type"));
	const char *path = json_string_value(json_object_get(req, "path"));

	assert_true(wire.logged < CD_ARRAY_LEN(wire.log));
	if (strcmp(type, "file_put") == 0)
		snprintf(wire.log[wire.logged++], sizeof(wire.log[0]), "%s %s %lld", type, path,
		         (long long)json_integer_value(json_object_get(req, "offset")));
	else
		snprintf(wire.log[wire.logged++], sizeof(wire.log[0]), "%s %s", type, path);
}

/* The agent's answer to req (taken), handed to cb. */
static void answer(struct sshpool_node *node, json_t *req, sshpool_reply_cb cb, void *arg)
{
	const char *type = json_string_value(json_object_get(req, "type")), *code = NULL;
	char msg[CD_ERRLEN] = "";
	json_t *r;

	if (strcmp(type, "file_stat") == 0)
		r = filerecv_stat(req, &code, msg, sizeof(msg));
	else if (strcmp(type, "file_put") == 0)
		r = filerecv_put(req, &code, msg, sizeof(msg));
	else
		r = filerecv_commit(req, &code, msg, sizeof(msg));
	json_decref(req);
	cb(node, r, r ? NULL : code, r ? NULL : msg, arg);
	json_decref(r);
}

/* What mnist_push.c calls: the head side of one request. */
int sshpool_request(struct sshpool_node *node, json_t *req_take, int timeout_ms,
                    sshpool_reply_cb cb, void *arg)
{
	(void)timeout_ms;
	log_request(req_take);
	if (wire.answer == ANSWER_WHILE_SENDING) {
		answer(node, req_take, cb, arg);
		return 0;
	}
	assert_true(wire.queued < CD_ARRAY_LEN(wire.queue));
	wire.queue[wire.queued++] = (struct sent){.req = req_take, .cb = cb, .arg = arg};
	return 0;
}

/* The loop: answer what was sent, in order, until nothing is left. */
static void answer_queued(struct sshpool_node *node)
{
	while (wire.queued) {
		struct sent s = wire.queue[0];

		memmove(wire.queue, wire.queue + 1, --wire.queued * sizeof(wire.queue[0]));
		answer(node, s.req, s.cb, s.arg);
	}
}

/* ----------------------------------------------------------------- tests */

struct outcome {
	int done;
	int err;
	char msg[CD_ERRLEN];
};

static void on_done(void *arg, const struct push *p, size_t node, int err, const char *msg)
{
	struct outcome *o = arg;

	(void)p;
	(void)node;
	o->done++;
	o->err = err;
	snprintf(o->msg, sizeof(o->msg), "%s", msg ? msg : "");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(home))
		return -1;
	return setenv("HOME", home, 1);
}

static int teardown(void **state)
{
	(void)state;
	nftw(home, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static int fresh(void **state)
{
	teardown(state);
	memset(&wire, 0, sizeof(wire));
	return mkdir(home, 0700);
}

/* The names in $HOME/d, sorted, space-separated. */
static void names_in_d(char *out, size_t len)
{
	char dir[PATH_MAX];
	struct dirent **e;
	size_t used = 0;
	int n;

	snprintf(dir, sizeof(dir), "%s/d", home);
	n = scandir(dir, &e, NULL, alphasort);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t k = strlen(e[i]->d_name);

		if (e[i]->d_name[0] != '.' && used + k + 2 < len) {
			if (used)
				out[used++] = ' ';
			memcpy(out + used, e[i]->d_name, k + 1);
			used += k;
		}
		free(e[i]);
	}
	free(e);
}

/* Two files, the first of two chunks, pushed to a node whose answers come
 * as answer says: the same requests in the same order either way, each
 * chunk once and none after its file's commit, and no part file left. */
static void push_two_files(enum answer how)
{
	static unsigned char a[FILERECV_MAX_CHUNK + 1000], b[300];
	struct sshpool_node *node = (struct sshpool_node *)&wire; /* never dereferenced */
	static const char *const want[] = {
	    "file_stat ~/d/a", "file_put ~/d/a 0", "file_put ~/d/a 524288", "file_commit ~/d/a",
	    "file_stat ~/d/b", "file_put ~/d/b 0", "file_commit ~/d/b",
	};
	struct push_file files[2];
	char sha[SHA256_HEX_LEN], names[256];
	struct outcome o = {0};
	struct push *p;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (unsigned char)(i * 7 + i / 251);
	memset(b, 'b', sizeof(b));
	wire.answer = how;
	sha256_data_hex(a, sizeof(a), sha);
	push_file_init(&files[0], "~/d/a", a, sizeof(a), sha);
	sha256_data_hex(b, sizeof(b), sha);
	push_file_init(&files[1], "~/d/b", b, sizeof(b), sha);
	p = push_start(node, files, 2, 1000, on_done, &o, 0);
	answer_queued(node);
	assert_int_equal(o.done, 1);
	assert_string_equal(o.msg, "");
	assert_int_equal(o.err, 0);
	assert_int_equal(push_files_sent(p), 2);
	if (wire.logged != CD_ARRAY_LEN(want))
		for (size_t i = 0; i < wire.logged; i++)
			print_message("    sent: %s\n", wire.log[i]);
	for (size_t i = 0; i < wire.logged && i < CD_ARRAY_LEN(want); i++)
		assert_string_equal(wire.log[i], want[i]);
	assert_int_equal(wire.logged, CD_ARRAY_LEN(want));
	names_in_d(names, sizeof(names));
	assert_string_equal(names, "a b");
	push_free(p);
	push_file_fini(&files[0]);
	push_file_fini(&files[1]);
}

static void push_with_answers_that_come_while_each_request_is_sent(void **state)
{
	(void)state;
	push_two_files(ANSWER_WHILE_SENDING);
}

static void push_with_answers_that_come_from_the_loop(void **state)
{
	(void)state;
	push_two_files(ANSWER_LATER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(push_with_answers_that_come_while_each_request_is_sent, fresh),
	    cmocka_unit_test_setup(push_with_answers_that_come_from_the_loop, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
