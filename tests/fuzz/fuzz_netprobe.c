/* SPDX-License-Identifier: MIT */
/*
 * fuzz_netprobe.c - libFuzzer harness for the pure parsers of the network
 * probe (probes/netprobe.h): whatever a node's /proc, /etc/hosts or
 * nccl.conf holds must never crash the agent.
 *
 * The first input byte picks the parser (its low three bits, so the seeds
 * start with an ASCII digit); the rest of the input is fed to it:
 *   0 netprobe_parse_port_range (NUL-terminated copy)
 *   1 netprobe_hosts_lines: the first line is the hostname, the rest the
 *     hosts text (not NUL-terminated)
 *   2 netprobe_parse_nccl_conf (not NUL-terminated)
 *   3 netprobe_parse_neigh_stat (not NUL-terminated)
 *   4 netprobe_addr_scope of the first 16 bytes (zero-padded), as IPv4,
 *     IPv6 and another family
 *   5-7 all of the above
 * Seeds: tests/fuzz/corpus/netprobe/.
 *
 * The harness links probes/netprobe_parse.c with only what it needs (see
 * the Makefile): the parsers must never call into the collectors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cd.h"
#include "probes/netprobe.h"

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static size_t count_lines(const char *buf, size_t len)
{
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/* Every JSON string the parsers make must dump (valid UTF-8). */
static void must_dump(json_t *j)
{
	char *s = json_dumps(j, JSON_ENCODE_ANY);

	if (!s)
		abort();
	free(s);
}

static void fuzz_port_range(const char *buf, size_t len)
{
	char *copy = malloc(len + 1);
	int lo = -1, hi = -1, rc;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	copy[len] = '\0';
	rc = netprobe_parse_port_range(copy, &lo, &hi);
	if (rc == 0) {
		if (lo < 0 || lo > hi || hi > 65535)
			abort();
	} else if (rc != CD_ERR_PARSE || lo != -1 || hi != -1) {
		abort();
	}
	free(copy);
}

/* A kept line: fields joined by single spaces, no comment, at least an
 * address and a name. */
static void check_hosts_line(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' || strstr(s, "  ") || strchr(s, '#') ||
	    !strchr(s, ' '))
		abort();
	for (size_t i = 0; i < n; i++)
		if (blank(s[i]) && s[i] != ' ')
			abort();
}

static void fuzz_hosts(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);
	size_t host_n = nl ? (size_t)(nl - buf) : len;
	const char *text = nl ? nl + 1 : buf + len;
	size_t text_n = len - (size_t)(text - buf);
	char *host = malloc(host_n + 1);
	json_t *lines, *v;
	size_t i;

	if (!host)
		abort();
	memcpy(host, buf, host_n);
	host[host_n] = '\0';
	lines = netprobe_hosts_lines(text, text_n, host);
	if (!json_is_array(lines) || json_array_size(lines) > count_lines(text, text_n))
		abort();
	if (host[0] == '\0' && json_array_size(lines) != 0)
		abort();
	json_array_foreach(lines, i, v)
	{
		if (!json_is_string(v))
			abort();
		check_hosts_line(json_string_value(v));
	}
	must_dump(lines);
	json_decref(lines);
	free(host);
}

static void fuzz_nccl_conf(const char *buf, size_t len)
{
	json_t *vars = netprobe_parse_nccl_conf(buf, len), *v;
	const char *key;

	if (!json_is_object(vars) || json_object_size(vars) > count_lines(buf, len))
		abort();
	json_object_foreach(vars, key, v)
	{
		size_t kn = strlen(key), vn;
		const char *s;

		if (!json_is_string(v) || kn == 0 || key[0] == '#' || strchr(key, '=') ||
		    strchr(key, '\n') || blank(key[0]) || blank(key[kn - 1]))
			abort();
		s = json_string_value(v);
		vn = strlen(s);
		if (strchr(s, '\n') || (vn && (blank(s[0]) || blank(s[vn - 1]))))
			abort();
	}
	must_dump(vars);
	json_decref(vars);
}

static void fuzz_neigh_stat(const char *buf, size_t len)
{
	long long fulls = -7;
	int rc = netprobe_parse_neigh_stat(buf, len, &fulls);

	if (rc == 0 ? fulls < 0 : (rc != CD_ERR_PARSE || fulls != -7))
		abort();
}

static int known_scope(const char *s)
{
	static const char *const scopes[] = {"host", "link", "site", "ula", "global"};

	for (size_t i = 0; i < CD_ARRAY_LEN(scopes); i++)
		if (s && strcmp(s, scopes[i]) == 0)
			return 1;
	return 0;
}

static void fuzz_addr_scope(const char *buf, size_t len)
{
	unsigned char addr[16] = {0};

	memcpy(addr, buf, len < sizeof(addr) ? len : sizeof(addr));
	if (!known_scope(netprobe_addr_scope(AF_INET, addr)) ||
	    !known_scope(netprobe_addr_scope(AF_INET6, addr)) ||
	    strcmp(netprobe_addr_scope(AF_UNIX, addr), "global") != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const parsers[])(const char *, size_t) = {
	    fuzz_port_range, fuzz_hosts, fuzz_nccl_conf, fuzz_neigh_stat, fuzz_addr_scope,
	};
	const char *buf = (const char *)data + 1;
	size_t len;
	unsigned sel;

	if (size == 0)
		return 0;
	sel = data[0] & 7u;
	len = size - 1;
	if (sel < CD_ARRAY_LEN(parsers)) {
		parsers[sel](buf, len);
	} else {
		for (size_t i = 0; i < CD_ARRAY_LEN(parsers); i++)
			parsers[i](buf, len);
	}
	return 0;
}
