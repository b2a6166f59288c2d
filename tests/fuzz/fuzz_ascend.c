/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ascend.c - libFuzzer harness for the Ascend parsers
 * (probes/facts_ascend.h, probes/ascend_plan.h): whatever npu-smi, hccn_tool
 * or an Ascend install file prints on a node must never crash the agent.
 *
 * The first input byte picks the parser (its low three bits; the seeds start
 * with an ASCII digit); the rest of the input is fed to it, not
 * NUL-terminated:
 *   0 ascend_parse_npu_smi      4 ascend_parse_keyval ("version")
 *   1 ascend_parse_ip + plan    5 ascend_parse_hccn_conf
 *   2 ascend_parse_labelled     6 ascend_parse_py_version
 *   3 ascend_parse_tls, _lldp   7 all of the above
 * Seeds: tests/fuzz/corpus/ascend/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/ascend_plan.h"
#include "probes/facts_ascend.h"

static void fuzz_smi(const char *buf, size_t len)
{
	static struct ascend_smi s;
	char err[CD_ERRLEN];
	int rc = ascend_parse_npu_smi(buf, len, &s, err, sizeof(err));

	if (rc == 0 && s.n > ASCEND_MAX_NPUS)
		abort();
	for (size_t i = 0; rc == 0 && i < s.n; i++)
		if (memchr(s.npu[i].name, '\0', sizeof(s.npu[i].name)) == NULL ||
		    memchr(s.npu[i].bus_id, '\0', sizeof(s.npu[i].bus_id)) == NULL)
			abort();
}

/* The address (twice: a duplicate) through the plan rules. */
static void fuzz_ip(const char *buf, size_t len)
{
	struct ascend_dev_addr d[2];
	struct ascend_server_plan p[2];

	memset(d, 0, sizeof(d));
	if (ascend_parse_ip(buf, len, d[0].addr, d[0].mask) != 0)
		return;
	if (!memchr(d[0].addr, '\0', 16) || !memchr(d[0].mask, '\0', 16))
		abort();
	d[1] = d[0];
	p[0] = (struct ascend_server_plan){.server = "a", .n = 1, .dev = &d[0]};
	p[1] = (struct ascend_server_plan){.server = "b", .n = 1, .dev = &d[1]};
	if (ascend_plan_check(p, 2, NULL, NULL) != 1)
		abort();
}

static void fuzz_labelled(const char *buf, size_t len)
{
	char v[32];

	if (ascend_parse_labelled(buf, len, "net health status", v, sizeof(v)) == 0 &&
	    strlen(v) >= sizeof(v))
		abort();
}

static void fuzz_tls_lldp(const char *buf, size_t len)
{
	char port[32], sys[32];
	int sw = -1;

	if (ascend_parse_tls(buf, len, &sw) == 0 && sw != 0 && sw != 1)
		abort();
	if (ascend_parse_lldp(buf, len, port, sizeof(port), sys, sizeof(sys)) == 0 &&
	    (strlen(port) >= sizeof(port) || strlen(sys) >= sizeof(sys)))
		abort();
}

static void fuzz_keyval(const char *buf, size_t len)
{
	char v[64];

	(void)ascend_parse_keyval(buf, len, "version", v, sizeof(v));
}

static void fuzz_conf(const char *buf, size_t len)
{
	json_t *a = ascend_parse_hccn_conf(buf, len);

	if (!json_is_array(a))
		abort();
	json_decref(a);
}

static void fuzz_pyver(const char *buf, size_t len)
{
	char v[64];

	(void)ascend_parse_py_version(buf, len, v, sizeof(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const parsers[])(const char *, size_t) = {
	    fuzz_smi, fuzz_ip, fuzz_labelled, fuzz_tls_lldp, fuzz_keyval, fuzz_conf, fuzz_pyver,
	};
	const char *buf = (const char *)data + 1;
	size_t len;
	unsigned sel;

	if (size == 0)
		return 0;
	sel = data[0] & 7u;
	len = size - 1;
	if (sel < 7) {
		parsers[sel](buf, len);
	} else {
		for (size_t i = 0; i < 7; i++)
			parsers[i](buf, len);
	}
	return 0;
}
