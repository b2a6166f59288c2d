/* SPDX-License-Identifier: MIT */
/* test_agentjobs.c - what the agent does for the mnist run: base64, receiving
 * pushed files (file_stat, file_put, file_commit) and the background process
 * job (proc_start, job_poll, job_stop). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base64.h"
#include "cd.h"
#include "filerecv.h"
#include "fsutil.h"
#include "job.h"
#include "job_process.h"
#include "sha256.h"
#include "open_fds.h"

static char home[PATH_MAX]; /* the group's temporary $HOME */

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Deterministic bytes that do not compress to nothing. */
static void fill_bytes(unsigned char *p, size_t n, unsigned seed)
{
	unsigned x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(x >> 16);
	}
}

/* ================================================================ base64 */

static const struct {
	const char *raw, *text;
} rfc4648[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

static void base64_encodes_the_rfc4648_vectors(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(rfc4648); i++) {
		size_t n = strlen(rfc4648[i].raw);
		char out[16];

		assert_int_equal(base64_encoded_size(n), strlen(rfc4648[i].text) + 1);
		assert_int_equal(base64_encode(rfc4648[i].raw, n, out), strlen(rfc4648[i].text));
		assert_string_equal(out, rfc4648[i].text);
	}
}

static void base64_decodes_the_rfc4648_vectors(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(rfc4648); i++) {
		size_t n = strlen(rfc4648[i].raw);
		char out[16];

		assert_int_equal(base64_decode(rfc4648[i].text, strlen(rfc4648[i].text), out, n),
		                 n);
		assert_memory_equal(out, rfc4648[i].raw, n);
	}
}

static void base64_round_trips_binary_of_every_length_up_to_100(void **state)
{
	for (size_t n = 0; n <= 100; n++) {
		unsigned char raw[100], back[100];
		char text[140];

		fill_bytes(raw, n, (unsigned)n);
		assert_int_equal(base64_encode(raw, n, text), base64_encoded_size(n) - 1);
		assert_int_equal(base64_decode(text, strlen(text), back, n), n);
		assert_memory_equal(back, raw, n);
	}
}

static void base64_refuses_a_length_not_a_multiple_of_4(void **state)
{
	const char *bad[] = {"Z", "Zg", "Zg=", "Zm9vY", "Zm9vYmFy="};
	char out[16];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++)
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), out, sizeof(out)), -1);
}

static void base64_refuses_characters_outside_the_alphabet(void **state)
{
	const char *bad[] = {"Zm9v!A==", "Zm 9", "Zm9\n", "Zm-_", "Zm9v\0Ym"};
	char out[16];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++)
		assert_int_equal(
		    base64_decode(bad[i], i == 4 ? 8 : strlen(bad[i]), out, sizeof(out)), -1);
}

static void base64_refuses_padding_before_the_end(void **state)
{
	const char *bad[] = {"Zg==Zm8=", "Zm8=Zm9v", "Z=9v", "Zg=v"};
	char out[16];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++)
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), out, sizeof(out)), -1);
}

static void base64_refuses_three_or_four_pads(void **state)
{
	char out[16];

	assert_int_equal(base64_decode("A===", 4, out, sizeof(out)), -1);
	assert_int_equal(base64_decode("====", 4, out, sizeof(out)), -1);
	assert_int_equal(base64_decode("Zm9vA===", 8, out, sizeof(out)), -1);
}

static void base64_refuses_output_that_does_not_fit_cap(void **state)
{
	char out[16];

	assert_int_equal(base64_decode("Zm9vYmFy", 8, out, 5), -1);
	assert_int_equal(base64_decode("Zm9vYmFy", 8, out, 6), 6);
	assert_int_equal(base64_decode("Zm9vYmE=", 8, out, 4), -1);
	assert_int_equal(base64_decode("Zm9vYmE=", 8, out, 5), 5);
	assert_int_equal(base64_decode("Zg==", 4, out, 0), -1);
	assert_int_equal(base64_decode("Zg==", 4, out, 1), 1);
}

/* ================================================================ filerecv */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

/* A fresh, empty $HOME for each filerecv test. */
static int fresh_home(void **state)
{
	nftw(home, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return mkdir(home, 0700);
}

/* $HOME/rel */
static const char *in_home(const char *rel)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	return path;
}

/* This agent's part file of ~/rel (filerecv.h: one per writer). */
static const char *part_of(const char *rel)
{
	static char path[PATH_MAX + 400];
	char full[PATH_MAX + 64];

	snprintf(full, sizeof(full), "%s/%s", home, rel);
	filerecv_part_path(full, path, sizeof(path));
	return path;
}

static void sha_of(const void *data, size_t len, char hex[SHA256_HEX_LEN])
{
	struct sha256 s;
	unsigned char d[32];

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, d);
	sha256_hex(d, hex);
}

/* A file_put request: data[0..len) compressed, claiming raw_len bytes. */
static json_t *put_request(const char *path, long long offset, const void *data, size_t len,
                           long long raw_len)
{
	uLongf zlen = compressBound((uLong)len);
	unsigned char *z = malloc(zlen);
	char *text;
	json_t *req;

	assert_int_equal(compress2(z, &zlen, data, (uLong)len, 6), Z_OK);
	text = malloc(base64_encoded_size(zlen));
	base64_encode(z, zlen, text);
	req = json_pack("{sssIsIss}", "path", path, "offset", (json_int_t)offset, "raw_len",
	                (json_int_t)raw_len, "zdata", text);
	free(text);
	free(z);
	return req;
}

static json_t *target_request(const char *path, long long size, const char *sha)
{
	return json_pack("{sssIss}", "path", path, "size", (json_int_t)size, "sha256", sha);
}

/* Run a handler on req (taken); the result, or NULL with *code set. */
static json_t *call(json_t *(*handler)(json_t *, const char **, char *, size_t), json_t *req,
                    const char **code)
{
	char msg[CD_ERRLEN];
	json_t *r;

	*code = NULL;
	msg[0] = '\0';
	r = handler(req, code, msg, sizeof(msg));
	json_decref(req);
	if (!r)
		assert_true(msg[0] != '\0'); /* every failure says why */
	return r;
}

static void expect_empty_object(json_t *r)
{
	assert_non_null(r);
	assert_true(json_is_object(r));
	assert_int_equal(json_object_size(r), 0);
	json_decref(r);
}

/* code is read after r was computed (an argument's own order is unspecified). */
static void expect_failure(json_t *r, const char *const *code, const char *want)
{
	assert_null(r);
	assert_non_null(*code);
	assert_string_equal(*code, want);
}

static int present(const char *path, long long size, const char *sha)
{
	const char *code;
	json_t *r = call(filerecv_stat, target_request(path, size, sha), &code);
	int p;

	assert_non_null(r);
	p = json_is_true(json_object_get(r, "present"));
	json_decref(r);
	return p;
}

/* The whole content of path (malloc'ed), its length in *len; NULL when absent. */
static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	*len = fread(p, 1, (size_t)n, f);
	fclose(f);
	return p;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void two_chunk_put_and_commit_give_the_exact_file(void **state)
{
	unsigned char data[1000], *got;
	char sha[SHA256_HEX_LEN];
	const char *code;
	size_t len = 0;

	fill_bytes(data, sizeof(data), 7);
	sha_of(data, sizeof(data), sha);
	expect_empty_object(call(filerecv_put, put_request("~/d/f.bin", 0, data, 600, 600), &code));
	expect_empty_object(
	    call(filerecv_put, put_request("~/d/f.bin", 600, data + 600, 400, 400), &code));
	expect_empty_object(call(filerecv_commit, target_request("~/d/f.bin", 1000, sha), &code));
	got = slurp(in_home("d/f.bin"), &len);
	assert_non_null(got);
	assert_int_equal(len, sizeof(data));
	assert_memory_equal(got, data, sizeof(data));
	assert_false(exists(part_of("d/f.bin")));
	free(got);
}

/* Nodes sharing a home push the same file at once: each agent writes its
 * own part file (host, pid, random in its name) and the renames of
 * identical content all succeed. A second process stands in for a node. */
static void two_writers_of_one_path_each_use_their_own_part(void **state)
{
	unsigned char data[1000], *got;
	char sha[SHA256_HEX_LEN], mine[PATH_MAX + 400], host[256] = "";
	const char *code;
	int up[2], down[2], status; /* child -> parent, parent -> child */
	size_t len = 0;
	pid_t child;
	char c;

	fill_bytes(data, sizeof(data), 5);
	sha_of(data, sizeof(data), sha);
	snprintf(mine, sizeof(mine), "%s", part_of("s/f.bin"));
	gethostname(host, sizeof(host) - 1);
	assert_non_null(strstr(mine, host));
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	child = fork();
	if (child == 0) {
		/* the other writer: half its file, then the rest after ours is in */
		json_t *r = call(filerecv_put, put_request("~/s/f.bin", 0, data, 500, 500), &code);
		int ok = r && strcmp(part_of("s/f.bin"), mine) != 0;

		json_decref(r);
		ok = ok && write(up[1], "x", 1) == 1 && read(down[0], &c, 1) == 1;
		r = call(filerecv_put, put_request("~/s/f.bin", 500, data + 500, 500, 500), &code);
		ok = ok && r;
		json_decref(r);
		r = call(filerecv_commit, target_request("~/s/f.bin", 1000, sha), &code);
		_exit(ok && r ? 0 : 1);
	}
	assert_int_equal(read(up[0], &c, 1), 1);
	expect_empty_object(
	    call(filerecv_put, put_request("~/s/f.bin", 0, data, 1000, 1000), &code));
	expect_empty_object(call(filerecv_commit, target_request("~/s/f.bin", 1000, sha), &code));
	assert_int_equal(write(down[1], "y", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int k = 0; k < 2; k++) {
		close(up[k]);
		close(down[k]);
	}
	got = slurp(in_home("s/f.bin"), &len);
	assert_int_equal(len, sizeof(data));
	assert_memory_equal(got, data, sizeof(data));
	assert_false(exists(mine));
	free(got);
}

static void put_at_offset_zero_truncates_the_part_file(void **state)
{
	unsigned char data[100], *got;
	const char *code;
	size_t len = 0;

	fill_bytes(data, sizeof(data), 3);
	expect_empty_object(call(filerecv_put, put_request("~/t", 0, data, 100, 100), &code));
	expect_empty_object(call(filerecv_put, put_request("~/t", 0, "short", 5, 5), &code));
	got = slurp(part_of("t"), &len);
	assert_non_null(got);
	assert_int_equal(len, 5);
	assert_memory_equal(got, "short", 5);
	free(got);
}

/* fault-run-3 case 18: a put whose head went away (the agent stopped, then
 * continued past the head's deadline) leaves no part file at the exit; a
 * committed file stays. */
static void a_part_file_never_committed_is_removed_at_exit(void **state)
{
	unsigned char data[100];
	char sha[SHA256_HEX_LEN];
	const char *code;

	fill_bytes(data, sizeof(data), 5);
	sha_of(data, sizeof(data), sha);
	expect_empty_object(call(filerecv_put, put_request("~/done", 0, data, 100, 100), &code));
	expect_empty_object(call(filerecv_commit, target_request("~/done", 100, sha), &code));
	expect_empty_object(call(filerecv_put, put_request("~/half", 0, data, 100, 100), &code));
	assert_true(exists(part_of("half")));
	filerecv_remove_parts();
	assert_false(exists(part_of("half")));
	assert_true(exists(in_home("done")));
}

/* A chunk that comes after its file's commit (a head that sent it twice)
 * makes no part file again: only the put at offset 0 starts one, and that
 * one the agent removes at exit; the committed file is untouched. */
static void a_put_past_offset_0_with_no_part_file_fails_and_makes_none(void **state)
{
	unsigned char data[1000];
	char sha[SHA256_HEX_LEN];
	const char *code;

	fill_bytes(data, sizeof(data), 9);
	sha_of(data, sizeof(data), sha);
	expect_empty_object(call(filerecv_put, put_request("~/d/f", 0, data, 600, 600), &code));
	expect_empty_object(
	    call(filerecv_put, put_request("~/d/f", 600, data + 600, 400, 400), &code));
	expect_empty_object(call(filerecv_commit, target_request("~/d/f", 1000, sha), &code));
	expect_failure(call(filerecv_put, put_request("~/d/f", 600, data + 600, 400, 400), &code),
	               &code, "io");
	assert_false(exists(part_of("d/f")));
	assert_true(present("~/d/f", 1000, sha));
	/* a file never started: nothing is made either */
	expect_failure(call(filerecv_put, put_request("~/d/g", 600, data, 400, 400), &code), &code,
	               "io");
	assert_false(exists(part_of("d/g")));
}

/* A pid that ran and is gone (its parent reaped it). */
static long dead_pid(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	assert_true(p > 0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return (long)p;
}

/* $HOME/name, for names longer than in_home takes. */
static const char *home_path(const char *name)
{
	static char path[PATH_MAX + 700];

	snprintf(path, sizeof(path), "%s/%s", home, name);
	return path;
}

/* An empty file at $HOME/name, mtime age_s ago. */
static void touch_aged(const char *name, int age_s)
{
	struct timespec t[2] = {{.tv_sec = time(NULL) - age_s}, {.tv_sec = time(NULL) - age_s}};
	int fd = open(home_path(name), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(utimensat(AT_FDCWD, home_path(name), t, 0), 0);
}

/* Of the part files in a directory, only those of this node's writers that
 * are gone, and older than the bound, are swept. */
static void stale_parts_of_gone_writers_of_this_node_are_swept(void **state)
{
	char own[400], host[300], name[4][600];
	long dead = dead_pid();
	const char *dot;

	snprintf(own, sizeof(own), "%s", cd_writer_tag());
	dot = strrchr(own, '.');
	while (dot > own && *--dot != '.')
		;
	snprintf(host, sizeof(host), "%.*s", (int)(dot - own), own);
	snprintf(name[0], sizeof(name[0]), "obj.part.%s.%ld.0badc0de", host, dead);
	snprintf(name[1], sizeof(name[1]), "obj.part.%s.%ld.0badc0de", host, (long)getppid());
	snprintf(name[2], sizeof(name[2]), "obj.part.other-node.%ld.0badc0de", dead);
	snprintf(name[3], sizeof(name[3]), "new.part.%s.%ld.0badc0de", host, dead);
	touch_aged(name[0], 2 * FILERECV_STALE_S);
	touch_aged(name[1], 2 * FILERECV_STALE_S);
	touch_aged(name[2], 2 * FILERECV_STALE_S);
	touch_aged(name[3], 10);
	assert_int_equal(filerecv_sweep_stale(home, FILERECV_STALE_S), 1);
	assert_false(exists(home_path(name[0])));
	assert_true(exists(home_path(name[1]))); /* alive */
	assert_true(exists(home_path(name[2]))); /* another node's */
	assert_true(exists(home_path(name[3]))); /* too recent */
}

static void stat_is_present_only_for_the_exact_size_and_sha256(void **state)
{
	char sha[SHA256_HEX_LEN], other[SHA256_HEX_LEN];
	FILE *f = fopen(in_home("have"), "wb");

	assert_non_null(f);
	fputs("hello\n", f);
	fclose(f);
	sha_of("hello\n", 6, sha);
	sha_of("hellO\n", 6, other);
	assert_true(present("~/have", 6, sha));
	assert_true(present(in_home("have"), 6, sha)); /* an absolute path too */
	assert_false(present("~/have", 7, sha));
	assert_false(present("~/have", 5, sha));
	assert_false(present("~/have", 6, other));
	assert_false(present("~/missing", 6, sha));
}

static void commit_with_a_wrong_sha256_is_a_mismatch_and_removes_the_part(void **state)
{
	unsigned char data[300];
	char wrong[SHA256_HEX_LEN];
	const char *code;

	fill_bytes(data, sizeof(data), 5);
	sha_of("something else", 14, wrong);
	expect_empty_object(call(filerecv_put, put_request("~/m", 0, data, 300, 300), &code));
	expect_failure(call(filerecv_commit, target_request("~/m", 300, wrong), &code), &code,
	               "mismatch");
	assert_false(exists(part_of("m")));
	assert_false(exists(in_home("m")));
}

static void commit_with_a_wrong_size_is_a_mismatch_and_removes_the_part(void **state)
{
	unsigned char data[300];
	char sha[SHA256_HEX_LEN];
	const char *code;

	fill_bytes(data, sizeof(data), 5);
	sha_of(data, sizeof(data), sha);
	expect_empty_object(call(filerecv_put, put_request("~/m", 0, data, 300, 300), &code));
	expect_failure(call(filerecv_commit, target_request("~/m", 301, sha), &code), &code,
	               "mismatch");
	assert_false(exists(part_of("m")));
	assert_false(exists(in_home("m")));
}

static void zdata_inflating_to_another_length_than_raw_len_is_a_bad_request(void **state)
{
	unsigned char data[200];
	const char *code;

	fill_bytes(data, sizeof(data), 9);
	expect_failure(call(filerecv_put, put_request("~/z", 0, data, 200, 199), &code), &code,
	               "bad-request");
	expect_failure(call(filerecv_put, put_request("~/z", 0, data, 200, 201), &code), &code,
	               "bad-request");
	assert_false(exists(part_of("z")));
}

static void zdata_that_is_not_base64_is_a_bad_request(void **state)
{
	const char *code;
	json_t *req = json_pack("{sssisiss}", "path", "~/z", "offset", 0, "raw_len", 3, "zdata",
	                        "eJxLy8/XBwAK!gL=");

	expect_failure(call(filerecv_put, req, &code), &code, "bad-request");
	assert_false(exists(part_of("z")));
}

static void relative_and_climbing_paths_are_bad_requests(void **state)
{
	const char *bad[] = {"x/y", "~/../x", "/a/../b", "/a/..", "../x", "~", ""};
	char sha[SHA256_HEX_LEN];
	const char *code;

	sha_of("", 0, sha);
	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		expect_failure(call(filerecv_put, put_request(bad[i], 0, "abc", 3, 3), &code),
		               &code, "bad-request");
		expect_failure(call(filerecv_stat, target_request(bad[i], 0, sha), &code), &code,
		               "bad-request");
		expect_failure(call(filerecv_commit, target_request(bad[i], 0, sha), &code), &code,
		               "bad-request");
	}
}

static void raw_len_above_the_max_chunk_is_a_bad_request(void **state)
{
	unsigned char *zeros = calloc(1, FILERECV_MAX_CHUNK + 1);
	const char *code;

	expect_failure(
	    call(filerecv_put,
	         put_request("~/big", 0, zeros, FILERECV_MAX_CHUNK + 1, FILERECV_MAX_CHUNK + 1),
	         &code),
	    &code, "bad-request");
	assert_false(exists(part_of("big")));
	free(zeros);
}

static void raw_len_of_exactly_the_max_chunk_is_accepted(void **state)
{
	unsigned char *zeros = calloc(1, FILERECV_MAX_CHUNK);
	const char *code;
	struct stat st;

	expect_empty_object(
	    call(filerecv_put,
	         put_request("~/big", 0, zeros, FILERECV_MAX_CHUNK, FILERECV_MAX_CHUNK), &code));
	assert_int_equal(stat(part_of("big"), &st), 0);
	assert_int_equal(st.st_size, FILERECV_MAX_CHUNK);
	free(zeros);
}

static void put_creates_missing_parent_directories_with_mode_0700(void **state)
{
	const char *dirs[] = {"a", "a/b", "a/b/c"};
	const char *code;
	mode_t old = umask(0);

	expect_empty_object(call(filerecv_put, put_request("~/a/b/c/f", 0, "x", 1, 1), &code));
	umask(old);
	for (size_t i = 0; i < CD_ARRAY_LEN(dirs); i++) {
		struct stat st;

		assert_int_equal(stat(in_home(dirs[i]), &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0700);
	}
}

/* ================================================================ the job */

#define JOB_DEADLINE_MS 10000

static json_t *argv_of(const char *shell_cmd)
{
	return json_pack("[sss]", "sh", "-c", shell_cmd);
}

/* Start a process job; fails the test when it does not start. */
static void start(json_t *req_take)
{
	const char *code;
	json_t *r = call(job_process_start, req_take, &code);

	if (!r)
		fail_msg("proc_start failed: %s", code);
	assert_true(json_integer_value(json_object_get(r, "pid")) > 0);
	json_decref(r);
}

static void start_sh(const char *shell_cmd)
{
	start(json_pack("{so}", "argv", argv_of(shell_cmd)));
}

/* Append an answer's lines to all as [stream, text] pairs. */
static void collect(json_t *answer, json_t *all)
{
	size_t i;
	json_t *l;

	json_array_foreach(json_object_get(answer, "lines"), i, l)
	{
		json_array_append_new(
		    all, json_pack("[OO]", json_array_get(l, 1), json_array_get(l, 2)));
	}
}

static json_t *poll_since(long long since)
{
	const char *code;
	json_t *r = call(job_poll, json_pack("{sI}", "since", (json_int_t)since), &code);

	if (!r)
		fail_msg("job_poll failed: %s", code);
	return r;
}

/* Poll until the job is done (failing the test after JOB_DEADLINE_MS); the
 * last answer, with every line of the job in *lines (new array). */
static json_t *poll_until_done(json_t **lines)
{
	int64_t until = cd_now_ms() + JOB_DEADLINE_MS;
	long long next = 0;

	*lines = json_array();
	for (;;) {
		json_t *r = poll_since(next);

		collect(r, *lines);
		next = json_integer_value(json_object_get(r, "next"));
		if (strcmp(json_string_value(json_object_get(r, "state")), "done") == 0)
			return r;
		json_decref(r);
		if (cd_now_ms() > until)
			fail_msg("the job did not end within %d ms", JOB_DEADLINE_MS);
		sleep_ms(10);
	}
}

/* Poll until the job has written n lines; them (new array). */
static json_t *poll_until_lines(size_t n)
{
	int64_t until = cd_now_ms() + JOB_DEADLINE_MS;
	json_t *lines = json_array();
	long long next = 0;

	while (json_array_size(lines) < n) {
		json_t *r = poll_since(next);

		collect(r, lines);
		next = json_integer_value(json_object_get(r, "next"));
		json_decref(r);
		if (cd_now_ms() > until)
			fail_msg("the job did not write %zu lines within %d ms", n,
			         JOB_DEADLINE_MS);
		sleep_ms(10);
	}
	return lines;
}

/* lines equal want (taken). */
static void expect_lines_equal(json_t *lines, json_t *want)
{
	char *got = json_dumps(lines, JSON_COMPACT), *exp = json_dumps(want, JSON_COMPACT);

	if (!json_equal(lines, want))
		fail_msg("lines %s, expected %s", got, exp);
	free(got);
	free(exp);
	json_decref(want);
}

static void expect_lines(json_t *lines, const char *want_json)
{
	json_t *want = json_loads(want_json, 0, NULL);

	assert_non_null(want);
	expect_lines_equal(lines, want);
}

static void expect_ended(json_t *answer, int exit_code, int signal)
{
	assert_string_equal(json_string_value(json_object_get(answer, "state")), "done");
	assert_int_equal(json_integer_value(json_object_get(answer, "exit_code")), exit_code);
	assert_int_equal(json_integer_value(json_object_get(answer, "signal")), signal);
	assert_true(json_is_null(json_object_get(answer, "error")));
}

static pid_t pid_of_line(json_t *lines, size_t i)
{
	const char *s = json_string_value(json_array_get(json_array_get(lines, i), 1));
	long v = s ? strtol(s, NULL, 10) : 0;

	assert_true(v > 1);
	return (pid_t)v;
}

/* 1 once pid no longer exists (ESRCH) within ms. This process is a child
 * subreaper (group setup), so the job's orphans are reparented here and
 * reaped here, not left as zombies under an init that may never reap them. */
static int gone_within(pid_t pid, int ms)
{
	int64_t until = cd_now_ms() + ms;

	for (;;) {
		waitpid(pid, NULL, WNOHANG);
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return 1;
		if (cd_now_ms() > until)
			return 0;
		sleep_ms(10);
	}
}

static json_t *stop(int grace_ms, long long since)
{
	const char *code;
	json_t *r = call(
	    job_stop, json_pack("{sisI}", "grace_ms", grace_ms, "since", (json_int_t)since), &code);

	if (!r)
		fail_msg("job_stop failed: %s", code);
	return r;
}

static void job_poll_before_any_job_is_no_job(void **state)
{
	const char *code;

	expect_failure(call(job_poll, json_pack("{si}", "since", 0), &code), &code, "no-job");
	expect_failure(call(job_stop, json_object(), &code), &code, "no-job");
}

static void job_lines_keep_their_order_streams_and_the_exit_code(void **state)
{
	json_t *lines, *r;

	start_sh("echo a; echo b >&2; exit 3");
	r = poll_until_done(&lines);
	expect_lines(lines, "[[\"out\",\"a\"],[\"err\",\"b\"]]");
	expect_ended(r, 3, 0);
	json_decref(r);
	json_decref(lines);
}

static void job_env_reaches_the_command(void **state)
{
	json_t *lines, *r;

	start(json_pack("{s{ss}so}", "env", "CD_TEST_VALUE", "forty two", "argv",
	                argv_of("echo \"$CD_TEST_VALUE\"")));
	r = poll_until_done(&lines);
	expect_lines(lines, "[[\"out\",\"forty two\"]]");
	expect_ended(r, 0, 0);
	json_decref(r);
	json_decref(lines);
}

static void job_env_value_under_tilde_slash_gets_the_agents_home(void **state)
{
	json_t *lines, *r;
	char want[PATH_MAX + 64];

	start(json_pack("{s{ssss}so}", "env", "CD_TEST_DIR", "~/runs/x/hang", "CD_TEST_MID",
	                "a:~/b", "argv", argv_of("echo \"$CD_TEST_DIR $CD_TEST_MID\"")));
	r = poll_until_done(&lines);
	snprintf(want, sizeof(want), "[[\"out\",\"%s/runs/x/hang a:~/b\"]]", getenv("HOME"));
	expect_lines(lines, want);
	expect_ended(r, 0, 0);
	json_decref(r);
	json_decref(lines);
}

/* How many of lines are ["out", text]. */
static int count_out(json_t *lines, const char *text)
{
	int n = 0;

	for (size_t i = 0; i < json_array_size(lines); i++) {
		json_t *l = json_array_get(lines, i);

		n += strcmp(json_string_value(json_array_get(l, 0)), "out") == 0 &&
		     strcmp(json_string_value(json_array_get(l, 1)), text) == 0;
	}
	return n;
}

static void job_env_is_added_to_the_agents_and_overrides_it(void **state)
{
	json_t *lines, *r;

	setenv("CD_TEST_KEPT", "agent", 1);
	setenv("CD_TEST_OVERRIDDEN", "agent", 1);
	start(json_pack("{s{ss}s[s]}", "env", "CD_TEST_OVERRIDDEN", "request", "argv", "env"));
	r = poll_until_done(&lines);
	unsetenv("CD_TEST_KEPT");
	unsetenv("CD_TEST_OVERRIDDEN");
	expect_ended(r, 0, 0);
	assert_int_equal(count_out(lines, "CD_TEST_KEPT=agent"), 1);
	assert_int_equal(count_out(lines, "CD_TEST_OVERRIDDEN=request"), 1);
	assert_int_equal(count_out(lines, "CD_TEST_OVERRIDDEN=agent"), 0);
	json_decref(r);
	json_decref(lines);
}

static void job_cwd_is_created_and_used(void **state)
{
	char real[PATH_MAX];
	json_t *lines, *r;
	struct stat st;

	start(json_pack("{sss[s]}", "cwd", "~/jobs/run1", "argv", "pwd"));
	r = poll_until_done(&lines);
	expect_ended(r, 0, 0);
	assert_int_equal(stat(in_home("jobs/run1"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_non_null(realpath(in_home("jobs/run1"), real));
	expect_lines_equal(lines, json_pack("[[ss]]", "out", real));
	json_decref(r);
	json_decref(lines);
}

static void job_missing_program_exits_127_naming_it(void **state)
{
	json_t *lines, *r;

	start(json_pack("{s[s]}", "argv", "cd-test-no-such-program"));
	r = poll_until_done(&lines);
	expect_lines(lines, "[[\"err\",\"clusterdoc-agent: cannot run cd-test-no-such-program: "
	                    "No such file or directory\"]]");
	expect_ended(r, 127, 0);
	json_decref(r);
	json_decref(lines);
}

static void job_start_while_one_runs_is_busy(void **state)
{
	const char *code;
	json_t *lines, *r;

	start_sh("echo started; sleep 60");
	lines = poll_until_lines(1);
	expect_failure(call(job_process_start, json_pack("{so}", "argv", argv_of("true")), &code),
	               &code, "busy");
	r = stop(JOB_PROCESS_GRACE_MS, 1);
	expect_ended(r, -1, SIGTERM);
	json_decref(r);
	json_decref(lines);
}

/* A stop that comes before the reaper and the command have set up their
 * signal handling (the head cancelling right after proc_start) still ends
 * the command with SIGTERM, at once. The window is a few microseconds after
 * the fork, so the start and stop are repeated to hit it. */
static void job_stop_right_after_start_ends_it_with_sigterm(void **state)
{
	for (int i = 0; i < 10; i++) {
		char error[CD_ERRLEN];
		int64_t t0, took;
		json_t *r;
		int sig;

		start_sh("sleep 60");
		t0 = cd_now_ms();
		r = stop(JOB_PROCESS_GRACE_MS, 0);
		took = cd_now_ms() - t0;
		sig = (int)json_integer_value(json_object_get(r, "signal"));
		snprintf(error, sizeof(error), "%s",
		         json_is_string(json_object_get(r, "error"))
		             ? json_string_value(json_object_get(r, "error"))
		             : "(null)");
		json_decref(r);
		if (took >= 2000 || sig != SIGTERM || strcmp(error, "(null)") != 0)
			fail_msg("try %d: ended after %lld ms with signal %d, error %s", i,
			         (long long)took, sig, error);
	}
}

/* What the head ends itself when the agent stops answering (sshpool_end.c):
 * "pid" is the reaper, leader of the job's session, and "pgid" the
 * command's own process group, inside that session. */
static void job_start_answers_the_reapers_session_and_the_commands_group(void **state)
{
	const char *code;
	json_t *r = call(job_process_start, json_pack("{so}", "argv", argv_of("sleep 60")), &code);
	pid_t pid, pgid;

	if (!r)
		fail_msg("proc_start failed: %s", code);
	pid = (pid_t)json_integer_value(json_object_get(r, "pid"));
	pgid = (pid_t)json_integer_value(json_object_get(r, "pgid"));
	json_decref(r);
	assert_true(pid > 0 && pgid > 0 && pgid != pid);
	assert_int_equal(getsid(pid), pid);
	assert_int_equal(getpgid(pgid), pgid);
	assert_int_equal(getsid(pgid), pid);
	json_decref(stop(JOB_PROCESS_GRACE_MS, 0));
}

static void job_stop_ends_the_whole_group_with_sigterm_quickly(void **state)
{
	json_t *lines, *r;
	pid_t shell, background;
	int64_t t0;

	start_sh("echo $$; sleep 60 & echo $!; sleep 60");
	lines = poll_until_lines(2);
	shell = pid_of_line(lines, 0);
	background = pid_of_line(lines, 1);
	t0 = cd_now_ms();
	r = stop(JOB_PROCESS_GRACE_MS, 2);
	assert_true(cd_now_ms() - t0 < 2000);
	expect_ended(r, -1, SIGTERM);
	assert_int_equal(json_array_size(json_object_get(r, "lines")), 0);
	assert_true(gone_within(shell, 2000));
	assert_true(gone_within(background, 2000));
	json_decref(r);
	json_decref(lines);
}

static void job_ignoring_sigterm_is_killed_after_the_grace_time(void **state)
{
	json_t *lines, *r;
	pid_t background;
	int64_t t0, took;

	/* The trap is set before the pid line, so the stop cannot come first. */
	start_sh("trap '' TERM; sleep 60 & echo $!; wait");
	lines = poll_until_lines(1);
	background = pid_of_line(lines, 0);
	t0 = cd_now_ms();
	r = stop(JOB_PROCESS_GRACE_MS, 1);
	took = cd_now_ms() - t0;
	assert_true(took >= JOB_PROCESS_GRACE_MS - 200);
	assert_true(took <= JOB_PROCESS_GRACE_MS + 2000);
	expect_ended(r, -1, SIGKILL);
	assert_true(gone_within(background, 2000));
	json_decref(r);
	json_decref(lines);
}

static void job_leftovers_of_the_group_are_killed_when_the_command_exits(void **state)
{
	json_t *lines, *r;

	start_sh("sleep 60 & echo $!");
	r = poll_until_done(&lines);
	expect_ended(r, 0, 0);
	assert_int_equal(json_array_size(lines), 1);
	assert_true(gone_within(pid_of_line(lines, 0), 2000));
	json_decref(r);
	json_decref(lines);
}

/* The command prints $1 'x' characters and a newline. */
static json_t *run_long_line(int n)
{
	json_t *lines, *r;
	char count[16];

	snprintf(count, sizeof(count), "%d", n);
	start(json_pack("{s[sssss]}", "argv", "sh", "-c",
	                "head -c \"$1\" /dev/zero | tr '\\000' x; echo", "sh", count));
	r = poll_until_done(&lines);
	expect_ended(r, 0, 0);
	json_decref(r);
	return lines;
}

static void job_line_longer_than_job_line_max_is_split(void **state)
{
	json_t *lines = run_long_line(JOB_LINE_MAX + 10);

	assert_int_equal(json_array_size(lines), 2);
	assert_int_equal(
	    strspn(json_string_value(json_array_get(json_array_get(lines, 0), 1)), "x"),
	    JOB_LINE_MAX);
	assert_int_equal(json_string_length(json_array_get(json_array_get(lines, 0), 1)),
	                 JOB_LINE_MAX);
	assert_string_equal(json_string_value(json_array_get(json_array_get(lines, 1), 1)),
	                    "xxxxxxxxxx");
	json_decref(lines);
}

static void job_line_of_exactly_job_line_max_is_kept_whole(void **state)
{
	json_t *lines = run_long_line(JOB_LINE_MAX);

	assert_int_equal(json_array_size(lines), 1);
	assert_int_equal(json_string_length(json_array_get(json_array_get(lines, 0), 1)),
	                 JOB_LINE_MAX);
	json_decref(lines);
}

static void job_poll_since_beyond_the_end_returns_no_lines(void **state)
{
	json_t *lines, *r;

	start_sh("echo one; echo two");
	r = poll_until_done(&lines);
	json_decref(r);
	json_decref(lines);
	r = poll_since(100);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "done");
	assert_int_equal(json_array_size(json_object_get(r, "lines")), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "next")), 2);
	assert_int_equal(json_integer_value(json_object_get(r, "dropped")), 0);
	json_decref(r);
}

static void job_that_ended_leaves_no_file_descriptor_open(void **state)
{
	json_t *lines, *r;
	int before;

	before = count_open_fds();
	start_sh("echo out; echo err >&2");
	r = poll_until_done(&lines);
	expect_ended(r, 0, 0);
	assert_int_equal(count_open_fds(), before);
	json_decref(r);
	json_decref(lines);
}

/* ================================================================ main */

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/cd-agentjobs-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	snprintf(home, sizeof(home), "%s", tmpl);
	setenv("HOME", home, 1);
	/* Orphans of the jobs come here to be reaped (see gone_within). */
	return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	job_shutdown();
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	nftw(home, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

#define FR(t) cmocka_unit_test_setup(t, fresh_home)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(base64_encodes_the_rfc4648_vectors),
	    cmocka_unit_test(base64_decodes_the_rfc4648_vectors),
	    cmocka_unit_test(base64_round_trips_binary_of_every_length_up_to_100),
	    cmocka_unit_test(base64_refuses_a_length_not_a_multiple_of_4),
	    cmocka_unit_test(base64_refuses_characters_outside_the_alphabet),
	    cmocka_unit_test(base64_refuses_padding_before_the_end),
	    cmocka_unit_test(base64_refuses_three_or_four_pads),
	    cmocka_unit_test(base64_refuses_output_that_does_not_fit_cap),
	    FR(two_chunk_put_and_commit_give_the_exact_file),
	    FR(two_writers_of_one_path_each_use_their_own_part),
	    FR(put_at_offset_zero_truncates_the_part_file),
	    FR(a_part_file_never_committed_is_removed_at_exit),
	    FR(a_put_past_offset_0_with_no_part_file_fails_and_makes_none),
	    FR(stale_parts_of_gone_writers_of_this_node_are_swept),
	    FR(stat_is_present_only_for_the_exact_size_and_sha256),
	    FR(commit_with_a_wrong_sha256_is_a_mismatch_and_removes_the_part),
	    FR(commit_with_a_wrong_size_is_a_mismatch_and_removes_the_part),
	    FR(zdata_inflating_to_another_length_than_raw_len_is_a_bad_request),
	    FR(zdata_that_is_not_base64_is_a_bad_request),
	    FR(relative_and_climbing_paths_are_bad_requests),
	    FR(raw_len_above_the_max_chunk_is_a_bad_request),
	    FR(raw_len_of_exactly_the_max_chunk_is_accepted),
	    FR(put_creates_missing_parent_directories_with_mode_0700),
	    /* first of the job tests: no job has been started yet */
	    cmocka_unit_test(job_poll_before_any_job_is_no_job),
	    cmocka_unit_test(job_lines_keep_their_order_streams_and_the_exit_code),
	    cmocka_unit_test(job_env_reaches_the_command),
	    cmocka_unit_test(job_env_value_under_tilde_slash_gets_the_agents_home),
	    cmocka_unit_test(job_env_is_added_to_the_agents_and_overrides_it),
	    FR(job_cwd_is_created_and_used),
	    cmocka_unit_test(job_missing_program_exits_127_naming_it),
	    cmocka_unit_test(job_start_while_one_runs_is_busy),
	    cmocka_unit_test(job_stop_right_after_start_ends_it_with_sigterm),
	    cmocka_unit_test(job_start_answers_the_reapers_session_and_the_commands_group),
	    cmocka_unit_test(job_stop_ends_the_whole_group_with_sigterm_quickly),
	    cmocka_unit_test(job_ignoring_sigterm_is_killed_after_the_grace_time),
	    cmocka_unit_test(job_leftovers_of_the_group_are_killed_when_the_command_exits),
	    cmocka_unit_test(job_line_longer_than_job_line_max_is_split),
	    cmocka_unit_test(job_line_of_exactly_job_line_max_is_kept_whole),
	    cmocka_unit_test(job_poll_since_beyond_the_end_returns_no_lines),
	    cmocka_unit_test(job_that_ended_leaves_no_file_descriptor_open),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
