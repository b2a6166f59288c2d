/* SPDX-License-Identifier: MIT */
/* rdma_parse.c - the pure parsers of the RDMA sysfs words (see rdma_parse.h).
 * The shapes are those drivers/infiniband/core/sysfs.c writes: state_show
 * and phys_state_show "%u: %s", rate_show "%d%s Gb/sec (%dX%s)", show_port_gid
 * "%pI6", lid_show "0x%x", and gid_attrs/types "IB/RoCE v1" or "RoCE v2". */
#include "probes/rdma_parse.h"
#include "cd.h"
#include "scan.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

/* text without its leading and trailing whitespace, as [*s, *s + *n). */
static void span_of(const char *text, const char **s, size_t *n)
{
	*s = text;
	*n = strlen(text);
	scan_trim(s, n);
}

static int copy_word(const char *s, size_t n, char *out, size_t outlen)
{
	if (n == 0 || n >= outlen)
		return CD_ERR_PARSE;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int is_print(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

int rdma_parse_state(const char *text, char *word, size_t wordlen)
{
	const char *s, *p, *end;
	size_t n;
	uint64_t v;

	span_of(text, &s, &n);
	p = s;
	end = s + n;
	if (scan_uint(&p, end, 10, 255, &v) < 0 || end - p < 3 || p[0] != ':' || p[1] != ' ' ||
	    !is_print(p + 2, (size_t)(end - p - 2)))
		return CD_ERR_PARSE;
	return copy_word(p + 2, (size_t)(end - p - 2), word, wordlen);
}

int rdma_parse_rate(const char *text, double *gbps, char *width, size_t widthlen)
{
	static const char unit[] = " Gb/sec (";
	const char *s, *p, *end, *w;
	size_t n;
	uint64_t whole, lanes;
	double half = 0;

	span_of(text, &s, &n);
	p = s;
	end = s + n;
	if (scan_uint(&p, end, 10, 1000000, &whole) < 0)
		return CD_ERR_PARSE;
	if (end - p >= 2 && p[0] == '.' && p[1] == '5') {
		half = 0.5;
		p += 2;
	}
	if ((size_t)(end - p) < sizeof(unit) - 1 || memcmp(p, unit, sizeof(unit) - 1) != 0)
		return CD_ERR_PARSE;
	p += sizeof(unit) - 1;
	w = p;
	if (scan_uint(&p, end, 10, 64, &lanes) < 0 || lanes == 0 || p == end || *p != 'X')
		return CD_ERR_PARSE;
	p++;
	if (p == end || end[-1] != ')' || !is_print(p, (size_t)(end - p)))
		return CD_ERR_PARSE;
	if (copy_word(w, (size_t)(p - w), width, widthlen) < 0)
		return CD_ERR_PARSE;
	*gbps = (double)whole + half;
	return 0;
}

int rdma_parse_gid(const char *text, unsigned char gid[RDMA_GID_LEN])
{
	unsigned char out[RDMA_GID_LEN];
	const char *s;
	size_t n;

	span_of(text, &s, &n);
	if (n != 39)
		return CD_ERR_PARSE;
	for (size_t g = 0; g < 8; g++) {
		const char *q = s + g * 5, *r = q;
		uint64_t v;

		/* four hex digits, then ':' between groups */
		if (scan_uint(&r, q + 4, 16, 0xffff, &v) < 0 || r != q + 4 ||
		    (g < 7 && q[4] != ':'))
			return CD_ERR_PARSE;
		out[2 * g] = (unsigned char)(v >> 8);
		out[2 * g + 1] = (unsigned char)(v & 0xff);
	}
	memcpy(gid, out, sizeof(out));
	return 0;
}

int rdma_gid_is_zero(const unsigned char gid[RDMA_GID_LEN])
{
	for (size_t i = 0; i < RDMA_GID_LEN; i++)
		if (gid[i])
			return 0;
	return 1;
}

static int is_v4_mapped(const unsigned char gid[RDMA_GID_LEN])
{
	static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

const char *rdma_gid_family(const unsigned char gid[RDMA_GID_LEN], int is_ib)
{
	if (is_ib)
		return "ib";
	if (is_v4_mapped(gid))
		return "ipv4";
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80)
		return "link-local";
	return "ipv6";
}

int rdma_gid_address(const unsigned char gid[RDMA_GID_LEN], const char *family, char *buf,
                     size_t buflen)
{
	if (strcmp(family, "ib") == 0)
		return CD_ERR_PARSE;
	if (strcmp(family, "ipv4") == 0)
		return inet_ntop(AF_INET, gid + 12, buf, (socklen_t)buflen) ? 0 : CD_ERR_PARSE;
	return inet_ntop(AF_INET6, gid, buf, (socklen_t)buflen) ? 0 : CD_ERR_PARSE;
}

int rdma_parse_gid_type(const char *text, const char **type)
{
	static const char *const types[] = {"IB/RoCE v1", "RoCE v2"};
	const char *s;
	size_t n;

	span_of(text, &s, &n);
	for (size_t i = 0; i < CD_ARRAY_LEN(types); i++)
		if (n == strlen(types[i]) && memcmp(s, types[i], n) == 0) {
			*type = types[i];
			return 0;
		}
	return CD_ERR_PARSE;
}

int rdma_parse_ndev(const char *text, char *name, size_t namelen)
{
	const char *s;
	size_t n;

	span_of(text, &s, &n);
	if (n == 0 || n > 15 || (n == 1 && s[0] == '.') || (n == 2 && memcmp(s, "..", 2) == 0) ||
	    !is_print(s, n))
		return CD_ERR_PARSE;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || s[i] == ' ')
			return CD_ERR_PARSE;
	return copy_word(s, n, name, namelen);
}

int rdma_parse_lid(const char *text, char *buf, size_t buflen)
{
	const char *s, *p, *end;
	size_t n;
	uint64_t v;

	span_of(text, &s, &n);
	end = s + n;
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return CD_ERR_PARSE;
	p = s + 2;
	if (scan_uint(&p, end, 16, 0xffff, &v) < 0 || p != end)
		return CD_ERR_PARSE;
	return copy_word(s, n, buf, buflen);
}

size_t rdma_parse_driver_file(const char *text, size_t len, json_t *providers)
{
	const char *p = text, *end = text + len, *line, *w, *name;
	size_t n, wn, nn, added = 0;

	while (scan_next_line(&p, end, &line, &n)) {
		const char *q = line, *qend = line + n;

		if (!scan_next_word(&q, qend, &w, &wn) || wn != 6 || memcmp(w, "driver", 6) != 0 ||
		    !scan_next_word(&q, qend, &name, &nn) || !is_print(name, nn))
			continue;
		json_array_append_new(providers, json_stringn(name, nn));
		added++;
	}
	return added;
}

const char *rdma_parse_peermem(const char *text, size_t len)
{
	static const char *const names[] = {"nvidia_peermem", "nv_peer_mem"};
	const char *end = text + len, *line, *w;
	size_t n, wn;

	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++) {
		const char *p = text;

		while (scan_next_line(&p, end, &line, &n)) {
			const char *q = line;

			if (scan_next_word(&q, line + n, &w, &wn) && wn == strlen(names[i]) &&
			    memcmp(w, names[i], wn) == 0)
				return names[i];
		}
	}
	return NULL;
}

/* The line [s, s + n) without a comment and surrounding blanks. */
static void conf_line(const char **s, size_t *n)
{
	const char *hash = memchr(*s, '#', *n);

	if (hash)
		*n = (size_t)(hash - *s);
	scan_trim(s, n);
}

/* Printable text or tabs (a conf file's blanks). */
static int is_conf_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\t' && !is_print(s + i, 1))
			return 0;
	return 1;
}

static int starts_word(const char *s, size_t n, const char *word)
{
	size_t k = strlen(word);

	return n > k && strncasecmp(s, word, k) == 0 && (s[k] == ' ' || s[k] == '\t');
}

size_t rdma_parse_ld_so_conf(const char *text, size_t len, json_t *entries)
{
	const char *p = text, *end = text + len, *line, *w;
	size_t n, wn, added = 0;

	while (scan_next_line(&p, end, &line, &n)) {
		conf_line(&line, &n);
		if (n == 0 || !is_conf_text(line, n) || starts_word(line, n, "hwcap"))
			continue;
		if (starts_word(line, n, "include") && strncmp(line, "include", 7) == 0) {
			const char *q = line + 7, *qend = line + n;

			while (scan_next_word(&q, qend, &w, &wn)) {
				json_array_append_new(entries,
				                      json_pack("{s:s%}", "include", w, wn));
				added++;
			}
			continue;
		}
		while (n > 1 && line[n - 1] == '/')
			n--;
		if (line[0] != '/' || n >= 4096 || !is_print(line, n))
			continue;
		json_array_append_new(entries, json_pack("{s:s%}", "dir", line, n));
		added++;
	}
	return added;
}

/* Kernel drivers and the rdma-core provider serving their HCAs: the PCI
 * (or platform) function's driver, and the auxiliary RDMA driver where the
 * device link leads to one. From rdma-core's providers/<name>/ (each
 * PROVIDER_DRIVER(name, ...) with its VERBS_PCI_MATCH / VERBS_DRIVER_ID
 * table) and the kernel's enum rdma_driver_id
 * (include/uapi/rdma/ib_user_ioctl_verbs.h). */
static const struct {
	const char *driver, *provider;
} providers[] = {
    {"mlx5_core", "mlx5"},
    {"mlx5_ib", "mlx5"},
    {"mlx4_core", "mlx4"},
    {"mlx4_ib", "mlx4"},
    {"ib_mthca", "mthca"},
    {"bnxt_en", "bnxt_re"},
    {"bnxt_re", "bnxt_re"},
    {"cxgb4", "cxgb4"},
    {"iw_cxgb4", "cxgb4"},
    {"efa", "efa"},
    {"erdma", "erdma"},
    {"hfi1", "hfi1verbs"},
    {"hns3", "hns"},
    {"hns_roce_hw_v2", "hns"},
    {"ice", "irdma"},
    {"i40e", "irdma"},
    {"irdma", "irdma"},
    {"ib_qib", "ipathverbs"},
    {"mana", "mana"},
    {"mana_ib", "mana"},
    {"be2net", "ocrdma"},
    {"ocrdma", "ocrdma"},
    {"qede", "qedr"},
    {"qedr", "qedr"},
    {"vmw_pvrdma", "vmw_pvrdma"},
    {"rdma_rxe", "rxe"},
    {"siw", "siw"},
};

const char *rdma_provider_of_driver(const char *driver)
{
	for (size_t i = 0; driver && i < CD_ARRAY_LEN(providers); i++)
		if (strcmp(providers[i].driver, driver) == 0)
			return providers[i].provider;
	return NULL;
}
