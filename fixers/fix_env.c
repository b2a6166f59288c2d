/* SPDX-License-Identifier: MIT */
/*
 * fix_env.c - the env fixer: the interface variables `clusterdoc check`
 * verified, written where every way of starting a job reads them.
 *
 *   ~/.config/clusterdoc/env.sh  one `case "$(uname -n)"` over every checked
 *                                node, so the file is the same on every node
 *                                and a home directory shared by NFS (common
 *                                on clusters) holds one correct file
 *   ~/.nccl.conf                 the NCCL variables, when every node needs the
 *                                same values (the file has no per-host syntax);
 *                                at the top, because NCCL keeps the first value
 *   the rc file's first lines    sources env.sh; first, because Debian's and
 *                                Ubuntu's ~/.bashrc return early for the
 *                                non-interactive shells ssh, pdsh and
 *                                torchrun launchers start
 *
 * The variables are the job plan's (jobs/jobplan.h): the socket ones and,
 * where the check verified them against the IB prediction (ib_suggest.h),
 * NCCL_IB_HCA and NCCL_IB_GID_INDEX. An IB variable goes into ~/.nccl.conf
 * only when every checked node needs the same value, since a RoCE GID index
 * is a per-node fact; env.sh always carries it per node.
 *
 * MASTER_ADDR and MASTER_PORT are a job's, not a node's: they stay on the
 * torchrun line `clusterdoc env` prints.
 */
#include "fix_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

const char *const fix_env_findings[] = {
    "ipv6-no-route",
    "link-local-selected",
    "iface-unreachable",
    "stale-ifname-env",
    "virtual-iface-selected",
    "gloo-count-mismatch",
    "hostname-loopback",
    "nccl-ib-hca-stale",
    "roce-gid-mismatch",
    "nccl-ib-fallback",
    NULL,
};

/* nccl-ib-fallback is answered only where NCCL_IB_HCA is the cause (the
 * prediction's reason, nccl_ib.c, which diagnose_rdma.c puts in the
 * evidence after "NET/Socket: "): a variable cannot install libibverbs or
 * bring a port up. */
int fix_env_answers(const struct finding *fd)
{
	if (strcmp(fd->id, "nccl-ib-fallback") != 0)
		return 1;
	return fd->evidence && strstr(fd->evidence, "NET/Socket: NCCL_IB_HCA=") != NULL;
}

static const char *const env_names[] = {"NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY",
                                        "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX"};
#define ENV_N      5
#define ENV_IB_HCA 3 /* the first IB variable in env_names */

/* The verified values for node j, as the job plan has them (the values a
 * `clusterdoc run` sets); NULL where none. 0 when node j has none. */
static int env_values(const struct job_plan *p, size_t j, const char *v[ENV_N])
{
	const struct job_plan_node *n = &p->nodes[j];

	v[0] = n->nccl_ifname[0] ? n->nccl_ifname : NULL;
	v[1] = v[0] && n->nccl_family[0] ? n->nccl_family : NULL;
	v[2] = n->gloo_ifname[0] ? n->gloo_ifname : NULL;
	v[3] = n->nccl_ib_hca[0] ? n->nccl_ib_hca : NULL;
	v[4] = n->nccl_ib_gid_index[0] ? n->nccl_ib_gid_index : NULL;
	return v[0] || v[2] || v[3] || v[4];
}

/* Characters that are safe unquoted in a case pattern and in single quotes. */
static int plain_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static int value_ok(const char *s)
{
	for (; *s; s++)
		if (*s == '\'' || *s == '\n' || *s == '\\')
			return 0;
	return 1;
}

/* "export A='x' B='y'" for node j, or "" */
static void exports_of(const struct job_plan *plan, size_t j, char *out, size_t len)
{
	const char *v[ENV_N];

	out[0] = 0;
	if (!env_values(plan, j, v))
		return;
	snprintf(out, len, "export");
	for (int k = 0; k < ENV_N; k++)
		if (v[k] && value_ok(v[k]))
			snprintf(out + strlen(out), len - strlen(out), " %s='%s'", env_names[k],
			         v[k]);
}

/* env.sh's body: one arm per distinct set of values, hosts joined by "|". */
static char *env_sh_body(const struct fix_ctx *c)
{
	const struct netmodel *m = c->m;
	struct buf b;
	int *done = cd_calloc(m->nnodes + 1, sizeof(*done));
	char *s;

	buf_init(&b, 1 << 20);
	buf_append_str(&b, "# The interface variables `clusterdoc check` verified for PyTorch "
	                   "distributed\n# (NCCL and Gloo), per host as `uname -n` names it.\n"
	                   "case \"$(uname -n)\" in\n");
	for (size_t j = 0; j < m->nnodes; j++) {
		char ex[512], other[512];
		int first = 1;

		if (done[j] || !m->nodes[j].probed || !plain_word(m->nodes[j].hostname))
			continue;
		exports_of(c->plan, j, ex, sizeof(ex));
		if (!ex[0])
			continue;
		for (size_t k = j; k < m->nnodes; k++) {
			if (done[k] || !m->nodes[k].probed || !plain_word(m->nodes[k].hostname))
				continue;
			exports_of(c->plan, k, other, sizeof(other));
			if (strcmp(ex, other) != 0)
				continue;
			buf_append_strs(&b, first ? "" : "|", m->nodes[k].hostname, NULL);
			first = 0;
			done[k] = 1;
		}
		buf_append_strs(&b, ") ", ex, " ;;\n", NULL);
	}
	buf_append_str(&b, "esac\n");
	free(done);
	s = cd_strndup((const char *)b.data, b.len);
	buf_fini(&b);
	return s;
}

/* The socket lines of ~/.nccl.conf into b: 0, or -1 with *why when nodes
 * need different values or none was verified. */
static int nccl_conf_socket(const struct fix_ctx *c, struct buf *b, const char **why)
{
	const char *ifname = NULL, *family = NULL;
	int any = 0;

	for (size_t j = 0; j < c->m->nnodes; j++) {
		const char *v[ENV_N];

		if (!c->m->nodes[j].probed || !env_values(c->plan, j, v) || !v[0])
			continue;
		if (any && (strcmp(ifname, v[0]) != 0 ||
		            strcmp(family ? family : "", v[1] ? v[1] : "") != 0)) {
			*why = "nodes need different NCCL values and the file has no per-host "
			       "syntax; env.sh sets them";
			return -1;
		}
		ifname = v[0];
		family = v[1];
		any = 1;
	}
	if (!any) {
		*why = "no NCCL interface was verified";
		return -1;
	}
	buf_append_strs(b, "NCCL_SOCKET_IFNAME=", ifname, "\n", NULL);
	if (family)
		buf_append_strs(b, "NCCL_SOCKET_FAMILY=", family, "\n", NULL);
	return 0;
}

/* The IB variable k's line into b when every checked node has the same
 * value for it; 1 when written. */
static int nccl_conf_ib(const struct fix_ctx *c, int k, struct buf *b)
{
	const char *value = NULL;

	for (size_t j = 0; j < c->m->nnodes; j++) {
		const char *v[ENV_N];

		if (!c->m->nodes[j].probed)
			continue;
		if (!env_values(c->plan, j, v) || !v[k] || (value && strcmp(value, v[k]) != 0))
			return 0;
		value = v[k];
	}
	if (!value || !value_ok(value))
		return 0;
	buf_append_strs(b, env_names[k], "=", value, "\n", NULL);
	return 1;
}

/* ~/.nccl.conf's body, or NULL (with *why) when it would set nothing. */
static char *nccl_conf_body(const struct fix_ctx *c, const char **why)
{
	struct buf b;
	int lines;
	char *s = NULL;

	buf_init(&b, 1 << 16);
	buf_append_str(&b, "# The NCCL variables `clusterdoc check` verified. NCCL keeps the "
	                   "first value it\n# reads and the environment wins over this file.\n");
	lines = nccl_conf_socket(c, &b, why) == 0;
	for (int k = ENV_IB_HCA; k < ENV_N; k++)
		lines += nccl_conf_ib(c, k, &b);
	if (lines)
		s = cd_strndup((const char *)b.data, b.len);
	buf_fini(&b);
	return s;
}

static const char rc_body[] =
    "# clusterdoc fix: the interface variables for PyTorch distributed. First in\n"
    "# the file, so shells that return early when not interactive read it too.\n"
    "if [ -r \"$HOME/.config/clusterdoc/env.sh\" ]; then . "
    "\"$HOME/.config/clusterdoc/env.sh\"; fi\n";

/* Lines of the rc file outside clusterdoc's block that set one of our
 * variables: they run after the block and win over it. */
static void note_overrides(struct fix_node_plan *p, const char *rc, const char *text)
{
	char *body_end = NULL;
	const char *end_marker = "# <<< clusterdoc env <<<";
	int line = 1;

	if (!text)
		return;
	if ((body_end = strstr(text, end_marker)) == NULL)
		body_end = (char *)text;
	for (const char *s = text; *s; line++) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		size_t lead = strspn(s, " \t");

		for (int k = 0; k < ENV_N && lead < n && s[lead] != '#'; k++) {
			char pat[64];
			const char *hit;

			snprintf(pat, sizeof(pat), "%s=", env_names[k]);
			hit = memmem(s, n, pat, strlen(pat));
			if (hit && s >= body_end && (hit == s || hit[-1] == ' ' || hit[-1] == '\t'))
				fix_note(
				    p,
				    "env: left as is: %s line %d sets %s after clusterdoc's block "
				    "and wins over it; remove that line",
				    rc, line, env_names[k]);
		}
		s += n + (e ? 1 : 0);
	}
}

void fix_env_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct fix_node_state *st = &c->states[i];
	const char *v[ENV_N], *why = NULL, *rc;
	char *body, summary[1024], ex[512];
	int by_ssh;
	const struct fix_file_state *rcf;

	if (!c->plan || !env_values(c->plan, i, v)) {
		fix_note(p, "env: no interface was verified for this node; `clusterdoc check` "
		            "says why");
		return;
	}
	exports_of(c->plan, i, ex, sizeof(ex));
	body = env_sh_body(c);
	snprintf(summary, sizeof(summary), "%s on this host, in %s", ex + strlen("export "),
	         FIX_ENV_SH);
	fix_plan_block(c, i, p, "env", FIX_ENV_SH, 0, "env", body, BLOCK_BOTTOM, 0644, summary);
	free(body);

	body = nccl_conf_body(c, &why);
	if (body) {
		snprintf(summary, sizeof(summary),
		         "the NCCL variables first in %s, which NCCL reads "
		         "when they are not in the environment",
		         FIX_NCCL_CONF);
		fix_plan_block(c, i, p, "env", FIX_NCCL_CONF, 0, "env", body, BLOCK_TOP, 0644,
		               summary);
		free(body);
	} else {
		fix_note(p, "env: %s left as is: %s", FIX_NCCL_CONF, why);
	}

	rc = fix_rc_file(st->shell, &by_ssh);
	snprintf(summary, sizeof(summary), "source %s first in %s (login shell %s)", FIX_ENV_SH, rc,
	         st->shell[0] ? st->shell : "unknown");
	fix_plan_block(c, i, p, "env", rc, 0, "env", rc_body, BLOCK_TOP, 0644, summary);
	if (!by_ssh)
		fix_note(p,
		         "env: the login shell is %s, which reads %s only for login shells; "
		         "commands run by ssh will not see the variables: source %s in the job "
		         "script",
		         st->shell[0] ? st->shell : "unknown", rc, FIX_ENV_SH);
	rcf = fix_state_file(st, rc);
	note_overrides(p, rc, rcf && rcf->exists ? rcf->data : NULL);
}
