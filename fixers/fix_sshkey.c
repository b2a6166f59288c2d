/* SPDX-License-Identifier: MIT */
/*
 * fix_sshkey.c - the ssh-key fixer: nodes that refused every key of the
 * head get the head's public key in a marked block at the end of the login
 * user's ~/.ssh/authorized_keys. The gather for those nodes logged in once
 * by password (fix_login.c), so the plan holds the file's real bytes and
 * the change is a whole-file action like any other: checked against what
 * was read, backed up, undone byte for byte. Also the head's key itself
 * (fix_sshkey.h).
 */
#include "fix_sshkey.h"
#include "buf.h"
#include "child.h"
#include "fix.h"
#include "fix_internal.h"
#include "knownhosts.h"
#include "scan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const fix_sshkey_findings[] = {"node-unreachable", NULL};

/* ---------------------------------------------------------------- public keys */

/* The word at *p (up to a blank), advancing *p past it and the blanks after. */
static size_t next_word(const char **p, const char *end, const char **word)
{
	const char *s = *p, *e;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	e = s;
	while (e < end && *e != ' ' && *e != '\t')
		e++;
	*word = s;
	*p = e;
	return (size_t)(e - s);
}

int pubkey_parse(const char *line, size_t len, char type[32], char fp[64])
{
	/* a known_hosts line is a host field, then exactly a public key line:
	 * knownhosts checks the type, the canonical base64 and the blob's type */
	struct kh_entry *e = cd_malloc(sizeof(*e));
	char *kh = cd_asprintf("h %.*s", (int)len, line), err[CD_ERRLEN];
	int ok = knownhosts_parse_line(kh, strlen(kh), e, err, sizeof(err)) == 1 &&
	         e->marker == KH_MARKER_NONE;

	if (ok) {
		snprintf(type, 32, "%.*s", (int)e->keytype_len, e->keytype);
		knownhosts_fingerprint(e->key, e->keylen, fp);
	}
	free(kh);
	free(e);
	return ok ? 0 : CD_ERR_PARSE;
}

int authorized_keys_has(const char *data, size_t len, const char *publine)
{
	const char *p = publine, *pend = publine + strlen(publine), *t, *b;
	size_t tl = next_word(&p, pend, &t), bl = next_word(&p, pend, &b);
	const char *line = data, *end = data + len;

	if (!tl || !bl)
		return 0;
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)), *q = line, *w;
		const char *le = nl ? nl : end;
		size_t wl, prev_match = 0;

		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (q < le && *q != '#') {
			/* TYPE then BLOB as consecutive words anywhere on the line */
			while ((wl = next_word(&q, le, &w)) > 0) {
				if (prev_match && wl == bl && memcmp(w, b, bl) == 0)
					return 1;
				prev_match = wl == tl && memcmp(w, t, tl) == 0;
			}
		}
		line = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---------------------------------------------------------------- the head's key */

static int read_pub(struct head_key *k, char *err, size_t errlen)
{
	char pub[PATH_MAX + 8], *line;

	snprintf(pub, sizeof(pub), "%s.pub", k->path);
	/* a .pub file is one key line, the line a known_hosts file holds */
	if (scan_read_first_line(pub, KH_LINE_MAX, &line, err, errlen) < 0)
		return CD_ERR_IO;
	if (pubkey_parse(line, strlen(line), k->type, k->fp) < 0) {
		free(line);
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%s is not a public key (\"TYPE BASE64 COMMENT\" on its first line)",
		               pub);
	}
	k->publine = line;
	k->exists = 1;
	return 0;
}

int head_key_find(char *const *files, size_t n, const char *home, struct head_key *k, char *err,
                  size_t errlen)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < n; i++) {
		char pub[PATH_MAX + 8];

		snprintf(pub, sizeof(pub), "%s.pub", files[i]);
		if (access(files[i], R_OK) != 0 || access(pub, R_OK) != 0)
			continue;
		snprintf(k->path, sizeof(k->path), "%s", files[i]);
		return read_pub(k, err, errlen);
	}
	if (n)
		snprintf(k->path, sizeof(k->path), "%s", files[0]);
	else
		snprintf(k->path, sizeof(k->path), "%s/.ssh/id_ed25519", home ? home : "");
	return 0;
}

int head_key_create_argv(struct head_key *k, const char *comment, char *argv[HEAD_KEY_ARGV],
                         char *err, size_t errlen)
{
	char *const words[HEAD_KEY_ARGV] = {"ssh-keygen", "-q",    "-t", "ed25519",
	                                    "-N",         "",      "-C", (char *)comment,
	                                    "-f",         k->path, NULL};
	struct stat st;
	char dir[PATH_MAX], *slash;

	if (lstat(k->path, &st) == 0)
		return cd_errf(err, errlen, CD_ERR_IO, "%s already exists; it is left as is",
		               k->path);
	/* the directory, one level, as ssh-keygen does for ~/.ssh */
	snprintf(dir, sizeof(dir), "%s", k->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return cd_errf(err, errlen, CD_ERR_IO, "cannot create %s: %s", dir,
			               strerror(errno));
	}
	memcpy(argv, words, sizeof(words));
	return 0;
}

int head_key_created(struct head_key *k, int status, const char *errout, char *err, size_t errlen)
{
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return cd_errf(err, errlen, CD_ERR_IO, "ssh-keygen could not create %s: %.*s",
		               k->path, (int)strcspn(errout ? errout : "", "\n"),
		               errout ? errout : "");
	return read_pub(k, err, errlen);
}

int head_key_create(struct head_key *k, const char *comment, char *err, size_t errlen)
{
	char *argv[HEAD_KEY_ARGV];
	struct buf o, e;
	int status = 0, rc;

	if (head_key_create_argv(k, comment, argv, err, errlen) < 0)
		return CD_ERR_IO;
	buf_init(&o, 4096);
	buf_init(&e, 4096);
	rc = child_run(argv, &o, &e, HEAD_KEY_TIMEOUT_MS, &status, err, errlen);
	if (rc == 0)
		rc = head_key_created(k, status, e.data, err, errlen);
	buf_fini(&o);
	buf_fini(&e);
	return rc;
}

void head_key_fini(struct head_key *k)
{
	free(k->publine);
	k->publine = NULL;
}

/* ---------------------------------------------------------------- the plan */

void fix_sshkey_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct fix_file_state *w;
	char type[32], fp[64], summary[256], *body;

	if (!c->o->login || !c->o->login[i])
		return;
	if (!c->o->head_pubkey ||
	    pubkey_parse(c->o->head_pubkey, strlen(c->o->head_pubkey), type, fp) < 0) {
		fix_note(p, "ssh-key: the head has no usable public key to add");
		return;
	}
	w = fix_work_file(c, i, p, "ssh-key", FIX_AUTHORIZED_KEYS);
	if (!w)
		return;
	if (w->exists && authorized_keys_has(w->data, w->len, c->o->head_pubkey)) {
		fix_note(p, "ssh-key: %s already holds the head's key %s", FIX_AUTHORIZED_KEYS, fp);
		return;
	}
	snprintf(summary, sizeof(summary), "authorize the head's key %s %s for %s", type, fp,
	         c->states[i].user[0] ? c->states[i].user : "the login user");
	body = cd_asprintf("%s\n", c->o->head_pubkey);
	fix_plan_block(c, i, p, "ssh-key", FIX_AUTHORIZED_KEYS, 0, "ssh-key", body, BLOCK_BOTTOM,
	               0600, summary);
	free(body);
}
