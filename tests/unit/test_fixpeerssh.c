/* SPDX-License-Identifier: MIT */
/* test_fixpeerssh.c - the peer-ssh fixer's plan (fixers/fix_peerssh.h):
 * what it writes into each of the login user's ~/.ssh files, what it leaves
 * alone, and the host key lines it takes from the head's known_hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "fixers/fix.h"
#include "fixers/fix_peerssh.h"

#define PUB "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvlZeLrhUf4E33M4w731ubYkiFCmJOxBzQZUZnEJj46"
#define FP  "SHA256:6sxDsmYHMiXOjxRLXVw76UQS5Wf3bF8SqzHzXd+UTb8"
#define PRIV \
	"-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real one\n-----END OPENSSH PRIVATE KEY-----\n"
#define HKEY1 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvlZeLrhUf4E33M4w731ubYkiFCmJOxBzQZUZnEJj46"

static const char *const hosts[] = {"node1", "node2"};

/* Node states as a gather of empty homes leaves them. */
static void empty_states(struct fix_node_state st[2])
{
	static const char *const paths[] = {FIX_AUTHORIZED_KEYS, FIX_KNOWN_HOSTS, FIX_SSH_CONFIG,
	                                    FIX_PEERSSH_KEY};

	for (int i = 0; i < 2; i++) {
		fix_node_state_init(&st[i]);
		st[i].gathered = 1;
		for (size_t k = 0; k < CD_ARRAY_LEN(paths); k++)
			fix_state_add_file(&st[i], paths[k])->read = 1;
	}
}

static int has_action(const struct fix_node_plan *np, const char *path)
{
	for (size_t k = 0; k < np->nactions; k++)
		if (np->actions[k].path && strcmp(np->actions[k].path, path) == 0)
			return 1;
	return 0;
}

/* The action on path; the test fails when there is none. */
static const struct fix_action *action_on(const struct fix_node_plan *np, const char *path)
{
	static const struct fix_action none = {.path = "", .after = "", .summary = ""};

	for (size_t k = 0; k < np->nactions; k++)
		if (np->actions[k].path && strcmp(np->actions[k].path, path) == 0)
			return &np->actions[k];
	fail_msg("no action on %s", path);
	return &none;
}

static void empty_homes_get_all_four_files(void **state)
{
	struct fix_node_state st[2];
	char *keys[2] = {HKEY1, NULL};
	struct fix_peerssh_input in = {.hosts = hosts,
	                               .n = 2,
	                               .publine = PUB " c",
	                               .privkey = PRIV,
	                               .privlen = strlen(PRIV),
	                               .hostkeys = keys,
	                               .states = st};
	struct fix_plan *p;
	const struct fix_action *a;

	empty_states(st);
	p = fix_peerssh_plan(&in, "20261127-000000-abcd");
	assert_int_equal(p->nodes[0].nactions, 4);
	assert_int_equal(p->nactions, 8);
	a = action_on(&p->nodes[0], FIX_AUTHORIZED_KEYS);
	assert_string_equal(a->after, "# >>> clusterdoc clusterdoc-mpi >>>\n" PUB " c\n"
	                              "# <<< clusterdoc clusterdoc-mpi <<<\n");
	assert_int_equal(a->mode, 0600);
	assert_int_equal(a->sudo, 0);
	a = action_on(&p->nodes[1], FIX_PEERSSH_KEY);
	assert_memory_equal(a->after, PRIV, strlen(PRIV));
	assert_int_equal(a->mode, 0600);
	a = action_on(&p->nodes[1], FIX_SSH_CONFIG);
	assert_string_equal(a->after,
	                    "# >>> clusterdoc clusterdoc-mpi >>>\n"
	                    "Host node1 node2\n    IdentityFile ~/.ssh/id_clusterdoc_mpi\n"
	                    "# <<< clusterdoc clusterdoc-mpi <<<\n");
	a = action_on(&p->nodes[1], FIX_KNOWN_HOSTS);
	assert_string_equal(a->after, "# >>> clusterdoc clusterdoc-mpi >>>\nnode1 " HKEY1 "\n"
	                              "# <<< clusterdoc clusterdoc-mpi <<<\n");
	/* node2's host key was not verified: a note says so */
	assert_int_equal(p->nodes[1].nnotes, 1);
	assert_string_equal(
	    p->nodes[1].notes[0],
	    "peer-ssh: node2's host key is not recorded: the head did not verify it");
	fix_plan_free(p);
	for (int i = 0; i < 2; i++)
		fix_node_state_fini(&st[i]);
}

static void another_key_at_the_key_path_is_left_alone(void **state)
{
	struct fix_node_state st[2];
	struct fix_peerssh_input in = {.hosts = hosts,
	                               .n = 2,
	                               .publine = PUB,
	                               .privkey = PRIV,
	                               .privlen = strlen(PRIV),
	                               .states = st};
	struct fix_file_state *f;
	struct fix_plan *p;

	empty_states(st);
	f = (struct fix_file_state *)fix_state_file(&st[0], FIX_PEERSSH_KEY);
	f->exists = 1;
	f->data = cd_strdup("someone else's key\n");
	f->len = strlen(f->data);
	p = fix_peerssh_plan(&in, "r");
	assert_false(has_action(&p->nodes[0], FIX_PEERSSH_KEY));
	assert_string_equal(p->nodes[0].notes[0],
	                    "peer-ssh: ~/.ssh/id_clusterdoc_mpi left as is: it holds another key; "
	                    "remove it to have it replaced");
	assert_true(has_action(&p->nodes[1], FIX_PEERSSH_KEY));
	fix_plan_free(p);
	for (int i = 0; i < 2; i++)
		fix_node_state_fini(&st[i]);
}

static void a_node_already_set_up_gets_nothing(void **state)
{
	struct fix_node_state st[2];
	char *keys[2] = {HKEY1, HKEY1};
	struct fix_peerssh_input in = {.hosts = hosts,
	                               .n = 2,
	                               .publine = PUB,
	                               .privkey = PRIV,
	                               .privlen = strlen(PRIV),
	                               .hostkeys = keys,
	                               .states = st};
	struct fix_plan *p = NULL;

	empty_states(st);
	p = fix_peerssh_plan(&in, "r");
	/* the nodes as the first plan leaves them */
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; k < p->nodes[i].nactions; k++) {
			const struct fix_action *a = &p->nodes[i].actions[k];
			struct fix_file_state *f =
			    (struct fix_file_state *)fix_state_file(&st[i], a->path);

			f->exists = 1;
			f->data = cd_strndup(a->after, a->after_len);
			f->len = a->after_len;
		}
	fix_plan_free(p);
	p = fix_peerssh_plan(&in, "r2");
	assert_int_equal(p->nactions, 0);
	fix_plan_free(p);
	for (int i = 0; i < 2; i++)
		fix_node_state_fini(&st[i]);
}

static void a_dry_run_without_the_key_notes_authorized_keys(void **state)
{
	struct fix_node_state st[2];
	struct fix_peerssh_input in = {.hosts = hosts, .n = 2, .states = st};
	struct fix_plan *p;

	empty_states(st);
	st[1].gathered = 0;
	snprintf(st[1].error, sizeof(st[1].error), "node2: refused");
	p = fix_peerssh_plan(&in, "r");
	assert_false(has_action(&p->nodes[0], FIX_AUTHORIZED_KEYS));
	assert_true(has_action(&p->nodes[0], FIX_PEERSSH_KEY));
	assert_string_equal(
	    p->nodes[0].notes[0],
	    "peer-ssh: the cluster key is made on --apply; its public key then goes "
	    "into ~/.ssh/authorized_keys");
	assert_int_equal(p->nodes[1].nactions, 0);
	assert_string_equal(p->nodes[1].notes[0], "peer-ssh: not gathered: node2: refused");
	fix_plan_free(p);
	for (int i = 0; i < 2; i++)
		fix_node_state_fini(&st[i]);
}

static void host_key_is_the_line_with_the_verified_fingerprint(void **state)
{
	char path[] = "/tmp/test_fixpeerssh.XXXXXX";
	int fd = mkstemp(path);
	const char *files[] = {path};
	const char *text = "# comment\n"
	                   "node2 ssh-ed25519 "
	                   "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C7okWi33NvUWK0mc\n"
	                   "@revoked node1 " HKEY1 "\n"
	                   "node1,10.0.0.11 " HKEY1 " comment\n";
	char *k;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	k = fix_peerssh_hostkey(files, 1, "NODE1", FP);
	assert_non_null(k);
	assert_string_equal(k, HKEY1);
	free(k);
	assert_null(fix_peerssh_hostkey(files, 1, "node2", FP));
	assert_null(fix_peerssh_hostkey(files, 1, "node3", FP));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(empty_homes_get_all_four_files),
	    cmocka_unit_test(another_key_at_the_key_path_is_left_alone),
	    cmocka_unit_test(a_node_already_set_up_gets_nothing),
	    cmocka_unit_test(a_dry_run_without_the_key_notes_authorized_keys),
	    cmocka_unit_test(host_key_is_the_line_with_the_verified_fingerprint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
