/* SPDX-License-Identifier: MIT */
/*
 * opt_report.c - the reports' option group (optgroups.h): --prom, --push
 * and --junit, where check and bench send their results besides the
 * terminal (report/report.h).
 */
#include "optgroups.h"

static const struct optdef defs[] = {
    {"prom", required_argument, REPORTOPT_PROM, "--prom",
     "      --prom FILE          also write the results as Prometheus metrics, atomically\n"
     "                           (for node_exporter's textfile collector)\n"},
    {"push", required_argument, REPORTOPT_PUSH, "--push",
     "      --push URL           also PUT the metrics to a Pushgateway at URL\n"},
    {"junit", required_argument, REPORTOPT_JUNIT, "--junit",
     "      --junit FILE         also write the results as JUnit XML, for CI systems\n"},
};

static int parse(void *dst, int id, const char *arg, const char *shown, char *err, size_t errlen)
{
	struct report_opts *o = dst;

	switch (id) {
	case REPORTOPT_PROM:
		o->prom_path = arg;
		return 0;
	case REPORTOPT_PUSH:
		o->push_url = arg;
		return 0;
	case REPORTOPT_JUNIT:
		o->junit_path = arg;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of this group", shown);
}

const struct optgroup reportopt_group = {
    .defs = defs,
    .ndefs = CD_ARRAY_LEN(defs),
    .parse = parse,
};
