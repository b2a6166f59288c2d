/* SPDX-License-Identifier: MIT */
/* test_knownhosts.c - known_hosts parsing, lookup and append. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cd.h"
#include "knownhosts.h"

/*
 * Keys made with `ssh-keygen -q -t ed25519|ecdsa -b 256|rsa -b 1024 -N '' -C ''`
 * (OpenSSH_9.2p1); the fingerprints are what `ssh-keygen -lf KEY.pub` printed.
 */
#define ED1_B64 "AAAAC3NzaC1lZDI1NTE5AAAAIMSlgxsYp067RdesoxLFLf6QwuSwqI3GfYOM3Fep8R6u"
#define ED1_FP  "SHA256:ChtwddDeRgNAxR4Z8ns9JBnB0L8S6VQuJmPSP3to4N4"
#define ED2_B64 "AAAAC3NzaC1lZDI1NTE5AAAAIFEeMDXdbaoFFSTy+DpbuR7GrABJNTRuZkdRcnROS0Dh"
#define ED2_FP  "SHA256:TNGPCOCFqRD4sF4r0CJcjA7O/jjDiLv12lqwNZdW6+Y"
#define EC1_B64                                                                                    \
	"AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNULPxQzYAi3rKjlAvc6BKm2CxMaSbx6Bm2g" \
	"8EYn"                                                                                     \
	"hGFutQxgv/UcFWRnJQtrfvT5c6N49Cx8jglN4cnERqcAqRI="
#define EC1_FP "SHA256:gb0pjV5cNl1/IEZySW+9i3DwQP32UF7o+xASsg5Qp8c"
#define RSA1_B64                                                             \
	"AAAAB3NzaC1yc2EAAAADAQABAAAAgQDfSDH1IoKd8hBGbd+XFpHbV2MeUTIzsENEG+" \
	"KhlNIj0KxM18kwqCmYAaLnHNAO"                                         \
	"ER/eX0y+5ZPVtVrX2++L8404OixUgxpGfbRdJQJnX67O4XcpymgMwHm0x/T/"       \
	"zFSmxvpOxctVoqgtSoqYHrnHarWToO82"                                   \
	"rPxTsAQEL/PqY3NCRw=="
#define RSA1_FP "SHA256:o9ePIOeDpdRbpnQZMurNDCbMOzYlu75xz96R+an/aQc"

#define ED  "ssh-ed25519"
#define EC  "ecdsa-sha2-nistp256"
#define RSA "ssh-rsa"

/* `ssh-keygen -H` of "gpu01.example.org ssh-ed25519 ED1" and
 * "[gpu02.example.org]:2222 ecdsa-sha2-nistp256 EC1". */
#define HASHED_GPU01 \
	"|1|u1jqOTy1O9V8BHbbP0tNOGMm/ks=|jrwkoUviqlsasQxdURxv3w27rsI= ssh-ed25519 " ED1_B64 "\n"
#define HASHED_GPU02_2222                                               \
	"|1|3Khe79Pp3Caw7+WQiQmEs9vqnlI=|dH322I+uZJ4K9T53aRXBQcrCKK4= " \
	"ecdsa-sha2-nistp256 " EC1_B64 "\n"

struct blob {
	unsigned char b[2048];
	size_t n;
};

static struct blob ed1, ed2, ec1, rsa1;

static void decode(const char *b64, struct blob *out)
{
	size_t len = strlen(b64), pad = 0;

	while (pad < len && b64[len - 1 - pad] == '=')
		pad++;
	out->n = (size_t)EVP_DecodeBlock(out->b, (const unsigned char *)b64, (int)len) - pad;
}

static int group_setup(void **state)
{
	decode(ED1_B64, &ed1);
	decode(ED2_B64, &ed2);
	decode(EC1_B64, &ec1);
	decode(RSA1_B64, &rsa1);
	return 0;
}

/* Each test that touches files gets a fresh temporary directory. */
struct fx {
	char dir[64];
	char path[128];
};

static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/test_knownhosts.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	*state = fx;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;

	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* Write content (len bytes) to DIR/name; returns the path (valid until the
 * next call). */
static const char *put_n(struct fx *fx, const char *name, const char *content, size_t len)
{
	FILE *f;

	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, name);
	f = fopen(fx->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(content, 1, len, f), len);
	fclose(f);
	return fx->path;
}

static const char *put(struct fx *fx, const char *name, const char *content)
{
	return put_n(fx, name, content, strlen(content));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	(void)!fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* knownhosts_check against one file holding content. */
static int check1(struct fx *fx, const char *content, const char *host, int port, const char *type,
                  const struct blob *key, struct kh_result *r)
{
	const char *files[1];
	char err[CD_ERRLEN] = "";
	int ret;

	files[0] = put(fx, "known_hosts", content);
	ret = knownhosts_check(files, 1, host, port, type, key->b, key->n, r, err, sizeof(err));
	assert_string_equal(err, "");
	return ret;
}

static void test_fingerprint_matches_ssh_keygen_ed25519(void **state)
{
	char fp[KH_FP_LEN];

	knownhosts_fingerprint(ed1.b, ed1.n, fp);
	assert_string_equal(fp, ED1_FP);
}

static void test_fingerprint_matches_ssh_keygen_ecdsa(void **state)
{
	char fp[KH_FP_LEN];

	knownhosts_fingerprint(ec1.b, ec1.n, fp);
	assert_string_equal(fp, EC1_FP);
}

static void test_fingerprint_matches_ssh_keygen_rsa(void **state)
{
	char fp[KH_FP_LEN];

	knownhosts_fingerprint(rsa1.b, rsa1.n, fp);
	assert_string_equal(fp, RSA1_FP);
}

static int parse(const char *line, struct kh_entry *e, char *err)
{
	return knownhosts_parse_line(line, strlen(line), e, err, CD_ERRLEN);
}

static void test_parse_line_reads_hosts_type_and_key(void **state)
{
	static struct kh_entry e;
	static const char line[] = "gpu01,10.0.0.1\tssh-ed25519  " ED1_B64 " root@gpu01\r";
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(line, &e, err), 1);
	assert_int_equal(e.marker, KH_MARKER_NONE);
	assert_int_equal(e.hashed, 0);
	assert_int_equal(e.hosts_len, strlen("gpu01,10.0.0.1"));
	assert_memory_equal(e.hosts, "gpu01,10.0.0.1", e.hosts_len);
	assert_int_equal(e.keytype_len, strlen(ED));
	assert_memory_equal(e.keytype, ED, e.keytype_len);
	assert_int_equal(e.keylen, ed1.n);
	assert_memory_equal(e.key, ed1.b, ed1.n);
}

static void test_parse_line_reads_markers(void **state)
{
	static struct kh_entry e;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("@revoked * " ED " " ED1_B64, &e, err), 1);
	assert_int_equal(e.marker, KH_MARKER_REVOKED);
	assert_memory_equal(e.hosts, "*", e.hosts_len);
	assert_int_equal(parse("@cert-authority *.example.org " ED " " ED1_B64, &e, err), 1);
	assert_int_equal(e.marker, KH_MARKER_CERT_AUTHORITY);
}

static void test_parse_line_reads_hashed_host(void **state)
{
	static struct kh_entry e;
	static const unsigned char salt0[] = {0xbb, 0x58, 0xea, 0x39};
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    knownhosts_parse_line(HASHED_GPU01, strlen(HASHED_GPU01) - 1, &e, err, sizeof(err)), 1);
	assert_int_equal(e.hashed, 1);
	assert_memory_equal(e.salt, salt0, sizeof(salt0));
}

static void test_parse_line_blank_and_comment_are_not_entries(void **state)
{
	static struct kh_entry e;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("", &e, err), 0);
	assert_int_equal(parse(" \t \r", &e, err), 0);
	assert_int_equal(parse("# gpu01 ssh-ed25519 " ED1_B64, &e, err), 0);
	assert_int_equal(parse("   #indented comment", &e, err), 0);
	assert_string_equal(err, "");
}

struct bad_line {
	const char *line;
	const char *err;
};

static void test_parse_line_rejects_malformed_lines(void **state)
{
	static const struct bad_line cases[] = {
	    {"gpu01", "line ends after the host field"},
	    {"gpu01   ", "line ends before the key type"},
	    {"gpu01 # ssh-ed25519 " ED1_B64, "line ends before the key type"},
	    {"gpu01 ssh-ed25519", "line ends after the key type"},
	    {"gpu01 ssh-ed25519   ", "line ends after the key type"},
	    {"gpu01 ssh-foo " ED1_B64, "unknown key type \"ssh-foo\""},
	    {"gpu01 1024 35 12345", "unknown key type \"1024\""},
	    {"gpu01 ecdsa-sha2-nistp256 " ED1_B64, "key blob is not a ecdsa-sha2-nistp256 key"},
	    {"gpu01 ssh-ed25519 AAAA", "key blob is not a ssh-ed25519 key"},
	    {"gpu01 ssh-ed25519 " ED1_B64 "=", "key is not valid base64"},
	    {"gpu01 ssh-ed25519 AAAAC3Nza!1lZDI1NTE5", "key is not valid base64"},
	    {"gpu01 ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNULPx"
	     "QzYAi3rKjlAvc6BKm2CxMaSbx6Bm2g8EYnhGFutQxgv/UcFWRnJQtrfvT5c6N49Cx8jglN4cnERqcAqRJ=",
	     "key is not valid base64"},
	    {"@revok gpu01 ssh-ed25519 " ED1_B64, "unknown marker \"@revok\""},
	    {"@revoked @revoked gpu01 ssh-ed25519 " ED1_B64, "more than one marker"},
	    {"@revoked", "line ends after the host field"},
	    {"|1|u1jqOTy1O9V8BHbbP0tNOGMm/ks= ssh-ed25519 " ED1_B64, "malformed host hash"},
	    {"|2|u1jqOTy1O9V8BHbbP0tNOGMm/ks=|jrwkoUviqlsasQxdURxv3w27rsI= ssh-ed25519 " ED1_B64,
	     "malformed host hash"},
	    {"|1|u1jqOTy1O9V8BHbbP0tNOGMm|jrwkoUviqlsasQxdURxv3w27rsI= ssh-ed25519 " ED1_B64,
	     "malformed host hash"},
	    {"|1|u1jqOTy1O9V8BHbbP0tNOGMm/ks=|jrwkoUviqlsasQxdURxv3w27rsI=|x ssh-ed25519 " ED1_B64,
	     "malformed host hash"},
	};
	static struct kh_entry e;
	char err[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		err[0] = '\0';
		assert_int_equal(parse(cases[i].line, &e, err), CD_ERR_PARSE);
		assert_string_equal(err, cases[i].err);
	}
}

static void test_parse_line_rejects_nul_byte(void **state)
{
	static const char line[] = "gpu01 ssh-ed25519 " ED1_B64 " comment\0more";
	static struct kh_entry e;
	char err[CD_ERRLEN] = "";

	assert_int_equal(knownhosts_parse_line(line, sizeof(line) - 1, &e, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "NUL byte in line");
}

static void test_match_host_negation_wins_over_positive(void **state)
{
	static struct kh_entry e;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("gpu*,!gpu13,GPU2? " ED " " ED1_B64, &e, err), 1);
	assert_int_equal(knownhosts_match_host(&e, "gpu01"), 1);
	assert_int_equal(knownhosts_match_host(&e, "gpu13"), -1);
	assert_int_equal(knownhosts_match_host(&e, "gpu2x"), 1);
	assert_int_equal(knownhosts_match_host(&e, "cpu01"), 0);
}

static void test_check_plain_host_matches(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state,
	                        "other.example.org " ED " " ED2_B64 "\n"
	                        "gpu01.example.org,10.0.0.1 " ED " " ED1_B64 " root@gpu01\n",
	                        "gpu01.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_string_equal(r.stored_fp, ED1_FP);
	assert_int_equal(r.line, 2);
	assert_string_equal(r.known_types, ED);
	assert_int_equal(r.skipped, 0);
}

static void test_check_port_form_matches_nonstandard_port(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "[gpu02.example.org]:2222 " ED " " ED1_B64 "\n",
	                        "gpu02.example.org", 2222, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
}

static void test_check_port_form_is_not_used_for_port_22(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "[gpu02.example.org]:22 " ED " " ED1_B64 "\n",
	                        "gpu02.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
}

static void test_check_plain_entry_does_not_cover_other_ports(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "gpu02.example.org " ED " " ED1_B64 "\n",
	                        "gpu02.example.org", 2222, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
	assert_string_equal(r.known_types, "");
}

static void test_check_hashed_entries_from_ssh_keygen_match(void **state)
{
	struct kh_result r;

	assert_int_equal(
	    check1(*state, HASHED_GPU01 HASHED_GPU02_2222, "gpu01.example.org", 22, ED, &ed1, &r),
	    0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(r.line, 1);
	assert_int_equal(
	    check1(*state, HASHED_GPU01 HASHED_GPU02_2222, "gpu02.example.org", 2222, EC, &ec1, &r),
	    0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(r.line, 2);
}

static void test_check_hashed_entry_does_not_match_other_name(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, HASHED_GPU01, "gpu02.example.org", 22, ED, &ed1, &r), 0);
	assert_int_equal(r.status, KH_NOTFOUND);
}

static void test_check_wildcard_patterns_match(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "*.cluster.example.org " ED " " ED1_B64 "\n",
	                        "gpu07.cluster.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(check1(*state, "gpu0?.example.org " ED " " ED1_B64 "\n",
	                        "gpu07.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(check1(*state, "gpu0?.example.org " ED " " ED1_B64 "\n",
	                        "gpu107.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
}

static void test_check_negated_pattern_excludes_line(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "*.example.org,!gpu13.example.org " ED " " ED1_B64 "\n",
	                        "gpu13.example.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
}

static void test_check_name_is_case_insensitive(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "GPU01.Example.ORG " ED " " ED1_B64 "\n",
	                        "gpu01.EXAMPLE.org", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
}

static void test_check_same_type_other_key_is_mismatch_with_file_and_line(void **state)
{
	struct fx *fx = *state;
	struct kh_result r;
	char want[128];

	assert_int_equal(check1(fx,
	                        "# cluster keys\n"
	                        "gpu01 " EC " " EC1_B64 "\n"
	                        "gpu01 " ED " " ED2_B64 "\n",
	                        "gpu01", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MISMATCH);
	assert_string_equal(r.stored_fp, ED2_FP);
	snprintf(want, sizeof(want), "%s/known_hosts", fx->dir);
	assert_string_equal(r.file, want);
	assert_int_equal(r.line, 3);
	assert_string_equal(r.known_types, ED "," EC);
}

static void test_check_other_type_only_is_mismatch(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "gpu01 " EC " " EC1_B64 "\n", "gpu01", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MISMATCH);
	assert_string_equal(r.stored_fp, EC1_FP);
	assert_int_equal(r.line, 1);
	assert_string_equal(r.known_types, EC);
}

static void test_check_match_anywhere_beats_mismatch(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state,
	                        "gpu01 " ED " " ED2_B64 "\n"
	                        "gpu01 " EC " " EC1_B64 "\n"
	                        "gpu01 " ED " " ED1_B64 "\n",
	                        "gpu01", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(r.line, 3);
}

static void test_check_revoked_key_is_revoked_even_if_listed(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state,
	                        "gpu01 " ED " " ED1_B64 "\n"
	                        "@revoked * " ED " " ED1_B64 "\n",
	                        "gpu01", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_REVOKED);
	assert_string_equal(r.stored_fp, ED1_FP);
	assert_int_equal(r.line, 2);
	assert_string_equal(r.known_types, ED);
}

static void test_check_revoked_other_key_does_not_matter(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state,
	                        "@revoked * " ED " " ED2_B64 "\n"
	                        "gpu01 " ED " " ED1_B64 "\n",
	                        "gpu01", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
}

static void test_check_unknown_host_is_notfound(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "gpu01 " ED " " ED1_B64 "\n", "gpu02", 22, ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
	assert_string_equal(r.stored_fp, "");
	assert_string_equal(r.file, "");
	assert_int_equal(r.line, 0);
	assert_string_equal(r.known_types, "");
}

static void test_check_cert_authority_lines_are_ignored(void **state)
{
	struct kh_result r;

	assert_int_equal(
	    check1(*state, "@cert-authority gpu01 " ED " " ED2_B64 "\n", "gpu01", 22, ED, &ed1, &r),
	    0);
	assert_int_equal(r.status, KH_NOTFOUND);
	assert_int_equal(r.skipped, 0);
}

static void test_check_skips_comment_malformed_and_overlong_lines(void **state)
{
	struct fx *fx = *state;
	const char *head = "# comment\n"
	                   "\n"
	                   "gpu01 ssh-ed25519\n"         /* malformed */
	                   "gpu01 ssh-ed25519 AAAA!!!\n" /* malformed */
	                   "gpu01 1024 35 1234567\n";    /* RSA1: malformed */
	const char *tail = "\ngpu01 " ED " " ED1_B64 "\n";
	size_t hl = strlen(head), tl = strlen(tail), over = KH_LINE_MAX + 1;
	char *text = malloc(hl + over + tl + 1);
	const char *files[1];
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	/* an overlong line that would match if it were cut at the cap */
	memcpy(text, head, hl);
	memcpy(text + hl, "gpu01 " ED " " ED2_B64 " ", strlen("gpu01 " ED " " ED2_B64 " "));
	memset(text + hl + strlen("gpu01 " ED " " ED2_B64 " "), 'c',
	       over - strlen("gpu01 " ED " " ED2_B64 " "));
	memcpy(text + hl + over, tail, tl + 1);
	files[0] = put(fx, "known_hosts", text);
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(r.line, 7);
	assert_int_equal(r.skipped, 4);
	free(text);
}

static void test_check_reads_line_of_exactly_the_cap(void **state)
{
	struct fx *fx = *state;
	const char *entry = "gpu01 " ED " " ED2_B64 " ";
	char *text = malloc(KH_LINE_MAX + 2);
	const char *files[1];
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	memcpy(text, entry, strlen(entry));
	memset(text + strlen(entry), 'c', KH_LINE_MAX - strlen(entry));
	memcpy(text + KH_LINE_MAX, "\n", 2);
	files[0] = put(fx, "known_hosts", text);
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, KH_MISMATCH);
	assert_int_equal(r.skipped, 0);
	free(text);
}

static void test_check_last_line_without_newline_is_read(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state, "x " ED " " ED2_B64 "\ngpu01 " ED " " ED1_B64, "gpu01", 22,
	                        ED, &ed1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(r.line, 2);
}

static void test_check_missing_files_are_fine(void **state)
{
	struct fx *fx = *state;
	char missing[128], notdir[160];
	const char *files[3];
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	snprintf(missing, sizeof(missing), "%s/nope", fx->dir);
	files[1] = put(fx, "known_hosts", "gpu01 " ED " " ED1_B64 "\n");
	snprintf(notdir, sizeof(notdir), "%s/known_hosts/x", fx->dir);
	files[0] = missing;
	files[2] = notdir;
	assert_int_equal(
	    knownhosts_check(files, 3, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, KH_MATCH);
}

static void test_check_unreadable_file_is_io_error(void **state)
{
	struct fx *fx = *state;
	const char *files[1] = {fx->dir}; /* a directory: open works, read fails */
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_IO);
	assert_non_null(strstr(err, "Is a directory"));
}

static void test_check_endless_file_stops_at_the_cap(void **state)
{
	const char *files[1] = {"/dev/zero"};
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_TOOBIG);
	assert_string_equal(err, "/dev/zero is larger than 67108864 bytes");
}

static void test_check_reports_user_file_before_global(void **state)
{
	struct fx *fx = *state;
	char user[128], global[128];
	const char *files[2] = {user, global};
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	snprintf(user, sizeof(user), "%s", put(fx, "user_kh", "gpu01 " ED " " ED2_B64 "\n"));
	snprintf(global, sizeof(global), "%s",
	         put(fx, "global_kh", "gpu01 " ED " " ED2_B64 "\ngpu01 " EC " " EC1_B64 "\n"));
	assert_int_equal(
	    knownhosts_check(files, 2, "gpu01", 22, ED, ed1.b, ed1.n, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, KH_MISMATCH);
	assert_string_equal(r.file, user);
	assert_int_equal(r.line, 1);
	assert_string_equal(r.known_types, ED "," EC);
}

static void test_check_known_types_are_strongest_first(void **state)
{
	struct kh_result r;

	assert_int_equal(check1(*state,
	                        "gpu01 " RSA " " RSA1_B64 "\n"
	                        "gpu01 " EC " " EC1_B64 "\n"
	                        "gpu01 " ED " " ED2_B64 "\n"
	                        "gpu01 " EC " " EC1_B64 "\n",
	                        "gpu01", 22, RSA, &rsa1, &r),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_string_equal(r.known_types, ED "," EC "," RSA);
}

static void test_check_without_key_lists_known_types(void **state)
{
	struct fx *fx = *state;
	const char *files[1];
	struct kh_result r;
	char err[CD_ERRLEN] = "";

	files[0] = put(fx, "known_hosts",
	               "gpu01 " EC " " EC1_B64 "\n"
	               "@revoked * " ED " " ED1_B64 "\n"
	               "gpu01 " ED " " ED2_B64 "\n");
	assert_int_equal(knownhosts_check(files, 1, "gpu01", 22, "", NULL, 0, &r, err, sizeof(err)),
	                 0);
	assert_int_equal(r.status, KH_MISMATCH);
	assert_string_equal(r.stored_fp, EC1_FP);
	assert_int_equal(r.line, 1);
	assert_string_equal(r.known_types, ED "," EC);
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu02", 22, NULL, NULL, 0, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, KH_NOTFOUND);
	assert_string_equal(r.known_types, "");
}

static void test_check_rejects_invalid_host_and_port(void **state)
{
	static const char *const bad_hosts[] = {
	    "", "gpu 01", "gpu01,evil", "gpu*", "[gpu01]", "gpu01\n", "|1|x", "@revoked", "a#b"};
	const char *files[1] = {"/nonexistent"};
	struct kh_result r;
	char err[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(bad_hosts); i++)
		assert_int_equal(knownhosts_check(files, 1, bad_hosts[i], 22, ED, ed1.b, ed1.n, &r,
		                                  err, sizeof(err)),
		                 CD_ERR_PARSE);
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 0, ED, ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_PARSE);
	assert_string_equal(err, "port 0 out of range");
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 65536, ED, ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_PARSE);
}

static void test_check_rejects_key_not_of_its_type(void **state)
{
	const char *files[1] = {"/nonexistent"};
	struct kh_result r;
	char err[CD_ERRLEN];

	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, EC, ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_PARSE);
	assert_string_equal(err, "key blob is not a ecdsa-sha2-nistp256 key");
	assert_int_equal(
	    knownhosts_check(files, 1, "gpu01", 22, "ssh-foo", ed1.b, ed1.n, &r, err, sizeof(err)),
	    CD_ERR_PARSE);
	assert_string_equal(err, "unsupported key type \"ssh-foo\"");
}

static void test_append_plain_then_check_matches(void **state)
{
	struct fx *fx = *state;
	char file[128], want[256];
	const char *files[1] = {file};
	struct kh_result r;
	struct stat st;
	char err[CD_ERRLEN] = "", *text;

	snprintf(file, sizeof(file), "%s/.ssh/known_hosts", fx->dir); /* fresh HOME */
	assert_int_equal(
	    knownhosts_append(file, "GPU01.example.org", 22, ED, ed1.b, ed1.n, 0, err, sizeof(err)),
	    0);
	text = slurp(file);
	snprintf(want, sizeof(want), "gpu01.example.org " ED " " ED1_B64 "\n");
	assert_string_equal(text, want);
	free(text);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(want, sizeof(want), "%s/.ssh", fx->dir);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(knownhosts_check(files, 1, "gpu01.example.org", 22, ED, ed1.b, ed1.n, &r,
	                                  err, sizeof(err)),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
}

static void test_append_hashed_then_check_matches(void **state)
{
	struct fx *fx = *state;
	char file[128];
	const char *files[1] = {file};
	static struct kh_entry e;
	struct kh_result r;
	char err[CD_ERRLEN] = "", *text;

	snprintf(file, sizeof(file), "%s/.ssh/known_hosts", fx->dir);
	assert_int_equal(knownhosts_append(file, "gpu02.example.org", 2222, EC, ec1.b, ec1.n, 1,
	                                   err, sizeof(err)),
	                 0);
	text = slurp(file);
	/* "|1|" + 28 + "|" + 28 + " " + type + " " + key + "\n" */
	assert_int_equal(strlen(text), 3 + 28 + 1 + 28 + 1 + strlen(EC) + 1 + strlen(EC1_B64) + 1);
	assert_memory_equal(text, "|1|", 3);
	assert_null(strstr(text, "gpu02"));
	assert_int_equal(knownhosts_parse_line(text, strlen(text) - 1, &e, err, sizeof(err)), 1);
	assert_int_equal(e.hashed, 1);
	free(text);
	assert_int_equal(knownhosts_check(files, 1, "gpu02.example.org", 2222, EC, ec1.b, ec1.n, &r,
	                                  err, sizeof(err)),
	                 0);
	assert_int_equal(r.status, KH_MATCH);
	assert_int_equal(knownhosts_check(files, 1, "gpu02.example.org", 22, EC, ec1.b, ec1.n, &r,
	                                  err, sizeof(err)),
	                 0);
	assert_int_equal(r.status, KH_NOTFOUND);
}

static void test_append_writes_port_form(void **state)
{
	struct fx *fx = *state;
	char file[128], *text;
	char err[CD_ERRLEN] = "";

	snprintf(file, sizeof(file), "%s/kh", fx->dir);
	assert_int_equal(
	    knownhosts_append(file, "gpu02", 2222, ED, ed1.b, ed1.n, 0, err, sizeof(err)), 0);
	text = slurp(file);
	assert_string_equal(text, "[gpu02]:2222 " ED " " ED1_B64 "\n");
	free(text);
}

static void test_append_keeps_existing_content(void **state)
{
	struct fx *fx = *state;
	static const char before[] = "# managed by hand\n"
	                             "@cert-authority *.example.org " ED " " ED2_B64 "\n"
	                             "garbage line\n";
	char file[128], *text;
	struct stat st0, st1;
	char err[CD_ERRLEN] = "";

	snprintf(file, sizeof(file), "%s", put(fx, "known_hosts", before));
	assert_int_equal(chmod(file, 0644), 0);
	assert_int_equal(stat(file, &st0), 0);
	assert_int_equal(
	    knownhosts_append(file, "gpu03", 22, ED, ed1.b, ed1.n, 0, err, sizeof(err)), 0);
	text = slurp(file);
	assert_string_equal(text, "# managed by hand\n"
	                          "@cert-authority *.example.org " ED " " ED2_B64 "\n"
	                          "garbage line\n"
	                          "gpu03 " ED " " ED1_B64 "\n");
	free(text);
	assert_int_equal(stat(file, &st1), 0);
	assert_int_equal(st1.st_ino, st0.st_ino); /* appended in place, not replaced */
	assert_int_equal(st1.st_mode & 0777, 0644);
}

static void test_append_adds_missing_final_newline_first(void **state)
{
	struct fx *fx = *state;
	char file[128], *text;
	char err[CD_ERRLEN] = "";

	snprintf(file, sizeof(file), "%s", put(fx, "known_hosts", "gpu01 " ED " " ED2_B64));
	assert_int_equal(
	    knownhosts_append(file, "gpu03", 22, ED, ed1.b, ed1.n, 0, err, sizeof(err)), 0);
	text = slurp(file);
	assert_string_equal(text, "gpu01 " ED " " ED2_B64 "\ngpu03 " ED " " ED1_B64 "\n");
	free(text);
}

static void test_append_rejects_host_that_would_change_the_line(void **state)
{
	struct fx *fx = *state;
	char file[128];
	struct stat st;
	char err[CD_ERRLEN] = "";

	snprintf(file, sizeof(file), "%s/kh", fx->dir);
	assert_int_equal(knownhosts_append(file, "gpu01 ssh-ed25519 AAAA\nevil", 22, ED, ed1.b,
	                                   ed1.n, 0, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_int_equal(knownhosts_append(file, "*", 22, ED, ed1.b, ed1.n, 0, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_int_equal(stat(file, &st), -1);
}

static void test_append_fails_when_parent_of_parent_is_missing(void **state)
{
	struct fx *fx = *state;
	char file[128];
	char err[CD_ERRLEN] = "";

	snprintf(file, sizeof(file), "%s/a/b/kh", fx->dir);
	assert_int_equal(
	    knownhosts_append(file, "gpu01", 22, ED, ed1.b, ed1.n, 0, err, sizeof(err)), CD_ERR_IO);
	assert_non_null(strstr(err, "No such file or directory"));
}

#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fingerprint_matches_ssh_keygen_ed25519),
	    cmocka_unit_test(test_fingerprint_matches_ssh_keygen_ecdsa),
	    cmocka_unit_test(test_fingerprint_matches_ssh_keygen_rsa),
	    cmocka_unit_test(test_parse_line_reads_hosts_type_and_key),
	    cmocka_unit_test(test_parse_line_reads_markers),
	    cmocka_unit_test(test_parse_line_reads_hashed_host),
	    cmocka_unit_test(test_parse_line_blank_and_comment_are_not_entries),
	    cmocka_unit_test(test_parse_line_rejects_malformed_lines),
	    cmocka_unit_test(test_parse_line_rejects_nul_byte),
	    cmocka_unit_test(test_match_host_negation_wins_over_positive),
	    FX(test_check_plain_host_matches),
	    FX(test_check_port_form_matches_nonstandard_port),
	    FX(test_check_port_form_is_not_used_for_port_22),
	    FX(test_check_plain_entry_does_not_cover_other_ports),
	    FX(test_check_hashed_entries_from_ssh_keygen_match),
	    FX(test_check_hashed_entry_does_not_match_other_name),
	    FX(test_check_wildcard_patterns_match),
	    FX(test_check_negated_pattern_excludes_line),
	    FX(test_check_name_is_case_insensitive),
	    FX(test_check_same_type_other_key_is_mismatch_with_file_and_line),
	    FX(test_check_other_type_only_is_mismatch),
	    FX(test_check_match_anywhere_beats_mismatch),
	    FX(test_check_revoked_key_is_revoked_even_if_listed),
	    FX(test_check_revoked_other_key_does_not_matter),
	    FX(test_check_unknown_host_is_notfound),
	    FX(test_check_cert_authority_lines_are_ignored),
	    FX(test_check_skips_comment_malformed_and_overlong_lines),
	    FX(test_check_reads_line_of_exactly_the_cap),
	    FX(test_check_last_line_without_newline_is_read),
	    FX(test_check_missing_files_are_fine),
	    FX(test_check_unreadable_file_is_io_error),
	    FX(test_check_endless_file_stops_at_the_cap),
	    FX(test_check_reports_user_file_before_global),
	    FX(test_check_known_types_are_strongest_first),
	    FX(test_check_without_key_lists_known_types),
	    cmocka_unit_test(test_check_rejects_invalid_host_and_port),
	    cmocka_unit_test(test_check_rejects_key_not_of_its_type),
	    FX(test_append_plain_then_check_matches),
	    FX(test_append_hashed_then_check_matches),
	    FX(test_append_writes_port_form),
	    FX(test_append_keeps_existing_content),
	    FX(test_append_adds_missing_final_newline_first),
	    FX(test_append_rejects_host_that_would_change_the_line),
	    FX(test_append_fails_when_parent_of_parent_is_missing),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
