/* SPDX-License-Identifier: MIT */
/*
 * junit.h - JUnit XML reports for CI systems (the de-facto schema Jenkins,
 * GitLab and GitHub's test reporters read):
 *
 *   <testsuites name=.. tests=.. failures=.. errors=.. skipped=.. time=..>
 *     <testsuite name=.. hostname=.. tests=.. failures=.. errors=.. skipped=..
 *                time=.. timestamp=..>
 *       <testcase classname=.. name=.. time=..>
 *         <failure message=.. type=..>detail</failure>   (or error, or skipped)
 *         <system-out>text</system-out>                   (when given)
 *       </testcase>
 *
 * A failure is a check that ran and found a problem; an error is a check
 * that could not run (the node was unreachable); skipped is not run. Counts
 * are computed from the cases. Text is escaped for XML (& < > " '), bytes
 * that XML 1.0 forbids (control characters other than tab, newline and
 * carriage return, and invalid UTF-8) become '?'. Times are seconds with
 * three decimals.
 */
#ifndef CD_JUNIT_H
#define CD_JUNIT_H

#include <stddef.h>

struct buf;
struct junit;

enum junit_outcome { JUNIT_PASS, JUNIT_FAILURE, JUNIT_ERROR, JUNIT_SKIPPED };

/* A report named name; timestamp is ISO 8601 ("2026-11-21T10:00:00") or
 * NULL (then none is written). */
struct junit *junit_new(const char *name, const char *timestamp);
void junit_free(struct junit *j);

/* Start a suite; the cases added next belong to it. hostname may be NULL. */
int junit_suite(struct junit *j, const char *name, const char *hostname);

/*
 * Add a case to the current suite (one is started, named after the report,
 * when none was). message is the one-line attribute of failure/error/
 * skipped (ignored for JUNIT_PASS); detail the element's text (may be NULL);
 * out goes into <system-out> (may be NULL, for any outcome). type is the
 * failure's type attribute (e.g. the severity), may be NULL.
 */
int junit_case(struct junit *j, const char *classname, const char *name, double time_s,
               enum junit_outcome outcome, const char *type, const char *message,
               const char *detail, const char *out);

/* Counts over all suites. */
struct junit_counts {
	size_t tests, failures, errors, skipped;
};
void junit_counts(const struct junit *j, struct junit_counts *c);

/* Append the XML document (with its <?xml?> declaration) to out. */
int junit_render(const struct junit *j, struct buf *out);

/* Write the document to path atomically, mode 0644. 0, or CD_ERR_IO. */
int junit_write_file(const struct junit *j, const char *path, char *err, size_t errlen);

#endif
