/* SPDX-License-Identifier: MIT */
/* test_blockedit.c - clusterdoc's marked block in users' files (find, set,
 * remove, body) and the unified diffs that show the change, compared with
 * GNU diff where it is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "fsutil.h"
#include "fixers/blockedit.h"
#include "fixers/textdiff.h"

#define DIFF "/usr/bin/diff"

#define BEGIN_ENV "# >>> clusterdoc env >>>\n"
#define END_ENV   "# <<< clusterdoc env <<<\n"
#define BODY      "export NCCL_SOCKET_IFNAME=eth1\nexport NCCL_IB_DISABLE=1\n"
#define BLOCK     BEGIN_ENV BODY END_ENV

static const enum blockedit_where all_wheres[] = {BLOCK_TOP, BLOCK_AFTER_COMMENTS, BLOCK_BOTTOM};

/* A Debian /etc/hosts as the installer writes it. */
static const char debian_hosts[] = "127.0.0.1\tlocalhost\n"
                                   "127.0.1.1\tnode1.example.org\tnode1\n"
                                   "\n"
                                   "# The following lines are desirable for IPv6 capable hosts\n"
                                   "::1     localhost ip6-localhost ip6-loopback\n"
                                   "ff02::1 ip6-allnodes\n"
                                   "ff02::2 ip6-allrouters\n";

/* The same, as cloud-init's hosts.debian.tmpl writes it. */
static const char cloud_init_hosts[] =
    "# Your system has configured 'manage_etc_hosts' as True.\n"
    "# As a result, if you wish for changes to this file to persist\n"
    "# then you will need to either\n"
    "# a.) make changes to the master file in /etc/cloud/templates/hosts.debian.tmpl\n"
    "# b.) change or remove the value of 'manage_etc_hosts' in\n"
    "#     /etc/cloud/cloud.cfg or cloud-config from user-data\n"
    "#\n"
    "127.0.1.1 node1.example.org node1\n"
    "127.0.0.1 localhost\n"
    "\n"
    "# The following lines are desirable for IPv6 capable hosts\n"
    "::1 localhost ip6-localhost ip6-loopback\n"
    "ff02::1 ip6-allnodes\n"
    "ff02::2 ip6-allrouters\n";

/* set(text, "env", body, where) must succeed; the new text (free it). */
static char *set(const char *text, const char *body, enum blockedit_where where)
{
	char *out = NULL, err[CD_ERRLEN] = "";
	size_t outlen = 0;
	int rc = blockedit_set(text, strlen(text), "#", "env", body, where, &out, &outlen, err,
	                       sizeof(err));

	if (rc != 0)
		fail_msg("blockedit_set: %d %s", rc, err);
	assert_int_equal(strlen(out), outlen);
	return out;
}

static char *rm(const char *text)
{
	char *out = NULL, err[CD_ERRLEN] = "";
	size_t outlen = 0;
	int rc = blockedit_remove(text, strlen(text), "#", "env", &out, &outlen, err, sizeof(err));

	if (rc != 0)
		fail_msg("blockedit_remove: %d %s", rc, err);
	assert_int_equal(strlen(out), outlen);
	return out;
}

static void assert_set(const char *text, const char *body, enum blockedit_where where,
                       const char *want)
{
	char *got = set(text, body, where);

	assert_string_equal(got, want);
	free(got);
}

/* Every entry point refuses text with CD_ERR_PARSE and a message holding
 * each of the given strings. */
static void assert_broken(const char *text, const char *want1, const char *want2)
{
	char err[CD_ERRLEN] = "", *out = (char *)1;
	size_t start = 7, end = 7, outlen = 7, len = strlen(text);

	assert_int_equal(blockedit_find(text, len, "#", "env", &start, &end, err, sizeof(err)),
	                 CD_ERR_PARSE);
	if (!strstr(err, want1) || !strstr(err, want2))
		fail_msg("got \"%s\", want \"%s\" and \"%s\"", err, want1, want2);
	assert_int_equal(start, 7);
	err[0] = '\0';
	assert_int_equal(blockedit_set(text, len, "#", "env", BODY, BLOCK_BOTTOM, &out, &outlen,
	                               err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_null(out);
	assert_int_equal(outlen, 0);
	assert_non_null(strstr(err, want1));
	err[0] = '\0';
	out = (char *)1;
	assert_int_equal(blockedit_remove(text, len, "#", "env", &out, &outlen, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_null(out);
	assert_non_null(strstr(err, want1));
	assert_null(blockedit_body(text, len, "#", "env"));
}

/* ---- inserting ---- */

static void set_into_an_empty_text_gives_just_the_block(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(all_wheres); i++)
		assert_set("", BODY, all_wheres[i], BLOCK);
}

static void set_bottom_appends_after_the_last_line(void **state)
{
	assert_set("alias ll='ls -l'\n", BODY, BLOCK_BOTTOM, "alias ll='ls -l'\n" BLOCK);
}

static void set_bottom_adds_a_missing_final_newline_first(void **state)
{
	assert_set("alias ll='ls -l'", BODY, BLOCK_BOTTOM, "alias ll='ls -l'\n" BLOCK);
}

static void set_top_goes_on_line_one(void **state)
{
	assert_set("# ~/.bashrc\nalias ll='ls -l'\n", BODY, BLOCK_TOP,
	           BLOCK "# ~/.bashrc\nalias ll='ls -l'\n");
	/* A text without a final newline keeps it missing. */
	assert_set("alias ll='ls -l'", BODY, BLOCK_TOP, BLOCK "alias ll='ls -l'");
}

static void set_top_goes_after_a_shebang_line(void **state)
{
	assert_set("#!/bin/sh\nexport A=1\n", BODY, BLOCK_TOP, "#!/bin/sh\n" BLOCK "export A=1\n");
}

static void set_top_after_a_shebang_without_newline_adds_it(void **state)
{
	assert_set("#!/bin/bash", BODY, BLOCK_TOP, "#!/bin/bash\n" BLOCK);
}

static void set_after_comments_on_debian_hosts_goes_on_line_one(void **state)
{
	char *want = cd_asprintf("%s%s", BLOCK, debian_hosts);

	assert_set(debian_hosts, BODY, BLOCK_AFTER_COMMENTS, want);
	free(want);
}

static void set_after_comments_goes_after_the_leading_comments_and_blanks(void **state)
{
	static const char header[] =
	    "# Your system has configured 'manage_etc_hosts' as True.\n"
	    "# As a result, if you wish for changes to this file to persist\n"
	    "# then you will need to either\n"
	    "# a.) make changes to the master file in /etc/cloud/templates/hosts.debian.tmpl\n"
	    "# b.) change or remove the value of 'manage_etc_hosts' in\n"
	    "#     /etc/cloud/cloud.cfg or cloud-config from user-data\n"
	    "#\n";
	char *want = cd_asprintf("%s%s%s", header, BLOCK, cloud_init_hosts + strlen(header));

	assert_set(cloud_init_hosts, BODY, BLOCK_AFTER_COMMENTS, want);
	free(want);
	assert_set("# hosts\n\n  \t\n10.0.0.1 a\n", BODY, BLOCK_AFTER_COMMENTS,
	           "# hosts\n\n  \t\n" BLOCK "10.0.0.1 a\n");
}

static void set_after_comments_goes_before_another_clusterdoc_block(void **state)
{
	static const char text[] = "# hosts\n"
	                           "# >>> clusterdoc nccl >>>\n"
	                           "# NCCL_DEBUG=INFO\n"
	                           "# <<< clusterdoc nccl <<<\n"
	                           "10.0.0.1 a\n";

	assert_set(text, BODY, BLOCK_AFTER_COMMENTS,
	           "# hosts\n" BLOCK "# >>> clusterdoc nccl >>>\n"
	           "# NCCL_DEBUG=INFO\n"
	           "# <<< clusterdoc nccl <<<\n"
	           "10.0.0.1 a\n");
}

static void set_after_comments_on_only_comments_goes_at_the_end(void **state)
{
	assert_set("# nothing yet\n\n", BODY, BLOCK_AFTER_COMMENTS, "# nothing yet\n\n" BLOCK);
	assert_set("# nothing yet", BODY, BLOCK_AFTER_COMMENTS, "# nothing yet\n" BLOCK);
}

static void set_an_empty_body_gives_the_two_markers(void **state)
{
	assert_set("x\n", "", BLOCK_BOTTOM, "x\n" BEGIN_ENV END_ENV);
}

/* ---- replacing ---- */

static void set_replaces_the_block_where_it_is(void **state)
{
	static const char text[] = "a\r\n\tb  \n" BEGIN_ENV "old\n" END_ENV "c\nd";

	assert_set(text, BODY, BLOCK_TOP, "a\r\n\tb  \n" BLOCK "c\nd");
	assert_set(text, BODY, BLOCK_BOTTOM, "a\r\n\tb  \n" BLOCK "c\nd");
}

static void set_rewrites_tolerated_markers_exactly(void **state)
{
	assert_set("x\n  # >>> clusterdoc env >>>\t\nold\n\t# <<< clusterdoc env <<< \ny\n", BODY,
	           BLOCK_BOTTOM, "x\n" BLOCK "y\n");
}

static void set_keeps_an_end_marker_that_ends_the_text_without_newline(void **state)
{
	assert_set("x\n" BEGIN_ENV "old\n# <<< clusterdoc env <<<", BODY, BLOCK_BOTTOM,
	           "x\n" BEGIN_ENV BODY "# <<< clusterdoc env <<<");
}

static void set_twice_gives_the_same_text(void **state)
{
	static const char *const texts[] = {
	    "", "x", "x\n", "#!/bin/sh\n# c\n\ny\n", "#!/bin/sh", "# only\n# comments"};

	for (size_t t = 0; t < CD_ARRAY_LEN(texts); t++)
		for (size_t w = 0; w < CD_ARRAY_LEN(all_wheres); w++) {
			char *once = set(texts[t], BODY, all_wheres[w]);
			char *twice = set(once, BODY, all_wheres[w]);

			assert_string_equal(twice, once);
			free(twice);
			free(once);
		}
}

static void set_with_another_body_changes_only_the_body(void **state)
{
	char *once = set("a\nb\n", BODY, BLOCK_BOTTOM), *again = set(once, "x=1\n", BLOCK_TOP);

	assert_string_equal(again, "a\nb\n" BEGIN_ENV "x=1\n" END_ENV);
	free(again);
	free(once);
}

/* ---- removing ---- */

static void remove_gives_back_the_text_before_set(void **state)
{
	static const char *const texts[] = {"",
	                                    "x\n",
	                                    "x",
	                                    "#!/bin/sh\nexport A=1\n",
	                                    "#!/bin/sh\nexport A=1",
	                                    "# c\n\n10.0.0.1 a\n",
	                                    debian_hosts,
	                                    cloud_init_hosts,
	                                    "a\r\nb\r\n"};

	for (size_t t = 0; t < CD_ARRAY_LEN(texts); t++)
		for (size_t w = 0; w < CD_ARRAY_LEN(all_wheres); w++) {
			const char *text = texts[t];
			char *with = set(text, BODY, all_wheres[w]), *back = rm(with);
			size_t len = strlen(text);

			/* BOTTOM on a text without its final newline added it. */
			if (all_wheres[w] == BLOCK_BOTTOM && len > 0 && text[len - 1] != '\n') {
				assert_int_equal(strlen(back), len + 1);
				assert_memory_equal(back, text, len);
				assert_int_equal(back[len], '\n');
			} else {
				assert_string_equal(back, text);
			}
			free(back);
			free(with);
		}
}

static void remove_after_bottom_keeps_the_newline_set_added(void **state)
{
	char *with = set("x", BODY, BLOCK_BOTTOM), *back = rm(with);

	assert_string_equal(back, "x\n");
	free(back);
	free(with);
}

static void remove_takes_out_the_block_lines_only(void **state)
{
	char *back = rm("a\n  # >>> clusterdoc env >>>\nbody\n# <<< clusterdoc env <<<\r\nb");

	assert_string_equal(back, "a\nb");
	free(back);
	back = rm("a\n" BEGIN_ENV "# <<< clusterdoc env <<<");
	assert_string_equal(back, "a\n");
	free(back);
}

static void remove_of_an_absent_block_is_a_copy(void **state)
{
	char *back = rm(debian_hosts);

	assert_string_equal(back, debian_hosts);
	free(back);
	back = rm("");
	assert_string_equal(back, "");
	free(back);
}

/* ---- finding ---- */

static void find_gives_the_byte_range_of_the_whole_block(void **state)
{
	static const char text[] = "a\n" BLOCK "b\n";
	size_t start = 0, end = 0;

	assert_int_equal(blockedit_find(text, strlen(text), "#", "env", &start, &end, NULL, 0), 1);
	assert_int_equal(start, 2);
	assert_int_equal(end, 2 + strlen(BLOCK));
}

static void find_of_an_absent_block_is_zero(void **state)
{
	size_t start = 7, end = 7;

	assert_int_equal(
	    blockedit_find(debian_hosts, strlen(debian_hosts), "#", "env", &start, &end, NULL, 0),
	    0);
	assert_int_equal(start, 7);
	assert_int_equal(end, 7);
	assert_int_equal(blockedit_find(NULL, 0, "#", "env", &start, &end, NULL, 0), 0);
}

static void markers_with_blanks_around_them_are_found(void **state)
{
	static const char text[] =
	    "a\n \t# >>> clusterdoc env >>>  \nx=1\n# <<< clusterdoc env <<<\t\n";
	char *body = blockedit_body(text, strlen(text), "#", "env");
	size_t start = 0, end = 0;

	assert_int_equal(blockedit_find(text, strlen(text), "#", "env", &start, &end, NULL, 0), 1);
	assert_int_equal(start, 2);
	assert_int_equal(end, strlen(text));
	assert_string_equal(body, "x=1\n");
	free(body);
}

static void lines_that_differ_inside_are_not_markers(void **state)
{
	static const char text[] = "#>>> clusterdoc env >>>\n"
	                           "# >>> clusterdoc  env >>>\n"
	                           "# >>> clusterdoc env\n"
	                           "# >>> clusterdoc env >>> x\n"
	                           "## >>> clusterdoc env >>>\n"
	                           "# <<< clusterdoc Env <<<\n";
	size_t start, end;

	assert_int_equal(blockedit_find(text, strlen(text), "#", "env", &start, &end, NULL, 0), 0);
}

static void a_crlf_file_is_edited_keeping_its_other_bytes(void **state)
{
	static const char text[] = "a\r\n# >>> clusterdoc env >>>\r\nx=1\r\n"
	                           "# <<< clusterdoc env <<<\r\nb\r\n";
	char *body = blockedit_body(text, strlen(text), "#", "env"),
	     *out = set(text, BODY, BLOCK_TOP), *back = rm(text);
	size_t start = 0, end = 0;

	assert_int_equal(blockedit_find(text, strlen(text), "#", "env", &start, &end, NULL, 0), 1);
	assert_int_equal(start, 3);
	assert_int_equal(end, strlen(text) - 3);
	assert_string_equal(body, "x=1\r\n");
	assert_string_equal(out, "a\r\n" BLOCK "b\r\n");
	assert_string_equal(back, "a\r\nb\r\n");
	free(back);
	free(out);
	free(body);
}

static void another_names_block_is_left_alone(void **state)
{
	static const char nccl[] = "# >>> clusterdoc nccl >>>\nNCCL_DEBUG=INFO\n"
	                           "# <<< clusterdoc nccl <<<\n";
	char *text = cd_asprintf("a\n%sb\n", nccl), *out = set(text, BODY, BLOCK_BOTTOM), *back,
	     *want = cd_asprintf("a\n%sb\n%s", nccl, BLOCK);

	assert_string_equal(out, want);
	back = rm(out);
	assert_string_equal(back, text);
	free(back);
	free(want);
	free(out);
	free(text);
	/* Broken markers of another name are not ours to judge. */
	out = set("# >>> clusterdoc nccl >>>\nx\n", BODY, BLOCK_BOTTOM);
	assert_string_equal(out, "# >>> clusterdoc nccl >>>\nx\n" BLOCK);
	free(out);
}

static void another_prefix_makes_other_markers(void **state)
{
	char *out = NULL;
	size_t outlen = 0;

	assert_int_equal(
	    blockedit_set("int x;\n", 7, "//", "env", "y\n", BLOCK_BOTTOM, &out, &outlen, NULL, 0),
	    0);
	assert_string_equal(out,
	                    "int x;\n// >>> clusterdoc env >>>\ny\n// <<< clusterdoc env <<<\n");
	free(out);
}

/* ---- the body ---- */

static void body_is_the_lines_between_the_markers(void **state)
{
	static const char text[] = "a\n" BLOCK "b\n";
	char *body = blockedit_body(text, strlen(text), "#", "env");

	assert_string_equal(body, BODY);
	free(body);
	body = blockedit_body(BEGIN_ENV END_ENV, strlen(BEGIN_ENV END_ENV), "#", "env");
	assert_string_equal(body, "");
	free(body);
	assert_null(blockedit_body(text, strlen(text), "#", "nccl"));
	assert_null(blockedit_body("", 0, "#", "env"));
}

/* ---- broken markers and refused input ---- */

static void a_begin_without_an_end_is_a_parse_error_naming_its_line(void **state)
{
	assert_broken("a\nb\n" BEGIN_ENV "x\n",
	              "line 3: \"# >>> clusterdoc env >>>\" without a \"# <<< clusterdoc env <<<\" "
	              "after it",
	              "");
}

static void an_end_without_a_begin_is_a_parse_error_naming_its_line(void **state)
{
	assert_broken("a\n" END_ENV BLOCK,
	              "line 2: \"# <<< clusterdoc env <<<\" without a \"# >>> clusterdoc env >>>\" "
	              "before it",
	              "");
	assert_broken(BLOCK END_ENV, "line 5: ", "without a");
}

static void the_block_twice_is_a_parse_error_naming_both_lines(void **state)
{
	assert_broken(BLOCK "x\n" BLOCK,
	              "line 6: \"# >>> clusterdoc env >>>\" again (the block is already on line 1)",
	              "");
}

static void a_second_begin_before_the_end_is_a_parse_error(void **state)
{
	assert_broken(BEGIN_ENV "x\n" BEGIN_ENV "y\n" END_ENV, "line 3: a second", "line 1");
}

static void a_nul_byte_is_refused(void **state)
{
	static const char text[] = "a\nb\0c\n";
	char *out = NULL, err[CD_ERRLEN] = "";
	size_t outlen;

	assert_int_equal(blockedit_set(text, sizeof(text) - 1, "#", "env", BODY, BLOCK_BOTTOM, &out,
	                               &outlen, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "line 2 holds a NUL byte: not a text file");
	assert_null(out);
}

static void a_bad_name_prefix_or_body_is_refused(void **state)
{
	static const char *const names[] = {"", "Env", "a b", "a_b", "a\n"};
	static const char *const prefixes[] = {"", " #", "#\n", "\t#"};
	static const char *const bodies[] = {"x", "x\ny", BEGIN_ENV, "a\n  " END_ENV};
	char *out = NULL, err[CD_ERRLEN];
	size_t outlen, start, end;

	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++) {
		assert_int_equal(
		    blockedit_find("x\n", 2, "#", names[i], &start, &end, err, sizeof(err)),
		    CD_ERR_PARSE);
		assert_non_null(strstr(err, "is not [a-z0-9-]+"));
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(prefixes); i++)
		assert_int_equal(
		    blockedit_find("x\n", 2, prefixes[i], "env", &start, &end, err, sizeof(err)),
		    CD_ERR_PARSE);
	assert_int_equal(blockedit_set("x\n", 2, "#", "env", BODY, (enum blockedit_where)7, &out,
	                               &outlen, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "block \"env\": unknown place 7");
	for (size_t i = 0; i < CD_ARRAY_LEN(bodies); i++) {
		assert_int_equal(blockedit_set("x\n", 2, "#", "env", bodies[i], BLOCK_BOTTOM, &out,
		                               &outlen, err, sizeof(err)),
		                 CD_ERR_PARSE);
		assert_null(out);
		assert_non_null(strstr(err, "the body of block \"env\""));
	}
}

/* ---- diffs: GNU diff as the reference ---- */

/* What `diff -U context [--minimal]` (-u with that context) prints for a and b, after its two
 * header lines (new string), or NULL when GNU diff is not installed. */
static char *gnu_diff(const char *a, const char *b, int context, int minimal)
{
	char dir[] = "/tmp/test_blockedit.XXXXXX", pa[64], pb[64], cmd[256];
	char *out = cd_malloc(1 << 16), *s;
	size_t n;
	FILE *fp;
	int status;

	if (access(DIFF, X_OK) != 0) {
		free(out);
		return NULL;
	}
	assert_non_null(mkdtemp(dir));
	snprintf(pa, sizeof(pa), "%s/a", dir);
	snprintf(pb, sizeof(pb), "%s/b", dir);
	assert_int_equal(cd_write_file_atomic(pa, a, strlen(a), 0644, NULL, 0), 0);
	assert_int_equal(cd_write_file_atomic(pb, b, strlen(b), 0644, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), DIFF " -U %d %s %s %s", context, minimal ? "--minimal" : "", pa,
	         pb);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	n = fread(out, 1, (1 << 16) - 1, fp);
	out[n] = '\0';
	status = pclose(fp);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == (strcmp(a, b) != 0));
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	s = out;
	for (int i = 0; i < 2 && *s; i++)
		s = strchr(s, '\n') + 1;
	memmove(out, s, strlen(s) + 1);
	return out;
}

/* Ours, checked for its header lines, without them (new string). */
static char *our_diff(const char *a, const char *b, int context)
{
	char *d = textdiff_unified(a, strlen(a), b, strlen(b), "a/f", "b/f", context);

	if (strcmp(a, b) == 0) {
		assert_string_equal(d, "");
		return d;
	}
	assert_memory_equal(d, "--- a/f\n+++ b/f\n", 16);
	memmove(d, d + 16, strlen(d + 16) + 1);
	return d;
}

/* The '+' and '-' lines of hunks. */
static void count_marks(const char *hunks, size_t *plus, size_t *minus)
{
	*plus = *minus = 0;
	for (const char *s = hunks; *s; s = strchr(s, '\n') + 1) {
		*plus += *s == '+';
		*minus += *s == '-';
	}
}

/* Ours equals GNU diff's byte for byte (where GNU diff is installed); want,
 * when not NULL, is the hunks both must print; the counts agree with both. */
static void assert_like_gnu(const char *a, const char *b, int context, const char *want)
{
	char *ours = our_diff(a, b, context), *gnu = gnu_diff(a, b, context, 0);
	size_t plus, minus, added, removed;

	if (want)
		assert_string_equal(ours, want);
	count_marks(ours, &plus, &minus);
	textdiff_count(a, strlen(a), b, strlen(b), &added, &removed);
	assert_int_equal(added, plus);
	assert_int_equal(removed, minus);
	if (!gnu) { /* want, when given, was checked */
		free(ours);
		return;
	}
	if (strcmp(ours, gnu) != 0)
		fail_msg("a:\n%s\nb:\n%s\nours (-U%d):\n%s\ngnu:\n%s", a, b, context, ours, gnu);
	free(gnu);
	free(ours);
}

static const char ten[] = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";

static void diff_of_equal_texts_is_empty(void **state)
{
	char *d = textdiff_unified(ten, strlen(ten), ten, strlen(ten), "a", "b", 3);
	size_t added = 9, removed = 9;

	assert_string_equal(d, "");
	free(d);
	d = textdiff_unified(NULL, 0, "", 0, "a", "b", 3);
	assert_string_equal(d, "");
	free(d);
	textdiff_count(ten, strlen(ten), ten, strlen(ten), &added, &removed);
	assert_int_equal(added, 0);
	assert_int_equal(removed, 0);
}

static void diff_has_labels_and_no_timestamps(void **state)
{
	char *d = textdiff_unified("a\n", 2, "b\n", 2, "/etc/hosts", "/etc/hosts (fixed)", 3);

	assert_string_equal(d, "--- /etc/hosts\n+++ /etc/hosts (fixed)\n@@ -1 +1 @@\n-a\n+b\n");
	free(d);
}

static void diff_insertion_at_the_top(void **state)
{
	assert_like_gnu(ten, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 3,
	                "@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n");
	assert_like_gnu(ten, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 0, "@@ -0,0 +1 @@\n+0\n");
}

static void diff_insertion_in_the_middle(void **state)
{
	assert_like_gnu(ten, "1\n2\n3\n4\n5\nx\ny\n6\n7\n8\n9\n10\n", 3,
	                "@@ -3,6 +3,8 @@\n 3\n 4\n 5\n+x\n+y\n 6\n 7\n 8\n");
	assert_like_gnu(ten, "1\n2\n3\n4\n5\nx\ny\n6\n7\n8\n9\n10\n", 0,
	                "@@ -5,0 +6,2 @@\n+x\n+y\n");
}

static void diff_insertion_at_the_end(void **state)
{
	assert_like_gnu(ten, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", 3,
	                "@@ -8,3 +8,4 @@\n 8\n 9\n 10\n+11\n");
}

static void diff_deletion(void **state)
{
	assert_like_gnu(ten, "1\n2\n3\n4\n6\n7\n8\n9\n10\n", 3,
	                "@@ -2,7 +2,6 @@\n 2\n 3\n 4\n-5\n 6\n 7\n 8\n");
	assert_like_gnu(ten, "1\n2\n3\n4\n6\n7\n8\n9\n10\n", 0, "@@ -5 +4,0 @@\n-5\n");
}

static void diff_replacement_removes_before_it_adds(void **state)
{
	assert_like_gnu(ten, "1\n2\n3\n4\nfive\nFIVE\n6\n7\n8\n9\n10\n", 3,
	                "@@ -2,7 +2,8 @@\n 2\n 3\n 4\n-5\n+five\n+FIVE\n 6\n 7\n 8\n");
}

static void diff_without_a_final_newline(void **state)
{
	/* On the old side only, on the new side only, and on both. */
	assert_like_gnu("a\nb", "a\nb\n", 3,
	                "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
	assert_like_gnu("a\nb\n", "a\nb", 3,
	                "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
	assert_like_gnu("a\nb\nc", "a\nB\nc", 3,
	                "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n");
	assert_like_gnu("x\ny", "x\nz", 0,
	                "@@ -2 +2 @@\n-y\n\\ No newline at end of file\n+z\n"
	                "\\ No newline at end of file\n");
	assert_like_gnu("x", "# >>> clusterdoc env >>>\n# <<< clusterdoc env <<<\n", 3, NULL);
}

static void diff_from_and_to_an_empty_text(void **state)
{
	assert_like_gnu("", "a\nb\n", 3, "@@ -0,0 +1,2 @@\n+a\n+b\n");
	assert_like_gnu("a\nb\n", "", 3, "@@ -1,2 +0,0 @@\n-a\n-b\n");
	assert_like_gnu("", "a", 0, "@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n");
}

static void diff_far_apart_changes_make_two_hunks(void **state)
{
	assert_like_gnu(ten, "x\n2\n3\n4\n5\n6\n7\n8\n9\ny\n", 3,
	                "@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n"
	                "@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+y\n");
	assert_like_gnu(ten, "x\n2\n3\n4\n5\n6\n7\n8\n9\ny\n", 0,
	                "@@ -1 +1 @@\n-1\n+x\n@@ -10 +10 @@\n-10\n+y\n");
}

static void diff_changes_with_touching_context_share_a_hunk(void **state)
{
	/* Six unchanged lines between: 2 * 3 context lines touch. */
	assert_like_gnu("1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n", 3,
	                "@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n");
	/* Seven apart: two hunks. */
	assert_like_gnu(
	    "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "x\n2\n3\n4\n5\n6\n7\n8\ny\n", 3,
	    "@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -6,4 +6,4 @@\n 6\n 7\n 8\n-9\n+y\n");
	assert_like_gnu("1\n2\n3\n", "x\n2\ny\n", 1, "@@ -1,3 +1,3 @@\n-1\n+x\n 2\n-3\n+y\n");
	assert_like_gnu("1\n2\n3\n", "x\n2\ny\n", 0, "@@ -1 +1 @@\n-1\n+x\n@@ -3 +3 @@\n-3\n+y\n");
}

static void diff_of_a_block_insertion_adds_its_lines(void **state)
{
	char *with = set(cloud_init_hosts, BODY, BLOCK_AFTER_COMMENTS);
	size_t added, removed;

	textdiff_count(cloud_init_hosts, strlen(cloud_init_hosts), with, strlen(with), &added,
	               &removed);
	assert_int_equal(added, 4);
	assert_int_equal(removed, 0);
	assert_like_gnu(cloud_init_hosts, with, 3,
	                "@@ -5,6 +5,10 @@\n"
	                " # b.) change or remove the value of 'manage_etc_hosts' in\n"
	                " #     /etc/cloud/cloud.cfg or cloud-config from user-data\n"
	                " #\n"
	                "+" BEGIN_ENV "+export NCCL_SOCKET_IFNAME=eth1\n+export NCCL_IB_DISABLE=1\n"
	                "+" END_ENV " 127.0.1.1 node1.example.org node1\n"
	                " 127.0.0.1 localhost\n"
	                " \n");
	free(with);
}

static void diff_of_texts_with_a_nul_byte_says_they_are_binary(void **state)
{
	char *d = textdiff_unified("a\0\n", 3, "b\n", 2, "old", "new", 3);
	size_t added, removed;

	assert_string_equal(d, "Binary files old and new differ\n");
	free(d);
	d = textdiff_unified("a\0\n", 3, "a\0\n", 3, "old", "new", 3);
	assert_string_equal(d, "");
	free(d);
	textdiff_count("a\0\n", 3, "b\n", 2, &added, &removed);
	assert_int_equal(added, 1);
	assert_int_equal(removed, 1);
}

/* A deterministic generator (the tests must not depend on libc's rand). */
static uint32_t next_random(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* A pair of small texts made of a few distinct lines, b an edit of a, either
 * possibly without its final newline. */
static void random_pair(uint64_t *s, char *a, char *b, size_t cap)
{
	static const char *const lines[] = {"a\n", "b\n", "c\n", "d\n", "\n"};
	size_t distinct = 2 + next_random(s) % 4, n = next_random(s) % 14;
	const char *line;

	a[0] = b[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		line = lines[next_random(s) % distinct];
		assert_true(strlen(a) + strlen(line) < cap);
		strcat(a, line);
		switch (next_random(s) % 5) {
		case 0: /* removed */
			break;
		case 1: /* replaced */
			strcat(b, lines[next_random(s) % distinct]);
			break;
		case 2: /* one added before */
			strcat(b, lines[next_random(s) % distinct]);
			strcat(b, line);
			break;
		default:
			strcat(b, line);
		}
	}
	if (next_random(s) % 3 == 0)
		strcat(b, lines[next_random(s) % distinct]);
	if (next_random(s) % 5 == 0 && a[0])
		a[strlen(a) - 1] = '\0';
	if (next_random(s) % 5 == 0 && b[0])
		b[strlen(b) - 1] = '\0';
}

/* The length of a longest common subsequence of the lines of a and b, by
 * dynamic programming: the size of every minimal script, independently of
 * Myers. */
static size_t lcs_lines(const char *a, const char *b, size_t *na, size_t *nb)
{
	const char *la[32], *lb[32];
	size_t lena[32], lenb[32], t[33][33] = {{0}};

	*na = *nb = 0;
	for (const char *p = a; *p; p += lena[(*na)++]) {
		const char *nl = strchr(p, '\n');

		la[*na] = p;
		lena[*na] = nl ? (size_t)(nl - p) + 1 : strlen(p);
	}
	for (const char *p = b; *p; p += lenb[(*nb)++]) {
		const char *nl = strchr(p, '\n');

		lb[*nb] = p;
		lenb[*nb] = nl ? (size_t)(nl - p) + 1 : strlen(p);
	}
	for (size_t i = 1; i <= *na; i++)
		for (size_t j = 1; j <= *nb; j++)
			if (lena[i - 1] == lenb[j - 1] &&
			    !memcmp(la[i - 1], lb[j - 1], lena[i - 1]))
				t[i][j] = t[i - 1][j - 1] + 1;
			else
				t[i][j] = t[i - 1][j] > t[i][j - 1] ? t[i - 1][j] : t[i][j - 1];
	return t[*na][*nb];
}

static void diff_of_random_edits_is_minimal_like_gnu_diff(void **state)
{
	uint64_t seed = 20261121;
	char a[64], b[128];
	int have_diff = access(DIFF, X_OK) == 0;

	for (int c = 0; c < 50; c++) {
		int context = c % 4;
		size_t na, nb, common, plus, minus, gplus, gminus;
		char *ours, *gnu;

		random_pair(&seed, a, b, sizeof(a));
		ours = our_diff(a, b, context);
		count_marks(ours, &plus, &minus);
		common = lcs_lines(a, b, &na, &nb);
		assert_int_equal(plus, nb - common);
		assert_int_equal(minus, na - common);
		if (have_diff) {
			/* Plain diff may pick another of the minimal scripts:
			 * the same counts. With --minimal it picks ours. */
			gnu = gnu_diff(a, b, context, 0);
			count_marks(gnu, &gplus, &gminus);
			assert_int_equal(plus, gplus);
			assert_int_equal(minus, gminus);
			free(gnu);
			gnu = gnu_diff(a, b, context, 1);
			if (strcmp(ours, gnu) != 0)
				fail_msg("a:\n%s\nb:\n%s\nours (-U%d):\n%s\ngnu --minimal:\n%s", a,
				         b, context, ours, gnu);
			free(gnu);
		}
		free(ours);
	}
	if (!have_diff)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(set_into_an_empty_text_gives_just_the_block),
	    cmocka_unit_test(set_bottom_appends_after_the_last_line),
	    cmocka_unit_test(set_bottom_adds_a_missing_final_newline_first),
	    cmocka_unit_test(set_top_goes_on_line_one),
	    cmocka_unit_test(set_top_goes_after_a_shebang_line),
	    cmocka_unit_test(set_top_after_a_shebang_without_newline_adds_it),
	    cmocka_unit_test(set_after_comments_on_debian_hosts_goes_on_line_one),
	    cmocka_unit_test(set_after_comments_goes_after_the_leading_comments_and_blanks),
	    cmocka_unit_test(set_after_comments_goes_before_another_clusterdoc_block),
	    cmocka_unit_test(set_after_comments_on_only_comments_goes_at_the_end),
	    cmocka_unit_test(set_an_empty_body_gives_the_two_markers),
	    cmocka_unit_test(set_replaces_the_block_where_it_is),
	    cmocka_unit_test(set_rewrites_tolerated_markers_exactly),
	    cmocka_unit_test(set_keeps_an_end_marker_that_ends_the_text_without_newline),
	    cmocka_unit_test(set_twice_gives_the_same_text),
	    cmocka_unit_test(set_with_another_body_changes_only_the_body),
	    cmocka_unit_test(remove_gives_back_the_text_before_set),
	    cmocka_unit_test(remove_after_bottom_keeps_the_newline_set_added),
	    cmocka_unit_test(remove_takes_out_the_block_lines_only),
	    cmocka_unit_test(remove_of_an_absent_block_is_a_copy),
	    cmocka_unit_test(find_gives_the_byte_range_of_the_whole_block),
	    cmocka_unit_test(find_of_an_absent_block_is_zero),
	    cmocka_unit_test(markers_with_blanks_around_them_are_found),
	    cmocka_unit_test(lines_that_differ_inside_are_not_markers),
	    cmocka_unit_test(a_crlf_file_is_edited_keeping_its_other_bytes),
	    cmocka_unit_test(another_names_block_is_left_alone),
	    cmocka_unit_test(another_prefix_makes_other_markers),
	    cmocka_unit_test(body_is_the_lines_between_the_markers),
	    cmocka_unit_test(a_begin_without_an_end_is_a_parse_error_naming_its_line),
	    cmocka_unit_test(an_end_without_a_begin_is_a_parse_error_naming_its_line),
	    cmocka_unit_test(the_block_twice_is_a_parse_error_naming_both_lines),
	    cmocka_unit_test(a_second_begin_before_the_end_is_a_parse_error),
	    cmocka_unit_test(a_nul_byte_is_refused),
	    cmocka_unit_test(a_bad_name_prefix_or_body_is_refused),
	    cmocka_unit_test(diff_of_equal_texts_is_empty),
	    cmocka_unit_test(diff_has_labels_and_no_timestamps),
	    cmocka_unit_test(diff_insertion_at_the_top),
	    cmocka_unit_test(diff_insertion_in_the_middle),
	    cmocka_unit_test(diff_insertion_at_the_end),
	    cmocka_unit_test(diff_deletion),
	    cmocka_unit_test(diff_replacement_removes_before_it_adds),
	    cmocka_unit_test(diff_without_a_final_newline),
	    cmocka_unit_test(diff_from_and_to_an_empty_text),
	    cmocka_unit_test(diff_far_apart_changes_make_two_hunks),
	    cmocka_unit_test(diff_changes_with_touching_context_share_a_hunk),
	    cmocka_unit_test(diff_of_a_block_insertion_adds_its_lines),
	    cmocka_unit_test(diff_of_texts_with_a_nul_byte_says_they_are_binary),
	    cmocka_unit_test(diff_of_random_edits_is_minimal_like_gnu_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
