/* SPDX-License-Identifier: MIT */
/*
 * test_sshkey.c - the ssh-key fixer's head side and plan (fixers/fix_sshkey.h)
 * and asking for a password (core/secret.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "fixers/fix.h"
#include "fixers/fix_sshkey.h"
#include "probes/diagnose.h"
#include "probes/netmodel.h"
#include "secret.h"

/* A real ed25519 public key (ssh-keygen output) and its ssh-keygen -l fingerprint. */
#define ED_LINE \
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAZkZSf5NS08aiP5abz8gFOyn5wFviVxpJ86dkyuqofA me@head"
#define ED_BLOB "AAAAC3NzaC1lZDI1NTE5AAAAIAZkZSf5NS08aiP5abz8gFOyn5wFviVxpJ86dkyuqofA"

static char tmpdir[64];

static int make_tmp(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cd-sshkey.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmp(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the fingerprint as ssh-keygen computes it, for comparison */
static void keygen_fp(const char *pubpath, char *fp, size_t len)
{
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ssh-keygen -lf '%s' | awk '{print $2}'", pubpath);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(fp, (int)len, p));
	fp[strcspn(fp, "\n")] = '\0';
	pclose(p);
}

/* ---------------------------------------------------------------- pubkey_parse */

static void pubkey_parse_gives_type_and_the_keygen_fingerprint(void **state)
{
	char type[32], fp[64], want[64], path[128];

	snprintf(path, sizeof(path), "%s/k.pub", tmpdir);
	write_file(path, ED_LINE "\n");
	keygen_fp(path, want, sizeof(want));
	assert_int_equal(pubkey_parse(ED_LINE, strlen(ED_LINE), type, fp), 0);
	assert_string_equal(type, "ssh-ed25519");
	assert_string_equal(fp, want);
}

static void pubkey_parse_refuses_unknown_types_and_mismatched_blobs(void **state)
{
	char type[32], fp[64];
	const char *bad[] = {
	    "ssh-foo " ED_BLOB,
	    "ssh-rsa " ED_BLOB, /* the blob names ssh-ed25519 */
	    "ssh-ed25519",      /* no blob */
	    "ssh-ed25519 !!!!", /* not base64 */
	    "ssh-ed25519 AAAA", /* too short to hold a type */
	    "",
	};

	for (size_t k = 0; k < CD_ARRAY_LEN(bad); k++)
		assert_int_equal(pubkey_parse(bad[k], strlen(bad[k]), type, fp), CD_ERR_PARSE);
}

/* ---------------------------------------------------------------- authorized_keys_has */

static void authorized_keys_has_finds_the_key_with_or_without_options(void **state)
{
	const char *plain = "ssh-rsa AAAAB3Nza other\n"
	                    "ssh-ed25519 " ED_BLOB " someone else\n";
	const char *opts = "from=\"10.0.0.0/8\",no-pty ssh-ed25519 " ED_BLOB "\n";
	const char *tabs = "\tssh-ed25519\t" ED_BLOB;

	assert_int_equal(authorized_keys_has(plain, strlen(plain), ED_LINE), 1);
	assert_int_equal(authorized_keys_has(opts, strlen(opts), ED_LINE), 1);
	assert_int_equal(authorized_keys_has(tabs, strlen(tabs), ED_LINE), 1);
}

static void authorized_keys_has_ignores_comments_prefixes_and_other_types(void **state)
{
	const char *commented = "# ssh-ed25519 " ED_BLOB "\n";
	const char *prefix = "ssh-ed25519 " ED_BLOB "x\n";       /* a longer blob */
	const char *other = "ecdsa-sha2-nistp256 " ED_BLOB "\n"; /* not as TYPE BLOB */
	const char *blob_only = ED_BLOB "\n";

	assert_int_equal(authorized_keys_has(commented, strlen(commented), ED_LINE), 0);
	assert_int_equal(authorized_keys_has(prefix, strlen(prefix), ED_LINE), 0);
	assert_int_equal(authorized_keys_has(other, strlen(other), ED_LINE), 0);
	assert_int_equal(authorized_keys_has(blob_only, strlen(blob_only), ED_LINE), 0);
	assert_int_equal(authorized_keys_has("", 0, ED_LINE), 0);
}

/* ---------------------------------------------------------------- head key */

static void head_key_find_takes_the_first_pair_that_exists(void **state)
{
	char a[128], b[128], bpub[140], *files[2] = {a, b}, err[CD_ERRLEN];
	struct head_key k;

	snprintf(a, sizeof(a), "%s/id_a", tmpdir); /* private key only: passed over */
	snprintf(b, sizeof(b), "%s/id_b", tmpdir);
	snprintf(bpub, sizeof(bpub), "%s.pub", b);
	write_file(a, "private\n");
	write_file(b, "private\n");
	write_file(bpub, ED_LINE "\n");
	assert_int_equal(head_key_find(files, 2, "/nonexistent", &k, err, sizeof(err)), 0);
	assert_true(k.exists);
	assert_string_equal(k.path, b);
	assert_string_equal(k.publine, ED_LINE);
	assert_string_equal(k.type, "ssh-ed25519");
	head_key_fini(&k);
}

static void head_key_find_without_a_key_names_where_to_create_one(void **state)
{
	char a[128], *files[1] = {a}, err[CD_ERRLEN];
	struct head_key k;

	snprintf(a, sizeof(a), "%s/missing", tmpdir);
	assert_int_equal(head_key_find(files, 1, "/home/x", &k, err, sizeof(err)), 0);
	assert_false(k.exists);
	assert_string_equal(k.path, a);
	assert_null(k.publine);
	assert_int_equal(head_key_find(NULL, 0, "/home/x", &k, err, sizeof(err)), 0);
	assert_string_equal(k.path, "/home/x/.ssh/id_ed25519");
}

static void head_key_find_names_a_public_half_that_does_not_parse(void **state)
{
	char a[128], apub[140], *files[1] = {a}, err[CD_ERRLEN], want[300];
	struct head_key k;

	snprintf(a, sizeof(a), "%s/id_broken", tmpdir);
	snprintf(apub, sizeof(apub), "%s.pub", a);
	write_file(a, "private\n");
	write_file(apub, "not a key\n");
	assert_int_equal(head_key_find(files, 1, NULL, &k, err, sizeof(err)), CD_ERR_PARSE);
	snprintf(want, sizeof(want),
	         "%s is not a public key (\"TYPE BASE64 COMMENT\" on its first line)", apub);
	assert_string_equal(err, want);
}

static void head_key_create_makes_an_ed25519_key_and_never_overwrites(void **state)
{
	char path[128], pub[140], want[64], err[CD_ERRLEN];
	struct head_key k = {0};
	struct stat st;

	snprintf(path, sizeof(path), "%s/newdir/id_ed25519", tmpdir);
	snprintf(pub, sizeof(pub), "%s.pub", path);
	snprintf(k.path, sizeof(k.path), "%s", path);
	assert_int_equal(head_key_create(&k, "clusterdoc@test", err, sizeof(err)), 0);
	assert_true(k.exists);
	assert_string_equal(k.type, "ssh-ed25519");
	keygen_fp(pub, want, sizeof(want));
	assert_string_equal(k.fp, want);
	assert_non_null(strstr(k.publine, " clusterdoc@test"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	head_key_fini(&k);

	assert_int_equal(head_key_create(&k, "again", err, sizeof(err)), CD_ERR_IO);
	assert_non_null(strstr(err, "already exists; it is left as is"));
	keygen_fp(pub, k.fp, sizeof(k.fp));
	assert_string_equal(k.fp, want);
}

/* ---------------------------------------------------------------- the plan */

struct plan_fx {
	struct netmodel *m;
	struct diagnosis *d;
	struct fix_node_state st[2];
	int login[2];
};

/* node1 refused the keys (gathered by password), node2 answered the check */
static void plan_fx_init(struct plan_fx *f, const char *authorized)
{
	const char *hosts[] = {"node1", "node2"};

	f->m = netmodel_new(hosts, 2);
	netmodel_node_failed(f->m, 0, "auth", "node1: authentication as root failed");
	f->d = diagnose(f->m);
	for (int i = 0; i < 2; i++) {
		struct fix_file_state *fs;

		fix_node_state_init(&f->st[i]);
		f->st[i].gathered = i == 0;
		snprintf(f->st[i].user, sizeof(f->st[i].user), "root");
		fs = fix_state_add_file(&f->st[i], FIX_AUTHORIZED_KEYS);
		fs->read = 1;
		fs->exists = authorized != NULL;
		fs->data = authorized ? cd_strdup(authorized) : NULL;
		fs->len = authorized ? strlen(authorized) : 0;
		fs->mode = 0600;
	}
	f->login[0] = 1;
	f->login[1] = 0;
}

static void plan_fx_fini(struct plan_fx *f)
{
	for (int i = 0; i < 2; i++)
		fix_node_state_fini(&f->st[i]);
	diagnosis_free(f->d);
	netmodel_free(f->m);
}

static void plan_adds_a_block_with_the_key_to_a_login_node_only(void **state)
{
	struct plan_fx f;
	struct fix_opts o = {.only = "ssh-key", .head_pubkey = ED_LINE};
	struct fix_plan *p;
	char err[CD_ERRLEN];
	const char *before = "ssh-rsa AAAAB3Nza other\n";

	plan_fx_init(&f, before);
	o.login = f.login;
	p = fix_plan_build(f.m, f.d, f.st, &o, "20261121-120000-abcd", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nodes[0].nactions, 1);
	assert_int_equal(p->nodes[1].nactions, 0);
	assert_string_equal(p->nodes[0].actions[0].fixer, "ssh-key");
	assert_string_equal(p->nodes[0].actions[0].path, "~/.ssh/authorized_keys");
	assert_int_equal(p->nodes[0].actions[0].sudo, 0);
	assert_string_equal(p->nodes[0].actions[0].after,
	                    "ssh-rsa AAAAB3Nza other\n"
	                    "# >>> clusterdoc ssh-key >>>\n" ED_LINE "\n"
	                    "# <<< clusterdoc ssh-key <<<\n");
	assert_non_null(
	    strstr(p->nodes[0].actions[0].summary, "authorize the head's key ssh-ed25519 SHA256:"));
	fix_plan_free(p);
	plan_fx_fini(&f);
}

static void plan_creates_authorized_keys_0600_when_absent(void **state)
{
	struct plan_fx f;
	struct fix_opts o = {.only = "ssh-key", .head_pubkey = ED_LINE};
	struct fix_plan *p;
	char err[CD_ERRLEN];

	plan_fx_init(&f, NULL);
	o.login = f.login;
	p = fix_plan_build(f.m, f.d, f.st, &o, "20261121-120000-abcd", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nodes[0].nactions, 1);
	assert_int_equal(p->nodes[0].actions[0].before_exists, 0);
	assert_int_equal(p->nodes[0].actions[0].mode, 0600);
	fix_plan_free(p);
	plan_fx_fini(&f);
}

static void plan_changes_nothing_when_the_key_is_already_there(void **state)
{
	struct plan_fx f;
	struct fix_opts o = {.only = "ssh-key", .head_pubkey = ED_LINE};
	struct fix_plan *p;
	char err[CD_ERRLEN];

	plan_fx_init(&f, "no-pty ssh-ed25519 " ED_BLOB " added by hand\n");
	o.login = f.login;
	p = fix_plan_build(f.m, f.d, f.st, &o, "20261121-120000-abcd", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nactions, 0);
	assert_int_equal(p->nodes[0].nnotes, 1);
	assert_non_null(strstr(p->nodes[0].notes[0], "already holds the head's key SHA256:"));
	fix_plan_free(p);
	plan_fx_fini(&f);
}

static void plan_of_an_unchecked_node_without_login_is_only_a_note(void **state)
{
	struct plan_fx f;
	struct fix_opts o = {.head_pubkey = ED_LINE}; /* default fixers, nobody to log in to */
	struct fix_plan *p;
	char err[CD_ERRLEN];

	plan_fx_init(&f, NULL);
	p = fix_plan_build(f.m, f.d, f.st, &o, "20261121-120000-abcd", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nactions, 0);
	assert_string_equal(p->nodes[0].notes[0],
	                    "not checked: node1: authentication as root failed");
	fix_plan_free(p);
	plan_fx_fini(&f);
}

/* ---------------------------------------------------------------- secret_ask */

static void askpass(const char *body)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/askpass", tmpdir);
	write_file(path, body);
	assert_int_equal(chmod(path, 0700), 0);
	setenv("SSH_ASKPASS", path, 1);
	setenv("SSH_ASKPASS_REQUIRE", "force", 1);
}

static void secret_from_askpass_is_its_first_line_and_the_prompt_is_its_argument(void **state)
{
	char pw[64], err[CD_ERRLEN], seen[128], path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/prompt", tmpdir);
	{
		char body[400];

		snprintf(body, sizeof(body),
		         "#!/bin/sh\nprintf '%%s' \"$1\" >'%s'\nprintf 'pa ss\\nsecond\\n'\n",
		         path);
		askpass(body);
	}
	assert_int_equal(
	    secret_ask("Password for root on node1: ", pw, sizeof(pw), err, sizeof(err)), 0);
	assert_string_equal(pw, "pa ss");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(seen, sizeof(seen), f));
	fclose(f);
	assert_string_equal(seen, "Password for root on node1: ");
}

static void secret_from_askpass_refuses_empty_failed_and_too_long_answers(void **state)
{
	char pw[8], err[CD_ERRLEN];

	askpass("#!/bin/sh\necho\n");
	assert_int_equal(secret_ask("p: ", pw, sizeof(pw), err, sizeof(err)), CD_ERR_IO);
	assert_string_equal(err, "SSH_ASKPASS program gave an empty password");
	askpass("#!/bin/sh\nexit 3\n");
	assert_int_equal(secret_ask("p: ", pw, sizeof(pw), err, sizeof(err)), CD_ERR_IO);
	assert_non_null(strstr(err, "gave no password (it exited with status 3)"));
	askpass("#!/bin/sh\necho 12345678\n");
	assert_int_equal(secret_ask("p: ", pw, sizeof(pw), err, sizeof(err)), CD_ERR_TOOBIG);
	for (size_t k = 0; k < sizeof(pw); k++)
		assert_int_equal(pw[k], 0); /* wiped */
}

static void secret_without_terminal_or_askpass_says_what_to_do(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		char pw[16], err[CD_ERRLEN];

		setsid(); /* no controlling terminal */
		unsetenv("SSH_ASKPASS");
		unsetenv("SSH_ASKPASS_REQUIRE");
		_exit(secret_ask("p: ", pw, sizeof(pw), err, sizeof(err)) == CD_ERR_UNSUPPORTED &&
		              strstr(err, "no terminal to ask on: run on a terminal, or set "
		                          "SSH_ASKPASS")
		          ? 0
		          : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pubkey_parse_gives_type_and_the_keygen_fingerprint),
	    cmocka_unit_test(pubkey_parse_refuses_unknown_types_and_mismatched_blobs),
	    cmocka_unit_test(authorized_keys_has_finds_the_key_with_or_without_options),
	    cmocka_unit_test(authorized_keys_has_ignores_comments_prefixes_and_other_types),
	    cmocka_unit_test(head_key_find_takes_the_first_pair_that_exists),
	    cmocka_unit_test(head_key_find_without_a_key_names_where_to_create_one),
	    cmocka_unit_test(head_key_find_names_a_public_half_that_does_not_parse),
	    cmocka_unit_test(head_key_create_makes_an_ed25519_key_and_never_overwrites),
	    cmocka_unit_test(plan_adds_a_block_with_the_key_to_a_login_node_only),
	    cmocka_unit_test(plan_creates_authorized_keys_0600_when_absent),
	    cmocka_unit_test(plan_changes_nothing_when_the_key_is_already_there),
	    cmocka_unit_test(plan_of_an_unchecked_node_without_login_is_only_a_note),
	    cmocka_unit_test(secret_from_askpass_is_its_first_line_and_the_prompt_is_its_argument),
	    cmocka_unit_test(secret_from_askpass_refuses_empty_failed_and_too_long_answers),
	    cmocka_unit_test(secret_without_terminal_or_askpass_says_what_to_do),
	};

	return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
