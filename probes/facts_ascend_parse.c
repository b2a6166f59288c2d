/* SPDX-License-Identifier: MIT */
/* facts_ascend_parse.c - the pure parsers of facts_ascend.h: what npu-smi
 * and hccn_tool print and the key=value files of an Ascend install. */
#include "probes/facts_ascend.h"
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Copy [s, s+n) trimmed into dst (cap bytes with the NUL). */
static int copy_span(char *dst, size_t cap, const char *s, size_t n)
{
	scan_trim(&s, &n);
	if (n >= cap)
		return CD_ERR_TOOBIG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static int starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

static int span_has(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, needle, k) == 0)
			return 1;
	return 0;
}

/* The cells of a table line "| a | b | c |": up to max spans. */
static size_t table_cells(const char *s, size_t n, const char **cell, size_t *clen, size_t max)
{
	const char *end = s + n, *p;
	size_t k = 0;

	if (!n || *s != '|')
		return 0;
	for (p = s + 1; p < end && k < max;) {
		const char *bar = memchr(p, '|', (size_t)(end - p));

		if (!bar)
			break;
		cell[k] = p;
		clen[k] = (size_t)(bar - p);
		scan_trim(&cell[k], &clen[k]);
		k++;
		p = bar + 1;
	}
	return k;
}

static int all_digits(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

int ascend_parse_npu_smi(const char *buf, size_t len, struct ascend_smi *out, char *errbuf,
                         size_t errlen)
{
	const char *p = buf, *end = buf + len, *line;
	int header = 0, in_procs = 0;
	struct ascend_npu *last = NULL;
	size_t n;

	memset(out, 0, sizeof(*out));
	while (scan_next_line(&p, end, &line, &n)) {
		const char *cell[4], *w, *wp, *ver;
		size_t clen[4], nc, wl;
		uint64_t id;

		scan_trim(&line, &n);
		if (starts_with(line, n, "| npu-smi") && (ver = memmem(line, n, "Version:", 8))) {
			size_t vn = (size_t)(line + n - (ver + 8));
			const char *vs = ver + 8, *bar = memchr(vs, '|', vn);

			if (bar)
				vn = (size_t)(bar - vs);
			if (copy_span(out->version, sizeof(out->version), vs, vn) < 0)
				out->version[0] = '\0';
			continue;
		}
		nc = table_cells(line, n, cell, clen, 4);
		if (nc < 2)
			continue;
		if (starts_with(cell[0], clen[0], "NPU") && span_has(cell[1], clen[1], "Health")) {
			header = 1;
			continue;
		}
		if (span_has(cell[1], clen[1], "Process id") ||
		    starts_with(cell[0], clen[0], "No running processes")) {
			in_procs = 1;
			continue;
		}
		if (!header || in_procs)
			continue;
		wp = cell[0];
		if (!scan_next_word(&wp, cell[0] + clen[0], &w, &wl) || !all_digits(w, wl))
			continue;
		{
			const char *nw;
			size_t nwl;

			if (scan_next_word(&wp, cell[0] + clen[0], &nw, &nwl) &&
			    !all_digits(nw, nwl)) {
				/* the first line of a device: id, name | health | ... */
				if (out->n == ASCEND_MAX_NPUS)
					return cd_errf(errbuf, errlen, CD_ERR_TOOBIG,
					               "npu-smi lists more than %d NPUs",
					               ASCEND_MAX_NPUS);
				last = &out->npu[out->n++];
				wp = w;
				if (scan_uint(&wp, w + wl, 10, 1u << 20, &id) < 0)
					return cd_errf(errbuf, errlen, CD_ERR_PARSE,
					               "npu-smi: bad NPU id");
				last->id = (int)id;
				if (copy_span(last->name, sizeof(last->name), nw, nwl) < 0 ||
				    copy_span(last->health, sizeof(last->health), cell[1],
				              clen[1]) < 0)
					return cd_errf(errbuf, errlen, CD_ERR_PARSE,
					               "npu-smi: a name or health too long");
				snprintf(last->bus_id, sizeof(last->bus_id), "NA");
				continue;
			}
		}
		/* the second line: chip [device] | bus id | ... */
		if (last && copy_span(last->bus_id, sizeof(last->bus_id), cell[1], clen[1]) < 0)
			snprintf(last->bus_id, sizeof(last->bus_id), "NA");
		last = NULL;
	}
	if (!header)
		return cd_errf(
		    errbuf, errlen, CD_ERR_PARSE,
		    "npu-smi printed no device table (a format clusterdoc does not know)");
	return 0;
}

int ascend_parse_labelled(const char *buf, size_t len, const char *label, char *val, size_t vlen)
{
	const char *p = buf, *end = buf + len, *line;
	size_t n, k = strlen(label);

	while (scan_next_line(&p, end, &line, &n)) {
		scan_trim(&line, &n);
		if (n > k && strncasecmp(line, label, k) == 0 && line[k] == ':')
			return copy_span(val, vlen, line + k + 1, n - k - 1);
	}
	return CD_ERR_NOTFOUND;
}

static int valid_quad(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1;
}

int ascend_parse_ip(const char *buf, size_t len, char addr[16], char mask[16])
{
	int ra = ascend_parse_labelled(buf, len, "ipaddr", addr, 16);
	int rm = ascend_parse_labelled(buf, len, "netmask", mask, 16);

	if (ra < 0 || rm < 0)
		return CD_ERR_PARSE;
	if (!addr[0] && !mask[0])
		return CD_ERR_NOTFOUND;
	if (!valid_quad(addr) || !valid_quad(mask))
		return CD_ERR_PARSE;
	return 0;
}

int ascend_parse_tls(const char *buf, size_t len, int *tls_switch)
{
	const char *s = memmem(buf, len, "tls switch[", 11), *end = buf + len;
	uint64_t v;

	if (!s)
		return CD_ERR_PARSE;
	s += 11;
	if (scan_uint(&s, end, 10, 9, &v) < 0 || v > 1 || s >= end || *s != ']')
		return CD_ERR_PARSE;
	*tls_switch = (int)v;
	return 0;
}

/* The value line after a TLV header: "\tIfname: X" gives X, "\tX" gives X. */
static int tlv_value(const char *line, size_t n, char *dst, size_t cap)
{
	const char *colon;

	scan_trim(&line, &n);
	colon = memchr(line, ':', n);
	if (colon && starts_with(line, n, "Ifname"))
		return copy_span(dst, cap, colon + 1, n - (size_t)(colon + 1 - line));
	return copy_span(dst, cap, line, n);
}

int ascend_parse_lldp(const char *buf, size_t len, char *port, size_t plen, char *sysname,
                      size_t slen)
{
	const char *p = buf, *end = buf + len, *line;
	char *want = NULL;
	size_t n, wcap = 0;
	int tlvs = 0;

	port[0] = sysname[0] = '\0';
	while (scan_next_line(&p, end, &line, &n)) {
		int indented = n && (line[0] == '\t' || line[0] == ' ');

		scan_trim(&line, &n);
		if (!n)
			continue;
		if (!indented && n > 4 && memcmp(line + n - 4, " TLV", 4) == 0) {
			tlvs++;
			want = NULL;
			if (starts_with(line, n, "Port ID TLV"))
				want = port, wcap = plen;
			else if (starts_with(line, n, "System Name TLV"))
				want = sysname, wcap = slen;
			continue;
		}
		if (want && indented) {
			if (tlv_value(line, n, want, wcap) < 0)
				want[0] = '\0';
			want = NULL;
		}
	}
	return tlvs ? 0 : CD_ERR_PARSE;
}

int ascend_parse_keyval(const char *buf, size_t len, const char *key, char *val, size_t vlen)
{
	const char *p = buf, *end = buf + len, *line;
	size_t n, k = strlen(key);

	while (scan_next_line(&p, end, &line, &n)) {
		scan_trim(&line, &n);
		if (n > k && strncasecmp(line, key, k) == 0 && line[k] == '=')
			return copy_span(val, vlen, line + k + 1, n - k - 1);
	}
	return CD_ERR_NOTFOUND;
}

static json_t *conf_device(json_t *arr, int dev)
{
	size_t i;
	json_t *d;

	json_array_foreach(arr, i, d)
	{
		if (json_integer_value(json_object_get(d, "device")) == dev)
			return d;
	}
	for (i = 0; i < json_array_size(arr); i++)
		if (json_integer_value(json_object_get(json_array_get(arr, i), "device")) > dev)
			break;
	d = json_pack("{s:i}", "device", dev);
	json_array_insert_new(arr, i, d);
	return d;
}

json_t *ascend_parse_hccn_conf(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *line;
	json_t *arr = json_array();
	size_t n;

	while (scan_next_line(&p, end, &line, &n)) {
		const char *eq, *us, *dp;
		char key[32];
		uint64_t dev;

		scan_trim(&line, &n);
		if (!n || line[0] == '#' || !(eq = memchr(line, '=', n)))
			continue;
		for (us = eq; us > line && us[-1] != '_'; us--)
			;
		if (us == line || us - 1 == line || (size_t)(us - 1 - line) >= sizeof(key))
			continue;
		dp = us;
		if (scan_uint(&dp, eq, 10, ASCEND_MAX_NPUS - 1, &dev) < 0 || dp != eq)
			continue;
		memcpy(key, line, (size_t)(us - 1 - line));
		key[us - 1 - line] = '\0';
		if (!strcmp(key, "device"))
			continue;
		json_object_set_new(conf_device(arr, (int)dev), key,
		                    facts_json_text(eq + 1, (size_t)(line + n - (eq + 1))));
	}
	return arr;
}

int ascend_parse_py_version(const char *buf, size_t len, char *val, size_t vlen)
{
	const char *p = buf, *end = buf + len, *line;
	size_t n;

	while (scan_next_line(&p, end, &line, &n)) {
		const char *q, *close;

		scan_trim(&line, &n);
		if (!starts_with(line, n, "__version__"))
			continue;
		q = line + 11;
		while (q < line + n && (*q == ' ' || *q == '='))
			q++;
		if (q >= line + n || (*q != '\'' && *q != '"'))
			continue;
		close = memchr(q + 1, *q, (size_t)(line + n - (q + 1)));
		if (!close)
			continue;
		return copy_span(val, vlen, q + 1, (size_t)(close - (q + 1)));
	}
	return CD_ERR_NOTFOUND;
}
