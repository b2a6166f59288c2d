/* SPDX-License-Identifier: MIT */
/* test_nodefile.c - the agent's fixer requests (fixers/nodefile.h: whoami,
 * file_read, file_write; fixers/noderun.h: run), their way through sudo
 * (the stand-in tests/fakes/sudo and the built agent's --one-request), and
 * child_run_input. Run from the top of the tree, as `make unit` does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "built_agent.h"
#include "base64.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "sha256.h"
#include "fixers/nodefile.h"
#include "fixers/noderun.h"

typedef json_t *(*handler)(json_t *req, const char **code, char *msg, size_t msglen);

static char top[64];         /* the group's temporary directory */
static char dir[PATH_MAX];   /* top/w: emptied before each test */
static char home[PATH_MAX];  /* top/home: $HOME */
static char slog[PATH_MAX];  /* top/sudo.log: $FAKE_SUDO_LOG */
static char fakes[PATH_MAX]; /* tests/fakes, absolute */
static char agent[PATH_MAX]; /* the built clusterdoc-agent, "" when there is none */
static char *saved_path;

/* ---------------------------------------------------------------- helpers */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static int fresh_dir(void **state)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return mkdir(dir, 0700);
}

/* dir/rel */
static char *at(const char *rel)
{
	static char paths[4][PATH_MAX + 64];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, rel);
	return p;
}

static void put(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The whole file as a string (free it), or NULL when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = calloc(1, 1 << 20);
	size_t n;

	if (!f) {
		free(s);
		return NULL;
	}
	n = fread(s, 1, (1 << 20) - 1, f);
	s[n] = '\0';
	fclose(f);
	return s;
}

static void assert_file(const char *path, const char *content)
{
	char *s = slurp(path);

	assert_non_null(s);
	assert_string_equal(s, content);
	free(s);
}

static char *b64(const char *s)
{
	char *t = malloc(base64_encoded_size(strlen(s)));

	base64_encode(s, strlen(s), t);
	return t;
}

static void sha_of(const char *s, char hex[SHA256_HEX_LEN])
{
	struct sha256 c;
	unsigned char d[32];

	sha256_init(&c);
	sha256_update(&c, s, strlen(s));
	sha256_final(&c, d);
	sha256_hex(d, hex);
}

/* Call h; the result must be a success (its message printed otherwise). */
static json_t *ok(handler h, json_t *req_take)
{
	const char *code = "unset";
	char msg[CD_ERRLEN] = "";
	json_t *r = h(req_take, &code, msg, sizeof(msg));

	if (!r)
		print_error("failed: %s: %s\n", code, msg);
	json_decref(req_take);
	assert_non_null(r);
	return r;
}

/* Call h; it must fail. Returns the code, msg gets the message. */
static const char *fails(handler h, json_t *req_take, char *msg, size_t msglen)
{
	const char *code = "unset";
	json_t *r = h(req_take, &code, msg, msglen);

	json_decref(req_take);
	if (r) {
		char *s = json_dumps(r, JSON_COMPACT);

		print_error("succeeded: %s\n", s);
		free(s);
		json_decref(r);
	}
	assert_null(r);
	return code;
}

static json_t *write_req(const char *path, const char *content)
{
	char *t = b64(content);
	json_t *req = json_pack("{ssss}", "path", path, "data", t);

	free(t);
	return req;
}

static long long int_of(json_t *o, const char *key)
{
	assert_true(json_is_integer(json_object_get(o, key)));
	return json_integer_value(json_object_get(o, key));
}

static const char *str_of(json_t *o, const char *key)
{
	assert_true(json_is_string(json_object_get(o, key)));
	return json_string_value(json_object_get(o, key));
}

static int bool_of(json_t *o, const char *key)
{
	assert_true(json_is_boolean(json_object_get(o, key)));
	return json_is_true(json_object_get(o, key));
}

/* No temporary of a write is left in d: only the names in keep (NULL-ended). */
static void assert_only(const char *d, const char *const keep[])
{
	DIR *dd = opendir(d);
	struct dirent *e;

	assert_non_null(dd);
	while ((e = readdir(dd))) {
		int known = e->d_name[0] == '.' && (!e->d_name[1] || strcmp(e->d_name, "..") == 0);

		for (size_t i = 0; keep[i] && !known; i++)
			known = strcmp(e->d_name, keep[i]) == 0;
		if (!known)
			print_error("unexpected file in %s: %s\n", d, e->d_name);
		assert_true(known);
	}
	closedir(dd);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* The stand-in sudo first on PATH, sudo forced on even as root, a fresh log. */
static int with_fake_sudo(void **state)
{
	char *path = cd_asprintf("%s:%s", fakes, saved_path);

	setenv("PATH", path, 1);
	free(path);
	setenv("FAKE_SUDO_LOG", slog, 1);
	unsetenv("FAKE_SUDO");
	unsetenv("FAKE_SUDO_HOME");
	unlink(slog);
	noderun_force_sudo(1);
	nodefile_set_self(agent);
	return fresh_dir(state);
}

static int without_fake_sudo(void **state)
{
	setenv("PATH", saved_path, 1);
	unsetenv("FAKE_SUDO");
	unsetenv("FAKE_SUDO_HOME");
	noderun_force_sudo(0);
	nodefile_set_self(NULL);
	return 0;
}

static void need_agent(void)
{
	if (!agent[0]) {
		print_message("no built clusterdoc-agent (make all first)\n");
		skip();
	}
}

/* ---------------------------------------------------------------- file_read */

static void read_of_a_file_gives_content_mode_owner_and_sha256(void **state)
{
	char hex[SHA256_HEX_LEN];
	json_t *r;

	put(at("f"), "hello\n", 0640);
	sha_of("hello\n", hex);
	r = ok(nodefile_read, json_pack("{ss}", "path", at("f")));
	assert_true(bool_of(r, "exists"));
	assert_string_equal(str_of(r, "data"), "aGVsbG8K");
	assert_int_equal(int_of(r, "size"), 6);
	assert_int_equal(int_of(r, "mode"), 0640);
	assert_int_equal(int_of(r, "uid"), geteuid());
	assert_int_equal(int_of(r, "gid"), getegid());
	assert_string_equal(str_of(r, "sha256"), hex);
	json_decref(r);
}

static void read_of_an_absent_file_says_so_without_data(void **state)
{
	json_t *r = ok(nodefile_read, json_pack("{ss}", "path", at("nope")));

	assert_false(bool_of(r, "exists"));
	assert_null(json_object_get(r, "data"));
	assert_int_equal(int_of(r, "size"), 0);
	assert_int_equal(int_of(r, "uid"), -1);
	assert_string_equal(str_of(r, "sha256"), "");
	json_decref(r);
}

static void read_of_a_file_over_max_is_too_big(void **state)
{
	char msg[CD_ERRLEN];

	put(at("f"), "0123456789", 0644);
	assert_string_equal(
	    fails(nodefile_read, json_pack("{sssi}", "path", at("f"), "max", 9), msg, sizeof(msg)),
	    "too-big");
	assert_non_null(strstr(msg, at("f")));
	json_decref(ok(nodefile_read, json_pack("{sssi}", "path", at("f"), "max", 10)));
}

static void read_of_a_directory_is_io_naming_it(void **state)
{
	char msg[CD_ERRLEN];

	assert_string_equal(fails(nodefile_read, json_pack("{ss}", "path", dir), msg, sizeof(msg)),
	                    "io");
	assert_non_null(strstr(msg, "is a directory"));
}

static void read_follows_a_symlink_to_its_target(void **state)
{
	json_t *r;

	put(at("target"), "x", 0600);
	assert_int_equal(symlink("target", at("link")), 0);
	r = ok(nodefile_read, json_pack("{ss}", "path", at("link")));
	assert_string_equal(str_of(r, "data"), "eA==");
	assert_int_equal(int_of(r, "mode"), 0600);
	json_decref(r);
}

static void tilde_paths_are_in_home(void **state)
{
	char path[PATH_MAX + 16];
	json_t *r;

	snprintf(path, sizeof(path), "%s/.rc", home);
	put(path, "rc", 0644);
	r = ok(nodefile_read, json_pack("{ss}", "path", "~/.rc"));
	assert_string_equal(str_of(r, "data"), "cmM=");
	json_decref(r);
	unlink(path);
}

static void relative_and_climbing_paths_are_bad_requests(void **state)
{
	const char *bad[] = {"etc/hosts", "/etc/../etc/hosts", "~/../x", "", "/tmp/"};
	char msg[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		assert_string_equal(
		    fails(nodefile_read, json_pack("{ss}", "path", bad[i]), msg, sizeof(msg)),
		    "bad-request");
		assert_string_equal(fails(nodefile_write, write_req(bad[i], "x"), msg, sizeof(msg)),
		                    "bad-request");
	}
}

/* ---------------------------------------------------------------- file_write */

static void write_creates_a_new_file_with_mode_and_parent_dirs_0700(void **state)
{
	char hex[SHA256_HEX_LEN];
	json_t *req = write_req(at("a/b/new"), "data\n"), *r;

	json_object_set_new(req, "mode", json_integer(0640));
	json_object_set_new(req, "expect", json_string("absent"));
	r = ok(nodefile_write, req);
	sha_of("data\n", hex);
	assert_true(bool_of(r, "changed"));
	assert_string_equal(str_of(r, "before_sha256"), "");
	assert_string_equal(str_of(r, "after_sha256"), hex);
	assert_false(bool_of(r, "in_place"));
	assert_true(json_is_null(json_object_get(r, "backup")));
	assert_file(at("a/b/new"), "data\n");
	assert_int_equal(mode_of(at("a/b/new")), 0640);
	assert_int_equal(mode_of(at("a")), 0700);
	assert_int_equal(mode_of(at("a/b")), 0700);
	assert_only(at("a/b"), (const char *const[]){"new", NULL});
	json_decref(r);
}

static void write_of_a_new_file_defaults_to_mode_0644(void **state)
{
	mode_t old = umask(077);

	json_decref(ok(nodefile_write, write_req(at("f"), "x")));
	umask(old);
	assert_int_equal(mode_of(at("f")), 0644);
}

static void write_of_the_same_content_changes_nothing_and_makes_no_backup(void **state)
{
	char hex[SHA256_HEX_LEN];
	json_t *req = write_req(at("f"), "same"), *r;
	struct stat before, after;

	put(at("f"), "same", 0644);
	assert_int_equal(stat(at("f"), &before), 0);
	json_object_set_new(req, "backup", json_string(at("bak/f")));
	/* a stale expect does not matter: the plan was already applied */
	json_object_set_new(req, "expect", json_string("absent"));
	r = ok(nodefile_write, req);
	sha_of("same", hex);
	assert_false(bool_of(r, "changed"));
	assert_string_equal(str_of(r, "before_sha256"), hex);
	assert_string_equal(str_of(r, "after_sha256"), hex);
	assert_true(json_is_null(json_object_get(r, "backup")));
	assert_int_equal(stat(at("f"), &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_only(dir, (const char *const[]){"f", NULL});
	json_decref(r);
}

static void write_with_a_stale_expect_is_a_conflict_and_leaves_the_file(void **state)
{
	char old[SHA256_HEX_LEN], now[SHA256_HEX_LEN], msg[CD_ERRLEN], want[CD_ERRLEN];
	json_t *req = write_req(at("f"), "new");

	sha_of("planned", old);
	sha_of("edited", now);
	put(at("f"), "edited", 0644);
	json_object_set_new(req, "expect", json_string(old));
	json_object_set_new(req, "backup", json_string(at("f.bak")));
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "conflict");
	snprintf(want, sizeof(want),
	         "%s changed since the plan was made (now sha256 %.12s…, expected %.12s…)", at("f"),
	         now, old);
	assert_string_equal(msg, want);
	assert_file(at("f"), "edited");
	assert_only(dir, (const char *const[]){"f", NULL});
}

static void write_expecting_absent_over_an_existing_file_is_a_conflict(void **state)
{
	char msg[CD_ERRLEN];
	json_t *req = write_req(at("f"), "new");

	put(at("f"), "there", 0644);
	json_object_set_new(req, "expect", json_string("absent"));
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "conflict");
	assert_non_null(strstr(msg, "now exists with sha256"));
	assert_file(at("f"), "there");
	assert_only(dir, (const char *const[]){"f", NULL});
}

static void write_expecting_a_sha256_of_an_absent_file_is_a_conflict(void **state)
{
	char hex[SHA256_HEX_LEN], msg[CD_ERRLEN];
	json_t *req = write_req(at("f"), "new");

	sha_of("x", hex);
	json_object_set_new(req, "expect", json_string(hex));
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "conflict");
	assert_non_null(strstr(msg, "now is absent"));
	assert_only(dir, (const char *const[]){NULL});
}

static void write_with_the_current_sha256_replaces_the_file_keeping_its_mode(void **state)
{
	char before[SHA256_HEX_LEN];
	json_t *req = write_req(at("f"), "new"), *r;

	put(at("f"), "old", 0600);
	sha_of("old", before);
	json_object_set_new(req, "expect", json_string(before));
	json_object_set_new(req, "mode", json_integer(0666)); /* only for a new file */
	r = ok(nodefile_write, req);
	assert_true(bool_of(r, "changed"));
	assert_string_equal(str_of(r, "before_sha256"), before);
	assert_file(at("f"), "new");
	assert_int_equal(mode_of(at("f")), 0600);
	assert_only(dir, (const char *const[]){"f", NULL});
	json_decref(r);
}

static void write_backs_up_the_old_content_with_mode_0600(void **state)
{
	json_t *req = write_req(at("f"), "new"), *r;

	put(at("f"), "old", 0644);
	json_object_set_new(req, "backup", json_string(at("bak/dir/f")));
	r = ok(nodefile_write, req);
	assert_string_equal(str_of(r, "backup"), at("bak/dir/f"));
	assert_file(at("bak/dir/f"), "old");
	assert_int_equal(mode_of(at("bak/dir/f")), 0600);
	assert_int_equal(mode_of(at("bak")), 0700);
	assert_file(at("f"), "new");
	assert_only(at("bak/dir"), (const char *const[]){"f", NULL});
	assert_only(dir, (const char *const[]){"f", "bak", NULL});
	json_decref(r);
}

static void write_replaces_an_existing_backup(void **state)
{
	json_t *req = write_req(at("f"), "new"), *r;

	put(at("f"), "old", 0644);
	put(at("f.bak"), "older", 0644);
	json_object_set_new(req, "backup", json_string(at("f.bak")));
	r = ok(nodefile_write, req);
	assert_file(at("f.bak"), "old");
	assert_int_equal(mode_of(at("f.bak")), 0600);
	assert_only(dir, (const char *const[]){"f", "f.bak", NULL});
	json_decref(r);
}

static void write_of_a_new_file_makes_no_backup(void **state)
{
	json_t *req = write_req(at("f"), "new"), *r;

	json_object_set_new(req, "backup", json_string(at("f.bak")));
	r = ok(nodefile_write, req);
	assert_true(json_is_null(json_object_get(r, "backup")));
	assert_only(dir, (const char *const[]){"f", NULL});
	json_decref(r);
}

static void write_through_a_symlink_changes_the_target_and_keeps_the_link(void **state)
{
	char link[PATH_MAX];
	ssize_t n;
	json_t *r;

	assert_int_equal(mkdir(at("dotfiles"), 0700), 0);
	put(at("dotfiles/bashrc"), "old", 0640);
	assert_int_equal(symlink("dotfiles/bashrc", at(".bashrc")), 0);
	r = ok(nodefile_write, write_req(at(".bashrc"), "new"));
	assert_true(bool_of(r, "changed"));
	n = readlink(at(".bashrc"), link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "dotfiles/bashrc");
	assert_file(at("dotfiles/bashrc"), "new");
	assert_int_equal(mode_of(at("dotfiles/bashrc")), 0640);
	assert_only(at("dotfiles"), (const char *const[]){"bashrc", NULL});
	json_decref(r);
}

static void write_through_a_dangling_symlink_creates_its_target(void **state)
{
	struct stat st;

	assert_int_equal(symlink(at("real"), at("link")), 0);
	json_decref(ok(nodefile_write, write_req(at("link"), "x")));
	assert_int_equal(lstat(at("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_file(at("real"), "x");
}

static void remove_with_the_right_expect_unlinks_the_file_after_its_backup(void **state)
{
	char hex[SHA256_HEX_LEN];
	json_t *r;

	put(at("f"), "bye", 0644);
	sha_of("bye", hex);
	r = ok(nodefile_write, json_pack("{sssbssss}", "path", at("f"), "remove", 1, "expect", hex,
	                                 "backup", at("f.bak")));
	assert_true(bool_of(r, "changed"));
	assert_string_equal(str_of(r, "before_sha256"), hex);
	assert_string_equal(str_of(r, "after_sha256"), "");
	assert_int_equal(access(at("f"), F_OK), -1);
	assert_file(at("f.bak"), "bye");
	assert_only(dir, (const char *const[]){"f.bak", NULL});
	json_decref(r);
}

static void remove_with_a_stale_expect_is_a_conflict(void **state)
{
	char hex[SHA256_HEX_LEN], msg[CD_ERRLEN];

	put(at("f"), "edited", 0644);
	sha_of("planned", hex);
	assert_string_equal(
	    fails(nodefile_write,
	          json_pack("{sssbss}", "path", at("f"), "remove", 1, "expect", hex), msg,
	          sizeof(msg)),
	    "conflict");
	assert_file(at("f"), "edited");
}

static void remove_of_an_absent_file_changes_nothing(void **state)
{
	json_t *r = ok(nodefile_write,
	               json_pack("{sssbss}", "path", at("f"), "remove", 1, "expect", "absent"));

	assert_false(bool_of(r, "changed"));
	assert_string_equal(str_of(r, "before_sha256"), "");
	assert_string_equal(str_of(r, "after_sha256"), "");
	json_decref(r);
}

static void remove_of_a_symlink_removes_the_link_not_its_target(void **state)
{
	json_t *r;

	put(at("shared"), "keep", 0644);
	assert_int_equal(symlink("shared", at("link")), 0);
	r = ok(nodefile_write, json_pack("{sssb}", "path", at("link"), "remove", 1));
	assert_true(bool_of(r, "changed"));
	assert_only(dir, (const char *const[]){"shared", NULL});
	assert_file(at("shared"), "keep");
	json_decref(r);
}

static void write_needs_exactly_one_of_data_and_remove(void **state)
{
	char msg[CD_ERRLEN];
	json_t *both = write_req(at("f"), "x");

	json_object_set_new(both, "remove", json_true());
	assert_string_equal(fails(nodefile_write, both, msg, sizeof(msg)), "bad-request");
	assert_string_equal(
	    fails(nodefile_write, json_pack("{ss}", "path", at("f")), msg, sizeof(msg)),
	    "bad-request");
	assert_string_equal(fails(nodefile_write,
	                          json_pack("{ssss}", "path", at("f"), "data", "not base64!"), msg,
	                          sizeof(msg)),
	                    "bad-request");
	assert_only(dir, (const char *const[]){NULL});
}

static void write_with_a_malformed_expect_or_mode_is_a_bad_request(void **state)
{
	char msg[CD_ERRLEN];
	json_t *a = write_req(at("f"), "x"), *b = write_req(at("f"), "x");

	json_object_set_new(a, "expect", json_string("ABC"));
	json_object_set_new(b, "mode", json_integer(010000));
	assert_string_equal(fails(nodefile_write, a, msg, sizeof(msg)), "bad-request");
	assert_string_equal(fails(nodefile_write, b, msg, sizeof(msg)), "bad-request");
	assert_only(dir, (const char *const[]){NULL});
}

static void write_over_a_directory_is_io(void **state)
{
	char msg[CD_ERRLEN];

	assert_int_equal(mkdir(at("d"), 0700), 0);
	assert_string_equal(fails(nodefile_write, write_req(at("d"), "x"), msg, sizeof(msg)), "io");
	assert_only(dir, (const char *const[]){"d", NULL});
}

/*
 * In a private mount namespace (a forked child: the test process keeps its
 * own), dir/hosts is a bind mount of dir/src, as /etc/hosts is in Docker:
 * rename over it fails with EBUSY. The child's exit code says what went
 * wrong; 77 means it could not set that up.
 */
static int bind_mount_child(int sudo)
{
	const char *code = "unset";
	char msg[CD_ERRLEN];
	json_t *r, *req;
	char *s;
	int rc = 0;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	put(at("src"), "bound", 0644);
	put(at("hosts"), "covered", 0644);
	if (mount(at("src"), at("hosts"), NULL, MS_BIND, NULL) < 0)
		return 77;
	req = write_req(at("hosts"), "new hosts");
	if (sudo)
		json_object_set_new(req, "sudo", json_true());
	r = nodefile_write(req, &code, msg, sizeof(msg));
	if (!r)
		return 1;
	if (!json_is_true(json_object_get(r, "in_place")) ||
	    !json_is_true(json_object_get(r, "changed")))
		rc = 2;
	s = slurp(at("src"));
	if (!s || strcmp(s, "new hosts") != 0)
		rc = 3;
	free(s);
	s = slurp(at("hosts"));
	if (!s || strcmp(s, "new hosts") != 0)
		rc = 4;
	free(s);
	umount(at("hosts"));
	return rc;
}

static void bind_mount_test(int sudo)
{
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		print_message("needs root for a bind mount\n");
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(bind_mount_child(sudo));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("no private mount namespace here\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_only(dir, (const char *const[]){"src", "hosts", NULL});
}

static void write_to_a_bind_mounted_file_falls_back_to_in_place(void **state)
{
	bind_mount_test(0);
}

/* ---------------------------------------------------------------- whoami */

static void whoami_reports_the_effective_ids_home_and_sudo_on_path(void **state)
{
	json_t *r;
	char want[PATH_MAX + 8];

	r = ok(nodefile_whoami, json_object());
	assert_int_equal(int_of(r, "uid"), geteuid());
	assert_int_equal(int_of(r, "gid"), getegid());
	assert_string_equal(str_of(r, "home"), home);
	str_of(r, "user");
	str_of(r, "shell");
	snprintf(want, sizeof(want), "%s/sudo", fakes);
	assert_string_equal(str_of(r, "sudo"), want);
	json_decref(r);
	setenv("PATH", "/nonexistent", 1);
	r = ok(nodefile_whoami, json_object());
	assert_true(json_is_null(json_object_get(r, "sudo")));
	json_decref(r);
}

/* ---------------------------------------------------------------- run */

static json_t *run_sh(const char *script)
{
	return json_pack("{s[sss]}", "argv", "sh", "-c", script);
}

static void run_reports_status_stdout_and_stderr(void **state)
{
	json_t *r = ok(noderun_run, run_sh("echo out; echo err >&2; exit 3"));

	assert_int_equal(int_of(r, "status"), 3);
	assert_int_equal(int_of(r, "signal"), 0);
	assert_false(bool_of(r, "timed_out"));
	assert_string_equal(str_of(r, "stdout"), "out\n");
	assert_string_equal(str_of(r, "stderr"), "err\n");
	assert_true(json_is_null(json_object_get(r, "sudo_error")));
	assert_null(json_object_get(r, "truncated"));
	json_decref(r);
}

static void run_gives_the_command_lc_all_c_and_its_stdin(void **state)
{
	json_t *req = run_sh("echo \"$LC_ALL\"; cat"), *r;

	json_object_set_new(req, "stdin", json_string("fed\n"));
	r = ok(noderun_run, req);
	assert_string_equal(str_of(r, "stdout"), "C\nfed\n");
	json_decref(r);
}

static void run_past_its_timeout_is_timed_out_quickly(void **state)
{
	int64_t t0 = cd_now_ms();
	json_t *r =
	    ok(noderun_run, json_pack("{s[ss]si}", "argv", "sleep", "5", "timeout_ms", 200));

	assert_true(cd_now_ms() - t0 < 2000);
	assert_true(bool_of(r, "timed_out"));
	assert_int_equal(int_of(r, "status"), -1);
	json_decref(r);
}

static void run_killed_by_a_signal_has_status_minus_1_and_the_signal(void **state)
{
	json_t *r = ok(noderun_run, run_sh("kill -TERM $$"));

	assert_int_equal(int_of(r, "status"), -1);
	assert_int_equal(int_of(r, "signal"), 15);
	assert_false(bool_of(r, "timed_out"));
	json_decref(r);
}

static void run_keeps_the_first_max_output_bytes_and_the_real_status(void **state)
{
	json_t *req = run_sh("head -c 300000 /dev/zero | tr '\\0' a; echo e >&2; exit 4"), *r;
	char want[1001];

	json_object_set_new(req, "max_output", json_integer(1000));
	r = ok(noderun_run, req);
	memset(want, 'a', 1000);
	want[1000] = '\0';
	assert_string_equal(str_of(r, "stdout"), want);
	assert_string_equal(str_of(r, "stderr"), "e\n");
	assert_true(bool_of(r, "truncated"));
	assert_int_equal(int_of(r, "status"), 4);
	json_decref(r);
}

static void run_replaces_bytes_that_are_not_utf8_with_question_marks(void **state)
{
	json_t *r = ok(noderun_run, run_sh("printf 'a\\377b\\303\\251c\\355\\240\\200'"));

	assert_string_equal(str_of(r, "stdout"), "a?b\xc3\xa9"
	                                         "c???");
	json_decref(r);
}

static void run_of_a_missing_command_exits_127_naming_it(void **state)
{
	json_t *r = ok(noderun_run, json_pack("{s[s]}", "argv", "no-such-command-cd"));

	assert_int_equal(int_of(r, "status"), 127);
	assert_string_equal(str_of(r, "stderr"),
	                    "cannot run no-such-command-cd: command not found in PATH\n");
	json_decref(r);
}

static void run_of_a_path_that_cannot_be_executed_exits_127_naming_it(void **state)
{
	json_t *r;

	put(at("script"), "#!/bin/sh\n", 0644);
	r = ok(noderun_run, json_pack("{s[s]}", "argv", at("script")));
	assert_int_equal(int_of(r, "status"), 127);
	assert_non_null(strstr(str_of(r, "stderr"), "cannot run "));
	assert_non_null(strstr(str_of(r, "stderr"), at("script")));
	json_decref(r);
}

static void run_with_malformed_fields_is_a_bad_request(void **state)
{
	char msg[CD_ERRLEN];

	assert_string_equal(fails(noderun_run, json_pack("{s[]}", "argv"), msg, sizeof(msg)),
	                    "bad-request");
	assert_string_equal(fails(noderun_run, json_pack("{s[i]}", "argv", 1), msg, sizeof(msg)),
	                    "bad-request");
	assert_string_equal(fails(noderun_run,
	                          json_pack("{s[s]si}", "argv", "true", "timeout_ms", 120001), msg,
	                          sizeof(msg)),
	                    "bad-request");
	assert_string_equal(
	    fails(noderun_run, json_pack("{s[s]si}", "argv", "true", "max_output", (1 << 20) + 1),
	          msg, sizeof(msg)),
	    "bad-request");
}

static void run_with_sudo_runs_sudo_n_dashdash_the_command(void **state)
{
	json_t *req = json_pack("{s[sss]sb}", "argv", "sh", "-c", "echo ran", "sudo", 1), *r;

	r = ok(noderun_run, req);
	assert_int_equal(int_of(r, "status"), 0);
	assert_string_equal(str_of(r, "stdout"), "ran\n");
	assert_true(json_is_null(json_object_get(r, "sudo_error")));
	assert_file(slog, "-n -- sh -c echo ran\n");
	json_decref(r);
}

static void run_with_sudo_wanting_a_password_is_sudo_error_password(void **state)
{
	json_t *r;

	setenv("FAKE_SUDO", "password", 1);
	r = ok(noderun_run, json_pack("{s[s]sb}", "argv", "true", "sudo", 1));
	assert_int_equal(int_of(r, "status"), 1);
	assert_string_equal(str_of(r, "sudo_error"), "password");
	json_decref(r);
}

static void run_with_sudo_refused_by_sudoers_is_sudo_error_denied(void **state)
{
	json_t *r;

	setenv("FAKE_SUDO", "denied", 1);
	r = ok(noderun_run, json_pack("{s[s]sb}", "argv", "true", "sudo", 1));
	assert_string_equal(str_of(r, "sudo_error"), "denied");
	json_decref(r);
}

static void run_with_sudo_not_on_path_is_127_and_sudo_error_missing(void **state)
{
	json_t *r;

	setenv("PATH", "/nonexistent", 1);
	r = ok(noderun_run, json_pack("{s[s]sb}", "argv", "true", "sudo", 1));
	assert_int_equal(int_of(r, "status"), 127);
	assert_string_equal(str_of(r, "sudo_error"), "missing");
	assert_non_null(strstr(str_of(r, "stderr"), "sudo"));
	assert_int_equal(access(slog, F_OK), -1);
	json_decref(r);
}

static void run_with_a_failing_command_under_sudo_has_no_sudo_error(void **state)
{
	json_t *r =
	    ok(noderun_run, json_pack("{s[sss]sb}", "argv", "sh", "-c", "exit 2", "sudo", 1));

	assert_int_equal(int_of(r, "status"), 2);
	assert_true(json_is_null(json_object_get(r, "sudo_error")));
	json_decref(r);
}

static void run_with_sudo_as_root_uses_no_sudo(void **state)
{
	json_t *r;

	if (geteuid() != 0) {
		print_message("needs root\n");
		skip();
	}
	noderun_force_sudo(0);
	r = ok(noderun_run, json_pack("{s[s]sb}", "argv", "true", "sudo", 1));
	assert_int_equal(int_of(r, "status"), 0);
	assert_int_equal(access(slog, F_OK), -1);
	json_decref(r);
}

/* ---------------------------------------------------------------- files under sudo */

static void file_write_with_sudo_copies_fills_and_renames_with_fixed_commands(void **state)
{
	char *want;
	json_t *req, *r;

	put(at("f"), "old", 0640);
	req = write_req(at("f"), "as root");
	json_object_set_new(req, "sudo", json_true());
	json_object_set_new(req, "backup", json_string(at("f.bak")));
	r = ok(nodefile_write, req);
	assert_true(bool_of(r, "changed"));
	assert_false(bool_of(r, "in_place"));
	assert_string_equal(str_of(r, "backup"), at("f.bak"));
	assert_file(at("f"), "as root");
	assert_int_equal(mode_of(at("f")), 0640);
	assert_file(at("f.bak"), "old");
	want = cd_asprintf("-n -- cp -p %s %s\n-n -- tee %s\n-n -- mv -f %s %s\n", at("f"),
	                   at(".f.clusterdoc"), at(".f.clusterdoc"), at(".f.clusterdoc"), at("f"));
	assert_file(slog, want);
	free(want);
	assert_only(dir, (const char *const[]){"f", "f.bak", NULL});
	json_decref(r);
}

static void file_write_with_sudo_of_a_new_file_sets_its_mode(void **state)
{
	char *want;
	json_t *req;

	req = write_req(at("new"), "fresh");
	json_object_set_new(req, "sudo", json_true());
	json_object_set_new(req, "mode", json_integer(0604));
	json_decref(ok(nodefile_write, req));
	assert_file(at("new"), "fresh");
	assert_int_equal(mode_of(at("new")), 0604);
	want = cd_asprintf("-n -- tee %s\n-n -- chmod 0604 %s\n-n -- mv -f %s %s\n",
	                   at(".new.clusterdoc"), at(".new.clusterdoc"), at(".new.clusterdoc"),
	                   at("new"));
	assert_file(slog, want);
	free(want);
}

static void file_write_with_sudo_removes_with_rm(void **state)
{
	char *want;
	json_t *req = json_pack("{sssb}", "path", at("gone"), "remove", 1);

	put(at("gone"), "x", 0644);
	json_object_set_new(req, "sudo", json_true());
	json_decref(ok(nodefile_write, req));
	assert_int_equal(access(at("gone"), F_OK), -1);
	want = cd_asprintf("-n -- rm -f %s\n", at("gone"));
	assert_file(slog, want);
	free(want);
}

static void file_write_with_sudo_of_unchanged_content_runs_no_sudo(void **state)
{
	json_t *req = write_req(at("f"), "same"), *r;

	put(at("f"), "same", 0644);
	json_object_set_new(req, "sudo", json_true());
	r = ok(nodefile_write, req);
	assert_false(bool_of(r, "changed"));
	assert_int_equal(access(slog, F_OK), -1);
	json_decref(r);
}

static void write_with_sudo_to_a_bind_mounted_file_tees_in_place(void **state)
{
	bind_mount_test(1);
}

static void file_paths_are_expanded_before_sudo_changes_home(void **state)
{
	char path[PATH_MAX + 16];
	json_t *req;

	setenv("FAKE_SUDO_HOME", "/nonexistent-root-home", 1);
	req = write_req("~/via-sudo", "x");
	json_object_set_new(req, "sudo", json_true());
	json_decref(ok(nodefile_write, req));
	snprintf(path, sizeof(path), "%s/via-sudo", home);
	assert_file(path, "x");
	unlink(path);
}

static void file_read_with_sudo_returns_the_agents_result(void **state)
{
	json_t *r;

	need_agent();
	put(at("f"), "secret", 0600);
	r = ok(nodefile_read, json_pack("{sssb}", "path", at("f"), "sudo", 1));
	assert_true(bool_of(r, "exists"));
	assert_string_equal(str_of(r, "data"), "c2VjcmV0");
	json_decref(r);
}

static void file_write_with_sudo_checks_expect_before_any_sudo(void **state)
{
	char msg[CD_ERRLEN];
	json_t *req;

	put(at("f"), "there", 0644);
	req = write_req(at("f"), "new");
	json_object_set_new(req, "sudo", json_true());
	json_object_set_new(req, "expect", json_string("absent"));
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "conflict");
	assert_non_null(strstr(msg, "changed since the plan was made"));
	assert_file(at("f"), "there");
	assert_int_equal(access(slog, F_OK), -1);
}

static void file_write_with_sudo_wanting_a_password_is_sudo_password(void **state)
{
	char msg[CD_ERRLEN];
	json_t *req = write_req(at("f"), "x");

	setenv("FAKE_SUDO", "password", 1);
	json_object_set_new(req, "sudo", json_true());
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "sudo-password");
	assert_non_null(strstr(msg, "NOPASSWD"));
	assert_non_null(strstr(msg, "run clusterdoc fix as root"));
	assert_only(dir, (const char *const[]){NULL});
}

static void file_write_with_sudo_refused_midway_leaves_no_temporary(void **state)
{
	char msg[CD_ERRLEN];
	json_t *req = write_req(at("f"), "x");

	/* the stand-in refuses mv only: the copy and its content were made */
	setenv("FAKE_SUDO_DENY", "mv", 1);
	put(at("f"), "old", 0644);
	json_object_set_new(req, "sudo", json_true());
	assert_string_equal(fails(nodefile_write, req, msg, sizeof(msg)), "sudo-denied");
	assert_non_null(strstr(msg, "mv -f"));
	unsetenv("FAKE_SUDO_DENY");
	assert_file(at("f"), "old");
	assert_only(dir, (const char *const[]){"f", NULL});
}

static void file_read_with_sudo_refused_by_sudoers_is_sudo_denied(void **state)
{
	char msg[CD_ERRLEN];

	setenv("FAKE_SUDO", "denied", 1);
	assert_string_equal(
	    fails(nodefile_read, json_pack("{sssb}", "path", at("f"), "sudo", 1), msg, sizeof(msg)),
	    "sudo-denied");
	assert_non_null(strstr(msg, "NOPASSWD"));
}

static void file_read_with_sudo_not_on_path_is_sudo_missing(void **state)
{
	char msg[CD_ERRLEN];

	setenv("PATH", "/nonexistent", 1);
	assert_string_equal(
	    fails(nodefile_read, json_pack("{sssb}", "path", at("f"), "sudo", 1), msg, sizeof(msg)),
	    "sudo-missing");
	assert_non_null(strstr(msg, "sudo is not installed"));
}

/* ---------------------------------------------------------------- --one-request */

static void one_request_mode_serves_only_file_and_run_requests(void **state)
{
	const char *line = "{\"id\": 4, \"type\": \"hello\", \"protocol\": 1}\n";
	char *argv[] = {agent, "--one-request", NULL}, err[CD_ERRLEN];
	struct buf out, errout;
	int status = -1;

	need_agent();
	buf_init(&out, 4096);
	buf_init(&errout, 4096);
	assert_int_equal(child_run_input(argv, NULL, line, strlen(line), &out, &errout, 5000,
	                                 &status, err, sizeof(err)),
	                 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out.data, "{\"id\":4,\"ok\":false,\"error\":{\"code\":\"bad-request\","
	                              "\"message\":\"--one-request serves only file_read, "
	                              "file_write and run\"}}\n");
	buf_fini(&out);
	buf_fini(&errout);
}

/* ---------------------------------------------------------------- child_run_input */

static void child_run_input_feeds_stdin_and_adds_env(void **state)
{
	char *argv[] = {"sh", "-c", "echo \"$CD_X\"; cat", NULL}, *env[] = {"CD_X=set", NULL};
	struct buf out, errout;
	char err[CD_ERRLEN];
	int status = -1;

	buf_init(&out, 1024);
	buf_init(&errout, 1024);
	assert_int_equal(
	    child_run_input(argv, env, "in\n", 3, &out, &errout, 5000, &status, err, sizeof(err)),
	    0);
	assert_string_equal(out.data, "set\nin\n");
	assert_int_equal(status, 0);
	buf_fini(&out);
	buf_fini(&errout);
}

static void child_run_input_of_1mib_through_cat_does_not_deadlock(void **state)
{
	size_t n = 1 << 20;
	char *in = malloc(n), err[CD_ERRLEN];
	char *argv[] = {"cat", NULL};
	struct buf out, errout;
	int status = -1;

	for (size_t i = 0; i < n; i++)
		in[i] = (char)('a' + i % 26);
	buf_init(&out, 2 * n);
	buf_init(&errout, 1024);
	assert_int_equal(
	    child_run_input(argv, NULL, in, n, &out, &errout, 10000, &status, err, sizeof(err)), 0);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.data, in, n);
	buf_fini(&out);
	buf_fini(&errout);
	free(in);
}

static void child_run_input_to_a_child_that_reads_nothing_is_no_sigpipe(void **state)
{
	size_t n = 1 << 20;
	char *in = calloc(1, n), err[CD_ERRLEN];
	char *argv[] = {"true", NULL};
	struct buf out, errout;
	int status = -1;

	buf_init(&out, 1024);
	buf_init(&errout, 1024);
	assert_int_equal(
	    child_run_input(argv, NULL, in, n, &out, &errout, 5000, &status, err, sizeof(err)), 0);
	assert_int_equal(status, 0);
	buf_fini(&out);
	buf_fini(&errout);
	free(in);
}

/* ---------------------------------------------------------------- main */

/* The agent next to this test's build directory (build-asan/clusterdoc-agent
 * for build-asan/tests/test_nodefile), else the top's (make's default). */
static int group_setup(void **state)
{
	char tmpl[] = "/tmp/cd-nodefile-XXXXXX";

	if (!mkdtemp(tmpl) || !realpath("tests/fakes", fakes))
		return -1;
	snprintf(top, sizeof(top), "%s", tmpl);
	snprintf(dir, sizeof(dir), "%s/w", top);
	snprintf(home, sizeof(home), "%s/home", top);
	snprintf(slog, sizeof(slog), "%s/sudo.log", top);
	if (mkdir(home, 0700) < 0)
		return -1;
	setenv("HOME", home, 1);
	saved_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	built_agent_path(agent, sizeof(agent));
	return 0;
}

static int group_teardown(void **state)
{
	nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(saved_path);
	return 0;
}

#define T(t)    cmocka_unit_test_setup(t, fresh_dir)
#define SUDO(t) cmocka_unit_test_setup_teardown(t, with_fake_sudo, without_fake_sudo)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(read_of_a_file_gives_content_mode_owner_and_sha256),
	    T(read_of_an_absent_file_says_so_without_data),
	    T(read_of_a_file_over_max_is_too_big),
	    T(read_of_a_directory_is_io_naming_it),
	    T(read_follows_a_symlink_to_its_target),
	    T(tilde_paths_are_in_home),
	    T(relative_and_climbing_paths_are_bad_requests),
	    T(write_creates_a_new_file_with_mode_and_parent_dirs_0700),
	    T(write_of_a_new_file_defaults_to_mode_0644),
	    T(write_of_the_same_content_changes_nothing_and_makes_no_backup),
	    T(write_with_a_stale_expect_is_a_conflict_and_leaves_the_file),
	    T(write_expecting_absent_over_an_existing_file_is_a_conflict),
	    T(write_expecting_a_sha256_of_an_absent_file_is_a_conflict),
	    T(write_with_the_current_sha256_replaces_the_file_keeping_its_mode),
	    T(write_backs_up_the_old_content_with_mode_0600),
	    T(write_replaces_an_existing_backup),
	    T(write_of_a_new_file_makes_no_backup),
	    T(write_through_a_symlink_changes_the_target_and_keeps_the_link),
	    T(write_through_a_dangling_symlink_creates_its_target),
	    T(remove_with_the_right_expect_unlinks_the_file_after_its_backup),
	    T(remove_with_a_stale_expect_is_a_conflict),
	    T(remove_of_an_absent_file_changes_nothing),
	    T(remove_of_a_symlink_removes_the_link_not_its_target),
	    T(write_needs_exactly_one_of_data_and_remove),
	    T(write_with_a_malformed_expect_or_mode_is_a_bad_request),
	    T(write_over_a_directory_is_io),
	    T(write_to_a_bind_mounted_file_falls_back_to_in_place),
	    SUDO(whoami_reports_the_effective_ids_home_and_sudo_on_path),
	    T(run_reports_status_stdout_and_stderr),
	    T(run_gives_the_command_lc_all_c_and_its_stdin),
	    T(run_past_its_timeout_is_timed_out_quickly),
	    T(run_killed_by_a_signal_has_status_minus_1_and_the_signal),
	    T(run_keeps_the_first_max_output_bytes_and_the_real_status),
	    T(run_replaces_bytes_that_are_not_utf8_with_question_marks),
	    T(run_of_a_missing_command_exits_127_naming_it),
	    T(run_of_a_path_that_cannot_be_executed_exits_127_naming_it),
	    T(run_with_malformed_fields_is_a_bad_request),
	    SUDO(run_with_sudo_runs_sudo_n_dashdash_the_command),
	    SUDO(run_with_sudo_wanting_a_password_is_sudo_error_password),
	    SUDO(run_with_sudo_refused_by_sudoers_is_sudo_error_denied),
	    SUDO(run_with_sudo_not_on_path_is_127_and_sudo_error_missing),
	    SUDO(run_with_a_failing_command_under_sudo_has_no_sudo_error),
	    SUDO(run_with_sudo_as_root_uses_no_sudo),
	    SUDO(file_write_with_sudo_copies_fills_and_renames_with_fixed_commands),
	    SUDO(file_write_with_sudo_of_a_new_file_sets_its_mode),
	    SUDO(file_write_with_sudo_removes_with_rm),
	    SUDO(file_write_with_sudo_of_unchanged_content_runs_no_sudo),
	    SUDO(write_with_sudo_to_a_bind_mounted_file_tees_in_place),
	    SUDO(file_write_with_sudo_refused_midway_leaves_no_temporary),
	    SUDO(file_paths_are_expanded_before_sudo_changes_home),
	    SUDO(file_read_with_sudo_returns_the_agents_result),
	    SUDO(file_write_with_sudo_checks_expect_before_any_sudo),
	    SUDO(file_write_with_sudo_wanting_a_password_is_sudo_password),
	    SUDO(file_read_with_sudo_refused_by_sudoers_is_sudo_denied),
	    SUDO(file_read_with_sudo_not_on_path_is_sudo_missing),
	    T(one_request_mode_serves_only_file_and_run_requests),
	    cmocka_unit_test(child_run_input_feeds_stdin_and_adds_env),
	    cmocka_unit_test(child_run_input_of_1mib_through_cat_does_not_deadlock),
	    cmocka_unit_test(child_run_input_to_a_child_that_reads_nothing_is_no_sigpipe),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
