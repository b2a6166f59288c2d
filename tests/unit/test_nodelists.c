/* SPDX-License-Identifier: MIT */
/* test_nodelists.c - the node lists users already have: host files with
 * slots (core/hostfile.h), genders files (core/genders.h), ClusterShell's
 * groups.conf and groups.d (core/csgroups.h) and "@group" in host lists
 * (core/nodegroup.h), each table-driven: input, then the hosts (folded) or
 * the exact error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd.h"
#include "csgroups.h"
#include "genders.h"
#include "hostfile.h"
#include "hostlist.h"
#include "nodegroup.h"

/* ---------------------------------------------------------------- host files */

struct hostfile_case {
	const char *name, *text;
	const char *hosts; /* folded, or NULL for an error */
	const char *slots; /* "host=N host=N" of every host with slots, or the error */
};

static const struct hostfile_case hostfile_cases[] = {
    {"plain lines are hostlists", "n[1-3]\n# comment\n\nn5 n6, n7\n", "n[1-3,5-7]", ""},
    {"open mpi slots", "n1 slots=8\nn2 slots=4 max_slots=8 # tail\n", "n[1-2]", "n1=8 n2=4"},
    {"deepspeed slots and max-slots spelling", "w1 slots=2\nw2 max-slots=3 slots=2\n", "w[1-2]",
     "w1=2 w2=2"},
    {"mpich host:N", "h1:8\nh2:2\r\n", "h[1-2]", "h1=8 h2=2"},
    {"a hostlist with slots gives each host the slots", "n[1-2] slots=3\n", "n[1-2]", "n1=3 n2=3"},
    {"slots mixed with plain lines", "n1 slots=2\nn2\n", "n[1-2]", "n1=2"},
    {"a malformed slots value", "n1 slots=8\nn2 slots=eight\n", NULL,
     "f:2: \"slots=eight\": slots takes a whole number from 1 to 1024"},
    {"an empty slots value", "n1 slots=\n", NULL,
     "f:1: \"slots=\": slots takes a whole number from 1 to 1024"},
    {"zero slots", "n1 slots=0\n", NULL,
     "f:1: \"slots=0\": slots takes a whole number from 1 to 1024"},
    {"too many slots", "n1 slots=4096\n", NULL,
     "f:1: \"slots=4096\": slots takes a whole number from 1 to 1024"},
    {"an unknown key", "n1 gpus=8\n", NULL,
     "f:1: \"gpus=8\": unknown key; a host file line takes slots=N and max_slots=N (N from 1 "
     "to 1024)"},
    {"a word after the slots", "n1 slots=2 n2\n", NULL,
     "f:1: \"n2\": after the host, a line takes only key=value words: slots=N and max_slots=N "
     "(N from 1 to 1024)"},
    {"slots with no host", "slots=8\n", NULL,
     "f:1: \"slots=8\": a key=value with no host before it"},
    {"slots above max_slots", "n1 slots=8 max_slots=4\n", NULL,
     "f:1: \"slots=8\": slots is more than max_slots"},
    {"slots given twice on a line", "n1 slots=2 slots=3\n", NULL,
     "f:1: \"slots=3\": slots is given twice on this line"},
    {"a host given slots twice", "n1 slots=2\nn1 slots=2\n", NULL,
     "f:2: \"n1\": n1 already has slots (line 1)"},
    {"a malformed host:N", "n1:x\n", NULL,
     "f:1: \"n1:x\": host:N takes a whole number N from 1 to 1024"},
    {"a bad host on a slots line", "n[2-1] slots=2\n", NULL,
     "f:1: hostlist \"n[2-1]\": range 2-1 goes backwards (at column 3)"},
    {"a NUL byte", "n1\nn\0002\n", NULL, "f:2: a NUL byte at column 2 (not a text file?)"},
};

/* "host=N host=N" of s, sorted by name. */
static void slots_text(const struct hostslots *s, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->count && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s=%d", i ? " " : "", s->names[i],
		                      s->slots[i]);
}

static void hostfile_parses_each_case(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(hostfile_cases); i++) {
		const struct hostfile_case *c = &hostfile_cases[i];
		struct hostlist *hl = hostlist_new();
		struct hostslots s;
		char err[CD_ERRLEN] = "", got[256], *folded;
		size_t len = strlen(c->text);
		int rc;

		if (strcmp(c->name, "a NUL byte") == 0)
			len = 7;
		hostslots_init(&s);
		rc = hostfile_parse(hl, &s, c->text, len, "f", err, sizeof(err));
		print_message("%s\n", c->name);
		if (!c->hosts) {
			assert_int_equal(rc, CD_ERR_PARSE);
			assert_string_equal(err, c->slots);
			assert_int_equal(hl->count, 0);
			assert_int_equal(s.count, 0);
		} else {
			assert_int_equal(rc, 0);
			folded = hostlist_fold(hl);
			assert_string_equal(folded, c->hosts);
			free(folded);
			slots_text(&s, got, sizeof(got));
			assert_string_equal(got, c->slots);
		}
		hostslots_fini(&s);
		hostlist_free(hl);
	}
}

static void hostslots_common_says_which_hosts_differ(void **state)
{
	struct hostlist *hl = hostlist_new();
	struct hostslots s;
	char err[CD_ERRLEN] = "";
	static const char same[] = "n1 slots=8\nn2:8\n", differ[] = "n3 slots=4\n", none[] = "n4\n";

	hostslots_init(&s);
	assert_int_equal(hostfile_parse(hl, &s, same, strlen(same), "f", err, sizeof(err)), 0);
	assert_int_equal(hostslots_common(&s, hl, err, sizeof(err)), 8);
	assert_int_equal(hostslots_get(&s, "n2"), 8);
	assert_int_equal(hostslots_get(&s, "n9"), 0);
	assert_int_equal(hostfile_parse(hl, &s, differ, strlen(differ), "g", err, sizeof(err)), 0);
	assert_int_equal(hostslots_common(&s, hl, err, sizeof(err)), -1);
	assert_string_equal(err, "n1 has 8 slots, n3 has 4");
	hostslots_fini(&s);
	hostlist_free(hl);
	hl = hostlist_new();
	hostslots_init(&s);
	assert_int_equal(hostfile_parse(hl, &s, same, strlen(same), "f", err, sizeof(err)), 0);
	assert_int_equal(hostfile_parse(hl, &s, none, strlen(none), "h", err, sizeof(err)), 0);
	assert_int_equal(hostslots_common(&s, hl, err, sizeof(err)), -1);
	assert_string_equal(err, "n1 has slots, n4 has none");
	hostslots_fini(&s);
	hostlist_free(hl);
}

/* ---------------------------------------------------------------- genders */

struct genders_case {
	const char *name, *text, *query;
	const char *want; /* folded hosts, or the error */
	int rc;
};

static const char genders_text[] = "# the cluster\n"
                                   "node[1-4]   compute,gpus=8,rack=r1\n"
                                   "node5,node6 compute,rack=r2   # two racks\n"
                                   "login1      login\n"
                                   "node1       head\n"
                                   "spare\n";

static const struct genders_case genders_cases[] = {
    {"an attribute", genders_text, "compute", "node[1-6]", 0},
    {"an attribute with a value", genders_text, "rack=r2", "node[5-6]", 0},
    {"a list is any of its attributes", genders_text, "login,head", "login1,node1", 0},
    {"a node on two lines keeps both", genders_text, "head,gpus=8", "node[1-4]", 0},
    {"a value that does not match", genders_text, "rack=r9", "", 0},
    {"hosts file lines are not genders", "127.0.0.1 localhost\n::1 localhost ip6-localhost\n", "x",
     "f:2: \"ip6-localhost\": a genders line is NODES [ATTRS]; this one has 3 fields (is it a "
     "genders file?)",
     CD_ERR_PARSE},
    {"yaml is not genders", "gpu:\n  - n1\n", "x",
     "f:1: \"gpu:\": a node name holds letters, digits, . _ - and ranges only (is it a "
     "genders file?)",
     CD_ERR_PARSE},
    {"an empty attribute", "n1 a,,b\n", "a", "f:1: \"a,,b\": an empty attribute in the list",
     CD_ERR_PARSE},
    {"an attribute with no name", "n1 =x\n", "a", "f:1: \"=x\": an attribute with no name",
     CD_ERR_PARSE},
    {"attr= with no value", "n1 a=\n", "a", "f:1: \"a=\": attr= with no value", CD_ERR_PARSE},
    {"an attribute twice for a node", "n[1-2] a\nn2 b,a=3\n", "a",
     "f:2: \"a\": n2 already has this attribute (line 1)", CD_ERR_PARSE},
    {"a bad range", "n[3-1] a\n", "a",
     "f:1: hostlist \"n[3-1]\": range 3-1 goes backwards (at column 3)", CD_ERR_PARSE},
    {"a query with no attribute", genders_text, "=r1",
     "-g \"=r1\": give attr or attr=value, as in -g gpu or -g rack=r2", CD_ERR_PARSE},
};

static void genders_parses_and_selects_each_case(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(genders_cases); i++) {
		const struct genders_case *c = &genders_cases[i];
		struct hostlist *hl = hostlist_new();
		struct genders g;
		char err[CD_ERRLEN] = "", *folded;
		int rc;

		print_message("%s\n", c->name);
		genders_init(&g);
		rc = genders_parse(&g, c->text, strlen(c->text), "f", err, sizeof(err));
		if (rc == 0)
			rc = genders_select(&g, c->query, hl, err, sizeof(err));
		if (c->rc) {
			assert_int_equal(rc, c->rc);
			assert_string_equal(err, c->want);
		} else {
			assert_true(rc >= 0);
			folded = hostlist_fold(hl);
			assert_string_equal(folded, c->want);
			free(folded);
		}
		genders_fini(&g);
		hostlist_free(hl);
	}
}

/* ---------------------------------------------------------------- ClusterShell files */

struct csconf_case {
	const char *name, *text;
	int yaml;
	const char *want; /* "default=D src:map|src:group=nodes ..." or the error */
};

static const struct csconf_case csconf_cases[] = {
    {"the packaged groups.conf",
     "[Main]\ndefault: local\nconfdir: /etc/clustershell/groups.conf.d $CFGDIR/groups.conf.d\n"
     "[local]\nmap: sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $CFGDIR/groups\nall: cat x\n",
     0,
     "default=local dirs=/etc/clustershell/groups.conf.d,/cfg/groups.conf.d "
     "local:map=sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $CFGDIR/groups"},
    {"aliases share the upcall and = works as :",
     "[slurmjob,sj]\nmap = squeue -h -j $GROUP -o \"%N\"\nlist: squeue\n", 0,
     "default= dirs= slurmjob:map=squeue -h -j $GROUP -o \"%N\" sj:map=squeue -h -j $GROUP -o "
     "\"%N\""},
    {"a continuation line", "[a]\nmap: echo\n  n1\n; comment\n", 0,
     "default= dirs= a:map=echo\nn1"},
    {"a key before any section", "map: x\n", 0, "f:1: \"map\": a key before any [section]"},
    {"a line that is no key", "[a]\njust words\n", 0,
     "f:2: \"just words\": a groups.conf line is [section], key: value or a comment"},
    {"a section header that does not end", "[a\n", 0,
     "f:1: \"[a\": a section header is [name] or [name,alias]"},
    {"a yaml file",
     "---\nroles:\n  adm: 'example0'\n  io: \"@racks:rack2,x\" # c\n"
     "racks:\n  rack5:\n    - 'e[1-2]'  # one\n    - e9\n  l: [a, b]\n",
     1,
     "default= dirs= roles:adm=example0 roles:io=@racks:rack2,x racks:rack5=e[1-2],e9 "
     "racks:l=a,b"},
    {"a yaml group before any source", "  adm: x\n", 1,
     "f:1: \"adm\": a group before any \"source:\" line"},
    {"a yaml line that is no key", "roles:\n  just words\n", 1,
     "f:2: \"just words\": a groups.d line is \"source:\" or \"  group: nodes\""},
    {"a yaml unterminated quote", "roles:\n  a: 'x\n", 1,
     "f:2: \" 'x\": an unterminated quote or list"},
    {"a yaml list item with no group", "roles:\n  - x\n", 1,
     "f:2: \"- x\": a list item with no group above it"},
};

static void csconf_text(const struct csgroups *c, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len,
	                            "default=%s dirs=", c->default_source ? c->default_source : "");

	for (size_t i = 0; i < c->ndirs; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? "," : "", c->dirs[i]);
	for (size_t i = 0; i < c->nsrc; i++) {
		if (c->src[i].map)
			n += (size_t)snprintf(out + n, len - n, " %s:map=%s", c->src[i].name,
			                      c->src[i].map);
		for (size_t k = 0; k < c->src[i].ngroups; k++)
			n += (size_t)snprintf(out + n, len - n, " %s:%s=%s", c->src[i].name,
			                      c->src[i].groups[k], c->src[i].nodes[k]);
	}
}

static void csgroups_parses_each_case(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(csconf_cases); i++) {
		const struct csconf_case *c = &csconf_cases[i];
		struct csgroups cs;
		char err[CD_ERRLEN] = "", got[1024];
		int rc;

		print_message("%s\n", c->name);
		csgroups_init(&cs);
		rc = c->yaml
		         ? csgroups_parse_yaml(&cs, c->text, strlen(c->text), "f", err, sizeof(err))
		         : csgroups_parse_conf(&cs, c->text, strlen(c->text), "f", "/cfg", 1, err,
		                               sizeof(err));
		if (rc < 0) {
			assert_string_equal(err, c->want);
		} else {
			csconf_text(&cs, got, sizeof(got));
			assert_string_equal(got, c->want);
		}
		csgroups_fini(&cs);
	}
}

static void csgroups_first_file_wins(void **state)
{
	static const char user[] = "[Main]\ndefault: a\n[a]\nmap: echo user\n",
	                  sys[] = "[Main]\ndefault: b\n[a]\nmap: echo sys\n[b]\nmap: echo b\n";
	struct csgroups cs;
	char err[CD_ERRLEN] = "";

	csgroups_init(&cs);
	assert_int_equal(csgroups_parse_conf(&cs, user, strlen(user), "u", "/u", 1, err, 256), 0);
	assert_int_equal(csgroups_parse_conf(&cs, sys, strlen(sys), "s", "/u", 1, err, 256), 0);
	assert_string_equal(cs.default_source, "a");
	assert_string_equal(csgroups_find(&cs, "a")->map, "echo user");
	assert_string_equal(csgroups_find(&cs, "b")->map, "echo b");
	assert_int_equal(csgroups_parse_conf(&cs, "[Main]\n", 7, "d.conf", "/u", 0, err, 256),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "d.conf:1: \"[Main]\": [Main] belongs in groups.conf, not in a "
	                         "confdir file");
	csgroups_fini(&cs);
}

/* ---------------------------------------------------------------- @group */

static char cfgdir[64];

static void put(const char *rel, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cfgdir, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static int with_cfgdir(void **state)
{
	char sub[128];

	strcpy(cfgdir, "/tmp/test_nodelists.XXXXXX");
	if (!mkdtemp(cfgdir))
		return -1;
	snprintf(sub, sizeof(sub), "%s/groups.d", cfgdir);
	mkdir(sub, 0700);
	put("groups.conf", "[Main]\ndefault: roles\n"
	                   "[up]\nmap: sed -n 's/^$GROUP: *//p' $CFGDIR/up.txt\n"
	                   "[fails]\nmap: echo broken >&2; exit 3\n"
	                   "[slow]\nmap: sleep 5\n");
	put("up.txt", "web: w[1-2]\nboth: @web,@db\ndb: d1\n");
	put("groups.d/a.yaml", "roles:\n  gpu: 'g[1-4]'\n  all: '@gpu,@up:web'\n"
	                       "  loop: '@loop'\nracks:\n  r1: n[1-2]\n  r2: n[3-4]\n");
	setenv("CLUSTERSHELL_CFGDIR", cfgdir, 1);
	setenv("HOME", cfgdir, 1); /* no user files */
	unsetenv("XDG_CONFIG_HOME");
	return 0;
}

static int without_cfgdir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", cfgdir);
	return system(cmd) == 0 ? 0 : -1;
}

struct group_case {
	const char *expr, *want; /* folded, or the start of the error */
	int rc;
};

static const struct group_case group_cases[] = {
    {"@gpu", "g[1-4]", 0},
    {"@roles:gpu!g2,x1", "g[1,3-4],x1", 0},
    {"@all", "g[1-4],w[1-2]", 0},
    {"@up:both", "d1,w[1-2]", 0},
    {"@racks:r[1-2]", "n[1-4]", 0},
    {"@nosuch", "unknown node group @nosuch; looked in: ClusterShell (default source roles", -7},
    {"@up:nosuch", "unknown node group @up:nosuch; looked in:", -7},
    {"@fails:x", "", -3},
    {"@loop", "@roles:loop includes itself: @roles:loop -> @roles:loop", -2},
    {"@a;b", "@a;b: a node group is @group or @source:group", -2},
    {"@", "hostlist \"@\": '@' without a group name (at column 1)", -2},
};

static void group_expressions_resolve_through_the_sources(void **state)
{
	struct nodegroups g;

	for (size_t i = 0; i < CD_ARRAY_LEN(group_cases); i++) {
		const struct group_case *c = &group_cases[i];
		struct hostlist *hl = hostlist_new();
		char err[CD_ERRLEN] = "", *folded;
		int rc;

		print_message("%s\n", c->expr);
		nodegroups_init(&g);
		hl->groups = &g.hook;
		rc = hostlist_parse(hl, c->expr, err, sizeof(err));
		assert_int_equal(rc, c->rc);
		if (rc == 0) {
			folded = hostlist_fold(hl);
			assert_string_equal(folded, c->want);
			free(folded);
		} else if (rc == CD_ERR_IO) {
			/* the upcall's file and line, its status and its stderr */
			assert_non_null(strstr(err, "groups.conf:6: the map upcall of [fails] for "
			                            "@x exited with status 3: broken"));
		} else {
			assert_non_null(strstr(err, c->want));
		}
		nodegroups_fini(&g);
		hostlist_free(hl);
	}
}

static void a_map_upcall_past_its_deadline_is_an_error(void **state)
{
	struct hostlist *hl = hostlist_new();
	struct nodegroups g;
	char err[CD_ERRLEN] = "";

	nodegroups_init(&g);
	g.timeout_ms = 200;
	hl->groups = &g.hook;
	assert_int_equal(hostlist_parse(hl, "@slow:x", err, sizeof(err)), CD_ERR_TIMEOUT);
	assert_non_null(strstr(err, "the map upcall of [slow] for @x"));
	nodegroups_fini(&g);
	hostlist_free(hl);
}

/* On an event loop (the TUI's prompt) a source that would run a program is
 * refused at once; the groups of files still resolve. */
static void a_caller_on_a_loop_gets_no_group_that_runs_a_program(void **state)
{
	struct hostlist *hl = hostlist_new();
	struct nodegroups g;
	char err[CD_ERRLEN] = "", *folded;

	nodegroups_init(&g);
	g.no_programs = 1;
	hl->groups = &g.hook;
	assert_int_equal(hostlist_parse(hl, "@slow:x", err, sizeof(err)), CD_ERR_REFUSED);
	assert_non_null(strstr(err, "the map upcall of [slow] for @x runs a program"));
	assert_int_equal(hostlist_parse(hl, "@gpu", err, sizeof(err)), 0);
	folded = hostlist_fold(hl);
	assert_string_equal(folded, "g[1-4]");
	free(folded);
	nodegroups_fini(&g);
	hostlist_free(hl);
}

static void a_group_without_sources_is_never_a_host(void **state)
{
	struct hostlist *hl = hostlist_new();
	char err[CD_ERRLEN] = "";

	assert_int_equal(hostlist_parse(hl, "n1,@gpu", err, sizeof(err)), CD_ERR_PARSE);
	assert_string_equal(err, "hostlist \"n1,@gpu\": @gpu is a node group, and no group "
	                         "source is read here (at column 4)");
	assert_int_equal(hl->count, 0);
	hostlist_free(hl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hostfile_parses_each_case),
	    cmocka_unit_test(hostslots_common_says_which_hosts_differ),
	    cmocka_unit_test(genders_parses_and_selects_each_case),
	    cmocka_unit_test(csgroups_parses_each_case),
	    cmocka_unit_test(csgroups_first_file_wins),
	    cmocka_unit_test(group_expressions_resolve_through_the_sources),
	    cmocka_unit_test(a_map_upcall_past_its_deadline_is_an_error),
	    cmocka_unit_test(a_caller_on_a_loop_gets_no_group_that_runs_a_program),
	    cmocka_unit_test(a_group_without_sources_is_never_a_host),
	};

	return cmocka_run_group_tests(tests, with_cfgdir, without_cfgdir);
}
