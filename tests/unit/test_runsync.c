/* SPDX-License-Identifier: MIT */
/* test_runsync.c - the --sync manifest (the walk, .gitignore as git applies
 * it, the cap, symlinks, the hash) and the agent's sync_missing and
 * sync_tree requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "built_agent.h"
#include "cd.h"
#include "jobs/runsync.h"
#include "fsutil.h"
#include "loop.h"
#include "sha256.h"
#include "sshpool.h"

static char top[PATH_MAX];      /* the group's temporary directory, also $HOME */
static char src[PATH_MAX + 16]; /* the tree a test walks: top/src */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write rel (under src) with text and mode, making its directories. */
static void put(const char *rel, const char *text, unsigned mode)
{
	char path[2 * PATH_MAX], err[CD_ERRLEN];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", src, rel);
	assert_int_equal(cd_mkdir_parent(path, err, sizeof(err)), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void link_to(const char *rel, const char *target)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", src, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int fresh_src(void **state)
{
	rm_rf(src);
	assert_int_equal(mkdir(src, 0755), 0);
	return 0;
}

/* The manifest's rels joined by spaces. */
static void rels(const struct runsync_manifest *m, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < m->n; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? " " : "",
		                         m->files[i].rel);
}

static void build_ok(struct runsync_manifest *m)
{
	char err[CD_ERRLEN];

	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, m, err, sizeof(err)), 0);
}

static void assert_synced(const char *want)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], got[4096];

	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	rels(&m, got, sizeof(got));
	assert_string_equal(got, want);
	runsync_manifest_free(&m);
}

/* ================================================================ .gitignore */

static void star_pattern_ignores_matching_names_at_any_depth(void **state)
{
	put(".gitignore", "*.pyc\n", 0644);
	put("a.py", "", 0644);
	put("a.pyc", "", 0644);
	put("pkg/b.pyc", "", 0644);
	put("pkg/b.py", "", 0644);
	assert_synced(".gitignore a.py pkg/b.py");
}

static void negation_re_includes_a_file_a_later_pattern_names(void **state)
{
	put(".gitignore", "*.log\n!keep.log\n", 0644);
	put("run.log", "", 0644);
	put("keep.log", "", 0644);
	put("sub/keep.log", "", 0644);
	assert_synced(".gitignore keep.log sub/keep.log");
}

static void trailing_slash_matches_directories_only(void **state)
{
	put(".gitignore", "out/\n", 0644);
	put("out/model.pt", "", 0644);
	put("sub/out", "a file named out", 0644);
	assert_synced(".gitignore sub/out");
}

static void leading_slash_anchors_to_the_gitignores_directory(void **state)
{
	put(".gitignore", "/top.txt\n", 0644);
	put("top.txt", "", 0644);
	put("sub/top.txt", "", 0644);
	assert_synced(".gitignore sub/top.txt");
}

static void double_star_matches_across_directories(void **state)
{
	put(".gitignore", "**/cache\nlogs/**\na/**/b.txt\n", 0644);
	put("cache/x", "", 0644);
	put("deep/er/cache/y", "", 0644);
	put("logs/1/2.txt", "", 0644);
	put("a/b.txt", "", 0644);
	put("a/x/y/b.txt", "", 0644);
	put("a/c.txt", "", 0644);
	assert_synced(".gitignore a/c.txt");
}

static void question_mark_and_class_match_one_character(void **state)
{
	put(".gitignore", "ckpt_?.pt\nrun[0-9].out\n", 0644);
	put("ckpt_1.pt", "", 0644);
	put("ckpt_10.pt", "", 0644);
	put("run7.out", "", 0644);
	put("runx.out", "", 0644);
	assert_synced(".gitignore ckpt_10.pt runx.out");
}

static void a_subdirectory_gitignore_applies_below_it_only(void **state)
{
	put("data/.gitignore", "*.bin\n", 0644);
	put("data/x.bin", "", 0644);
	put("y.bin", "", 0644);
	assert_synced("data/.gitignore y.bin");
}

static void a_deeper_gitignore_overrides_a_higher_one(void **state)
{
	put(".gitignore", "*.csv\n", 0644);
	put("keep/.gitignore", "!*.csv\n", 0644);
	put("a.csv", "", 0644);
	put("keep/b.csv", "", 0644);
	assert_synced(".gitignore keep/.gitignore keep/b.csv");
}

static void a_file_in_an_ignored_directory_cannot_be_re_included(void **state)
{
	put(".gitignore", "build/\n!build/keep.txt\n", 0644);
	put("build/keep.txt", "", 0644);
	assert_synced(".gitignore");
}

static void comments_blank_lines_and_trailing_spaces_are_not_patterns(void **state)
{
	put(".gitignore", "# a.txt\n\n  \nb.txt   \n", 0644);
	put("a.txt", "", 0644);
	put("b.txt", "", 0644);
	assert_synced(".gitignore a.txt");
}

static void the_git_directory_is_never_synced(void **state)
{
	put(".git/HEAD", "ref: refs/heads/main\n", 0644);
	put("main.py", "", 0644);
	assert_synced("main.py");
}

/* ================================================================ cap */

static void a_tree_over_the_cap_is_refused_naming_sizes_and_the_fix(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], want[PATH_MAX + 200];
	char *big = cd_malloc(3 << 20);

	memset(big, 'x', (3 << 20) - 1);
	big[(3 << 20) - 1] = '\0';
	put("weights.bin", big, 0644);
	free(big);
	assert_int_equal(runsync_manifest_build(src, 2 << 20, &m, err, sizeof(err)), CD_ERR_TOOBIG);
	snprintf(want, sizeof(want),
	         "%s holds 3.0 MiB to sync, over the cap of 2.0 MiB: add a .gitignore or raise "
	         "--sync-cap",
	         src);
	assert_string_equal(err, want);
	assert_int_equal(m.n, 0);
	runsync_manifest_free(&m);
}

static void a_tree_of_exactly_the_cap_is_accepted(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN];

	put("a", "12345", 0644);
	put("b", "678", 0644);
	assert_int_equal(runsync_manifest_build(src, 8, &m, err, sizeof(err)), 0);
	assert_int_equal(m.total_bytes, 8);
	runsync_manifest_free(&m);
}

/* ================================================================ symlinks */

static void a_symlink_leaving_the_tree_is_refused_naming_it(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], want[3 * PATH_MAX];

	put("a.py", "", 0644);
	link_to("secrets", "/etc");
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)),
	                 CD_ERR_REFUSED);
	snprintf(want, sizeof(want),
	         "%s/secrets is a symlink to /etc, outside %s: replace it by a copy or list it "
	         "in a .gitignore",
	         src, src);
	assert_string_equal(err, want);
	runsync_manifest_free(&m);
}

static void an_ignored_symlink_leaving_the_tree_is_not_looked_at(void **state)
{
	put(".gitignore", "secrets\n", 0644);
	link_to("secrets", "/etc");
	assert_synced(".gitignore");
}

static void a_symlink_inside_the_tree_is_followed(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN];

	put("lib/util.py", "x = 1\n", 0644);
	link_to("util.py", "lib/util.py");
	link_to("lib2", "lib");
	assert_synced("lib/util.py lib2/util.py util.py");
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	assert_string_equal(m.files[0].sha256, m.files[2].sha256);
	runsync_manifest_free(&m);
}

static void a_symlink_loop_is_refused(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN];

	put("a/x.py", "", 0644);
	link_to("a/up", "..");
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)),
	                 CD_ERR_REFUSED);
	assert_non_null(strstr(err, "/a/up leads back to a directory that holds it"));
	runsync_manifest_free(&m);
}

static void a_dangling_symlink_is_refused_naming_it(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], want[PATH_MAX + 100];

	link_to("gone", "nowhere");
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)),
	                 CD_ERR_NOTFOUND);
	snprintf(want, sizeof(want),
	         "%s/gone is a symlink to nothing: remove it or list it in a .gitignore", src);
	assert_string_equal(err, want);
	runsync_manifest_free(&m);
}

/* ================================================================ the hash */

static void the_manifest_hash_is_that_of_the_documented_text(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], text[512], hex[SHA256_HEX_LEN], h1[SHA256_HEX_LEN], h2[SHA256_HEX_LEN];

	put("run.sh", "echo hi\n", 0755);
	put("a/b.py", "pass\n", 0644);
	sha256_data_hex("pass\n", 5, h1);
	sha256_data_hex("echo hi\n", 8, h2);
	snprintf(text, sizeof(text), "644 5 %s a/b.py\n755 8 %s run.sh\n", h1, h2);
	sha256_data_hex(text, strlen(text), hex);
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	assert_string_equal(m.sha256, hex);
	runsync_manifest_free(&m);
}

static void the_manifest_hash_ignores_times_and_follows_modes_and_content(void **state)
{
	struct runsync_manifest m;
	char err[CD_ERRLEN], first[65], path[PATH_MAX + 32];

	put("a.py", "1\n", 0644);
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	snprintf(first, sizeof(first), "%s", m.sha256);
	runsync_manifest_free(&m);
	snprintf(path, sizeof(path), "%s/a.py", src);
	sleep(1);
	put("a.py", "1\n", 0644); /* rewritten: a new mtime */
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	assert_string_equal(m.sha256, first);
	runsync_manifest_free(&m);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, &m, err, sizeof(err)), 0);
	assert_string_not_equal(m.sha256, first);
	runsync_manifest_free(&m);
}

static void an_added_file_takes_its_place_and_changes_the_hash(void **state)
{
	struct runsync_manifest m;
	struct runsync_file site = {.rel = "hang/sitecustomize.py",
	                            .mode = 0644,
	                            .len = 7,
	                            .data = (unsigned char *)"import\n"};
	char err[CD_ERRLEN], before[65], got[4096];

	put("a.py", "", 0644);
	put("z.py", "", 0644);
	build_ok(&m);
	snprintf(before, sizeof(before), "%s", m.sha256);
	assert_int_equal(runsync_manifest_add(&m, &site, err, sizeof(err)), 0);
	rels(&m, got, sizeof(got));
	assert_string_equal(got, "a.py hang/sitecustomize.py z.py");
	assert_string_not_equal(m.sha256, before);
	assert_int_equal(m.total_bytes, 7);
	assert_int_equal(runsync_manifest_add(&m, &site, err, sizeof(err)), CD_ERR_PARSE);
	assert_string_equal(err, "the synced directory has a file hang/sitecustomize.py of its "
	                         "own: clusterdoc needs that path; rename it or list it in a "
	                         ".gitignore");
	site.rel = "../escape";
	assert_int_equal(runsync_manifest_add(&m, &site, err, sizeof(err)), CD_ERR_PARSE);
	assert_int_equal(m.n, 3);
	runsync_manifest_free(&m);
}

/* ================================================================ the agent */

/* Put text into the store ($HOME/store) as its own object; its sha into hex. */
static void store_object(const char *text, size_t len, char hex[SHA256_HEX_LEN])
{
	char path[PATH_MAX + 100], err[CD_ERRLEN];

	sha256_data_hex(text, len, hex);
	snprintf(path, sizeof(path), "%s/store/%s", top, hex);
	assert_int_equal(cd_mkdir_parent(path, err, sizeof(err)), 0);
	assert_int_equal(cd_write_file_atomic(path, text, len, 0600, err, sizeof(err)), 0);
}

static json_t *tree_request(const char *manifest_text, const char *dir, const char **code,
                            char *msg)
{
	char hex[SHA256_HEX_LEN];
	json_t *req, *res;

	store_object(manifest_text, strlen(manifest_text), hex);
	req = json_pack("{ssssss}", "store", "~/store", "manifest", hex, "dir", dir);
	res = runsync_agent_tree(req, code, msg, CD_ERRLEN);
	json_decref(req);
	return res;
}

static int fresh_store(void **state)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/store", top);
	rm_rf(path);
	snprintf(path, sizeof(path), "%s/tree", top);
	rm_rf(path);
	return 0;
}

static void sync_tree_refuses_paths_that_could_leave_the_tree(void **state)
{
	static const char *bad[] = {"/etc/passwd", "../x", "a/../../x",        "a/./b", "a//b",
	                            "./a",         "a/",   ".clusterdoc-sync", "a\tb"};
	char h[SHA256_HEX_LEN], text[512], msg[CD_ERRLEN], path[PATH_MAX + 16];
	const char *code;

	store_object("x", 1, h);
	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		snprintf(text, sizeof(text), "644 1 %s %s\n", h, bad[i]);
		code = NULL;
		assert_null(tree_request(text, "~/tree", &code, msg));
		assert_string_equal(code, "bad-request");
		assert_non_null(strstr(msg, "is refused"));
	}
	snprintf(path, sizeof(path), "%s/tree", top);
	assert_int_equal(access(path, F_OK), -1);
}

static void sync_tree_builds_links_without_write_bits_and_keeps_an_identical_tree(void **state)
{
	char a[SHA256_HEX_LEN], text[512], msg[CD_ERRLEN], path[PATH_MAX + 64];
	const char *code;
	struct stat st;
	json_t *res;

	store_object("print(1)\n", 9, a);
	snprintf(text, sizeof(text), "755 9 %s bin/run.py\n644 0 %s empty/__init__.py\n", a,
	         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	res = tree_request(text, "~/tree", &code, msg);
	assert_non_null(res);
	assert_false(json_is_true(json_object_get(res, "kept")));
	assert_int_equal(json_integer_value(json_object_get(res, "linked")), 1);
	assert_int_equal(json_integer_value(json_object_get(res, "copied")), 1);
	json_decref(res);
	snprintf(path, sizeof(path), "%s/tree/bin/run.py", top);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	assert_int_equal(st.st_nlink, 2);
	snprintf(path, sizeof(path), "%s/tree/empty/__init__.py", top);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	res = tree_request(text, "~/tree", &code, msg);
	assert_non_null(res);
	assert_true(json_is_true(json_object_get(res, "kept")));
	json_decref(res);
}

static void sync_tree_never_replaces_an_older_tree_nor_what_a_job_wrote_there(void **state)
{
	char a[SHA256_HEX_LEN], b[SHA256_HEX_LEN], text[512], msg[CD_ERRLEN], path[PATH_MAX + 64];
	const char *code = NULL;
	json_t *res;

	store_object("one\n", 4, a);
	store_object("two\n", 4, b);
	snprintf(text, sizeof(text), "644 4 %s old.txt\n", a);
	res = tree_request(text, "~/tree", &code, msg);
	assert_non_null(res);
	json_decref(res);
	/* the job's output, beside its code */
	snprintf(path, sizeof(path), "%s/tree/out/model.ckpt", top);
	assert_int_equal(cd_mkdir_parent(path, msg, sizeof(msg)), 0);
	assert_int_equal(cd_write_file_atomic(path, "w", 1, 0644, msg, sizeof(msg)), 0);
	snprintf(text, sizeof(text), "644 4 %s new.txt\n", b);
	assert_null(tree_request(text, "~/tree", &code, msg));
	assert_string_equal(code, "exists");
	assert_non_null(strstr(msg, "sync never replaces or removes a directory"));
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/tree/old.txt", top);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/tree/new.txt", top);
	assert_int_equal(access(path, F_OK), -1);
}

static void sync_tree_refuses_a_directory_it_did_not_make(void **state)
{
	char a[SHA256_HEX_LEN], text[512], msg[CD_ERRLEN], path[PATH_MAX + 64];
	const char *code = NULL;

	snprintf(path, sizeof(path), "%s/tree/mine.txt", top);
	assert_int_equal(cd_mkdir_parent(path, msg, sizeof(msg)), 0);
	assert_int_equal(cd_write_file_atomic(path, "x", 1, 0644, msg, sizeof(msg)), 0);
	store_object("one\n", 4, a);
	snprintf(text, sizeof(text), "644 4 %s a.txt\n", a);
	assert_null(tree_request(text, "~/tree", &code, msg));
	assert_string_equal(code, "exists");
	assert_int_equal(access(path, F_OK), 0);
}

static void sync_tree_without_an_object_is_missing_and_leaves_nothing(void **state)
{
	char text[512], msg[CD_ERRLEN], path[PATH_MAX + 64];
	const char *code = NULL;

	snprintf(text, sizeof(text), "644 4 %064d a.txt\n", 7);
	assert_null(tree_request(text, "~/tree", &code, msg));
	assert_string_equal(code, "missing");
	snprintf(path, sizeof(path), "%s/tree", top);
	assert_int_equal(access(path, F_OK), -1);
}

static void sync_missing_names_the_first_file_of_each_absent_object(void **state)
{
	char a[SHA256_HEX_LEN], text[512], hex[SHA256_HEX_LEN], msg[CD_ERRLEN];
	const char *code;
	json_t *req, *res;

	store_object("here\n", 5, a);
	snprintf(text, sizeof(text), "644 5 %s a\n644 4 %064d b\n644 4 %064d c\n644 3 %064d d\n", a,
	         7, 7, 8);
	store_object(text, strlen(text), hex);
	req = json_pack("{ssss}", "store", "~/store", "manifest", hex);
	res = runsync_agent_missing(req, &code, msg, sizeof(msg));
	assert_non_null(res);
	assert_int_equal(json_array_size(json_object_get(res, "missing")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(res, "missing"), 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(res, "missing"), 1)), 3);
	json_decref(res);
	json_decref(req);
}

static void sync_missing_refuses_a_manifest_not_in_the_store(void **state)
{
	char msg[CD_ERRLEN];
	const char *code = NULL;
	json_t *req = json_pack("{ssss}", "store", "~/store", "manifest",
	                        "0000000000000000000000000000000000000000000000000000000000000001");

	assert_null(runsync_agent_missing(req, &code, msg, sizeof(msg)));
	assert_string_equal(code, "missing");
	json_decref(req);
}

/* ================================================================ against an agent
 *
 * runsync_start through the pool's local transport to the built agent
 * (its $HOME is this group's directory): what is sent, what is kept, and
 * that the tree is never seen half made.
 */

/* The built agent: $CLUSTERDOC_AGENT, the one above this test's build
 * directory, or ./clusterdoc-agent; "" when none. */
struct node_run {
	struct loop *loop;
	struct sshpool *pool;
	struct sshpool_node *pn;
	int ready, failed;
	int done, err;
	char msg[CD_ERRLEN];
};

static void on_ready(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	((struct node_run *)arg)->ready = 1;
}

static void on_failed(struct sshpool *pool, struct sshpool_node *node, void *arg)
{
	((struct node_run *)arg)->failed = 1;
}

static const struct sshpool_handlers handlers = {.ready = on_ready, .failed = on_failed};

static void on_synced(void *arg, const struct runsync *s, size_t node, int err, const char *msg)
{
	struct node_run *r = arg;

	r->done++;
	r->err = err;
	snprintf(r->msg, sizeof(r->msg), "%s", msg ? msg : "");
}

static int count_one;
static int count_regular(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	count_one += flag == FTW_F && S_ISREG(st->st_mode);
	return 0;
}

/* Regular files under path, -1 when path does not exist. */
static int files_under(const char *path)
{
	count_one = 0;
	if (access(path, F_OK) < 0)
		return -1;
	nftw(path, count_regular, 16, FTW_PHYS);
	return count_one;
}

/* Sync m to remote (under $HOME) and wait; every turn of the loop, the
 * tree is either absent or whole (want files, the mark among them). */
static struct runsync *sync_now(struct node_run *r, const struct runsync_manifest *m,
                                const char *remote, int want)
{
	char path[PATH_MAX + 64];
	int64_t until = cd_now_ms() + 20000;
	struct runsync *s;
	int seen;

	snprintf(path, sizeof(path), "%s/%s", top, remote + 2);
	r->done = 0;
	s = runsync_start(r->pn, m, remote, 10000, on_synced, r, 0);
	while (!r->done && cd_now_ms() < until) {
		loop_run_once(r->loop, 5);
		seen = files_under(path);
		if (seen != -1 && seen != want && seen != 0)
			fail_msg("%s seen with %d files of %d", path, seen, want);
	}
	assert_int_equal(r->done, 1);
	if (r->err)
		fail_msg("sync failed: %s", r->msg);
	assert_int_equal(files_under(path), want);
	return s;
}

static void node_up(struct node_run *r, const char *agent)
{
	struct sshpool_opts o;
	char err[CD_ERRLEN];
	int64_t until = cd_now_ms() + 20000;

	memset(r, 0, sizeof(*r));
	r->loop = loop_new();
	sshpool_opts_init(&o);
	o.agent_path = agent;
	r->pool = sshpool_new(r->loop, &o, err, sizeof(err));
	assert_non_null(r->pool);
	r->pn = sshpool_add(r->pool, "localhost");
	sshpool_start(r->pool, &handlers, r);
	while (!r->ready && !r->failed && cd_now_ms() < until)
		loop_run_once(r->loop, 100);
	assert_int_equal(r->ready, 1);
}

static void node_down(struct node_run *r)
{
	sshpool_free(r->pool);
	loop_free(r->loop);
}

static void build(struct runsync_manifest *m)
{
	char err[CD_ERRLEN];

	assert_int_equal(runsync_manifest_build(src, RUNSYNC_DEFAULT_CAP, m, err, sizeof(err)), 0);
}

static void agent_gets_every_object_once_then_only_what_changed(void **state)
{
	char agent[PATH_MAX + 32], name[64], text[64], path[PATH_MAX + 64];
	struct runsync_manifest m1, m2;
	struct node_run r;
	struct runsync *s;
	unsigned char *got = NULL;
	size_t len = 0;

	built_agent_path(agent, sizeof(agent));
	if (!agent[0])
		skip(); /* no built clusterdoc-agent: make all first */
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "pkg%d/mod%d.py", i % 7, i);
		snprintf(text, sizeof(text), "x = %d\n", i);
		put(name, text, 0644);
	}
	put("same_a.txt", "same\n", 0644);
	put("same_b.txt", "same\n", 0644); /* one object for two files */
	put("pkg0/__init__.py", "", 0644); /* empty: no object at all */
	put("train.sh", "#!/bin/sh\necho go\n", 0755);
	put(".gitignore", "*.ckpt\n", 0644);
	put("big.ckpt", "never sent\n", 0644);
	build(&m1);
	assert_int_equal(m1.n, 205);
	node_up(&r, agent);

	/* 205 files, less the duplicate and the empty one */
	s = sync_now(&r, &m1, "~/runs/r1", 206);
	assert_int_equal(runsync_files_sent(s), 203);
	assert_true(runsync_bytes_sent(s) > 0);
	assert_false(runsync_kept(s));
	runsync_free(s);

	s = sync_now(&r, &m1, "~/runs/r1", 206);
	assert_int_equal(runsync_files_sent(s), 0);
	assert_int_equal(runsync_bytes_sent(s), 0);
	assert_true(runsync_kept(s));
	runsync_free(s);

	/* another directory of the same node: the store already has it all */
	s = sync_now(&r, &m1, "~/runs/r2", 206);
	assert_int_equal(runsync_files_sent(s), 0);
	assert_false(runsync_kept(s));
	runsync_free(s);

	put("pkg3/mod3.py", "x = 'changed'\n", 0644);
	build(&m2);
	s = sync_now(&r, &m2, "~/runs/r3", 206);
	assert_int_equal(runsync_files_sent(s), 1);
	runsync_free(s);
	snprintf(path, sizeof(path), "%s/runs/r3/pkg3/mod3.py", top);
	assert_int_equal(cd_read_file(path, 1024, &got, &len, text, sizeof(text)), 0);
	assert_string_equal((char *)got, "x = 'changed'\n");
	free(got);
	snprintf(path, sizeof(path), "%s/runs/r3/train.sh", top);
	assert_int_equal(access(path, X_OK), 0);
	/* the earlier trees are as they were; nothing but the three is left */
	snprintf(path, sizeof(path), "%s/runs/r1/pkg3/mod3.py", top);
	assert_int_equal(cd_read_file(path, 1024, &got, &len, text, sizeof(text)), 0);
	assert_string_equal((char *)got, "x = 3\n");
	free(got);
	snprintf(path, sizeof(path), "%s/runs", top);
	assert_int_equal(files_under(path), 3 * 206);

	node_down(&r);
	runsync_manifest_free(&m1);
	runsync_manifest_free(&m2);
}

static void agent_refuses_to_replace_a_users_directory_naming_host_and_dir(void **state)
{
	char agent[PATH_MAX + 32], path[PATH_MAX + 64], want[PATH_MAX + 200], err[CD_ERRLEN];
	struct runsync_manifest m;
	struct node_run r;
	struct runsync *s;
	int64_t until;

	built_agent_path(agent, sizeof(agent));
	if (!agent[0])
		skip();
	put("a.py", "pass\n", 0644);
	build(&m);
	snprintf(path, sizeof(path), "%s/mine/notes.txt", top);
	assert_int_equal(cd_mkdir_parent(path, err, sizeof(err)), 0);
	assert_int_equal(cd_write_file_atomic(path, "x", 1, 0644, err, sizeof(err)), 0);
	node_up(&r, agent);
	s = runsync_start(r.pn, &m, "~/mine", 10000, on_synced, &r, 0);
	for (until = cd_now_ms() + 20000; !r.done && cd_now_ms() < until;)
		loop_run_once(r.loop, 50);
	assert_int_equal(r.done, 1);
	assert_int_equal(r.err, CD_ERR_REFUSED);
	snprintf(want, sizeof(want),
	         "localhost: making the tree: %s/mine exists and is not this run's tree: sync "
	         "never replaces or removes a directory, choose another --remote-dir or remove "
	         "it (exists)",
	         top);
	assert_string_equal(r.msg, want);
	assert_int_equal(access(path, F_OK), 0);
	runsync_free(s);
	node_down(&r);
	runsync_manifest_free(&m);
}

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/cd-runsync-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	snprintf(top, sizeof(top), "%s", tmpl);
	snprintf(src, sizeof(src), "%s/src", top);
	setenv("HOME", top, 1);
	return 0;
}

static int group_teardown(void **state)
{
	rm_rf(top);
	return 0;
}

#define S(t) cmocka_unit_test_setup(t, fresh_src)
#define A(t) cmocka_unit_test_setup(t, fresh_store)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    S(star_pattern_ignores_matching_names_at_any_depth),
	    S(negation_re_includes_a_file_a_later_pattern_names),
	    S(trailing_slash_matches_directories_only),
	    S(leading_slash_anchors_to_the_gitignores_directory),
	    S(double_star_matches_across_directories),
	    S(question_mark_and_class_match_one_character),
	    S(a_subdirectory_gitignore_applies_below_it_only),
	    S(a_deeper_gitignore_overrides_a_higher_one),
	    S(a_file_in_an_ignored_directory_cannot_be_re_included),
	    S(comments_blank_lines_and_trailing_spaces_are_not_patterns),
	    S(the_git_directory_is_never_synced),
	    S(a_tree_over_the_cap_is_refused_naming_sizes_and_the_fix),
	    S(a_tree_of_exactly_the_cap_is_accepted),
	    S(a_symlink_leaving_the_tree_is_refused_naming_it),
	    S(an_ignored_symlink_leaving_the_tree_is_not_looked_at),
	    S(a_symlink_inside_the_tree_is_followed),
	    S(a_symlink_loop_is_refused),
	    S(a_dangling_symlink_is_refused_naming_it),
	    S(the_manifest_hash_is_that_of_the_documented_text),
	    S(the_manifest_hash_ignores_times_and_follows_modes_and_content),
	    S(an_added_file_takes_its_place_and_changes_the_hash),
	    A(sync_tree_refuses_paths_that_could_leave_the_tree),
	    A(sync_tree_builds_links_without_write_bits_and_keeps_an_identical_tree),
	    A(sync_tree_never_replaces_an_older_tree_nor_what_a_job_wrote_there),
	    A(sync_tree_refuses_a_directory_it_did_not_make),
	    A(sync_tree_without_an_object_is_missing_and_leaves_nothing),
	    A(sync_missing_names_the_first_file_of_each_absent_object),
	    A(sync_missing_refuses_a_manifest_not_in_the_store),
	    S(agent_gets_every_object_once_then_only_what_changed),
	    S(agent_refuses_to_replace_a_users_directory_naming_host_and_dir),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
