/* SPDX-License-Identifier: MIT */
/* sshconfig.c - parse `ssh -G` output; defaults without OpenSSH (see sshconfig.h). */
#include "sshconfig.h"

#include "cd.h"
#include "sshkeys.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum opt_kind {
	OPT_STRING,   /* char *, required non-empty */
	OPT_JUMP,     /* char *, "none" gives NULL */
	OPT_PORT,     /* int, 1..65535 */
	OPT_SECONDS,  /* int >= 0 */
	OPT_TIMEOUT,  /* int >= 0, "none" gives 0 */
	OPT_BOOL,     /* int 0/1 */
	OPT_SHK,      /* enum shk_policy */
	OPT_PATHS,    /* char **, blank-separated, "none" gives none */
	OPT_IDENTITY, /* char **, one per line, accumulates */
	OPT_FAMILY,   /* int: any 0, inet 4, inet6 6 */
};

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off;       /* of the field in struct ssh_settings */
	size_t count_off; /* of the count, for OPT_PATHS and OPT_IDENTITY */
};

#define FIELD(f) offsetof(struct ssh_settings, f)

static const struct opt opts[] = {
    {.name = "hostname", .kind = OPT_STRING, .off = FIELD(hostname)},
    {.name = "user", .kind = OPT_STRING, .off = FIELD(user)},
    {.name = "port", .kind = OPT_PORT, .off = FIELD(port)},
    {.name = "identityfile",
     .kind = OPT_IDENTITY,
     .off = FIELD(identity_files),
     .count_off = FIELD(n_identity_files)},
    {.name = "userknownhostsfile",
     .kind = OPT_PATHS,
     .off = FIELD(user_known_hosts),
     .count_off = FIELD(n_user_known_hosts)},
    {.name = "globalknownhostsfile",
     .kind = OPT_PATHS,
     .off = FIELD(global_known_hosts),
     .count_off = FIELD(n_global_known_hosts)},
    {.name = "proxyjump", .kind = OPT_JUMP, .off = FIELD(proxyjump)},
    {.name = "stricthostkeychecking", .kind = OPT_SHK, .off = FIELD(strict_host_key_checking)},
    {.name = "hashknownhosts", .kind = OPT_BOOL, .off = FIELD(hash_known_hosts)},
    {.name = "identitiesonly", .kind = OPT_BOOL, .off = FIELD(identities_only)},
    {.name = "batchmode", .kind = OPT_BOOL, .off = FIELD(batch_mode)},
    {.name = "connecttimeout", .kind = OPT_TIMEOUT, .off = FIELD(connect_timeout_s)},
    {.name = "serveraliveinterval", .kind = OPT_SECONDS, .off = FIELD(server_alive_interval_s)},
    {.name = "hostkeyalias", .kind = OPT_STRING, .off = FIELD(host_key_alias)},
    {.name = "identityagent", .kind = OPT_STRING, .off = FIELD(identity_agent)},
    {.name = "addressfamily", .kind = OPT_FAMILY, .off = FIELD(address_family)},
    {.name = "gssapiauthentication", .kind = OPT_BOOL, .off = FIELD(gssapi)},
    {.name = "proxycommand", .kind = OPT_JUMP, .off = FIELD(proxy_command)},
};

/* OpenSSH's multistate_strict_hostkey table: -G prints the first spelling. */
static const struct {
	const char *name;
	enum shk_policy policy;
} shk_names[] = {
    {"true", SHK_YES},
    {"yes", SHK_YES},
    {"false", SHK_NO},
    {"no", SHK_NO},
    {"off", SHK_NO},
    {"ask", SHK_ASK},
    {"accept-new", SHK_ACCEPT_NEW},
};

static const struct {
	const char *name;
	int value;
} bool_names[] = {{"yes", 1}, {"true", 1}, {"no", 0}, {"false", 0}};

void ssh_settings_init(struct ssh_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->port = 22;
	s->strict_host_key_checking = SHK_ASK;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void ssh_settings_fini(struct ssh_settings *s)
{
	free(s->hostname);
	free(s->user);
	free_list(s->identity_files, s->n_identity_files);
	free_list(s->user_known_hosts, s->n_user_known_hosts);
	free_list(s->global_known_hosts, s->n_global_known_hosts);
	free(s->proxyjump);
	free(s->host_key_alias);
	free(s->identity_agent);
	free(s->proxy_command);
	ssh_settings_init(s);
}

static void list_push(char ***v, size_t *n, char *item)
{
	*v = cd_realloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = item;
}

/* A growing string for path expansion. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = cd_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* "~" and "~/..." become home + rest; "~user/..." is left alone. */
static void expand_tilde(struct sbuf *b, const char *path, size_t n, const char *home,
                         const char **rest)
{
	size_t hlen;

	*rest = path;
	if (!home || n == 0 || path[0] != '~' || (n > 1 && path[1] != '/'))
		return;
	hlen = strlen(home);
	while (hlen > 0 && home[hlen - 1] == '/')
		hlen--; /* "/home/a/" + "/x" must not give "//x" */
	sbuf_add(b, home, hlen);
	if (n == 1 && hlen == 0)
		sbuf_add(b, "/", 1); /* home is "/" */
	*rest = path + 1;
}

static char *expand_path(const char *path, size_t n, const char *home)
{
	struct sbuf b = {0};
	const char *rest;

	expand_tilde(&b, path, n, home, &rest);
	sbuf_add(&b, rest, n - (size_t)(rest - path));
	return b.p;
}

/* IdentityFile: tilde first, then the %-tokens we can know (as ssh does). */
static char *expand_identity(const char *path, const char *home, const struct ssh_settings *s)
{
	struct sbuf b = {0};
	const char *p, *val;
	char portbuf[16];

	expand_tilde(&b, path, strlen(path), home, &p);
	sbuf_add(&b, "", 0);
	snprintf(portbuf, sizeof(portbuf), "%d", s->port);
	for (; *p; p++) {
		if (*p != '%' || p[1] == '\0') {
			sbuf_add(&b, p, 1);
			continue;
		}
		switch (p[1]) {
		case '%':
			val = "%";
			break;
		case 'd':
			val = home;
			break;
		case 'h':
			val = s->hostname;
			break;
		case 'p':
			val = portbuf;
			break;
		case 'r':
			val = s->user;
			break;
		default:
			val = NULL;
			break;
		}
		if (val)
			sbuf_add(&b, val, strlen(val));
		else
			sbuf_add(&b, p, 2); /* a token we cannot know stays visible */
		p++;
	}
	return b.p;
}

static int parse_uint(const char *v, long max, int *out)
{
	long n = 0;

	if (*v == '\0')
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		n = n * 10 + (*v - '0');
		if (n > max)
			return -1;
	}
	*out = (int)n;
	return 0;
}

/* identityfile values as printed, expanded once hostname, user and port are known. */
struct raw_ids {
	char **v;
	size_t n;
};

/* Store one value; the line has been NUL-checked and trimmed. */
static int set_opt(struct ssh_settings *s, const struct opt *o, const char *v, const char *home,
                   struct raw_ids *ids)
{
	char *field = (char *)s + o->off;
	int *ip = (int *)(void *)field;
	char **sp = (char **)(void *)field;

	switch (o->kind) {
	case OPT_STRING:
		if (*v == '\0')
			return -1;
		*sp = cd_strdup(v);
		return 0;
	case OPT_JUMP:
		if (*v == '\0')
			return -1;
		*sp = strcasecmp(v, "none") == 0 ? NULL : cd_strdup(v);
		return 0;
	case OPT_PORT:
		return parse_uint(v, 65535, ip) < 0 || *ip == 0 ? -1 : 0;
	case OPT_SECONDS:
		return parse_uint(v, INT_MAX, ip);
	case OPT_TIMEOUT:
		if (strcasecmp(v, "none") == 0) {
			*ip = 0;
			return 0;
		}
		return parse_uint(v, INT_MAX, ip);
	case OPT_BOOL:
		for (size_t i = 0; i < CD_ARRAY_LEN(bool_names); i++)
			if (strcasecmp(v, bool_names[i].name) == 0) {
				*ip = bool_names[i].value;
				return 0;
			}
		return -1;
	case OPT_SHK:
		for (size_t i = 0; i < CD_ARRAY_LEN(shk_names); i++)
			if (strcasecmp(v, shk_names[i].name) == 0) {
				s->strict_host_key_checking = shk_names[i].policy;
				return 0;
			}
		return -1;
	case OPT_PATHS: {
		char ***list = (char ***)(void *)field;
		size_t *count = (size_t *)(void *)((char *)s + o->count_off);

		if (*v == '\0')
			return -1;
		if (strcasecmp(v, "none") == 0)
			return 0;
		while (*v) {
			size_t n = strcspn(v, " \t");

			list_push(list, count, expand_path(v, n, home));
			v += n;
			v += strspn(v, " \t");
		}
		return 0;
	}
	case OPT_FAMILY: {
		static const struct {
			const char *name;
			int family;
		} families[] = {{"any", 0}, {"inet", 4}, {"inet6", 6}};

		for (size_t i = 0; i < CD_ARRAY_LEN(families); i++)
			if (strcasecmp(v, families[i].name) == 0) {
				*ip = families[i].family;
				return 0;
			}
		return -1;
	}
	case OPT_IDENTITY:
		if (*v == '\0')
			return -1;
		/* "none" is an entry ssh skips when loading keys. */
		if (strcasecmp(v, "none") != 0)
			list_push(&ids->v, &ids->n, cd_strdup(v));
		return 0;
	}
	return -1;
}

static const struct opt *find_opt(const char *key, size_t n)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(opts); i++)
		if (strlen(opts[i].name) == n && strncasecmp(opts[i].name, key, n) == 0)
			return &opts[i];
	return NULL;
}

int sshconfig_reads_key(const char *key)
{
	return find_opt(key, strlen(key)) != NULL;
}

/* A key the libssh2 transport cannot honour, or one the table does not
 * know, sends the node to openssh (sshkeys.h); the first one names why. */
static void note_switch(struct ssh_settings *s, const char *key, size_t k, int clean)
{
	const struct sshkey_rule *r;
	const char *v = key + k;

	if (s->switch_key || !clean)
		return;
	if ((r = sshkeys_find(key, k)) == NULL) {
		s->switch_key = sshkeys_unknown_name(key, k);
		return;
	}
	v += strspn(v, " \t");
	if (*v && sshkeys_switches(r, v))
		s->switch_key = r->name;
}

int sshconfig_parse_g(const char *text, size_t len, const char *home, struct ssh_settings *out,
                      char *err, size_t errlen)
{
	char line[SSHCONFIG_LINE_MAX + 1];
	unsigned seen = 0;
	size_t pos = 0, lineno = 0;
	struct raw_ids raw = {0};
	int ret = 0;

	ssh_settings_init(out);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos, k;
		const struct opt *o;
		char *v;

		lineno++;
		line[0] = '\0';
		if (n <= SSHCONFIG_LINE_MAX) /* longer lines are skipped whole */
			memcpy(line, text + pos, n);
		else
			n = 0;
		pos = end + 1;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		line[n] = '\0';
		v = line + strspn(line, " \t");
		k = strcspn(v, " \t");
		note_switch(out, v, k, strlen(line) == n);
		if ((o = find_opt(v, k)) == NULL)
			continue;
		if (strlen(line) != n) {
			ret = cd_errf(err, errlen, CD_ERR_PARSE, "ssh -G line %zu: NUL byte in %s",
			              lineno, o->name);
			goto out;
		}
		if (o->kind != OPT_IDENTITY && (seen & (1u << (o - opts))))
			continue; /* first obtained value is used */
		seen |= 1u << (o - opts);
		v += k;
		v += strspn(v, " \t");
		if ((ret = set_opt(out, o, v, home, &raw)) < 0) {
			ret = cd_errf(err, errlen, CD_ERR_PARSE,
			              "ssh -G line %zu: bad %s \"%.64s\"", lineno, o->name, v);
			goto out;
		}
	}
	if (!out->hostname || !out->user) {
		ret = cd_errf(err, errlen, CD_ERR_PARSE, "ssh -G output has no %s",
		              out->hostname ? "user" : "hostname");
		goto out;
	}
	for (size_t i = 0; i < raw.n; i++)
		list_push(&out->identity_files, &out->n_identity_files,
		          expand_identity(raw.v[i], home, out));
	ret = 0;
out:
	free_list(raw.v, raw.n);
	if (ret < 0)
		ssh_settings_fini(out);
	return ret;
}

int sshconfig_defaults(const char *host, const char *home, const char *user,
                       struct ssh_settings *out)
{
	static const char *const ids[] = {"~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"};
	static const char *const user_kh[] = {"~/.ssh/known_hosts", "~/.ssh/known_hosts2"};
	static const char *const global_kh[] = {"/etc/ssh/ssh_known_hosts",
	                                        "/etc/ssh/ssh_known_hosts2"};
	struct passwd *pw = NULL;

	ssh_settings_init(out);
	if (!host || !*host)
		return CD_ERR_PARSE;
	if ((!user || !*user) && (user = getenv("USER")) != NULL && !*user)
		user = NULL;
	if ((!home || !*home) && (home = getenv("HOME")) != NULL && !*home)
		home = NULL;
	if (!user || !home)
		pw = getpwuid(getuid());
	if (!user && pw)
		user = pw->pw_name;
	if (!home && pw)
		home = pw->pw_dir;
	if (!user || !*user || !home || !*home)
		return CD_ERR_NOTFOUND;

	out->hostname = cd_strdup(host);
	out->user = cd_strdup(user);
	for (size_t i = 0; i < CD_ARRAY_LEN(ids); i++)
		list_push(&out->identity_files, &out->n_identity_files,
		          expand_path(ids[i], strlen(ids[i]), home));
	for (size_t i = 0; i < CD_ARRAY_LEN(user_kh); i++)
		list_push(&out->user_known_hosts, &out->n_user_known_hosts,
		          expand_path(user_kh[i], strlen(user_kh[i]), home));
	for (size_t i = 0; i < CD_ARRAY_LEN(global_kh); i++)
		list_push(&out->global_known_hosts, &out->n_global_known_hosts,
		          cd_strdup(global_kh[i]));
	return 0;
}

static int valid_name(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return 0;
	return 1;
}

int sshconfig_parse_jump(const char *spec, char **user, char **host, int *port, char *err,
                         size_t errlen)
{
	const char *s = spec, *at, *h, *hend, *p = NULL;
	size_t n;
	int portnum = 0;

	*user = *host = NULL;
	*port = 0;
	if (!spec || !*spec)
		return cd_errf(err, errlen, CD_ERR_PARSE, "empty ProxyJump");
	if (strchr(spec, ','))
		return cd_errf(err, errlen, CD_ERR_UNSUPPORTED,
		               "ProxyJump chain \"%.64s\": only one jump host is supported", spec);
	n = strlen(s);
	if (strncmp(s, "ssh://", 6) == 0) {
		s += 6;
		n -= 6;
		if (n > 0 && s[n - 1] == '/')
			n--; /* ssh://host/ is allowed, a path is not */
		if (memchr(s, '/', n))
			return cd_errf(err, errlen, CD_ERR_PARSE, "ProxyJump URI has a path");
	}
	/* user: everything before the last '@' */
	at = NULL;
	for (const char *c = s; c < s + n; c++)
		if (*c == '@')
			at = c;
	h = at ? at + 1 : s;
	if (at && !valid_name(s, (size_t)(at - s)))
		return cd_errf(err, errlen, CD_ERR_PARSE, "bad user in ProxyJump \"%.64s\"", spec);
	if (*h == '[') {
		h++;
		if ((hend = memchr(h, ']', n - (size_t)(h - s))) == NULL)
			return cd_errf(err, errlen, CD_ERR_PARSE, "missing ']' in ProxyJump");
		if (hend + 1 < s + n) {
			if (hend[1] != ':')
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "junk after ']' in ProxyJump");
			p = hend + 2;
		}
	} else {
		hend = memchr(h, ':', n - (size_t)(h - s));
		if (hend)
			p = hend + 1;
		else
			hend = s + n;
	}
	if (!valid_name(h, (size_t)(hend - h)) || *h == '-')
		return cd_errf(err, errlen, CD_ERR_PARSE, "bad host in ProxyJump \"%.64s\"", spec);
	if (p) {
		char digits[8] = "";
		size_t plen = (size_t)(s + n - p);

		if (plen >= sizeof(digits))
			plen = sizeof(digits) - 1; /* too long to be a port: fails below */
		memcpy(digits, p, plen);
		digits[plen] = '\0';
		if ((size_t)(s + n - p) != plen || parse_uint(digits, 65535, &portnum) < 0 ||
		    portnum == 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "bad port in ProxyJump \"%.64s\"",
			               spec);
	}
	*user = at ? cd_strndup(s, (size_t)(at - s)) : NULL;
	*host = cd_strndup(h, (size_t)(hend - h));
	*port = portnum;
	return 0;
}
