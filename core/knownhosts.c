/* SPDX-License-Identifier: MIT */
/* knownhosts.c - OpenSSH known_hosts lookup and append (see knownhosts.h). */
#include "knownhosts.h"
#include "base64.h"

#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#define HASH_MAGIC "|1|"
#define HASH_LEN   20 /* SHA-1: salt and HMAC sizes */
#define HOST_MAX   1024

/* The key types a line may carry, strongest first: known_types follows this
 * order so the caller can hand it to libssh2 as a preference list. The sk-*
 * types come last because libssh2 cannot negotiate them. */
static const char *const key_types[] = {
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
    "ssh-dss",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

static int key_type_index(const char *s, size_t len)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(key_types); i++)
		if (strlen(key_types[i]) == len && memcmp(key_types[i], s, len) == 0)
			return (int)i;
	return -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A blob starts with the key type as an SSH string (uint32 length + name). */
static int blob_has_type(const unsigned char *key, size_t keylen, const char *type, size_t type_len)
{
	uint32_t n;

	if (keylen < 4)
		return 0;
	n = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	return n == type_len && keylen - 4 >= n && memcmp(key + 4, type, n) == 0;
}

void knownhosts_fingerprint(const unsigned char *key, size_t keylen, char out[KH_FP_LEN])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char b64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
	size_t n;

	SHA256(key, keylen, md);
	n = base64_encode(md, sizeof(md), b64);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	snprintf(out, KH_FP_LEN, "SHA256:%.*s", (int)n, b64);
}

static int parse_hash(const char *s, size_t n, struct kh_entry *out)
{
	unsigned char buf[HASH_LEN + 3]; /* EVP_DecodeBlock writes the padding bytes too */
	const char *sep;
	size_t magic = sizeof(HASH_MAGIC) - 1;

	if (n < magic || memcmp(s, HASH_MAGIC, magic) != 0)
		return -1;
	s += magic;
	n -= magic;
	if ((sep = memchr(s, '|', n)) == NULL)
		return -1;
	if (base64_decode(s, (size_t)(sep - s), buf, sizeof(buf)) != HASH_LEN)
		return -1;
	memcpy(out->salt, buf, HASH_LEN);
	n -= (size_t)(sep - s) + 1;
	if (base64_decode(sep + 1, n, buf, sizeof(buf)) != HASH_LEN)
		return -1;
	memcpy(out->hash, buf, HASH_LEN);
	return 0;
}

int knownhosts_parse_line(const char *line, size_t len, struct kh_entry *out, char *err,
                          size_t errlen)
{
	size_t i = 0, start, tok;
	long keylen;
	int type;

	memset(out, 0, offsetof(struct kh_entry, key));
	out->keylen = 0;
	if (len == 0)
		return 0;
	if (memchr(line, '\0', len))
		return cd_errf(err, errlen, CD_ERR_PARSE, "NUL byte in line");
	if (line[len - 1] == '\r')
		len--;
	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return 0;

	if (line[i] == '@') {
		for (start = i; i < len && !is_blank(line[i]); i++)
			;
		tok = i - start;
		if (tok == 8 && memcmp(line + start, "@revoked", tok) == 0)
			out->marker = KH_MARKER_REVOKED;
		else if (tok == 15 && memcmp(line + start, "@cert-authority", tok) == 0)
			out->marker = KH_MARKER_CERT_AUTHORITY;
		else
			return cd_errf(err, errlen, CD_ERR_PARSE, "unknown marker \"%.*s\"",
			               (int)(tok > 32 ? 32 : tok), line + start);
		while (i < len && is_blank(line[i]))
			i++;
		if (i < len && line[i] == '@')
			return cd_errf(err, errlen, CD_ERR_PARSE, "more than one marker");
	}

	for (start = i; i < len && !is_blank(line[i]); i++)
		;
	out->hosts = line + start;
	out->hosts_len = i - start;
	if (out->hosts_len == 0 || i == len)
		return cd_errf(err, errlen, CD_ERR_PARSE, "line ends after the host field");
	if (line[start] == '|') {
		if (parse_hash(out->hosts, out->hosts_len, out) < 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "malformed host hash");
		out->hashed = 1;
	}
	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return cd_errf(err, errlen, CD_ERR_PARSE, "line ends before the key type");

	for (start = i; i < len && !is_blank(line[i]); i++)
		;
	out->keytype = line + start;
	out->keytype_len = i - start;
	if ((type = key_type_index(out->keytype, out->keytype_len)) < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "unknown key type \"%.*s\"",
		               (int)(out->keytype_len > 40 ? 40 : out->keytype_len), out->keytype);
	while (i < len && is_blank(line[i]))
		i++;

	for (start = i; i < len && !is_blank(line[i]); i++)
		;
	if (i == start)
		return cd_errf(err, errlen, CD_ERR_PARSE, "line ends after the key type");
	if ((keylen = base64_decode(line + start, i - start, out->key, sizeof(out->key))) <= 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "key is not valid base64");
	out->keylen = (size_t)keylen;
	if (!blob_has_type(out->key, out->keylen, key_types[type], out->keytype_len))
		return cd_errf(err, errlen, CD_ERR_PARSE, "key blob is not a %s key",
		               key_types[type]);
	return 1;
}

/* '*' and '?' glob of a lowercased name against a pattern compared
 * case-insensitively. Iterative with one backtrack point, so the cost is
 * bounded by len(name) * len(pattern) whatever the input. */
static int glob_match(const char *s, size_t slen, const char *p, size_t plen)
{
	size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;

	while (si < slen) {
		if (pi < plen && p[pi] == '*') {
			star_p = pi++;
			star_s = si;
		} else if (pi < plen && (p[pi] == '?' || ascii_lower(p[pi]) == s[si])) {
			si++;
			pi++;
		} else if (star_p != SIZE_MAX) {
			pi = star_p + 1;
			si = ++star_s;
		} else {
			return 0;
		}
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

int knownhosts_match_host(const struct kh_entry *e, const char *name)
{
	size_t nlen = strlen(name), i = 0, start;
	int positive = 0, negated;

	if (e->hashed) {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;

		if (!HMAC(EVP_sha1(), e->salt, sizeof(e->salt), (const unsigned char *)name, nlen,
		          md, &mdlen) ||
		    mdlen != HASH_LEN)
			cd_fatal("HMAC-SHA1 failed");
		return CRYPTO_memcmp(md, e->hash, HASH_LEN) == 0;
	}
	while (i <= e->hosts_len) {
		negated = i < e->hosts_len && e->hosts[i] == '!';
		if (negated)
			i++;
		for (start = i; i < e->hosts_len && e->hosts[i] != ','; i++)
			;
		if (glob_match(name, nlen, e->hosts + start, i - start)) {
			if (negated)
				return -1;
			positive = 1;
		}
		i++; /* past the ',' (or the end) */
	}
	return positive;
}

/* host must be something ssh could connect to and must not change the
 * meaning of a line we write: no blanks or control characters, no pattern,
 * list, hash, comment or bracket characters. */
static int lookup_name(const char *host, int port, char *name, size_t cap, char *err, size_t errlen)
{
	size_t n = host ? strlen(host) : 0;
	int w;

	if (n == 0 || n >= HOST_MAX)
		return cd_errf(err, errlen, CD_ERR_PARSE, "host name is empty or too long");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)host[i];

		if (c <= ' ' || c == 0x7f || strchr(",*?![]|#", c))
			return cd_errf(
			    err, errlen, CD_ERR_PARSE,
			    "host name \"%.64s\" has a character not allowed in known_hosts", host);
	}
	if (host[0] == '@')
		return cd_errf(err, errlen, CD_ERR_PARSE, "host name starts with '@'");
	if (port < 1 || port > 65535)
		return cd_errf(err, errlen, CD_ERR_PARSE, "port %d out of range", port);
	if (port == 22)
		w = snprintf(name, cap, "%s", host);
	else
		w = snprintf(name, cap, "[%s]:%d", host, port);
	if (w < 0 || (size_t)w >= cap)
		return cd_errf(err, errlen, CD_ERR_PARSE, "host name too long");
	for (char *p = name; *p; p++)
		*p = ascii_lower(*p);
	return 0;
}

static int check_key_args(const char *keytype, const unsigned char *key, size_t keylen, char *err,
                          size_t errlen)
{
	size_t tlen = keytype ? strlen(keytype) : 0;

	if (key_type_index(keytype ? keytype : "", tlen) < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "unsupported key type \"%.40s\"",
		               keytype ? keytype : "(null)");
	if (!key || keylen == 0 || keylen > KH_KEY_MAX ||
	    !blob_has_type(key, keylen, keytype, tlen))
		return cd_errf(err, errlen, CD_ERR_PARSE, "key blob is not a %s key", keytype);
	return 0;
}

/* Where a stored key was seen. */
struct kh_loc {
	int set;
	const char *file;
	int line;
	char fp[KH_FP_LEN];
};

/* State of one knownhosts_check call across lines and files. */
struct kh_scan {
	const char *name;
	const char *keytype;
	const unsigned char *key;
	size_t keylen;
	unsigned types; /* bit i: key_types[i] known for the host */
	struct kh_loc match, revoked, same_type, other_type;
	int skipped;
	struct kh_entry entry; /* scratch; too big for the stack of a small thread */
};

static void loc_record(struct kh_loc *loc, const char *file, int line, const struct kh_entry *e)
{
	if (loc->set)
		return; /* report the first line: user files come before global ones */
	loc->set = 1;
	loc->file = file;
	loc->line = line;
	knownhosts_fingerprint(e->key, e->keylen, loc->fp);
}

static void scan_line(struct kh_scan *sc, const char *line, size_t len, const char *file,
                      int lineno)
{
	struct kh_entry *e = &sc->entry;
	int same_type, same_key;

	switch (knownhosts_parse_line(line, len, e, NULL, 0)) {
	case 1:
		break;
	case 0:
		return;
	default:
		sc->skipped++;
		return;
	}
	if (e->marker == KH_MARKER_CERT_AUTHORITY || knownhosts_match_host(e, sc->name) != 1)
		return;
	same_type = e->keytype_len == strlen(sc->keytype) &&
	            memcmp(e->keytype, sc->keytype, e->keytype_len) == 0;
	same_key = same_type && e->keylen == sc->keylen && memcmp(e->key, sc->key, e->keylen) == 0;
	if (e->marker == KH_MARKER_REVOKED) {
		if (same_key)
			loc_record(&sc->revoked, file, lineno, e);
		return;
	}
	sc->types |= 1u << key_type_index(e->keytype, e->keytype_len);
	if (same_key)
		loc_record(&sc->match, file, lineno, e);
	else if (same_type)
		loc_record(&sc->same_type, file, lineno, e);
	else
		loc_record(&sc->other_type, file, lineno, e);
}

/* Read the file line by line into a KH_LINE_MAX buffer; longer lines are
 * skipped whole and counted. A missing file is not an error. */
static int scan_file(struct kh_scan *sc, const char *path, char *buf, char *err, size_t errlen)
{
	FILE *f;
	size_t len = 0, total = 0;
	int c, lineno = 0, toolong = 0, ret = 0;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return cd_errf(err, errlen, CD_ERR_IO, "open %s: %s", path, strerror(errno));
	}
	for (;;) {
		c = getc_unlocked(f);
		if (c != EOF && ++total > KH_FILE_MAX) {
			ret = cd_errf(err, errlen, CD_ERR_TOOBIG, "%s is larger than %d bytes",
			              path, KH_FILE_MAX);
			break;
		}
		if (c != EOF && c != '\n') {
			if (len < KH_LINE_MAX)
				buf[len++] = (char)c;
			else
				toolong = 1;
			continue;
		}
		if (c == EOF && ferror(f)) {
			ret = cd_errf(err, errlen, CD_ERR_IO, "read %s: %s", path, strerror(errno));
			break;
		}
		if (c == EOF && len == 0 && !toolong)
			break;
		lineno++;
		if (toolong)
			sc->skipped++;
		else
			scan_line(sc, buf, len, path, lineno);
		len = 0;
		toolong = 0;
		if (c == EOF)
			break;
	}
	fclose(f);
	return ret;
}

static void fill_known_types(char *out, size_t cap, unsigned types)
{
	size_t used = 0, n;

	out[0] = '\0';
	for (size_t i = 0; i < CD_ARRAY_LEN(key_types); i++) {
		if (!(types & (1u << i)))
			continue;
		n = strlen(key_types[i]) + (used ? 1 : 0);
		if (used + n >= cap)
			continue; /* left out whole, never cut */
		snprintf(out + used, cap - used, "%s%s", used ? "," : "", key_types[i]);
		used += n;
	}
}

int knownhosts_check(const char *const *files, size_t nfiles, const char *host, int port,
                     const char *keytype, const unsigned char *key, size_t keylen,
                     struct kh_result *out, char *err, size_t errlen)
{
	char name[HOST_MAX + 16];
	struct kh_scan *sc = NULL;
	const struct kh_loc *loc = NULL;
	char *buf = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->status = KH_NOTFOUND;
	if ((ret = lookup_name(host, port, name, sizeof(name), err, errlen)) < 0)
		return ret;
	/* No key (before the handshake): every line for the host is "another
	 * type", which is what the caller wants to learn. */
	if ((keytype && *keytype) || key || keylen)
		if ((ret = check_key_args(keytype, key, keylen, err, errlen)) < 0)
			return ret;
	sc = cd_calloc(1, sizeof(*sc));
	buf = cd_malloc(KH_LINE_MAX);
	sc->name = name;
	sc->keytype = keytype ? keytype : "";
	sc->key = key;
	sc->keylen = keylen;
	for (size_t i = 0; i < nfiles; i++)
		if ((ret = scan_file(sc, files[i], buf, err, errlen)) < 0)
			goto out;

	if (sc->revoked.set) {
		out->status = KH_REVOKED;
		loc = &sc->revoked;
	} else if (sc->match.set) {
		out->status = KH_MATCH;
		loc = &sc->match;
	} else if (sc->same_type.set || sc->other_type.set) {
		out->status = KH_MISMATCH;
		loc = sc->same_type.set ? &sc->same_type : &sc->other_type;
	}
	if (loc) {
		snprintf(out->stored_fp, sizeof(out->stored_fp), "%s", loc->fp);
		snprintf(out->file, sizeof(out->file), "%s", loc->file);
		out->line = loc->line;
	}
	fill_known_types(out->known_types, sizeof(out->known_types), sc->types);
	out->skipped = sc->skipped;
	ret = 0;
out:
	free(buf);
	free(sc);
	return ret;
}

/* Create the parent directory of path (one level) with mode 0700. */
static int make_parent_dir(const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	struct stat st;
	int ret = 0;

	if (!slash || slash == path)
		return 0;
	dir = cd_strndup(path, (size_t)(slash - path));
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || (mkdir(dir, 0700) < 0 && errno != EEXIST))
			ret =
			    cd_errf(err, errlen, CD_ERR_IO, "create %s: %s", dir, strerror(errno));
	}
	free(dir);
	return ret;
}

static int random_bytes(unsigned char *buf, size_t n)
{
	ssize_t r;

	for (size_t got = 0; got < n; got += (size_t)r) {
		r = getrandom(buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			r = 0;
		else if (r < 0)
			return -1;
	}
	return 0;
}

int knownhosts_append(const char *file, const char *host, int port, const char *keytype,
                      const unsigned char *key, size_t keylen, int hashed, char *err, size_t errlen)
{
	char name[HOST_MAX + 16], salt_b64[32], hash_b64[32];
	unsigned char salt[HASH_LEN], md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *line = NULL, *p;
	size_t cap, len;
	struct stat st;
	char last = '\n';
	ssize_t w;
	int fd = -1, ret;

	if ((ret = lookup_name(host, port, name, sizeof(name), err, errlen)) < 0 ||
	    (ret = check_key_args(keytype, key, keylen, err, errlen)) < 0)
		return ret;
	if (hashed) {
		if (random_bytes(salt, sizeof(salt)) < 0)
			return cd_errf(err, errlen, CD_ERR_IO, "getrandom: %s", strerror(errno));
		if (!HMAC(EVP_sha1(), salt, sizeof(salt), (const unsigned char *)name, strlen(name),
		          md, &mdlen) ||
		    mdlen != HASH_LEN)
			cd_fatal("HMAC-SHA1 failed");
		base64_encode(salt, sizeof(salt), salt_b64);
		base64_encode(md, HASH_LEN, hash_b64);
	}

	/* "\n" + name + ' ' + type + ' ' + base64 + "\n" */
	cap = 1 + sizeof(name) + 3 + sizeof(salt_b64) * 2 + strlen(keytype) + 2 +
	      4 * ((keylen + 2) / 3) + 2;
	line = p = cd_malloc(cap);
	*p++ = '\n'; /* kept only if the file does not end in a newline */
	if (hashed)
		p += sprintf(p, HASH_MAGIC "%s|%s %s ", salt_b64, hash_b64, keytype);
	else
		p += sprintf(p, "%s %s ", name, keytype);
	p += base64_encode(key, keylen, p);
	len = (size_t)(p - line) - 1;
	*p++ = '\n';
	if (len > KH_LINE_MAX) {
		ret = cd_errf(err, errlen, CD_ERR_TOOBIG,
		              "known_hosts line of %zu bytes exceeds the %d byte cap", len,
		              KH_LINE_MAX);
		goto out;
	}

	if ((ret = make_parent_dir(file, err, errlen)) < 0)
		goto out;
	if ((fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    fstat(fd, &st) < 0 || (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)) {
		ret = cd_errf(err, errlen, CD_ERR_IO, "open %s: %s", file, strerror(errno));
		goto out;
	}
	p = last == '\n' ? line + 1 : line;
	len = (size_t)(line + len + 2 - p);
	/* One write with O_APPEND: concurrent appenders cannot interleave. */
	if ((w = write(fd, p, len)) < 0 || (size_t)w != len) {
		ret = cd_errf(err, errlen, CD_ERR_IO, "write %s: %s", file,
		              w < 0 ? strerror(errno) : "short write");
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = cd_errf(err, errlen, CD_ERR_IO, "close %s: %s", file, strerror(errno));
	free(line);
	return ret;
}
