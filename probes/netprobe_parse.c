/* SPDX-License-Identifier: MIT */
/* netprobe_parse.c - the network probe's pure parsers (see netprobe.h): the
 * local port range, /etc/hosts lines naming the host, nccl.conf files, and
 * the scope of an address. */
#include "probes/netprobe.h"
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* A decimal of at most 65535 at *p (NUL-terminated); advances *p past it. */
static int parse_port(const char **p, int *out)
{
	uint64_t v;

	if (scan_uint(p, *p + strlen(*p), 10, 65535, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static const char *skip_spaces(const char *s)
{
	while (*s && scan_is_space(*s))
		s++;
	return s;
}

int netprobe_parse_port_range(const char *text_in, int *lo, int *hi)
{
	const char *s;
	int a, b;

	if (!text_in)
		return CD_ERR_PARSE;
	s = skip_spaces(text_in);
	if (parse_port(&s, &a) < 0 || !scan_is_space(*s))
		return CD_ERR_PARSE;
	s = skip_spaces(s);
	if (parse_port(&s, &b) < 0 || *skip_spaces(s) != '\0' || a > b)
		return CD_ERR_PARSE;
	*lo = a;
	*hi = b;
	return 0;
}

/* Whether field f (n bytes) is the name want (want_n bytes), without case. */
static int name_is(const char *f, size_t n, const char *want, size_t want_n)
{
	return want_n && n == want_n && strncasecmp(f, want, n) == 0 && !memchr(f, '\0', n);
}

/* Whether a hosts line (comment already cut) lists the host among its names;
 * the first field is the address and does not count. */
static int hosts_line_names(const char *line, size_t n, const char *host, size_t host_n,
                            size_t short_n)
{
	const char *p = line, *end = line + n, *f;
	size_t fn;
	int first = 1;

	while (scan_next_word(&p, end, &f, &fn)) {
		if (!first && (name_is(f, fn, host, host_n) || name_is(f, fn, host, short_n)))
			return 1;
		first = 0;
	}
	return 0;
}

/* The fields of a line joined by single spaces, as a JSON string. */
static json_t *collapsed_line(const char *line, size_t n)
{
	const char *p = line, *end = line + n, *f;
	char *buf = cd_malloc(n + 1);
	size_t out = 0, fn;
	json_t *j;

	while (scan_next_word(&p, end, &f, &fn)) {
		if (out)
			buf[out++] = ' ';
		memcpy(buf + out, f, fn);
		out += fn;
	}
	j = facts_json_text(buf, out);
	free(buf);
	return j;
}

json_t *netprobe_hosts_lines(const char *text_in, size_t len, const char *hostname)
{
	json_t *lines = json_array();
	const char *p = text_in, *end, *line, *hash;
	size_t n, host_n, short_n;

	if (!text_in || !hostname || !*hostname)
		return lines;
	end = text_in + len;
	host_n = strlen(hostname);
	short_n = strcspn(hostname, ".");
	while (scan_next_line(&p, end, &line, &n)) {
		if ((hash = memchr(line, '#', n)))
			n = (size_t)(hash - line);
		if (hosts_line_names(line, n, hostname, host_n, short_n))
			json_array_append_new(lines, collapsed_line(line, n));
	}
	return lines;
}

/* vars[key] = value unless key is already there (the first one wins). */
static void set_first(json_t *vars, const char *key, size_t key_n, const char *val, size_t val_n)
{
	json_t *name = facts_json_text(key, key_n);

	if (!json_object_get(vars, json_string_value(name)))
		json_object_set_new(vars, json_string_value(name), facts_json_text(val, val_n));
	json_decref(name);
}

json_t *netprobe_parse_nccl_conf(const char *text_in, size_t len)
{
	json_t *vars = json_object();
	const char *p = text_in, *end, *line, *eq, *key, *val;
	size_t n, key_n, val_n;

	if (!text_in)
		return vars;
	end = text_in + len;
	while (scan_next_line(&p, end, &line, &n)) {
		scan_trim(&line, &n);
		if (!n || line[0] == '#' || !(eq = memchr(line, '=', n)))
			continue;
		key = line;
		key_n = (size_t)(eq - line);
		val = eq + 1;
		val_n = n - key_n - 1;
		scan_trim(&key, &key_n);
		scan_trim(&val, &val_n);
		if (key_n)
			set_first(vars, key, key_n, val, val_n);
	}
	return vars;
}

const char *netprobe_addr_scope(int family, const void *addr)
{
	const unsigned char *b = addr;

	if (family == AF_INET) {
		if (b[0] == 127)
			return "host";
		if (b[0] == 169 && b[1] == 254)
			return "link";
		return "global";
	}
	if (family != AF_INET6)
		return "global";
	if (IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)addr))
		return "host";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "site";
	if ((b[0] & 0xfe) == 0xfc)
		return "ula";
	return "global";
}

/* The value of field `col` (0-based) of the line [p, eol) as hexadecimal:
 * 0 and *v, or CD_ERR_PARSE when the line is shorter or the field is not
 * hexadecimal. */
static int hex_field(const char *p, const char *eol, size_t col, long long *v)
{
	const char *f = NULL, *digits;
	size_t n = 0, k = 0;
	uint64_t x;

	while (scan_next_word(&p, eol, &f, &n) && k < col)
		k++;
	if (k != col || !f || n == 0 || n > 15)
		return CD_ERR_PARSE;
	digits = f;
	if (scan_uint(&digits, f + n, 16, UINT64_MAX, &x) < 0 || digits != f + n)
		return CD_ERR_PARSE;
	*v = (long long)x;
	return 0;
}

int netprobe_parse_neigh_stat(const char *text, size_t len, long long *fulls)
{
	const char *p = text, *end = text + len, *eol, *f;
	size_t n, col = 0;
	long long sum = 0, v;
	int found = 0;

	if (!text)
		return CD_ERR_PARSE;
	eol = memchr(p, '\n', len);
	eol = eol ? eol : end;
	while (scan_next_word(&p, eol, &f, &n)) { /* the header names the columns */
		if (n == 11 && memcmp(f, "table_fulls", 11) == 0) {
			found = 1;
			break;
		}
		col++;
	}
	if (!found)
		return CD_ERR_PARSE;
	for (p = eol; p < end; p = eol) {
		p++; /* past the previous line's '\n' */
		if (p >= end)
			break;
		eol = memchr(p, '\n', (size_t)(end - p));
		eol = eol ? eol : end;
		if (!scan_next_word(&(const char *){p}, eol, &f, &n))
			continue; /* a blank line */
		if (hex_field(p, eol, col, &v) < 0 || sum > INT64_MAX - v)
			return CD_ERR_PARSE;
		sum += v;
	}
	*fulls = sum;
	return 0;
}
