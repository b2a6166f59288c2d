/* SPDX-License-Identifier: MIT */
/* test_config.c - the configuration files (core/config.h): what each kind of line gives, the
 * exact error of each bad line (file, line, value), includes and their loops, and which layer
 * wins. */
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
#include "config.h"

/* A schema as the command table gives it (cli/settings.c), cut down. */
static const struct option top_keys[] = {
    {"nodes", required_argument, NULL, 'w'},     {"login", required_argument, NULL, 'l'},
    {"ssh", required_argument, NULL, 1},         {"fanout", required_argument, NULL, 2},
    {"timeout", required_argument, NULL, 't'},   {"accept-new", no_argument, NULL, 3},
    {"expect-gpus", required_argument, NULL, 4}, {0},
};
static const struct option check_keys[] = {
    {"fanout", required_argument, NULL, 2},
    {"expect-gpus", required_argument, NULL, 4},
    {0},
};
static const struct option expect_keys_cut[] = {
    {"gpus", required_argument, NULL, 0}, {"mtu", required_argument, NULL, 0}, {0}};
/* what a command takes on its command line only (--apply, --yes) */
static const struct option cmdline_only[] = {
    {"apply", no_argument, NULL, 5},
    {"yes", no_argument, NULL, 6},
    {0},
};
static const struct config_section sections[] = {{"", top_keys, cmdline_only},
                                                 {"check", check_keys, cmdline_only},
                                                 {"expect", expect_keys_cut, NULL}};
static const struct config_schema schema = {sections, 3};

static int parse(struct config *c, const char *text, char *err)
{
	config_init(c);
	err[0] = '\0';
	return config_parse(c, &schema, text, strlen(text), "site.conf", CONFIG_SYSTEM, 0, err,
	                    CD_ERRLEN);
}

/* ---------------------------------------------------------------- good lines */

static const struct good_case {
	const char *text;
	size_t n;
	const char *first; /* "SECTION|KEY|VALUE|LINE" of the first entry */
	const char *last;  /* ... of the last */
} good_cases[] = {
    {"nodes = node[01-16]\n", 1, "|nodes|node[01-16]|1", "|nodes|node[01-16]|1"},
    {"# a comment\n\n  ssh=openssh  \r\n", 1, "|ssh|openssh|3", "|ssh|openssh|3"},
    {"   # indented comment\nlogin =  cdadmin", 1, "|login|cdadmin|2", "|login|cdadmin|2"},
    {"accept-new = yes\n[check]\nexpect-gpus = 8\n", 2, "|accept-new|yes|1",
     "check|expect-gpus|8|3"},
    {"[groups]\ngpu = n[1-4]\nCPU_nodes.2 = c1,c2\n", 2, "groups|gpu|n[1-4]|2",
     "groups|CPU_nodes.2|c1,c2|3"},
    {"[group]\nall = n[1-9]\n[ check ]\nfanout = 4\n", 2, "groups|all|n[1-9]|2",
     "check|fanout|4|4"},
    /* a group may name others: they are looked up with its hosts, not when read */
    {"[groups]\nall = @gpu,@sp:batch,c1\n", 1, "groups|all|@gpu,@sp:batch,c1|2",
     "groups|all|@gpu,@sp:batch,c1|2"},
    {"login = a#b\n", 1, "|login|a#b|1", "|login|a#b|1"},
    {"", 0, NULL, NULL},
};

static void entry_is(const struct config_entry *e, const char *want)
{
	char got[256];

	snprintf(got, sizeof(got), "%s|%s|%s|%d", e->section, e->key, e->value, e->line);
	assert_string_equal(got, want);
	assert_string_equal(e->file, "site.conf");
}

static void each_good_line_gives_its_section_key_value_and_line(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(good_cases); i++) {
		const struct good_case *g = &good_cases[i];
		struct config c;
		char err[CD_ERRLEN];

		assert_int_equal(parse(&c, g->text, err), 0);
		assert_string_equal(err, "");
		assert_int_equal(c.n, g->n);
		if (g->n) {
			entry_is(&c.entries[0], g->first);
			entry_is(&c.entries[c.n - 1], g->last);
		}
		config_fini(&c);
	}
}

/* ---------------------------------------------------------------- bad lines */

static const struct bad_case {
	const char *text;
	const char *err;
} bad_cases[] = {
    {"fanot = 3\n", "site.conf:1: unknown key \"fanot\"; did you mean fanout?"},
    {"ssh = openssh\nlgoin = root\n", "site.conf:2: unknown key \"lgoin\"; did you mean login?"},
    {"[check]\nnodes = n1\n",
     "site.conf:2: unknown key \"nodes\" in [check]; did you mean fanout?"},
    {"[chekc]\n", "site.conf:1: unknown section [chekc]; did you mean [check]?"},
    {"[check\n", "site.conf:1: \"[check\": a section is [NAME], alone on its line"},
    {"[check] x\n", "site.conf:1: \"[check] x\": a section is [NAME], alone on its line"},
    {"accept-new = maybe\n", "site.conf:1: accept-new = maybe: the value is yes or no"},
    {"fanout =\n", "site.conf:1: fanout has no value"},
    {"= 3\n", "site.conf:1: \"= 3\": the key is missing"},
    {"\n\njust words\n", "site.conf:3: \"just words\": expected KEY = VALUE, [SECTION] or "
                         "include FILE"},
    {"[groups]\ngpu = n[5-3]\n",
     "site.conf:2: group gpu = n[5-3]: hostlist \"n[5-3]\": range 5-3 goes backwards (at column "
     "3)"},
    {"[groups]\ng@x = n1\n", "site.conf:2: group name \"g@x\": letters, digits and . _ + - / only"},
    {"[expect]\nmtx = 1\n", "site.conf:2: unknown key \"mtx\" in [expect]; did you mean mtu?"},
    {"[check]\nyes = yes\n", "site.conf:2: yes is given on the command line only (an action, a "
                             "consent or a mode), never by a configuration file"},
    {"include other.conf\n", "site.conf:1: include other.conf: no include here"},
    {"nodes = n1\0x\n", "site.conf:1: a NUL byte (not a text file?)"},
    {"login = caf\xe9\n", "site.conf:1: byte 0xe9 is not UTF-8 text (at column 12)"},
};

static void each_bad_line_is_an_error_naming_the_file_the_line_and_the_value(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		size_t len = strlen(b->text);
		struct config c;
		char err[CD_ERRLEN];

		if (strcmp(b->text, "nodes = n1") == 0)
			len = 13; /* the NUL byte's case */
		config_init(&c);
		assert_int_equal(config_parse(&c, &schema, b->text, len, "site.conf", CONFIG_USER,
		                              0, err, sizeof(err)),
		                 CD_ERR_PARSE);
		assert_string_equal(err, b->err);
		config_fini(&c);
	}
}

static void a_line_over_the_cap_is_refused_not_cut(void **state)
{
	char *text = cd_malloc(CONFIG_LINE_MAX + 20), err[CD_ERRLEN];
	struct config c;

	memset(text, 'a', CONFIG_LINE_MAX + 10);
	memcpy(text, "login = ", 8);
	text[CONFIG_LINE_MAX + 10] = '\0';
	config_init(&c);
	assert_int_equal(config_parse(&c, &schema, text, strlen(text), "site.conf", CONFIG_USER, 0,
	                              err, sizeof(err)),
	                 CD_ERR_TOOBIG);
	assert_string_equal(err, "site.conf:1: a line longer than 4096 bytes");
	config_fini(&c);
	free(text);
}

static void yes_and_no_have_their_usual_spellings(void **state)
{
	static const struct {
		const char *v;
		int b;
	} cases[] = {{"yes", 1},   {"True", 1}, {"on", 1}, {"1", 1},  {"no", 0},
	             {"FALSE", 0}, {"off", 0},  {"0", 0},  {"2", -1}, {"", -1}};

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++)
		assert_int_equal(config_bool(cases[i].v), cases[i].b);
}

/* ---------------------------------------------------------------- files, include */

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_dir(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_config.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static int read_in(struct config *c, const char *name, int must_exist, char *err)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return config_read_file(c, &schema, path, CONFIG_USER, must_exist, err, CD_ERRLEN);
}

static void an_include_reads_the_file_beside_it_in_its_place(void **state)
{
	struct config c;
	char err[CD_ERRLEN];

	write_file("main", "fanout = 1\ninclude site\nlogin = me\n");
	write_file("site", "fanout = 2\nssh = openssh\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "main", 1, err), 0);
	assert_int_equal(c.n, 4);
	assert_string_equal(config_get(&c, NULL, "fanout")->value, "2");
	assert_int_equal(config_get(&c, NULL, "fanout")->line, 1);
	assert_non_null(strstr(config_get(&c, NULL, "fanout")->file, "/site"));
	assert_string_equal(config_get(&c, NULL, "login")->value, "me");
	assert_int_equal(c.nfiles, 2);
	config_fini(&c);
}

static void an_include_pattern_reads_each_match_in_order_and_none_is_no_error(void **state)
{
	struct config c;
	char err[CD_ERRLEN], sub[128];

	snprintf(sub, sizeof(sub), "%s/conf.d", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file("conf.d/20-b.conf", "fanout = 20\n");
	write_file("conf.d/10-a.conf", "fanout = 10\nlogin = a\n");
	write_file("conf.d/notes.txt", "not = read\n");
	write_file("globbed", "include conf.d/*.conf\ninclude none.d/*.conf\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "globbed", 1, err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(config_get(&c, NULL, "fanout")->value, "20");
	assert_string_equal(config_get(&c, NULL, "login")->value, "a");
	config_fini(&c);
}

static void a_loop_of_includes_is_an_error_naming_the_chain(void **state)
{
	struct config c;
	char err[CD_ERRLEN], want[CD_ERRLEN];

	write_file("a", "ssh = openssh\ninclude b\n");
	write_file("b", "\ninclude ./a\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "a", 1, err), CD_ERR_PARSE);
	snprintf(want, sizeof(want), "%s/b:2: include ./a: include loop: %s/a -> %s/b -> %s/a", dir,
	         dir, dir, dir);
	assert_string_equal(err, want);
	config_fini(&c);
}

static void a_file_including_itself_is_a_loop(void **state)
{
	struct config c;
	char err[CD_ERRLEN], want[CD_ERRLEN];

	write_file("self", "include self\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "self", 1, err), CD_ERR_PARSE);
	snprintf(want, sizeof(want), "%s/self:1: include self: include loop: %s/self -> %s/self",
	         dir, dir, dir);
	assert_string_equal(err, want);
	config_fini(&c);
}

static void a_missing_include_names_the_line_that_asks_for_it(void **state)
{
	struct config c;
	char err[CD_ERRLEN], want[CD_ERRLEN];

	write_file("m", "# one\ninclude nowhere\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "m", 1, err), CD_ERR_PARSE);
	snprintf(want, sizeof(want), "%s/m:2: include %s/nowhere: no such file", dir, dir);
	assert_string_equal(err, want);
	config_fini(&c);
}

static void a_bad_line_in_an_included_file_names_that_file(void **state)
{
	struct config c;
	char err[CD_ERRLEN], want[CD_ERRLEN];

	write_file("top", "include inner\n");
	write_file("inner", "\n\nfanout = 2\nfanuot = 3\n");
	config_init(&c);
	assert_int_equal(read_in(&c, "top", 1, err), CD_ERR_PARSE);
	snprintf(want, sizeof(want), "%s/inner:4: unknown key \"fanuot\"; did you mean fanout?",
	         dir);
	assert_string_equal(err, want);
	config_fini(&c);
}

static void a_missing_optional_file_is_no_error_and_is_listed_as_not_found(void **state)
{
	struct config c;
	char err[CD_ERRLEN];

	config_init(&c);
	assert_int_equal(read_in(&c, "absent", 0, err), 0);
	assert_int_equal(c.nfiles, 1);
	assert_int_equal(c.files[0].found, 0);
	assert_int_equal(read_in(&c, "absent", 1, err), CD_ERR_NOTFOUND);
	config_fini(&c);
}

/* ---------------------------------------------------------------- precedence */

static void add_layer(struct config *c, enum config_origin o, const char *text)
{
	char err[CD_ERRLEN];

	assert_int_equal(config_parse(c, &schema, text, strlen(text), config_origin_name(o), o, 0,
	                              err, sizeof(err)),
	                 0);
}

static const struct precedence_case {
	const char *system, *user, *env, *opt; /* opt: one -O, or NULL */
	const char *cmd, *key;
	const char *value;
	enum config_origin from;
} precedence_cases[] = {
    {"fanout = 1\n", "", "", NULL, NULL, "fanout", "1", CONFIG_SYSTEM},
    {"fanout = 1\n", "fanout = 2\n", "", NULL, NULL, "fanout", "2", CONFIG_USER},
    {"fanout = 1\n", "fanout = 2\n", "fanout = 3\n", NULL, NULL, "fanout", "3", CONFIG_ENV},
    {"fanout = 1\n", "fanout = 2\n", "fanout = 3\n", "fanout=4", NULL, "fanout", "4",
     CONFIG_OPTION},
    {"fanout = 1\n", "", "", "login=x", NULL, "fanout", "1", CONFIG_SYSTEM},
    /* a command's section holds for that command only */
    {"[check]\nfanout = 9\n", "", "", NULL, "check", "fanout", "9", CONFIG_SYSTEM},
    {"fanout = 1\n[check]\nfanout = 9\n", "", "", NULL, "facts", "fanout", "1", CONFIG_SYSTEM},
    /* the line read last wins, in a section or not */
    {"[check]\nfanout = 9\n", "fanout = 2\n", "", NULL, "check", "fanout", "2", CONFIG_USER},
    {"fanout = 2\n", "[check]\nfanout = 9\n", "", NULL, "check", "fanout", "9", CONFIG_USER},
    {"fanout = 1\n", "", "", "check.fanout=5", "check", "fanout", "5", CONFIG_OPTION},
    {"fanout = 1\n", "", "", "check.fanout=5", "facts", "fanout", "1", CONFIG_SYSTEM},
};

static void the_layer_read_last_wins_and_a_section_holds_for_its_command(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(precedence_cases); i++) {
		const struct precedence_case *p = &precedence_cases[i];
		const struct config_entry *e;
		struct config c;
		char err[CD_ERRLEN];

		config_init(&c);
		add_layer(&c, CONFIG_SYSTEM, p->system);
		add_layer(&c, CONFIG_USER, p->user);
		add_layer(&c, CONFIG_ENV, p->env);
		if (p->opt)
			assert_int_equal(config_add_option(&c, &schema, p->opt, err, sizeof(err)),
			                 0);
		e = config_get(&c, p->cmd, p->key);
		assert_non_null(e);
		assert_string_equal(e->value, p->value);
		assert_int_equal(e->origin, p->from);
		config_fini(&c);
	}
}

static const struct {
	const char *arg, *err;
} option_errors[] = {
    {"fanot=3", "-O fanot=3: unknown key \"fanot\"; did you mean fanout?"},
    {"fanout", "-O fanout: expected KEY=VALUE"},
    {"=3", "-O =3: expected KEY=VALUE"},
    {"fanout=", "-O fanout=: fanout has no value"},
    {"accept-new=sure", "-O accept-new=sure: accept-new = sure: the value is yes or no"},
    {"chekc.fanout=3", "-O chekc.fanout=3: unknown section [chekc]"},
    {"login=caf\xe9", "-O login=caf\xe9: byte 0xe9 is not UTF-8 text"},
};

static void a_bad_minus_o_is_an_error_quoting_it(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(option_errors); i++) {
		struct config c;
		char err[CD_ERRLEN];

		config_init(&c);
		assert_int_equal(
		    config_add_option(&c, &schema, option_errors[i].arg, err, sizeof(err)),
		    CD_ERR_PARSE);
		assert_string_equal(err, option_errors[i].err);
		assert_int_equal(c.n, 0);
		config_fini(&c);
	}
}

static void the_group_read_last_is_the_one_named(void **state)
{
	struct config c;

	config_init(&c);
	add_layer(&c, CONFIG_SYSTEM, "[groups]\ngpu = n[1-4]\ncpu = c1\n");
	add_layer(&c, CONFIG_USER, "[group]\ngpu = n[5-8]\n");
	assert_string_equal(config_group(&c, "gpu")->value, "n[5-8]");
	assert_string_equal(config_group(&c, "cpu")->value, "c1");
	assert_null(config_group(&c, "nope"));
	/* a group is no option, an option no group */
	assert_null(config_get(&c, NULL, "gpu"));
	config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_good_line_gives_its_section_key_value_and_line),
	    cmocka_unit_test(each_bad_line_is_an_error_naming_the_file_the_line_and_the_value),
	    cmocka_unit_test(a_line_over_the_cap_is_refused_not_cut),
	    cmocka_unit_test(yes_and_no_have_their_usual_spellings),
	    cmocka_unit_test(an_include_reads_the_file_beside_it_in_its_place),
	    cmocka_unit_test(an_include_pattern_reads_each_match_in_order_and_none_is_no_error),
	    cmocka_unit_test(a_loop_of_includes_is_an_error_naming_the_chain),
	    cmocka_unit_test(a_file_including_itself_is_a_loop),
	    cmocka_unit_test(a_missing_include_names_the_line_that_asks_for_it),
	    cmocka_unit_test(a_bad_line_in_an_included_file_names_that_file),
	    cmocka_unit_test(a_missing_optional_file_is_no_error_and_is_listed_as_not_found),
	    cmocka_unit_test(the_layer_read_last_wins_and_a_section_holds_for_its_command),
	    cmocka_unit_test(a_bad_minus_o_is_an_error_quoting_it),
	    cmocka_unit_test(the_group_read_last_is_the_one_named),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
