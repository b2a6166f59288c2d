/* SPDX-License-Identifier: MIT */
/* test_junit.c - JUnit XML reports: the document, counts, times, escaping,
 * the file (checked by xmllint where installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cd.h"
#include "fsutil.h"
#include "junit.h"

#define XMLLINT "/usr/bin/xmllint"

/* Two suites; a pass, a failure with output, an error, a skip. */
static struct junit *small_report(void)
{
	struct junit *j = junit_new("clusterdoc check", "2026-11-21T10:00:00");

	assert_int_equal(junit_suite(j, "node1", "node1"), 0);
	assert_int_equal(
	    junit_case(j, "clusterdoc.check", "ssh", 0.012, JUNIT_PASS, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(junit_case(j, "clusterdoc.check", "mtu", 0.5, JUNIT_FAILURE, "error",
	                            "MTU 1500 on eth0, 9000 elsewhere", "eth0: 1500\neth1: 9000",
	                            "ip link output"),
	                 0);
	assert_int_equal(junit_suite(j, "node2", NULL), 0);
	assert_int_equal(junit_case(j, "clusterdoc.check", "ssh", 2, JUNIT_ERROR, "unreachable",
	                            "cannot connect", NULL, NULL),
	                 0);
	assert_int_equal(junit_case(j, "clusterdoc.check", "gpu", 0, JUNIT_SKIPPED, "ignored",
	                            "no GPU", NULL, NULL),
	                 0);
	return j;
}

static const char small_report_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<testsuites name=\"clusterdoc check\" tests=\"4\" failures=\"1\" errors=\"1\" "
    "skipped=\"1\" time=\"2.512\">\n"
    "  <testsuite name=\"node1\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" "
    "time=\"0.512\" timestamp=\"2026-11-21T10:00:00\" hostname=\"node1\">\n"
    "    <testcase classname=\"clusterdoc.check\" name=\"ssh\" time=\"0.012\"/>\n"
    "    <testcase classname=\"clusterdoc.check\" name=\"mtu\" time=\"0.500\">\n"
    "      <failure message=\"MTU 1500 on eth0, 9000 elsewhere\" type=\"error\">eth0: 1500\n"
    "eth1: 9000</failure>\n"
    "      <system-out>ip link output</system-out>\n"
    "    </testcase>\n"
    "  </testsuite>\n"
    "  <testsuite name=\"node2\" tests=\"2\" failures=\"0\" errors=\"1\" skipped=\"1\" "
    "time=\"2.000\" timestamp=\"2026-11-21T10:00:00\">\n"
    "    <testcase classname=\"clusterdoc.check\" name=\"ssh\" time=\"2.000\">\n"
    "      <error message=\"cannot connect\" type=\"unreachable\"/>\n"
    "    </testcase>\n"
    "    <testcase classname=\"clusterdoc.check\" name=\"gpu\" time=\"0.000\">\n"
    "      <skipped message=\"no GPU\"/>\n"
    "    </testcase>\n"
    "  </testsuite>\n"
    "</testsuites>\n";

static char *render(const struct junit *j)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	assert_int_equal(junit_render(j, &b), 0);
	s = strdup(b.data);
	buf_fini(&b);
	return s;
}

/* The document of a report with one case, as rendered (free it). */
static char *render_one(const char *classname, const char *name, enum junit_outcome outcome,
                        const char *message, const char *detail, const char *out)
{
	struct junit *j = junit_new("r", NULL);
	char *xml;

	junit_suite(j, "s", NULL);
	assert_int_equal(junit_case(j, classname, name, 0, outcome, NULL, message, detail, out), 0);
	xml = render(j);
	junit_free(j);
	return xml;
}

/* The part of xml between its <testcase and </testsuite> (free it). */
static char *case_of(const char *xml)
{
	const char *a = strstr(xml, "    <testcase"), *b = strstr(xml, "  </testsuite>");

	assert_non_null(a);
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

static void a_small_report_renders_exactly(void **state)
{
	struct junit *j = small_report();
	char *xml = render(j);

	assert_string_equal(xml, small_report_xml);
	free(xml);
	junit_free(j);
}

static void counts_are_computed_from_the_cases(void **state)
{
	struct junit *j = small_report();
	struct junit_counts c;

	junit_counts(j, &c);
	assert_int_equal(c.tests, 4);
	assert_int_equal(c.failures, 1);
	assert_int_equal(c.errors, 1);
	assert_int_equal(c.skipped, 1);
	junit_free(j);
}

static void an_empty_report_is_a_valid_document(void **state)
{
	struct junit *j = junit_new("empty", NULL);
	struct junit_counts c;
	char *xml = render(j);

	assert_string_equal(xml,
	                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	                    "<testsuites name=\"empty\" tests=\"0\" failures=\"0\" errors=\"0\" "
	                    "skipped=\"0\" time=\"0.000\">\n"
	                    "</testsuites>\n");
	junit_counts(j, &c);
	assert_int_equal(c.tests, 0);
	free(xml);
	junit_free(j);
}

static void a_case_without_a_suite_starts_one_named_after_the_report(void **state)
{
	struct junit *j = junit_new("clusterdoc bench", NULL);
	char *xml;

	junit_case(j, "c", "n", 1.25, JUNIT_PASS, NULL, NULL, NULL, NULL);
	xml = render(j);
	assert_non_null(strstr(xml, "\n  <testsuite name=\"clusterdoc bench\" tests=\"1\" "
	                            "failures=\"0\" errors=\"0\" skipped=\"0\" time=\"1.250\">\n"
	                            "    <testcase classname=\"c\" name=\"n\" time=\"1.250\"/>\n"));
	free(xml);
	junit_free(j);
}

static void suite_time_is_the_sum_of_the_written_case_times(void **state)
{
	struct junit *j = junit_new("r", NULL);
	char *xml;

	junit_suite(j, "s", NULL);
	junit_case(j, "c", "a", 0.0004, JUNIT_PASS, NULL, NULL, NULL, NULL);
	junit_case(j, "c", "b", 0.0006, JUNIT_PASS, NULL, NULL, NULL, NULL);
	junit_case(j, "c", "c", 2.5, JUNIT_PASS, NULL, NULL, NULL, NULL);
	junit_case(j, "c", "d", -1, JUNIT_PASS, NULL, NULL, NULL, NULL);
	xml = render(j);
	assert_non_null(strstr(xml, "name=\"a\" time=\"0.000\"/>"));
	assert_non_null(strstr(xml, "name=\"b\" time=\"0.001\"/>"));
	assert_non_null(strstr(xml, "name=\"c\" time=\"2.500\"/>"));
	assert_non_null(strstr(xml, "name=\"d\" time=\"0.000\"/>"));
	assert_non_null(strstr(xml, "<testsuite name=\"s\" tests=\"4\" failures=\"0\" errors=\"0\" "
	                            "skipped=\"0\" time=\"2.501\">"));
	assert_non_null(strstr(xml,
	                       "<testsuites name=\"r\" tests=\"4\" failures=\"0\" errors=\"0\" "
	                       "skipped=\"0\" time=\"2.501\">"));
	free(xml);
	junit_free(j);
}

static void attributes_escape_markup_quotes_and_whitespace(void **state)
{
	char *xml =
	    render_one("a&b", "<x> \"y\" 'z'", JUNIT_FAILURE, "line 1\nline\t2\r", NULL, NULL);
	char *c = case_of(xml);

	assert_string_equal(c, "    <testcase classname=\"a&amp;b\" "
	                       "name=\"&lt;x&gt; &quot;y&quot; &apos;z&apos;\" time=\"0.000\">\n"
	                       "      <failure message=\"line 1&#10;line&#9;2&#13;\"/>\n"
	                       "    </testcase>\n");
	free(c);
	free(xml);
}

static void text_escapes_markup_and_keeps_newlines(void **state)
{
	char *xml = render_one("c", "n", JUNIT_ERROR, NULL, "a < b && c > \"d\"\n\tnext\r\n",
	                       "]]> 'out'\n");
	char *c = case_of(xml);

	assert_string_equal(c, "    <testcase classname=\"c\" name=\"n\" time=\"0.000\">\n"
	                       "      <error>a &lt; b &amp;&amp; c &gt; &quot;d&quot;\n"
	                       "\tnext&#13;\n</error>\n"
	                       "      <system-out>]]&gt; &apos;out&apos;\n</system-out>\n"
	                       "    </testcase>\n");
	free(c);
	free(xml);
}

static void forbidden_bytes_become_question_marks_and_utf8_is_kept(void **state)
{
	/* control characters; an overlong '/'; a surrogate; a stray continuation
	 * byte; 0xff; U+FFFE; a sequence cut short; then é, €, U+1F600 and DEL,
	 * which XML allows. */
	char *xml = render_one("c", "n", JUNIT_FAILURE, NULL,
	                       "\x01\x08\x0b\x0c\x1f|\xc0\xaf|\xed\xa0\x80|\x80|\xff|\xef\xbf\xbe|"
	                       "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f|\xe2\x82",
	                       NULL);
	char *c = case_of(xml);

	assert_string_equal(c, "    <testcase classname=\"c\" name=\"n\" time=\"0.000\">\n"
	                       "      <failure>?????|??|???|?|?|???|"
	                       /* "??" and "<" apart: "??<" is a trigraph. */
	                       "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f|??"
	                       "</failure>\n"
	                       "    </testcase>\n");
	free(c);
	free(xml);
}

static void a_passing_case_ignores_message_and_detail_but_keeps_output(void **state)
{
	char *xml = render_one("c", "n", JUNIT_PASS, "m", "d", "o");
	char *c = case_of(xml);

	assert_string_equal(c, "    <testcase classname=\"c\" name=\"n\" time=\"0.000\">\n"
	                       "      <system-out>o</system-out>\n"
	                       "    </testcase>\n");
	free(c);
	free(xml);
}

static void a_skipped_case_has_a_message_only(void **state)
{
	struct junit *j = junit_new("r", NULL);
	char *xml, *c;

	junit_suite(j, "s", NULL);
	junit_case(j, "c", "n", 0, JUNIT_SKIPPED, "type", "not run", "detail", NULL);
	xml = render(j);
	c = case_of(xml);
	assert_string_equal(c, "    <testcase classname=\"c\" name=\"n\" time=\"0.000\">\n"
	                       "      <skipped message=\"not run\"/>\n"
	                       "    </testcase>\n");
	free(c);
	free(xml);
	junit_free(j);
}

static void an_unknown_outcome_is_refused(void **state)
{
	struct junit *j = junit_new("r", NULL);
	struct junit_counts c;

	assert_int_equal(junit_case(j, "c", "n", 0, (enum junit_outcome)7, NULL, NULL, NULL, NULL),
	                 CD_ERR_PARSE);
	junit_counts(j, &c);
	assert_int_equal(c.tests, 0);
	junit_free(j);
}

static void render_past_the_buffer_cap_is_too_big(void **state)
{
	struct junit *j = small_report();
	struct buf b;

	buf_init(&b, 100);
	assert_int_equal(junit_render(j, &b), CD_ERR_TOOBIG);
	buf_fini(&b);
	junit_free(j);
}

static void write_file_writes_the_document_with_mode_0644(void **state)
{
	struct junit *j = small_report();
	char dir[] = "/tmp/test_junit.XXXXXX", path[64], err[CD_ERRLEN];
	unsigned char *data;
	size_t len;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.xml", dir);
	assert_int_equal(junit_write_file(j, path, err, sizeof(err)), 0);
	assert_int_equal(cd_read_file(path, 1 << 20, &data, &len, err, sizeof(err)), 0);
	assert_string_equal((char *)data, small_report_xml);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	free(data);
	unlink(path);
	rmdir(dir);
	junit_free(j);
}

static void write_file_into_a_missing_directory_is_an_io_error(void **state)
{
	struct junit *j = small_report();
	char err[CD_ERRLEN];

	assert_int_equal(junit_write_file(j, "/nonexistent-dir/report.xml", err, sizeof(err)),
	                 CD_ERR_IO);
	assert_string_equal(err,
	                    "cannot write /nonexistent-dir/report.xml: No such file or directory");
	junit_free(j);
}

/* tests/unit/test_junit.c -> tests/fixtures/junit.xsd (new; free it) */
static char *schema_path(void)
{
	const char *file = __FILE__, *unit = strstr(file, "unit/test_junit.c");

	return cd_asprintf("%.*sfixtures/junit.xsd", unit ? (int)(unit - file) : 0, file);
}

/* xmllint's verdict on xml (0: well-formed, and valid against schema when
 * not NULL); its complaints into out. */
static int xmllint_check(const char *xml, const char *schema, char *out, size_t len)
{
	char dir[] = "/tmp/test_junit.XXXXXX", path[64], cmd[512];
	FILE *fp;
	size_t n;
	int status;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.xml", dir);
	assert_int_equal(cd_write_file_atomic(path, xml, strlen(xml), 0644, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), XMLLINT " --noout %s%s - <%s 2>&1", schema ? "--schema " : "",
	         schema ? schema : "", path);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	n = fread(out, 1, len - 1, fp);
	out[n] = '\0';
	status = pclose(fp);
	unlink(path);
	rmdir(dir);
	return status;
}

static void a_hostile_report_is_well_formed_xml(void **state)
{
	struct junit *j;
	char *xml, out[4096];

	if (access(XMLLINT, X_OK) != 0)
		skip();
	j = small_report();
	junit_suite(j, "<&\"'>\n\x01\xff", "h\xc0\xaf");
	junit_case(j, "]]>", "<!-- x -->", 1, JUNIT_FAILURE, "\"'&<", "\r\n\t\x1b\xed\xa0\x80",
	           "<![CDATA[ x ]]>\xf4\x90\x80\x80", "&amp; \xef\xbf\xbf");
	junit_case(j, "c", "n", 1, JUNIT_SKIPPED, "t", "<skip/>", NULL, "\x7f");
	xml = render(j);
	assert_int_equal(xmllint_check(xml, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	free(xml);
	junit_free(j);
}

static void the_report_validates_against_the_junit_schema(void **state)
{
	struct junit *j;
	char *xml, *schema = schema_path(), out[4096];

	if (access(XMLLINT, X_OK) != 0 || access(schema, R_OK) != 0) {
		free(schema);
		skip();
	}
	j = small_report();
	junit_case(j, "c", "n", 1, JUNIT_SKIPPED, "t", "<skip/>", "detail", "\x7f");
	junit_case(j, "c", "e", 1, JUNIT_ERROR, NULL, NULL, NULL, NULL);
	xml = render(j);
	assert_int_equal(xmllint_check(xml, schema, out, sizeof(out)), 0);
	assert_string_equal(out, "- validates\n");
	free(schema);
	free(xml);
	junit_free(j);
}

static void xmllint_check_can_fail(void **state)
{
	char out[4096];

	if (access(XMLLINT, X_OK) != 0)
		skip();
	/* The check above would pass on anything if xmllint never complained. */
	assert_int_not_equal(xmllint_check("<a>\x01</a>\n", NULL, out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_small_report_renders_exactly),
	    cmocka_unit_test(counts_are_computed_from_the_cases),
	    cmocka_unit_test(an_empty_report_is_a_valid_document),
	    cmocka_unit_test(a_case_without_a_suite_starts_one_named_after_the_report),
	    cmocka_unit_test(suite_time_is_the_sum_of_the_written_case_times),
	    cmocka_unit_test(attributes_escape_markup_quotes_and_whitespace),
	    cmocka_unit_test(text_escapes_markup_and_keeps_newlines),
	    cmocka_unit_test(forbidden_bytes_become_question_marks_and_utf8_is_kept),
	    cmocka_unit_test(a_passing_case_ignores_message_and_detail_but_keeps_output),
	    cmocka_unit_test(a_skipped_case_has_a_message_only),
	    cmocka_unit_test(an_unknown_outcome_is_refused),
	    cmocka_unit_test(render_past_the_buffer_cap_is_too_big),
	    cmocka_unit_test(write_file_writes_the_document_with_mode_0644),
	    cmocka_unit_test(write_file_into_a_missing_directory_is_an_io_error),
	    cmocka_unit_test(a_hostile_report_is_well_formed_xml),
	    cmocka_unit_test(the_report_validates_against_the_junit_schema),
	    cmocka_unit_test(xmllint_check_can_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
