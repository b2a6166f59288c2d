/* SPDX-License-Identifier: MIT */
/*
 * fix_peerssh.c - the peer-ssh fixer's plan and the head's side of it
 * (fix_peerssh.h).
 */
#include "fix_peerssh.h"
#include "fix_journal.h"
#include "fix_sshkey.h"
#include "knownhosts.h"
#include "scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fix_peerssh_paths[] = {FIX_KNOWN_HOSTS, FIX_SSH_CONFIG, FIX_PEERSSH_KEY};
const size_t fix_peerssh_npaths = CD_ARRAY_LEN(fix_peerssh_paths);

/* ---------------------------------------------------------------- the plan */

static void plan_key_file(struct fix_ctx *c, const struct fix_peerssh_input *in, size_t i,
                          struct fix_node_plan *p)
{
	const struct fix_file_state *w = fix_work_file(c, i, p, FIX_PEERSSH_ID, FIX_PEERSSH_KEY);
	char *after;

	if (!w)
		return;
	if (w->exists && in->privkey && w->len == in->privlen &&
	    memcmp(w->data, in->privkey, w->len) == 0) {
		fix_note(p, "%s: %s already holds the cluster key", FIX_PEERSSH_ID,
		         FIX_PEERSSH_KEY);
		return;
	}
	if (w->exists) {
		fix_note(p,
		         "%s: %s left as is: it holds another key; remove it to have it replaced",
		         FIX_PEERSSH_ID, FIX_PEERSSH_KEY);
		return;
	}
	/* a dry run before the key exists shows the file without its bytes */
	after = in->privkey ? cd_strndup(in->privkey, in->privlen) : cd_strdup("");
	fix_plan_text(c, i, p, FIX_PEERSSH_ID, FIX_PEERSSH_KEY, 0, after,
	              in->privkey ? in->privlen : 0, 0600,
	              "place the cluster's private key (mode 0600) for node-to-node SSH");
}

static void plan_node(struct fix_ctx *c, const struct fix_peerssh_input *in, size_t i,
                      struct fix_node_plan *p)
{
	const struct fix_file_state *ak;
	char *body = NULL, type[32], fp[64];
	size_t known = 0;

	/* authorized_keys: the cluster's public key */
	ak = fix_work_file(c, i, p, FIX_PEERSSH_ID, FIX_AUTHORIZED_KEYS);
	if (!in->publine) {
		fix_note(p,
		         "%s: the cluster key is made on --apply; its public key then goes into %s",
		         FIX_PEERSSH_ID, FIX_AUTHORIZED_KEYS);
	} else if (ak && ak->exists && authorized_keys_has(ak->data, ak->len, in->publine)) {
		fix_note(p, "%s: %s already holds the cluster key", FIX_PEERSSH_ID,
		         FIX_AUTHORIZED_KEYS);
	} else if (ak && pubkey_parse(in->publine, strlen(in->publine), type, fp) == 0) {
		char summary[200];

		body = cd_asprintf("%s\n", in->publine);
		snprintf(summary, sizeof(summary), "authorize the cluster key %s %s", type, fp);
		fix_plan_block(c, i, p, FIX_PEERSSH_ID, FIX_AUTHORIZED_KEYS, 0, FIX_PEERSSH_BLOCK,
		               body, BLOCK_BOTTOM, 0600, summary);
		free(body);
		body = NULL;
	}
	plan_key_file(c, in, i, p);

	/* ~/.ssh/config: the key for the cluster's names */
	body = cd_strdup("Host");
	for (size_t j = 0; j < in->n; j++) {
		char *t = cd_asprintf("%s %s", body, in->hosts[j]);

		free(body);
		body = t;
	}
	{
		char *t = cd_asprintf("%s\n    IdentityFile %s\n", body, FIX_PEERSSH_KEY);

		free(body);
		body = t;
	}
	fix_plan_block(c, i, p, FIX_PEERSSH_ID, FIX_SSH_CONFIG, 0, FIX_PEERSSH_BLOCK, body,
	               BLOCK_BOTTOM, 0600, "use the cluster key for the cluster's nodes");
	free(body);
	body = NULL;

	/* ~/.ssh/known_hosts: every node's verified host key */
	for (size_t j = 0; j < in->n; j++) {
		char *t;

		if (!in->hostkeys || !in->hostkeys[j]) {
			fix_note(p, "%s: %s's host key is not recorded: the head did not verify it",
			         FIX_PEERSSH_ID, in->hosts[j]);
			continue;
		}
		t = cd_asprintf("%s%s %s\n", body ? body : "", in->hosts[j], in->hostkeys[j]);
		free(body);
		body = t;
		known++;
	}
	if (known)
		fix_plan_block(c, i, p, FIX_PEERSSH_ID, FIX_KNOWN_HOSTS, 0, FIX_PEERSSH_BLOCK, body,
		               BLOCK_BOTTOM, 0600,
		               "record the cluster's host keys, as the head verified them");
	free(body);
}

struct fix_plan *fix_peerssh_plan(const struct fix_peerssh_input *in, const char *run)
{
	struct fix_plan *p = cd_calloc(1, sizeof(*p));
	struct fix_ctx c = {.states = in->states, .run = run};
	static const char *const fixers[] = {FIX_PEERSSH_ID};

	snprintf(p->run, sizeof(p->run), "%s", run);
	p->nnodes = in->n;
	p->nodes = cd_calloc(in->n ? in->n : 1, sizeof(*p->nodes));
	c.work = cd_calloc(in->n ? in->n : 1, sizeof(*c.work));
	for (size_t i = 0; i < in->n; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		fix_node_state_copy_files(&c.work[i], &in->states[i]);
		if (!in->states[i].gathered) {
			fix_note(np, "%s: not gathered: %s", FIX_PEERSSH_ID, in->states[i].error);
			continue;
		}
		np->fixers = cd_malloc(sizeof(*np->fixers));
		np->fixers[0] = fixers[0];
		np->nfixers = 1;
		plan_node(&c, in, i, np);
		p->nactions += np->nactions;
	}
	for (size_t i = 0; i < in->n; i++)
		fix_node_state_fini(&c.work[i]);
	free(c.work);
	return p;
}

/* ---------------------------------------------------------------- the head */

int fix_peerssh_key_path(char *out, size_t len, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	size_t dl;

	if (fix_journal_dir(dir, sizeof(dir), err, errlen) < 0)
		return CD_ERR_NOTFOUND;
	/* the journal's directory is STATE/clusterdoc/runs: the key goes beside it */
	dl = strlen(dir);
	if (dl > 5 && strcmp(dir + dl - 5, "/runs") == 0)
		dir[dl - 5] = '\0';
	if ((size_t)snprintf(out, len, "%s/mpi/id_ed25519", dir) >= len)
		return cd_errf(err, errlen, CD_ERR_TOOBIG,
		               "the state directory's path is too long");
	return 0;
}

char *fix_peerssh_hostkey(const char *const *files, size_t nfiles, const char *host, const char *fp)
{
	struct kh_entry *e = cd_malloc(sizeof(*e));
	char name[256], *found = NULL;

	snprintf(name, sizeof(name), "%s", host);
	for (char *s = name; *s; s++)
		*s = (char)tolower((unsigned char)*s);
	for (size_t f = 0; f < nfiles && !found; f++) {
		char *data = NULL, err[CD_ERRLEN];
		const char *p, *end, *line;
		size_t len = 0, ll;

		if (scan_read_file(files[f], KH_FILE_MAX, SCAN_FILE_REGULAR, &data, &len, err,
		                   sizeof(err)) < 0)
			continue;
		p = data;
		end = data + len;
		while (!found && scan_next_line(&p, end, &line, &ll)) {
			char kfp[KH_FP_LEN];
			const char *b, *be;

			if (knownhosts_parse_line(line, ll, e, err, sizeof(err)) != 1 ||
			    e->marker != KH_MARKER_NONE || knownhosts_match_host(e, name) != 1)
				continue;
			knownhosts_fingerprint(e->key, e->keylen, kfp);
			if (strcmp(kfp, fp) != 0)
				continue;
			/* the blob as the line wrote it: the word after the key type */
			b = e->keytype + e->keytype_len;
			while (b < line + ll && (*b == ' ' || *b == '\t'))
				b++;
			be = b;
			while (be < line + ll && !scan_is_space(*be))
				be++;
			found = cd_asprintf("%.*s %.*s", (int)e->keytype_len, e->keytype,
			                    (int)(be - b), b);
		}
		free(data);
	}
	free(e);
	return found;
}
